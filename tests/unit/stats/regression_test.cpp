// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include "noise.hpp"
#include "portbench/stats/regression.hpp"

namespace portbench::stats {
namespace {

using testing::noisy_runs;

TEST(StatsRegression, PlantedFivePercentRegressionIsDetected) {
  rng g(7);
  for (int trial = 0; trial < 20; ++trial) {
    auto base = noisy_runs(g, 50000, 4, 100);
    auto cur = noisy_runs(g, 50000 * 1.05, 4, 100);
    regression_result r = test_regression(base, cur);
    EXPECT_EQ(r.verdict, regression::regressed) << "trial " << trial << " ratio " << r.ratio;
    EXPECT_NEAR(r.ratio, 1.05, 0.02);
    EXPECT_EQ(r.method, "welch_t_log_run_medians");
  }
}

TEST(StatsRegression, ImprovementIsDetected) {
  rng g(8);
  auto base = noisy_runs(g, 50000, 4, 100);
  auto cur = noisy_runs(g, 50000 / 1.05, 4, 100);
  EXPECT_EQ(test_regression(base, cur).verdict, regression::improved);
}

TEST(StatsRegression, SameDistributionRarelyRegresses) {
  rng g(9);
  int regressed = 0;
  int unchanged = 0;
  for (int trial = 0; trial < 200; ++trial) {
    auto base = noisy_runs(g, 20000, 4, 80);
    auto cur = noisy_runs(g, 20000, 4, 80);
    auto v = test_regression(base, cur).verdict;
    regressed += v == regression::regressed ? 1 : 0;
    unchanged += v == regression::unchanged ? 1 : 0;
  }
  EXPECT_LE(regressed, 2);
  EXPECT_GE(unchanged, 150);
}

TEST(StatsRegression, RunsCaughtInASlowerModeAreNotARegression) {
  // Two of four current runs 6% slower (a clock or placement mode), the fastest runs unchanged.
  rng g(12);
  int regressed = 0;
  for (int trial = 0; trial < 50; ++trial) {
    auto base = noisy_runs(g, 40000, 4, 100, 0.002);
    auto cur = noisy_runs(g, 40000, 4, 100, 0.002);
    for (int r = 0; r < 2; ++r) {
      for (auto& v : cur[static_cast<std::size_t>(r)]) v = static_cast<std::int64_t>(static_cast<double>(v) * 1.06);
    }
    regression_result res = test_regression(base, cur);
    EXPECT_LT(res.best_ratio, 1.01);
    regressed += res.verdict == regression::regressed ? 1 : 0;
  }
  EXPECT_EQ(regressed, 0);
}

TEST(StatsRegression, OneRunFallsBackToSampleBootstrap) {
  rng g(10);
  auto base = noisy_runs(g, 30000, 1, 200);
  auto cur = noisy_runs(g, 30000 * 1.10, 1, 200);
  regression_result r = test_regression(base, cur);
  EXPECT_EQ(r.method, "bootstrap_samples");
  EXPECT_EQ(r.verdict, regression::regressed);
  EXPECT_FALSE(r.note.empty());
}

TEST(StatsRegression, NoSamplesIsInconclusive) {
  std::vector<run_samples> empty{{}, {}};
  rng g(11);
  auto cur = noisy_runs(g, 30000, 2, 10);
  regression_result r = test_regression(empty, cur);
  EXPECT_EQ(r.verdict, regression::inconclusive);
  EXPECT_EQ(r.note, "no usable baseline samples");
}

TEST(StatsRegression, VerdictRule) {
  EXPECT_EQ(regression_verdict(1.05, 1.03, 1.07, 0.02), regression::regressed);
  EXPECT_EQ(regression_verdict(1.05, 1.03, 1.07, 0.02, 1.04), regression::regressed);
  EXPECT_EQ(regression_verdict(1.05, 1.03, 1.07, 0.02, 1.005), regression::inconclusive);
  EXPECT_EQ(regression_verdict(1.015, 1.005, 1.04, 0.02), regression::inconclusive);
  EXPECT_EQ(regression_verdict(1.005, 0.99, 1.015, 0.02), regression::unchanged);
  EXPECT_EQ(regression_verdict(0.95, 0.93, 0.97, 0.02), regression::improved);
  EXPECT_NE(describe_regression_test({}).find("2.0%"), std::string::npos);
}

}  // namespace
}  // namespace portbench::stats
