// SPDX-License-Identifier: Apache-2.0
#include "portbench/stats/bootstrap.hpp"

#include <algorithm>
#include <cmath>

#include "portbench/stats/ratio.hpp"
#include "portbench/stats/rng.hpp"

namespace portbench::stats {
namespace {

double min_of_draws(const std::vector<double>& runs, rng& gen) {
  double best = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < runs.size(); ++i) best = std::min(best, runs[gen.index(runs.size())]);
  return best;
}

interval percentile_interval(double estimate_log, std::vector<double>& stats_log, double confidence) {
  std::sort(stats_log.begin(), stats_log.end());
  double alpha = 1.0 - confidence;
  interval out;
  out.estimate = std::exp(estimate_log);
  out.low = std::exp(sorted_quantile(stats_log, alpha / 2.0));
  out.high = std::exp(sorted_quantile(stats_log, 1.0 - alpha / 2.0));
  return out;
}

bool usable(const std::vector<double>& runs) {
  return std::any_of(runs.begin(), runs.end(), [](double v) { return std::isfinite(v) && v > 0; });
}

std::vector<double> clean(const std::vector<double>& runs) {
  std::vector<double> out;
  for (double v : runs) {
    if (std::isfinite(v) && v > 0) out.push_back(v);
  }
  return out;
}

}  // namespace

double geomean(std::span<const double> values) {
  if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
  double sum = 0;
  for (double v : values) {
    if (!(v > 0) || !std::isfinite(v)) return std::numeric_limits<double>::quiet_NaN();
    sum += std::log(v);
  }
  return std::exp(sum / static_cast<double>(values.size()));
}

double sorted_quantile(std::span<const double> sorted, double q) {
  if (sorted.empty()) return std::numeric_limits<double>::quiet_NaN();
  double pos = q * static_cast<double>(sorted.size() - 1);
  auto lo = static_cast<std::size_t>(std::floor(pos));
  std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  double frac = pos - static_cast<double>(lo);
  return sorted[lo] + frac * (sorted[hi] - sorted[lo]);
}

interval bootstrap_geomean(std::span<const double> values, const bootstrap_options& opts) {
  double g = geomean(values);
  if (std::isnan(g)) return {};
  std::vector<double> logs;
  for (double v : values) logs.push_back(std::log(v));
  rng gen(opts.seed);
  std::vector<double> stats(opts.resamples);
  for (auto& s : stats) {
    double sum = 0;
    for (std::size_t i = 0; i < logs.size(); ++i) sum += logs[gen.index(logs.size())];
    s = sum / static_cast<double>(logs.size());
  }
  return percentile_interval(std::log(g), stats, opts.confidence);
}

interval geomean_speed_ratio(std::span<const paired_runs> configs, const bootstrap_options& opts) {
  std::vector<paired_runs> kept;
  std::vector<double> ratios;
  for (const auto& c : configs) {
    if (!usable(c.reference) || !usable(c.port)) continue;
    paired_runs p{clean(c.reference), clean(c.port)};
    ratios.push_back(speed_ratio(best_of(p.reference).best, best_of(p.port).best));
    kept.push_back(std::move(p));
  }
  if (kept.empty()) return {};
  double estimate_log = std::log(geomean(ratios));
  if (!opts.resample_runs) {
    interval out = bootstrap_geomean(ratios, opts);
    return out;
  }
  // Work in logs: the log of a minimum is the minimum of the logs.
  for (auto& c : kept) {
    for (auto& v : c.reference) v = std::log(v);
    for (auto& v : c.port) v = std::log(v);
  }
  rng gen(opts.seed);
  std::vector<double> stats(opts.resamples);
  const std::size_t n = kept.size();
  for (auto& s : stats) {
    double sum = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const paired_runs& c = kept[gen.index(n)];
      sum += min_of_draws(c.reference, gen) - min_of_draws(c.port, gen);
    }
    s = sum / static_cast<double>(n);
  }
  return percentile_interval(estimate_log, stats, opts.confidence);
}

}  // namespace portbench::stats
