// SPDX-License-Identifier: Apache-2.0
// The measurement engine's CPU-side pieces: statistics, poison patterns, seeds and the worker
// protocol.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <set>

#include "portbench/measure/job.hpp"
#include "portbench/measure/output_guard.hpp"
#include "portbench/measure/sampler.hpp"
#include "test_support.hpp"

namespace pm = portbench::measure;
namespace pt = portbench::testing;

namespace {

TEST(MedianCi, MedianAndIntervalOfKnownData) {
  std::vector<double> v;
  for (int i = 1; i <= 101; ++i) v.push_back(i);
  std::shuffle(v.begin(), v.end(), std::mt19937(3));
  auto r = pm::median_with_ci(v);
  EXPECT_DOUBLE_EQ(r.median, 51);
  // Ranks 50.5 -+ 9.85 -> 40 and 61 (0-based): values 41 and 62.
  EXPECT_NEAR(r.rel_half_width, 0.5 * (62 - 41) / 51.0, 1e-12);
}

TEST(MedianCi, FewSamplesGiveNoInterval) {
  auto r = pm::median_with_ci({3, 1, 2});
  EXPECT_DOUBLE_EQ(r.median, 2);
  EXPECT_DOUBLE_EQ(r.rel_half_width, 1.0);
  EXPECT_DOUBLE_EQ(pm::median_with_ci({}).median, 0);
}

TEST(MedianCi, TightDataHasTightInterval) {
  std::mt19937 rng(1);
  std::normal_distribution<double> noise(100.0, 0.1);
  std::vector<double> v;
  for (int i = 0; i < 200; ++i) v.push_back(noise(rng));
  EXPECT_LT(pm::median_with_ci(v).rel_half_width, 0.0005);
}

float as_float(std::uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

TEST(Poison, EveryPatternIsNaNInEveryFloatFormatAndTheyDiffer) {
  std::set<std::uint32_t> seen;
  for (std::uint64_t k = 0; k < 256; ++k) {
    std::uint32_t p = pm::poison_pattern(k);
    seen.insert(p);
    EXPECT_TRUE(std::isnan(as_float(p)));
    for (std::uint16_t half : {static_cast<std::uint16_t>(p & 0xffff), static_cast<std::uint16_t>(p >> 16)}) {
      EXPECT_EQ(half & 0x7c00, 0x7c00) << "fp16 exponent";
      EXPECT_NE(half & 0x03ff, 0) << "fp16 NaN, not inf";
      EXPECT_EQ(half & 0x7f80, 0x7f80) << "bf16 exponent";
      EXPECT_NE(half & 0x007f, 0) << "bf16 NaN, not inf";
    }
  }
  EXPECT_EQ(seen.size(), 256u);
}

TEST(Seeds, SameForBothSidesDifferentAcrossConfigsAndRuns) {
  EXPECT_EQ(pm::item_seed(1, "a/n=1", 0), pm::item_seed(1, "a/n=1", 0));
  EXPECT_NE(pm::item_seed(1, "a/n=1", 0), pm::item_seed(1, "a/n=2", 0));
  EXPECT_NE(pm::item_seed(1, "a/n=1", 0), pm::item_seed(1, "a/n=1", 1));
  EXPECT_NE(pm::item_seed(1, "a/n=1", 0), pm::item_seed(2, "a/n=1", 0));
}

TEST(Seeds, RunsShareInputsUnlessTheJobVariesThem) {
  pm::job j;
  j.seed = 7;
  j.run = 2;
  EXPECT_EQ(pm::inputs_seed(j, "a/n=1"), pm::item_seed(7, "a/n=1", 0));
  j.vary_inputs = true;
  EXPECT_EQ(pm::inputs_seed(j, "a/n=1"), pm::item_seed(7, "a/n=1", 2));
  EXPECT_NE(pm::inputs_seed(j, "a/n=1"), pm::item_seed(7, "a/n=1", 0));
}

TEST(Protocol, JobAndReportSurviveTheirJsonLines) {
  pm::job j;
  j.device = 1;
  j.run = 3;
  j.seed = 99;
  j.timing.max_samples = 17;
  j.timing.cold_l2 = false;
  j.vary_inputs = true;
  j.verified_dir = "/tmp/v";
  j.reference_id = "0.1.0@abc";
  j.items.push_back({4, "rms_norm", {{"m", 2}, {"n", 8}, {"dtype", "float16"}}, "r", "p"});
  auto back = pm::job_from_json(nlohmann::json::parse(pm::to_json(j).dump()));
  EXPECT_EQ(back.device, 1);
  EXPECT_EQ(back.run, 3);
  EXPECT_EQ(back.timing.max_samples, 17);
  EXPECT_FALSE(back.timing.cold_l2);
  EXPECT_TRUE(back.vary_inputs);
  EXPECT_EQ(back.verified_dir, "/tmp/v");
  EXPECT_EQ(back.reference_id, "0.1.0@abc");
  ASSERT_EQ(back.items.size(), 1u);
  EXPECT_EQ(back.items[0].params["dtype"], "float16");
  EXPECT_EQ(back.mode, pm::job_mode::measure);
  j.mode = pm::job_mode::check;
  EXPECT_EQ(pm::job_from_json(nlohmann::json::parse(pm::to_json(j).dump())).mode, pm::job_mode::check);
  auto bad = pm::to_json(j);
  bad["mode"] = "timing";
  EXPECT_THROW((void)pm::job_from_json(bad), std::runtime_error);

  pm::item_report r;
  r.index = 4;
  r.status = "ERROR";
  r.error = "port x: CUDA_ERROR_ILLEGAL_ADDRESS";
  r.port.proof = "OUTPUT_NOT_WRITTEN";
  r.port.samples.push_back({1234, 2000, 1980, 0xFFF0FFF0u, 7, ""});
  r.ref.numerics_source = "REUSED";
  r.ref.output_digest = "y:0123456789abcdef0123456789abcdef";
  auto rb = pm::item_report_from_json(nlohmann::json::parse(pm::to_json(r).dump()));
  EXPECT_EQ(rb.status, "ERROR");
  EXPECT_EQ(rb.error, r.error);
  EXPECT_EQ(rb.port.proof, "OUTPUT_NOT_WRITTEN");
  ASSERT_EQ(rb.port.samples.size(), 1u);
  EXPECT_EQ(rb.port.samples[0].device_ns, 1234);
  EXPECT_EQ(rb.port.samples[0].unwritten, 7u);
  EXPECT_EQ(rb.ref.numerics_source, "REUSED");
  EXPECT_EQ(rb.ref.output_digest, r.ref.output_digest);
}

}  // namespace
