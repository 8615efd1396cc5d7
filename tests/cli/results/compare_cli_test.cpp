// SPDX-License-Identifier: Apache-2.0
// `portbench compare`: a planted 5% regression exits 1, an A/A pair exits 0.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "process.hpp"
#include "synth.hpp"

namespace portbench::testing {
namespace {

synth_options small(std::uint64_t noise_seed) {
  synth_options o;
  o.configs = 12;
  o.operators = 3;
  o.runs = 4;
  o.min_samples = 50;
  o.max_samples = 120;
  o.noise_seed = noise_seed;
  o.bimodal_prob = 0;  // a clean pair: the false-alarm script covers the noisy model
  o.overwrite = true;
  return o;
}

TEST(CompareCli, PlantedRegressionExitsOne) {
  auto base = scratch_dir() / "base.h5";
  auto cur = scratch_dir() / "regressed.h5";
  write_synthetic(base, small(11));
  synth_options o = small(12);
  o.scale_port = 1.05;  // every port configuration 5% slower
  write_synthetic(cur, o);
  process_result r = portbench({"compare", base.string(), cur.string(), "--format", "json"});
  ASSERT_EQ(r.rc, 1) << r.err << r.out;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["regressed"], true);
  EXPECT_EQ(j["counts"]["REGRESSED"], 12);
  for (const auto& row : j["rows"]) {
    if (row["role"] == "port") {
      EXPECT_EQ(row["verdict"], "REGRESSED") << row.dump();
    } else {
      EXPECT_NE(row["verdict"], "REGRESSED") << row.dump();
    }
  }
  process_result md = portbench({"compare", base.string(), cur.string()});
  EXPECT_EQ(md.rc, 1);
  EXPECT_NE(md.out.find("Test: Welch t interval on log per-run medians"), std::string::npos) << md.out;
  EXPECT_NE(md.out.find("+2.0%"), std::string::npos);
}

TEST(CompareCli, AaPairExitsZero) {
  auto a = scratch_dir() / "a.h5";
  auto b = scratch_dir() / "b.h5";
  write_synthetic(a, small(21));
  write_synthetic(b, small(22));
  process_result r = portbench({"compare", a.string(), b.string(), "--format", "json"});
  ASSERT_EQ(r.rc, 0) << r.err << r.out;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["regressed"], false);
  EXPECT_EQ(j["counts"].count("REGRESSED"), 0u);
  EXPECT_GE(j["counts"]["UNCHANGED"].get<int>(), 20);
}

TEST(CompareCli, SingleRunFallsBackToTheSamples) {
  auto base = scratch_dir() / "one_run_base.h5";
  auto cur = scratch_dir() / "one_run_cur.h5";
  synth_options o = small(31);
  o.runs = 1;
  o.configs = 3;
  write_synthetic(base, o);
  o.noise_seed = 32;
  o.scale_port = 1.10;
  write_synthetic(cur, o);
  process_result r = portbench({"compare", base.string(), cur.string(), "--format", "json"});
  ASSERT_EQ(r.rc, 1) << r.err << r.out;
  auto j = nlohmann::json::parse(r.out);
  for (const auto& row : j["rows"]) {
    EXPECT_EQ(row["method"], "bootstrap_samples");
    if (row["role"] == "port") {
      EXPECT_EQ(row["verdict"], "REGRESSED") << row.dump();
    }
  }
}

TEST(CompareCli, NothingInCommonIsBadInput) {
  auto a = scratch_dir() / "ops_a.h5";
  auto b = scratch_dir() / "ops_b.h5";
  synth_options o = small(1);
  write_synthetic(a, o);
  o.truth_seed = 99;
  o.configs = 0;
  write_synthetic(b, o);
  process_result r = portbench({"compare", a.string(), b.string()});
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(line_count(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("no configuration in common"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace portbench::testing
