// SPDX-License-Identifier: Apache-2.0
// The closing table of a sweep, built as results arrive: per configuration the best of N of
// each side, the ratio, the between-run spread, the worst verdicts and the status; the geomean
// over the configurations that ran and passed; where the workers' time went; and the exit code.
#pragma once
#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "portbench/measure/job.hpp"
#include "portbench/sweep/execute.hpp"
#include "portbench/sweep/plan.hpp"

namespace portbench::sweep {

struct config_row {
  std::string id, op;
  std::string ref_frontend, port_frontend;
  std::vector<double> ref_medians_ns, port_medians_ns;   ///< of runs with VALID timing
  double ref_best_ns = 0, port_best_ns = 0;   ///< NaN without a valid run
  double ratio = 0;                           ///< port speed / reference speed; NaN if unpaired
  double spread = 0;                          ///< the larger side's worst / best - 1
  std::string numerics, proof, timing;        ///< the worst over runs and both sides
  std::string status;                         ///< OK, or the last failure's status
  std::string error;                          ///< the first error, one line
  int runs = 0;
  bool check = false;                         ///< a check row: numerics of one bundle only

  /// Ran, passed numerics (and, in a sweep, proof) on both sides in every run, and was recorded.
  [[nodiscard]] bool passed() const;
};

/// Sums over every delivered configuration run.
struct cost_totals {
  double inputs_s = 0, check_s = 0, verify_s = 0, sampling_s = 0;
  int verified = 0, reused = 0;   ///< sides compared with the fp64 reference; sides reusing one
};

class sweep_tally {
 public:
  /// Adds one delivered (item, run); for a check plan only the reference side counts.
  void add(const planned_item& item, int run, const measure::item_report& r);
  /// Marks a configuration whose results could not be recorded (the sink threw).
  void not_recorded(const planned_item& item, const std::string& why);

  /// One row per configuration delivered so far, sorted by id.
  [[nodiscard]] std::vector<config_row> rows() const;
  [[nodiscard]] const cost_totals& costs() const noexcept { return m_costs; }
  /// Geometric mean of the ratios of the passed configurations; NaN when there is none.
  [[nodiscard]] double geomean() const;
  [[nodiscard]] std::size_t geomean_count() const;
  /// 0 when every planned configuration ran, passed and was recorded (and there was one),
  /// 1 otherwise (docs/cli.md).
  [[nodiscard]] int exit_code(const sweep_plan& plan, const sweep_summary& s) const;

 private:
  void finish(config_row& row) const;
  std::map<std::string, config_row> m_rows;
  cost_totals m_costs;
};

}  // namespace portbench::sweep
