// SPDX-License-Identifier: Apache-2.0
#include "portbench/stats/summary.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>


namespace portbench::stats {
namespace {

constexpr double nan = std::numeric_limits<double>::quiet_NaN();

double sorted_median(const std::vector<double>& v) {
  std::size_t n = v.size();
  if (n == 0) return nan;
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

double median(std::span<const double> values) {
  std::vector<double> v(values.begin(), values.end());
  std::sort(v.begin(), v.end());
  return sorted_median(v);
}

double median(std::span<const std::int64_t> values) {
  std::vector<double> v(values.begin(), values.end());
  std::sort(v.begin(), v.end());
  return sorted_median(v);
}

rank_pair median_ci_ranks(std::size_t n, double confidence) {
  // Largest k with P(B <= k - 1) <= alpha / 2 for B ~ Binomial(n, 1/2); the interval is
  // [x_(k), x_(n - k + 1)]. Its coverage is 1 - 2 P(B <= k - 1) >= confidence.
  double half_alpha = (1.0 - confidence) / 2.0;
  double log_pmf = -static_cast<double>(n) * std::log(2.0);  // log P(B = 0)
  double cdf = std::exp(log_pmf);                              // P(B <= 0)
  std::size_t k = 0;
  while (k + 1 <= n / 2 && cdf <= half_alpha) {
    ++k;  // P(B <= k - 1) <= alpha / 2 holds for this k
    log_pmf += std::log(static_cast<double>(n - k + 1)) - std::log(static_cast<double>(k));
    cdf += std::exp(log_pmf);  // now P(B <= k)
  }
  if (k == 0) return {};
  return {k, n - k + 1};
}

sample_summary summarize(std::span<const std::int64_t> values, double confidence) {
  sample_summary s;
  s.count = values.size();
  if (values.empty()) {
    s.median = s.min = s.max = s.mean = nan;
    s.median_ci_low = s.median_ci_high = s.median_rel_ci = nan;
    return s;
  }
  std::vector<double> v(values.begin(), values.end());
  std::sort(v.begin(), v.end());
  s.median = sorted_median(v);
  s.min = v.front();
  s.max = v.back();
  s.mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  rank_pair r = median_ci_ranks(v.size(), confidence);
  if (r.lo == 0) {
    s.median_ci_low = s.median_ci_high = s.median_rel_ci = nan;
  } else {
    s.median_ci_low = v[r.lo - 1];
    s.median_ci_high = v[r.hi - 1];
    s.median_rel_ci = (s.median_ci_high - s.median_ci_low) / (2.0 * s.median);
  }
  return s;
}

}  // namespace portbench::stats
