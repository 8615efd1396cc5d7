// SPDX-License-Identifier: Apache-2.0
// Best of N and the speed ratio of one configuration.
#pragma once
#include <cstddef>
#include <limits>
#include <span>

namespace portbench::stats {

struct best_of_n {
  double best = std::numeric_limits<double>::quiet_NaN();   ///< minimum of the run medians
  double worst = std::numeric_limits<double>::quiet_NaN();  ///< maximum of the run medians
  std::size_t runs = 0;
  /// Between-run spread: worst / best - 1 (0 for one run). A large spread flags a bimodal
  /// configuration that the minimum would otherwise hide.
  double spread = std::numeric_limits<double>::quiet_NaN();
};

/// Best of N over per-run medians; non-finite or non-positive medians are ignored.
[[nodiscard]] best_of_n best_of(std::span<const double> run_medians);

/// Port speed / reference speed = reference_time / port_time (> 1: the port is faster).
[[nodiscard]] double speed_ratio(double reference_time, double port_time);

}  // namespace portbench::stats
