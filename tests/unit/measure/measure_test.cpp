// SPDX-License-Identifier: Apache-2.0
// The measurement engine's CPU-side pieces: statistics, poison patterns, seeds and the worker
// protocol.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <set>

#include "portbench/error.hpp"
#include "portbench/measure/job.hpp"
#include "portbench/measure/output_guard.hpp"
#include "portbench/measure/sampler.hpp"
#include "portbench/measure/timing_checks.hpp"
#include "portbench/stats/summary.hpp"
#include "test_support.hpp"

namespace pm = portbench::measure;
namespace pt = portbench::testing;

namespace {

TEST(MedianCi, TheStopRuleReadsTheIntervalTheFileStores) {
  // One method: the sampler stops on the relative half-width the writer computes from the same
  // samples (stats::summarize, binomial order statistics).
  std::mt19937 rng(5);
  std::lognormal_distribution<double> noise(std::log(1000.0), 0.05);
  for (std::size_t n : {6, 7, 10, 11, 40, 101, 200, 333}) {
    std::vector<std::int64_t> v;
    for (std::size_t i = 0; i < n; ++i) v.push_back(std::llround(noise(rng)));
    const auto stop = pm::median_with_ci(v);
    const auto stored = portbench::stats::summarize(v);
    EXPECT_EQ(stop.median, stored.median) << n;
    EXPECT_EQ(stop.rel_half_width, stored.median_rel_ci) << n;
    EXPECT_GT(stop.rel_half_width, 0) << n;
  }
}

TEST(MedianCi, KnownDataAndTooFewSamples) {
  std::vector<std::int64_t> v;
  for (int i = 1; i <= 100; ++i) v.push_back(i);
  std::shuffle(v.begin(), v.end(), std::mt19937(3));
  const auto r = pm::median_with_ci(v);
  EXPECT_DOUBLE_EQ(r.median, 50.5);
  EXPECT_DOUBLE_EQ(r.rel_half_width, (61 - 40) / (2 * 50.5)) << "ranks 40 and 61 of 100";
  EXPECT_DOUBLE_EQ(pm::median_with_ci(std::vector<std::int64_t>{3, 1, 2}).median, 2);
  EXPECT_DOUBLE_EQ(pm::median_with_ci(std::vector<std::int64_t>{3, 1, 2}).rel_half_width, 1.0) << "no interval: never tight";
  EXPECT_DOUBLE_EQ(pm::median_with_ci(std::vector<std::int64_t>{}).median, 0);
}

TEST(Throttle, BelowTheFractionOfTheMaximumClockOnly) {
  EXPECT_TRUE(pm::clock_throttled(1400, 1980, 0.75));
  EXPECT_FALSE(pm::clock_throttled(1500, 1980, 0.75));
  EXPECT_FALSE(pm::clock_throttled(1980, 1980, 0.75));
  EXPECT_FALSE(pm::clock_throttled(-1, 1980, 0.75)) << "no NVML: unknown, not throttled";
  EXPECT_FALSE(pm::clock_throttled(345, -1, 0.75));
  EXPECT_FALSE(pm::clock_throttled(345, 1980, 0.0)) << "0 turns the check off";
}

TEST(PhysicalFloor, BytesBeyondTheL2AtPeakBandwidthOrFlopsAtPeakRate) {
  const auto* h200 = pm::find_device_peaks("NVIDIA H200");
  ASSERT_NE(h200, nullptr);
  EXPECT_DOUBLE_EQ(h200->bytes_per_s, 4.8e12);
  EXPECT_EQ(pm::find_device_peaks("NVIDIA GH200 480GB")->name_contains, "GH200") << "the longer name first";
  EXPECT_EQ(pm::find_device_peaks("Some Other GPU"), nullptr);
  constexpr std::int64_t l2 = 50 * 1000 * 1000;
  // 4.3 GB (rms_norm's largest): 4.25 GB beyond the L2 at 4.8 TB/s.
  const auto big = pm::floor_of({4.3e9, 1e9}, "NVIDIA H200", l2, true);
  EXPECT_NEAR(big.ns, (4.3e9 - 5e7) / 4.8e12 * 1e9, 1e-6);
  EXPECT_NE(big.why.find("4250.0 MB beyond the 50.0 MB L2 at 4.80 TB/s (NVIDIA H200 peak, device table)"), std::string::npos)
      << big.why;
  EXPECT_DOUBLE_EQ(pm::floor_of({4.0e7, 0}, "NVIDIA H200", l2, true).ns, 0) << "fits in L2: no bandwidth floor";
  EXPECT_DOUBLE_EQ(pm::floor_of({4.3e9, 0}, "NVIDIA H200", l2, false).ns, 0) << "warm L2: bytes do not bound";
  // A GEMM: the flops bound.
  const auto gemm = pm::floor_of({1e8, 2 * 8192.0 * 8192 * 8192}, "NVIDIA H200", l2, true);
  EXPECT_NEAR(gemm.ns, 2 * 8192.0 * 8192 * 8192 / 1.979e15 * 1e9, 1e-6);
  EXPECT_NE(gemm.why.find("Tflop/s"), std::string::npos) << gemm.why;
  EXPECT_DOUBLE_EQ(pm::floor_of({4.3e9, 1e12}, "Unknown GPU", l2, true).ns, 0) << "no table entry: no floor";
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
  j.timing.throttle_fraction = 0.5;
  j.vary_inputs = true;
  j.verified_dir = "/tmp/v";
  j.reference_id = "0.1.0@abc";
  j.items.push_back({4, "rms_norm", {{"m", 2}, {"n", 8}, {"dtype", "float16"}}, "r", "p"});
  auto back = pm::job_from_json(nlohmann::json::parse(pm::to_json(j).dump()));
  EXPECT_EQ(back.device, 1);
  EXPECT_EQ(back.run, 3);
  EXPECT_EQ(back.timing.max_samples, 17);
  EXPECT_FALSE(back.timing.cold_l2);
  EXPECT_DOUBLE_EQ(back.timing.throttle_fraction, 0.5);
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
  try {
    (void)pm::job_from_json(bad);
    ADD_FAILURE() << "an unknown mode was accepted";
  } catch (const portbench::input_error& e) {
    EXPECT_STREQ(e.what(), "job: mode: unknown 'timing'");
    EXPECT_EQ(e.field(), "mode");
  }

  pm::item_report r;
  r.index = 4;
  r.status = "ERROR";
  r.error = "port x: CUDA_ERROR_ILLEGAL_ADDRESS";
  r.port.proof = "OUTPUT_NOT_WRITTEN";
  r.port.timing = "INVALID_BELOW_FLOOR";
  r.port.timing_detail = "median 3 ns is below the physical floor of 9 ns: x";
  r.port.samples.push_back({1234, 2000, 1980, 0xFFF0FFF0u, 7, "", {1000, 234}});
  r.port.kernels = {"pass_entry", "reduce_entry"};
  r.ref.numerics_source = "REUSED";
  r.ref.output_digest = "y:0123456789abcdef0123456789abcdef";
  auto rb = pm::item_report_from_json(nlohmann::json::parse(pm::to_json(r).dump()));
  EXPECT_EQ(rb.status, "ERROR");
  EXPECT_EQ(rb.error, r.error);
  EXPECT_EQ(rb.port.proof, "OUTPUT_NOT_WRITTEN");
  EXPECT_EQ(rb.port.timing, "INVALID_BELOW_FLOOR");
  EXPECT_EQ(rb.port.timing_detail, r.port.timing_detail);
  ASSERT_EQ(rb.port.samples.size(), 1u);
  EXPECT_EQ(rb.port.samples[0].device_ns, 1234);
  EXPECT_EQ(rb.port.samples[0].unwritten, 7u);
  EXPECT_EQ(rb.port.samples[0].kernel_ns, (std::vector<std::int64_t>{1000, 234}));
  EXPECT_EQ(rb.port.kernels, r.port.kernels);
  EXPECT_TRUE(rb.ref.kernels.empty());
  EXPECT_EQ(rb.ref.numerics_source, "REUSED");
  EXPECT_EQ(rb.ref.output_digest, r.ref.output_digest);
}

}  // namespace
