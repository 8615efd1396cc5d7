// SPDX-License-Identifier: Apache-2.0
#include "portbench/stats/ratio.hpp"

#include <algorithm>
#include <cmath>

namespace portbench::stats {

best_of_n best_of(std::span<const double> run_medians) {
  best_of_n out;
  for (double v : run_medians) {
    if (!std::isfinite(v) || !(v > 0)) continue;
    out.best = out.runs == 0 ? v : std::min(out.best, v);
    out.worst = out.runs == 0 ? v : std::max(out.worst, v);
    ++out.runs;
  }
  if (out.runs > 0) out.spread = out.worst / out.best - 1.0;
  return out;
}

double speed_ratio(double reference_time, double port_time) {
  if (!(reference_time > 0) || !(port_time > 0)) return std::numeric_limits<double>::quiet_NaN();
  return reference_time / port_time;
}

}  // namespace portbench::stats
