// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "portbench/stats/ratio.hpp"
#include "portbench/stats/summary.hpp"

namespace portbench::stats {
namespace {

TEST(StatsSummary, Median) {
  std::vector<double> odd{5, 1, 3};
  std::vector<double> even{4, 1, 3, 2};
  EXPECT_DOUBLE_EQ(median(odd), 3.0);
  EXPECT_DOUBLE_EQ(median(even), 2.5);
  EXPECT_TRUE(std::isnan(median(std::vector<double>{})));
}

TEST(StatsSummary, MedianIntervalRanksMatchBinomialTables) {
  EXPECT_EQ(median_ci_ranks(5).lo, 0u);  // too few samples for 95%
  EXPECT_EQ(median_ci_ranks(6).lo, 1u);
  EXPECT_EQ(median_ci_ranks(6).hi, 6u);
  EXPECT_EQ(median_ci_ranks(10).lo, 2u);
  EXPECT_EQ(median_ci_ranks(10).hi, 9u);
  EXPECT_EQ(median_ci_ranks(100).lo, 40u);
  EXPECT_EQ(median_ci_ranks(100).hi, 61u);
}

TEST(StatsSummary, SummarizeKnownSamples) {
  std::vector<std::int64_t> v;
  for (int i = 1; i <= 100; ++i) v.push_back(1000 + i);
  sample_summary s = summarize(v);
  EXPECT_EQ(s.count, 100u);
  EXPECT_DOUBLE_EQ(s.median, 1050.5);
  EXPECT_DOUBLE_EQ(s.min, 1001);
  EXPECT_DOUBLE_EQ(s.max, 1100);
  EXPECT_DOUBLE_EQ(s.mean, 1050.5);
  EXPECT_DOUBLE_EQ(s.median_ci_low, 1040);
  EXPECT_DOUBLE_EQ(s.median_ci_high, 1061);
  EXPECT_NEAR(s.median_rel_ci, 21.0 / (2 * 1050.5), 1e-12);
  EXPECT_TRUE(std::isnan(summarize(std::vector<std::int64_t>{}).median));
}

TEST(StatsRatio, BestOfNAndSpread) {
  std::vector<double> runs{110, 100, 105, std::nan(""), 0};
  best_of_n b = best_of(runs);
  EXPECT_EQ(b.runs, 3u);
  EXPECT_DOUBLE_EQ(b.best, 100);
  EXPECT_DOUBLE_EQ(b.worst, 110);
  EXPECT_NEAR(b.spread, 0.10, 1e-12);
  EXPECT_DOUBLE_EQ(speed_ratio(100, 80), 1.25);  // port faster
  EXPECT_TRUE(std::isnan(speed_ratio(100, 0)));
}

}  // namespace
}  // namespace portbench::stats
