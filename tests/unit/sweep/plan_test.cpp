// SPDX-License-Identifier: Apache-2.0
// The sweep layer without workers: suites, pairing and selection on the real exported bundles,
// the estimate, provenance, run records and the resume rules.
#include <gtest/gtest.h>

#include <cmath>
#include <regex>
#include <set>

#include "portbench/bundle/error.hpp"
#include "portbench/reference/config_json.hpp"
#include "portbench/sweep/plan.hpp"
#include "portbench/sweep/record.hpp"
#include "portbench/sweep/suite.hpp"
#include "portbench/verdicts.hpp"
#include "test_support.hpp"

namespace ps = portbench::sweep;
namespace pt = portbench::testing;
namespace pr = portbench::reference;
namespace verdicts = portbench::verdicts;

namespace {

std::string smoke() { return std::string(PORTBENCH_SOURCE_DIR) + "/configs/smoke.json"; }

ps::plan_options python_to_rust() {
  ps::plan_options o;
  o.suite_file = smoke();
  o.ref_dirs = {(pt::bundle_root() / "cutile_python").string()};
  o.port_dirs = {(pt::bundle_root() / "cutile_rust").string()};
  return o;
}

template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const portbench::error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Suite, BadSuitesNameTheFileAndField) {
  EXPECT_EQ(error_of([] { (void)ps::parse_suite(R"({"suite": "x", "configs": [{"op": "rms_norm"}]})", "s.json"); }),
            "s.json: configs[0].params: missing or not an object");
  EXPECT_EQ(error_of([] { (void)ps::parse_suite(R"({"configs": [{"op": "a", "params": {"m": [1]}}]})", "s.json"); }),
            "s.json: configs[0].params.m: expected null, a boolean, a number or a string");
  EXPECT_EQ(error_of([] { (void)ps::parse_suite(R"({"configs": 3})", "s.json"); }), "s.json: configs: missing or not an array");
  EXPECT_EQ(error_of([] { (void)ps::parse_suite("[1", "s.json"); }).rfind("s.json: not valid JSON: ", 0), 0u);
  pt::temp_dir tmp;
  const auto missing = (tmp.path() / "none.json").string();
  EXPECT_EQ(error_of([&] { (void)ps::load_suite(missing); }), missing + ": cannot open suite (missing file?)");
}

TEST(Suite, SmokeSuiteReadsEveryConfigurationWithTypedParameters) {
  const auto s = ps::load_suite(smoke());
  EXPECT_EQ(s.name, "smoke");
  ASSERT_FALSE(s.entries.empty());
  for (const auto& e : s.entries) {
    EXPECT_EQ(pr::config_from_json(e.config.op, e.params).params, e.config.params) << e.config.id();
    EXPECT_EQ(pr::config_from_json(e.config.op, pr::params_to_json(e.config)).id(), e.config.id());
  }
  EXPECT_TRUE(std::holds_alternative<std::int64_t>(s.entries.front().config.params.at("n")));
}

TEST(Pairing, SmokeSuitePairsEveryConfigurationBothSidesSupport) {
  auto plan = ps::plan_sweep(python_to_rust());
  const auto suite = ps::load_suite(smoke());
  EXPECT_EQ(plan.items.size() + plan.unpaired.size(), suite.entries.size());
  EXPECT_GE(plan.items.size(), 7u);
  EXPECT_EQ(plan.suite_name, "smoke");
  for (const auto& p : plan.items) {
    EXPECT_EQ(p.reference.frontend, "cutile_python");
    EXPECT_EQ(p.port.frontend, "cutile_rust");
    EXPECT_NE(p.reference.bundle.find("cutile_python/" + p.config.op), std::string::npos) << p.reference.bundle;
  }
  for (const auto& b : plan.bundles) {
    EXPECT_EQ(b.reference_side, b.loaded.plan.frontend == "cutile_python");
  }
}

TEST(Pairing, TwoBundlesOfOneOperatorOnOneSideAreRefused) {
  auto o = python_to_rust();
  o.ref_dirs.push_back((pt::bundle_root() / "triton").string());
  const auto what = error_of([&] { (void)ps::plan_sweep(o); });
  EXPECT_NE(what.find("--ref: two bundles for operator '"), std::string::npos) << what;
}

TEST(Pairing, AMissingBundleFolderIsNamed) {
  auto o = python_to_rust();
  o.port_dirs = {(pt::bundle_root() / "no_such_frontend").string()};
  EXPECT_EQ(error_of([&] { (void)ps::plan_sweep(o); }), o.port_dirs.front() + ": no such folder");
}

TEST(Selection, OpAndFilterKeepWhatTheyName) {
  auto o = python_to_rust();
  const auto all = ps::plan_sweep(o);
  o.select.ops = {"rms_norm"};
  const auto rms = ps::plan_sweep(o);
  ASSERT_FALSE(rms.items.empty());
  for (const auto& i : rms.items) EXPECT_EQ(i.config.op, "rms_norm");
  EXPECT_EQ(rms.items.size() + rms.deselected + rms.unpaired.size(), all.items.size() + all.unpaired.size());
  o.select.filter = "dtype=float16";
  const auto half = ps::plan_sweep(o);
  ASSERT_FALSE(half.items.empty());
  EXPECT_LT(half.items.size(), rms.items.size());
  for (const auto& i : half.items) EXPECT_NE(i.id().find("dtype=float16"), std::string::npos) << i.id();
  o.select.filter = "(";
  EXPECT_NE(error_of([&] { (void)ps::plan_sweep(o); }).find("--filter: invalid regular expression '('"), std::string::npos);
}

TEST(Selection, CheckPlansEveryConfigurationOfEveryBundle) {
  const auto plan = ps::plan_check({(pt::bundle_root() / "triton").string()}, {});
  std::size_t configs = 0;
  for (const auto& b : plan.bundles) configs += b.loaded.plan.configs.size();
  EXPECT_EQ(plan.items.size(), configs);
  EXPECT_EQ(plan.kind, ps::plan_kind::check);
  for (const auto& i : plan.items) {
    EXPECT_EQ(i.reference.frontend, "triton");
    EXPECT_TRUE(i.port.bundle.empty());
  }
  const auto some = ps::plan_check({(pt::bundle_root() / "triton").string()}, {.filter = "^vector_add/"});
  EXPECT_EQ(some.items.size() + some.deselected, configs);
  for (const auto& i : some.items) EXPECT_EQ(i.config.op, "vector_add");
}

TEST(Estimate, GrowsWithBytesRunsAndTheTimeCap) {
  auto plan = ps::plan_sweep(python_to_rust());
  const auto one = ps::estimate(plan, {.runs = 1});
  std::map<std::string, double> est;
  for (const auto& i : plan.items) {
    EXPECT_GT(i.estimated_s, 0) << i.id();
    est[i.id()] = i.estimated_s;
  }
  EXPECT_GT(est.at("vector_add/dtype=float32,n=67108864"), est.at("vector_add/dtype=float32,n=1048576"));
  const auto four = ps::estimate(plan, {.runs = 4});
  EXPECT_NEAR(four.wall_seconds - four.startup_seconds, 4 * (one.wall_seconds - one.startup_seconds), 1e-9);
  EXPECT_EQ(four.workers, 4u);
  const auto two_gpus = ps::estimate(plan, {.runs = 4, .devices = 2});
  EXPECT_LT(two_gpus.wall_seconds, four.wall_seconds);
  ps::estimate_options capped{.runs = 1};
  capped.timing.time_cap_s = 0.01;
  capped.timing.max_samples = 100000;
  capped.timing.min_samples = 100000;
  EXPECT_LT(ps::estimate(plan, capped).item_seconds, ps::estimate(plan, {.runs = 1, .timing = {.min_samples = 100000, .max_samples = 100000, .time_cap_s = 100}}).item_seconds);
}

}  // namespace
