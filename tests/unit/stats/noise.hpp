// SPDX-License-Identifier: Apache-2.0
// Synthetic timing noise for the statistics tests: per-run offsets times per-sample noise with
// a positive tail, the shape GPU device times have. Never all zeros.
#pragma once
#include <cmath>
#include <cstdint>
#include <vector>

#include "portbench/stats/regression.hpp"
#include "portbench/stats/rng.hpp"

namespace portbench::stats::testing {

inline double normal(rng& g) {
  double u1 = g.uniform();
  double u2 = g.uniform();
  if (u1 < 1e-300) u1 = 1e-300;
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

/// `runs` runs of `n` samples around `true_ns`: run offset sd `run_sd`, sample sd `sample_sd`
/// (relative), 2% outliers up to +20%.
inline std::vector<run_samples> noisy_runs(rng& g, double true_ns, int runs, int n,
                                           double run_sd = 0.005, double sample_sd = 0.01) {
  std::vector<run_samples> out;
  for (int r = 0; r < runs; ++r) {
    double run_factor = std::exp(run_sd * normal(g));
    run_samples s;
    for (int i = 0; i < n; ++i) {
      double v = true_ns * run_factor * std::exp(sample_sd * normal(g));
      if (g.uniform() < 0.02) v *= 1.0 + 0.2 * g.uniform();
      s.push_back(static_cast<std::int64_t>(std::llround(v)));
    }
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace portbench::stats::testing
