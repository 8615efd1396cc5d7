// SPDX-License-Identifier: Apache-2.0
// How a configuration is sampled (docs/measurement.md); part of the job a worker receives and
// of the results file's provenance (a resumed file must have been sampled the same way).
#pragma once

namespace portbench::measure {

struct timing_options {
  int warmup_launches = 3;        ///< per side, untimed, before the first sample
  int min_samples = 10;           ///< per side
  int max_samples = 200;          ///< per side
  double target_rel_ci = 0.005;   ///< stop when both medians' 95% CI half-width / median is below
  double time_cap_s = 2.0;        ///< per configuration and run, both sides together
  bool cold_l2 = true;
  /// A sample whose SM clock is below this fraction of the maximum is throttled: kept out of
  /// the statistics (docs/measurement.md). 0 turns the check off.
  double throttle_fraction = 0.75;
};

}  // namespace portbench::measure
