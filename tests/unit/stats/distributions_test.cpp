// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include "portbench/stats/distributions.hpp"

namespace portbench::stats {
namespace {

TEST(StatsDistributions, IncompleteBeta) {
  EXPECT_NEAR(incomplete_beta(2, 2, 0.5), 0.5, 1e-12);
  EXPECT_NEAR(incomplete_beta(1, 1, 0.3), 0.3, 1e-12);
  EXPECT_NEAR(incomplete_beta(2, 3, 0.4), 0.5248, 1e-10);  // 1 - (0.6^4 + 4 0.4 0.6^3)
}

TEST(StatsDistributions, StudentTMatchesTables) {
  EXPECT_NEAR(student_t_cdf(0, 5), 0.5, 1e-12);
  EXPECT_NEAR(student_t_quantile(0.975, 1), 12.706204736, 1e-6);
  EXPECT_NEAR(student_t_quantile(0.975, 3), 3.182446305, 1e-8);
  EXPECT_NEAR(student_t_quantile(0.975, 10), 2.228138852, 1e-8);
  EXPECT_NEAR(student_t_quantile(0.025, 10), -2.228138852, 1e-8);
  EXPECT_NEAR(student_t_quantile(0.975, 1e6), 1.959966, 1e-5);
  EXPECT_NEAR(student_t_cdf(2.228138852, 10), 0.975, 1e-9);
}

}  // namespace
}  // namespace portbench::stats
