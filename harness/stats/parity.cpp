// SPDX-License-Identifier: Apache-2.0
#include "portbench/stats/parity.hpp"

#include <cmath>

namespace portbench::stats {

std::string_view parity_verdict(const interval& speed_ratio, double gate) {
  if (!std::isfinite(speed_ratio.estimate) || !std::isfinite(speed_ratio.low) ||
      !std::isfinite(speed_ratio.high)) {
    return parity::no_data;
  }
  if (speed_ratio.low >= gate) return parity::parity;
  if (speed_ratio.high < gate) return parity::below_gate;
  return parity::inconclusive;
}

}  // namespace portbench::stats
