// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "portbench/stats/bootstrap.hpp"
#include "portbench/stats/parity.hpp"

namespace portbench::stats {
namespace {

TEST(StatsBootstrap, Geomean) {
  EXPECT_DOUBLE_EQ(geomean(std::vector<double>{2, 8}), 4.0);
  EXPECT_TRUE(std::isnan(geomean(std::vector<double>{2, 0})));
  EXPECT_TRUE(std::isnan(geomean(std::vector<double>{})));
}

std::vector<paired_runs> known_configs() {
  // Port run medians are the reference's divided by s, so each configuration's best-of-N ratio
  // is exactly s; the geomean of {0.9, 1.1, 1.0, 1.2, 0.95, 1.05} is known.
  std::vector<double> s{0.9, 1.1, 1.0, 1.2, 0.95, 1.05};
  std::vector<paired_runs> out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    paired_runs p;
    for (double run : {1.00, 1.01, 1.03, 1.02}) {
      double ref = 1000.0 * static_cast<double>(i + 1) * run;
      p.reference.push_back(ref);
      p.port.push_back(ref / s[i]);
    }
    out.push_back(p);
  }
  return out;
}

TEST(StatsBootstrap, GeomeanSpeedRatioHasKnownEstimateAndReproducibleInterval) {
  auto configs = known_configs();
  double expected = std::pow(0.9 * 1.1 * 1.0 * 1.2 * 0.95 * 1.05, 1.0 / 6.0);
  bootstrap_options opts{.resamples = 4000, .seed = 42};
  interval a = geomean_speed_ratio(configs, opts);
  interval b = geomean_speed_ratio(configs, opts);
  EXPECT_NEAR(a.estimate, expected, 1e-12);
  EXPECT_EQ(a.low, b.low);  // same seed, same interval
  EXPECT_EQ(a.high, b.high);
  EXPECT_LT(a.low, a.estimate);
  EXPECT_GT(a.high, a.estimate);
  opts.seed = 43;
  interval c = geomean_speed_ratio(configs, opts);
  EXPECT_NE(a.low, c.low);
  EXPECT_NEAR(a.low, c.low, 0.02);
}

TEST(StatsBootstrap, SkipsConfigurationsWithoutBothSides) {
  auto configs = known_configs();
  configs.push_back({{1000.0}, {}});
  EXPECT_NEAR(geomean_speed_ratio(configs, {.resamples = 200}).estimate,
              geomean_speed_ratio(known_configs(), {.resamples = 200}).estimate, 1e-12);
  EXPECT_TRUE(std::isnan(geomean_speed_ratio(std::vector<paired_runs>{}, {}).estimate));
}

TEST(StatsParity, VerdictAgainstGate) {
  EXPECT_EQ(parity_verdict({1.0, 0.96, 1.04}, 0.95), parity::parity);
  EXPECT_EQ(parity_verdict({0.9, 0.88, 0.93}, 0.95), parity::below_gate);
  EXPECT_EQ(parity_verdict({0.96, 0.93, 0.99}, 0.95), parity::inconclusive);
  EXPECT_EQ(parity_verdict({}, 0.95), parity::no_data);
}

}  // namespace
}  // namespace portbench::stats
