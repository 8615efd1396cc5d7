// SPDX-License-Identifier: Apache-2.0
// The parity statement. Parity is an equivalence (non-inferiority) claim, not "no significant
// difference": PARITY only when the whole 95% interval of the geomean speed ratio lies at or
// above the gate, i.e. the port is at least `gate` x the reference's speed at one-sided
// alpha = 0.025. BELOW_GATE when the whole interval lies below; INCONCLUSIVE when it straddles
// the gate; NO_DATA when there is nothing to judge (which never passes).
#pragma once
#include <string_view>

#include "portbench/stats/bootstrap.hpp"
#include "portbench/verdicts.hpp"

namespace portbench::stats {

/// The report verdicts (portbench/verdicts.hpp); parity_verdict returns one of the first four.
namespace parity = ::portbench::verdicts::parity;

inline constexpr double default_parity_gate = 0.95;

/// Verdict of a speed-ratio interval (port / reference speed) against `gate`.
[[nodiscard]] std::string_view parity_verdict(const interval& speed_ratio, double gate);

}  // namespace portbench::stats
