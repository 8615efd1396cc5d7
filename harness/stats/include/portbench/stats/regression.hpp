// SPDX-License-Identifier: Apache-2.0
// Regression test between a baseline and a current sample set of one (configuration, front end).
//
// The best-of-N condition keeps a few runs caught in a slower mode (clocks, placement) from
// being read as a regression: a real one moves the fastest run too.
//
// Timing noise is nested: samples within a worker run, runs within a measurement. Run-level
// shifts (clocks, placement) dominate, so pooling all samples into one test overstates the
// evidence and raises false alarms. The test therefore works on the per-run medians:
//   - both sides with >= 2 runs: Welch t interval on log(run median), current - baseline;
//   - otherwise: seeded bootstrap of each run's samples (within-run noise only, so the result
//     says that between-run variance is unknown).
// The estimate is the ratio of geometric means of run medians, current / baseline device time
// (> 1: slower); the best-of-N ratio is min(current run medians) / min(baseline run medians).
// With a practical threshold d (default 2%) and alpha (default 0.05, two-sided):
//   REGRESSED     interval above 1, estimate > 1 + d and best-of-N ratio > 1 + d
//   IMPROVED      interval below 1, estimate < 1 / (1 + d) and best-of-N ratio < 1 / (1 + d)
//   UNCHANGED     interval inside [1 / (1 + d), 1 + d]
//   INCONCLUSIVE  anything else, or no usable samples on a side.
#pragma once
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "portbench/verdicts.hpp"

namespace portbench::stats {

/// The regression verdicts (portbench/verdicts.hpp).
namespace regression = ::portbench::verdicts::regression;

struct regression_options {
  double threshold = 0.02;      ///< smallest change that counts, relative (0.02 = 2%)
  double alpha = 0.05;          ///< two-sided; the interval is (1 - alpha)
  std::size_t resamples = 2000; ///< for the one-run bootstrap fallback
  std::uint64_t seed = 0x5eedULL;
};

struct regression_result {
  std::string_view verdict = regression::inconclusive;
  double ratio = std::numeric_limits<double>::quiet_NaN();  ///< current / baseline time
  double low = std::numeric_limits<double>::quiet_NaN();
  double high = std::numeric_limits<double>::quiet_NaN();
  double p_value = std::numeric_limits<double>::quiet_NaN();  ///< two-sided, H0: no change
  double best_ratio = std::numeric_limits<double>::quiet_NaN();  ///< best of N, current / baseline
  std::string_view method;  ///< "welch_t_log_run_medians" or "bootstrap_samples"
  std::size_t baseline_runs = 0;
  std::size_t current_runs = 0;
  std::string note;  ///< why INCONCLUSIVE without data, or the fallback's caveat
};

/// One sample set: the device times (ns) of each run.
using run_samples = std::vector<std::int64_t>;

[[nodiscard]] regression_result test_regression(std::span<const run_samples> baseline,
                                                std::span<const run_samples> current,
                                                const regression_options& opts = {});

/// The same test from the per-run medians alone (ns), for sides that both have >= 2 runs;
/// with fewer it returns INCONCLUSIVE with a note (the bootstrap fallback needs the samples).
[[nodiscard]] regression_result test_regression_from_medians(std::span<const double> baseline,
                                                             std::span<const double> current,
                                                             const regression_options& opts = {});

/// Maps an estimate, its interval and the best-of-N ratio (all time ratios) to the verdict
/// above; a NaN best_ratio leaves that condition out.
[[nodiscard]] std::string_view regression_verdict(double ratio, double low, double high,
                                                  double threshold,
                                                  double best_ratio = std::numeric_limits<double>::quiet_NaN());

/// One sentence naming the test, its threshold and alpha, for report headers.
[[nodiscard]] std::string describe_regression_test(const regression_options& opts);

}  // namespace portbench::stats
