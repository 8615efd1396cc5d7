// SPDX-License-Identifier: Apache-2.0
#include "portbench/stats/regression.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "portbench/stats/bootstrap.hpp"
#include "portbench/stats/distributions.hpp"
#include "portbench/stats/rng.hpp"
#include "portbench/stats/summary.hpp"

namespace portbench::stats {
namespace {

struct side {
  std::vector<run_samples> runs;   // runs with at least one positive sample
  std::vector<double> log_medians;
};

side prepare(std::span<const run_samples> runs) {
  side s;
  for (const auto& r : runs) {
    run_samples positive;
    for (auto v : r) {
      if (v > 0) positive.push_back(v);
    }
    if (positive.empty()) continue;
    s.log_medians.push_back(std::log(median(positive)));
    s.runs.push_back(std::move(positive));
  }
  return s;
}

/// exp(min(current) - min(baseline)) of log run medians.
double best_ratio_of(const side& b, const side& c) {
  return std::exp(*std::min_element(c.log_medians.begin(), c.log_medians.end()) -
                  *std::min_element(b.log_medians.begin(), b.log_medians.end()));
}

double mean(const std::vector<double>& v) {
  double sum = 0;
  for (double x : v) sum += x;
  return sum / static_cast<double>(v.size());
}

double variance(const std::vector<double>& v, double m) {
  double sum = 0;
  for (double x : v) sum += (x - m) * (x - m);
  return sum / static_cast<double>(v.size() - 1);
}

void welch(const side& b, const side& c, double alpha, regression_result& out) {
  double mb = mean(b.log_medians);
  double mc = mean(c.log_medians);
  double vb = variance(b.log_medians, mb) / static_cast<double>(b.log_medians.size());
  double vc = variance(c.log_medians, mc) / static_cast<double>(c.log_medians.size());
  double diff = mc - mb;
  double se = std::sqrt(vb + vc);
  out.method = "welch_t_log_run_medians";
  out.ratio = std::exp(diff);
  if (se == 0) {
    out.low = out.high = out.ratio;
    out.p_value = diff == 0 ? 1.0 : 0.0;
    return;
  }
  double df = (vb + vc) * (vb + vc) /
              (vb * vb / static_cast<double>(b.log_medians.size() - 1) +
               vc * vc / static_cast<double>(c.log_medians.size() - 1));
  double t = student_t_quantile(1.0 - alpha / 2.0, df);
  out.low = std::exp(diff - t * se);
  out.high = std::exp(diff + t * se);
  out.p_value = 2.0 * (1.0 - student_t_cdf(std::fabs(diff / se), df));
}

double median_in_place(std::vector<double>& v) {
  auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  double upper = *mid;
  if (v.size() % 2 == 1) return upper;
  return 0.5 * (upper + *std::max_element(v.begin(), mid));
}

double resampled_log_location(const side& s, rng& gen, std::vector<double>& scratch) {
  double sum = 0;
  for (const auto& r : s.runs) {
    scratch.resize(r.size());
    for (auto& x : scratch) x = static_cast<double>(r[gen.index(r.size())]);
    sum += std::log(median_in_place(scratch));
  }
  return sum / static_cast<double>(s.runs.size());
}

void bootstrap(const side& b, const side& c, const regression_options& opts, regression_result& out) {
  out.method = "bootstrap_samples";
  out.note = "fewer than 2 runs on a side: between-run variance unknown";
  double diff = mean(c.log_medians) - mean(b.log_medians);
  rng gen(opts.seed);
  std::vector<double> stats(opts.resamples);
  std::vector<double> scratch;
  std::size_t at_or_below = 0;
  std::size_t at_or_above = 0;
  for (auto& s : stats) {
    s = resampled_log_location(c, gen, scratch) - resampled_log_location(b, gen, scratch);
    at_or_below += s <= 0 ? 1 : 0;
    at_or_above += s >= 0 ? 1 : 0;
  }
  std::sort(stats.begin(), stats.end());
  out.ratio = std::exp(diff);
  out.low = std::exp(sorted_quantile(stats, opts.alpha / 2.0));
  out.high = std::exp(sorted_quantile(stats, 1.0 - opts.alpha / 2.0));
  double n = static_cast<double>(stats.size());
  out.p_value = std::min(1.0, 2.0 * std::min(at_or_below, at_or_above) / n);
}

}  // namespace

std::string_view regression_verdict(double ratio, double low, double high, double threshold,
                                    double best_ratio) {
  if (!std::isfinite(ratio) || !std::isfinite(low) || !std::isfinite(high)) {
    return regression::inconclusive;
  }
  double up = 1.0 + threshold;
  bool best_up = std::isnan(best_ratio) || best_ratio > up;
  bool best_down = std::isnan(best_ratio) || best_ratio < 1.0 / up;
  if (low > 1.0 && ratio > up && best_up) return regression::regressed;
  if (high < 1.0 && ratio < 1.0 / up && best_down) return regression::improved;
  if (low >= 1.0 / up && high <= up) return regression::unchanged;
  return regression::inconclusive;
}

regression_result test_regression(std::span<const run_samples> baseline,
                                  std::span<const run_samples> current,
                                  const regression_options& opts) {
  regression_result out;
  side b = prepare(baseline);
  side c = prepare(current);
  out.baseline_runs = b.runs.size();
  out.current_runs = c.runs.size();
  if (b.runs.empty() || c.runs.empty()) {
    out.note = b.runs.empty() ? "no usable baseline samples" : "no usable current samples";
    return out;
  }
  if (b.runs.size() >= 2 && c.runs.size() >= 2) {
    welch(b, c, opts.alpha, out);
  } else {
    bootstrap(b, c, opts, out);
  }
  out.best_ratio = best_ratio_of(b, c);
  out.verdict = regression_verdict(out.ratio, out.low, out.high, opts.threshold, out.best_ratio);
  return out;
}

regression_result test_regression_from_medians(std::span<const double> baseline,
                                               std::span<const double> current,
                                               const regression_options& opts) {
  regression_result out;
  side b;
  side c;
  for (double m : baseline) {
    if (m > 0 && std::isfinite(m)) b.log_medians.push_back(std::log(m));
  }
  for (double m : current) {
    if (m > 0 && std::isfinite(m)) c.log_medians.push_back(std::log(m));
  }
  out.baseline_runs = b.log_medians.size();
  out.current_runs = c.log_medians.size();
  if (b.log_medians.size() < 2 || c.log_medians.size() < 2) {
    out.note = "fewer than 2 runs on a side: the test needs the samples";
    return out;
  }
  welch(b, c, opts.alpha, out);
  out.best_ratio = best_ratio_of(b, c);
  out.verdict = regression_verdict(out.ratio, out.low, out.high, opts.threshold, out.best_ratio);
  return out;
}

std::string describe_regression_test(const regression_options& opts) {
  char buf[1024];
  double pct = opts.threshold * 100.0;
  std::snprintf(buf, sizeof buf,
                "Welch t interval on log per-run medians, current/baseline device time, two-sided "
                "%.0f%% (alpha %.3g); REGRESSED when the interval lies above 1 and both the "
                "estimate and the best-of-N ratio are more than +%.1f%%, IMPROVED when it lies "
                "below 1 and both are under 1/(1+%.1f%%), UNCHANGED when it lies inside "
                "[1/(1+%.1f%%), 1+%.1f%%], else INCONCLUSIVE; a side with one run falls back to a "
                "seeded bootstrap of its samples",
                (1.0 - opts.alpha) * 100.0, opts.alpha, pct, pct, pct, pct);
  return buf;
}

}  // namespace portbench::stats
