// SPDX-License-Identifier: Apache-2.0
// How `tune` picks a configuration's plan from the pairs the sweep reports (config_runs): the
// reports are shaped as the sweep's workers and its budget write them.
#include <gtest/gtest.h>

#include <string>

#include "portbench/tune/tune.hpp"
#include "portbench/verdicts.hpp"

namespace {

namespace m = portbench::measure;
namespace tn = portbench::tune;
namespace v = portbench::verdicts;

m::side_report timed(double median_ns, std::string_view numerics = v::numerics::pass) {
  m::side_report s;
  s.numerics = numerics;
  s.proof = v::proof::executed;
  s.timing = v::timing::valid;
  s.median_ns = median_ns;
  return s;
}

m::item_report pair(double baseline_ns, double candidate_ns, std::string_view candidate_numerics = v::numerics::pass) {
  m::item_report r;
  r.ref = timed(baseline_ns);
  r.port = timed(candidate_ns, candidate_numerics);
  return r;
}

// What the sweep delivers for a pair its budget did not start (execute.cpp: status NOT_RUN,
// the budget's reason, sides never checked).
m::item_report not_started() {
  m::item_report r;
  r.status = v::status::not_run;
  r.error = "not started: the sweep's budget of 210 s was spent";
  return r;
}

tn::config_choice choose(const tn::config_runs& runs) {
  tn::config_choice ch;
  ch.baseline = "default";
  runs.choose(ch);
  return ch;
}

TEST(TuneChoice, PairsTheBudgetDidNotStartLeaveAPassingBaselineStanding) {
  // The H200 call that found this: fp32 matmul 16384^3, the default 225.6 ms, the one candidate
  // timed 692 ms, six candidates not started; the record chose the slower candidate.
  tn::config_runs runs;
  runs.add("slow", pair(225.6e6, 692.1e6));
  for (const char* c : {"a", "b", "c", "d", "e", "f"}) runs.add(c, not_started());
  const auto ch = choose(runs);
  EXPECT_EQ(ch.chosen, "default");
  EXPECT_DOUBLE_EQ(ch.speedup_over_default, 1.0);
  EXPECT_DOUBLE_EQ(ch.baseline_ns, 225.6e6);
  ASSERT_EQ(ch.candidates.size(), 7u);
  for (const auto& c : ch.candidates) {
    if (c.variant == "slow") continue;
    EXPECT_FALSE(c.eligible()) << c.variant;
    EXPECT_EQ(c.status, v::status::not_run) << c.variant;
  }
}

TEST(TuneChoice, TheFastestPassingCandidateWinsWithItsSpeedup) {
  tn::config_runs runs;
  runs.add("slower", pair(100e3, 120e3));
  runs.add("faster", pair(102e3, 80e3));
  runs.add("fastest_but_wrong", pair(101e3, 50e3, v::numerics::fail));
  runs.add("later", not_started());
  const auto ch = choose(runs);
  EXPECT_EQ(ch.chosen, "faster");
  EXPECT_DOUBLE_EQ(ch.baseline_ns, 100e3);   // the best of the baseline's runs
  EXPECT_DOUBLE_EQ(ch.speedup_over_default, 100e3 / 80e3);
}

TEST(TuneChoice, AFailingBaselineGivesWayToThePassingCandidateEvenWhenSlower) {
  tn::config_runs runs;
  auto r = pair(100e3, 150e3);
  r.ref.numerics = v::numerics::fail;
  runs.add("slower_but_right", r);
  const auto ch = choose(runs);
  EXPECT_EQ(ch.chosen, "slower_but_right");
  EXPECT_LT(ch.speedup_over_default, 1.0);
}

TEST(TuneChoice, NothingStartedKeepsTheBaselineUntimed) {
  tn::config_runs runs;
  runs.add("a", not_started());
  const auto ch = choose(runs);
  EXPECT_EQ(ch.chosen, "default");
  EXPECT_EQ(ch.baseline_ns, 0.0);
  EXPECT_FALSE(ch.candidates.front().eligible());
}

// The device names as the driver reports them (cuDeviceGetName) on the cards the records are for.
TEST(TuneGpu, ARecordsGpuIsThatNameOrItWithFurtherWords) {
  EXPECT_TRUE(tn::is_gpu("NVIDIA H200", "NVIDIA H200"));
  EXPECT_TRUE(tn::is_gpu("NVIDIA H200 NVL", "NVIDIA H200"));
  EXPECT_TRUE(tn::is_gpu("NVIDIA H100 80GB HBM3", "NVIDIA H100 80GB HBM3"));
  EXPECT_FALSE(tn::is_gpu("NVIDIA H100 80GB HBM3", "NVIDIA H200"));
  EXPECT_FALSE(tn::is_gpu("NVIDIA H200", "NVIDIA H20"));      // another card, not a family
  EXPECT_FALSE(tn::is_gpu("NVIDIA H20", "NVIDIA H200"));
  EXPECT_FALSE(tn::is_gpu("NVIDIA H100 PCIe", "NVIDIA H100 80GB HBM3"));
  EXPECT_FALSE(tn::is_gpu("NVIDIA H200", ""));                // no name is no GPU
}

}  // namespace
