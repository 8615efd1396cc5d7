// SPDX-License-Identifier: Apache-2.0
// Location and spread of one run's samples. The median is the per-run statistic (robust to the
// positive outliers that timing noise produces); its interval is distribution-free (binomial
// order statistics), so it needs no normality assumption.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>

namespace portbench::stats {

/// Median (mean of the two middle values for even counts); NaN when empty.
[[nodiscard]] double median(std::span<const double> values);
[[nodiscard]] double median(std::span<const std::int64_t> values);

/// 1-based ranks (lo, hi) such that [x_(lo), x_(hi)] covers the median with probability at least
/// `confidence`; {0, 0} when n is too small (n < 6 at 95%).
struct rank_pair {
  std::size_t lo = 0;
  std::size_t hi = 0;
};
[[nodiscard]] rank_pair median_ci_ranks(std::size_t n, double confidence = 0.95);

struct sample_summary {
  std::size_t count = 0;
  double median = 0;
  double min = 0;
  double max = 0;
  double mean = 0;
  double median_ci_low = 0;   ///< NaN when count is too small for the interval
  double median_ci_high = 0;
  double median_rel_ci = 0;   ///< (high - low) / (2 median): relative half-width
};

/// Summary of integer samples (device ns). All fields NaN (count 0) when empty.
[[nodiscard]] sample_summary summarize(std::span<const std::int64_t> values,
                                       double confidence = 0.95);

}  // namespace portbench::stats
