// SPDX-License-Identifier: Apache-2.0
// What a report says, before any formatting: per configuration the best-of-N times and speed
// ratio, per operator the geomean with its bootstrap interval, the worst configuration, verdict
// counts and the verdict against the parity gate, and the same over all configurations.
#pragma once
#include <cstddef>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "portbench/stats/bootstrap.hpp"
#include "portbench/stats/parity.hpp"
#include "portbench/store/results.hpp"

namespace portbench::report {

/// Operator and overall verdicts. PARITY is the only pass. Precedence (first that applies):
/// CHECKS_FAILED, NO_DATA, UNVERIFIED, INCOMPLETE, then PARITY / BELOW_GATE / INCONCLUSIVE
/// from the interval against the gate.
namespace verdict = ::portbench::verdicts::parity;

struct report_options {
  double gate = stats::default_parity_gate;  ///< minimum port/reference speed for PARITY
  stats::bootstrap_options bootstrap;        ///< per-operator seeds are derived from its seed
};

/// One front end in one configuration.
struct role_summary {
  std::string frontend;
  std::size_t runs = 0;        ///< complete runs on file
  std::size_t timed_runs = 0;  ///< runs with VALID timing and samples
  std::vector<double> run_medians_ns;  ///< of the timed runs
  double best_ns = std::numeric_limits<double>::quiet_NaN();  ///< best of N
  double spread = std::numeric_limits<double>::quiet_NaN();   ///< worst / best - 1
  std::string numerics;  ///< a failure literal if any run has one, PASS if all pass, else NOT_CHECKED
  std::string proof;     ///< likewise with EXECUTED
  std::vector<std::string> errors;  ///< "run k: message"
};

struct config_row {
  std::string id;
  std::string op;
  std::string params_json;  ///< the configuration's parameters (bytes and flops come from them)
  role_summary reference;
  role_summary port;
  bool paired = false;  ///< both sides have at least one timed run
  double ratio = std::numeric_limits<double>::quiet_NaN();  ///< port speed / reference speed
};

using verdict_counts = std::map<std::string, std::size_t>;

struct operator_summary {
  std::string op;
  std::size_t configs = 0;
  std::size_t paired = 0;
  stats::interval geomean;  ///< of the paired configurations' ratios
  std::string worst_config;
  double worst_ratio = std::numeric_limits<double>::quiet_NaN();
  double max_spread = std::numeric_limits<double>::quiet_NaN();  ///< between-run, both sides
  verdict_counts numerics;  ///< over all runs, both sides
  verdict_counts proof;
  verdict_counts timing;
  std::size_t errors = 0;
  std::string verdict;
  std::string reason;  ///< one line: why this verdict
};

struct report_data {
  std::vector<std::string> files;
  store::provenance provenance;
  report_options options;
  std::vector<config_row> configs;
  std::vector<operator_summary> operators;  ///< in order of first appearance
  std::size_t paired = 0;
  stats::interval overall;  ///< geomean over all paired configurations
  std::string overall_verdict;
  std::string overall_reason;
  std::vector<std::string> notes;  ///< merge notes, incomplete runs skipped
};

/// Builds the report of one (possibly merged) results file.
[[nodiscard]] report_data build_report(const store::results_file& results,
                                       const report_options& opts = {});

}  // namespace portbench::report
