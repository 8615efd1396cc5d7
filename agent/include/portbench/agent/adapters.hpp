// SPDX-License-Identifier: Apache-2.0
// Adapters between portbench's own commands and the stage schemas: a reader per command's JSON
// output, and a conversion per built-in stage. Pure functions, so each is tested on a
// recorded output; one place to adjust when a command's output changes.
//
//   command                                      reader           in main now?
//   portbench report --format json               read_report      yes (portbench.report/1)
//   the port sides of a report (verify)          verify_rows      numerics and the CUPTI proof
//   portbench inspect --format json              read_inspect     issue 13 adds --format json
//   portbench ir-diff REF PORT --format json     read_ir_diff     issue 18 adds the command
//   portbench diagnose FILE --format json        read_diagnose    issue 18 adds the command
//   bundle manifest.json configs[].variants      read_variants    the manifest contract (optional field)
#pragma once
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace portbench::agent::adapters {

inline constexpr double nan = std::numeric_limits<double>::quiet_NaN();

// ---- readers: throw agent_error("<command> output", "<field>", "<problem>") on a shape they
// do not know, so a changed command is named, not misread.

struct report_config {
  std::string id;
  bool paired = false;
  double ratio = nan;          ///< port speed / reference speed
  double reference_ns = nan, port_ns = nan;   ///< best of N
  std::string ref_numerics, ref_proof, port_numerics, port_proof;
  std::vector<std::string> errors;
};
struct report_summary {
  std::string verdict, reason;
  double geomean = nan, low = nan, high = nan;
  std::vector<report_config> configs;
};
[[nodiscard]] report_summary read_report(const nlohmann::json& doc);

/// One configuration as verify judges it: the port side's numerics and proof verdicts.
struct check_row {
  std::string id, frontend, numerics, proof, status, error;
  double max_abs_err = nan, max_rel_err = nan;
};
/// The port sides of a report: `portbench check` prints no proof (it launches without CUPTI),
/// so verify takes both verdicts from a paired run (numerics judged against fp64 relative to
/// the reference front end's own error, proof from the kernel records). A side the run left
/// without a verdict is NOT_CHECKED.
[[nodiscard]] std::vector<check_row> verify_rows(const report_summary& report);

struct inspect_entry {
  std::string name;
  int registers = -1;
  bool tile_ir = false;
};
struct inspect_info {
  std::string frontend, op, arch;
  std::vector<inspect_entry> entries;
};
[[nodiscard]] inspect_info read_inspect(const nlohmann::json& doc);

struct ir_difference {
  std::string kind, reference, port, where;
};
struct ir_diff_config {
  std::string id, verdict;
  std::vector<ir_difference> differences;
};
/// One call's output; `id` names the configuration when the output does not.
[[nodiscard]] std::vector<ir_diff_config> read_ir_diff(const nlohmann::json& doc, const std::string& id);

struct finding {
  std::string config, tag, evidence;
  int rank = 0;
};
[[nodiscard]] std::vector<finding> read_diagnose(const nlohmann::json& doc);

struct variant {
  std::string name;
  nlohmann::json tuning;
};
/// The tuning variants a manifest declares for the configuration with these params.
[[nodiscard]] std::vector<variant> read_variants(const nlohmann::json& manifest, const nlohmann::json& params);
/// The `tuning` a manifest records for the configuration with these params (null if none).
[[nodiscard]] nlohmann::json read_tuning(const nlohmann::json& manifest, const nlohmann::json& params);

// ---- conversions into stage outputs (verdict first).

/// A failed command as a stage input: its one-line error.
struct command_failure {
  bool failed = false;
  std::string error;
};

struct benchmark_inputs {
  report_summary report;
  std::vector<std::string> job_ids;
  double gate = 0.95;
  std::string rule = "parity";
  std::string results;   ///< the results file, relative to the work directory
};
[[nodiscard]] nlohmann::ordered_json benchmark_output(const benchmark_inputs& in);

struct verify_inputs {
  command_failure device;        ///< the device could not be described (no GPU, no driver)
  command_failure check;         ///< the verifying run refused the bundles (exit 2) with a device present
  std::vector<check_row> rows;
  std::vector<std::string> job_ids;
};
[[nodiscard]] nlohmann::ordered_json verify_output(const verify_inputs& in);

struct analyze_inputs {
  command_failure inspect;
  inspect_info reference;
  command_failure baseline;      ///< the A/A run or its report failed
  report_summary report;
  std::vector<std::string> job_ids;
  std::string baseline_file;     ///< relative to the work directory
};
[[nodiscard]] nlohmann::ordered_json analyze_output(const analyze_inputs& in);

struct ir_diff_inputs {
  command_failure failure;
  std::vector<ir_diff_config> configs;
  /// Structural differences are notes, not FAIL_FIXABLE (for a translate that cannot change
  /// the structure, such as retune).
  bool advisory = false;
};
[[nodiscard]] nlohmann::ordered_json ir_diff_output(const ir_diff_inputs& in);

/// A BLOCKED output of `stage` with every field its schema requires (empty lists).
[[nodiscard]] nlohmann::ordered_json blocked_output(std::string_view stage, const std::string& reason, double gate);

struct diagnose_inputs {
  command_failure failure;
  std::vector<finding> findings;
  std::string results;
};
[[nodiscard]] nlohmann::ordered_json diagnose_output(const diagnose_inputs& in);

}  // namespace portbench::agent::adapters
