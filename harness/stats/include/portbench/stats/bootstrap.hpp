// SPDX-License-Identifier: Apache-2.0
// Geometric means of speed ratios and their seeded bootstrap intervals. A configuration's ratio
// is port speed / reference speed = reference time / port time, each side taken as its best of
// N (the minimum over independent runs of each run's median). The interval resamples
// configurations and, within each drawn configuration, runs (two-level bootstrap, as
// Kalibera & Jones recommend for nested run/iteration variance); percentile method, log space.
#pragma once
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

namespace portbench::stats {

struct interval {
  double estimate = std::numeric_limits<double>::quiet_NaN();
  double low = std::numeric_limits<double>::quiet_NaN();
  double high = std::numeric_limits<double>::quiet_NaN();
};

struct bootstrap_options {
  std::size_t resamples = 10000;
  double confidence = 0.95;
  std::uint64_t seed = 0x9e3779b97f4a7c15ULL;
  bool resample_runs = true;  ///< second level: runs within each drawn configuration
};

/// The per-run medians (ns) of both sides of one configuration.
struct paired_runs {
  std::vector<double> reference;
  std::vector<double> port;
};

/// Geometric mean; NaN when empty or when a value is not positive and finite.
[[nodiscard]] double geomean(std::span<const double> values);
/// Linear-interpolated quantile of sorted values, q in [0, 1].
[[nodiscard]] double sorted_quantile(std::span<const double> sorted, double q);
/// Bootstrap interval of the geometric mean of `values` (resampling values).
[[nodiscard]] interval bootstrap_geomean(std::span<const double> values,
                                         const bootstrap_options& opts = {});
/// Geomean over configurations of reference_best / port_best, with its two-level bootstrap
/// interval. Configurations with an empty side are skipped; NaN interval when none is left.
[[nodiscard]] interval geomean_speed_ratio(std::span<const paired_runs> configs,
                                           const bootstrap_options& opts = {});

}  // namespace portbench::stats
