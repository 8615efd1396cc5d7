// SPDX-License-Identifier: Apache-2.0
// Every verdict literal portbench writes or reads, defined once. Files and tables carry these
// strings, never booleans; "no check ran" is its own literal and never a pass. This header sits
// at the bottom of the dependency graph (target portbench::verdicts, header only, no CUDA), so
// reference/, every harness part, the CLI and agent/ share it. Where two families use the same
// word (PASS, FAIL, BLOCKED, INCONCLUSIVE, ERROR, NOT_CHECKED), the later family names the first
// one's constant instead of spelling the string again.
//
// scripts/check_verdict_literals.sh (ctest unit.lint.verdict_literals) fails when a verdict
// literal is defined anywhere else.
#pragma once
#include <string_view>

namespace portbench::verdicts {

/// Numerics: a side's outputs against the fp64 reference (reference/tolerance.hpp judges).
namespace numerics {
inline constexpr std::string_view pass = "PASS";
inline constexpr std::string_view fail = "FAIL";
inline constexpr std::string_view not_checked = "NOT_CHECKED";   ///< nothing compared: never a pass
inline constexpr std::string_view error = "ERROR";               ///< the launch itself failed (check)
inline constexpr std::string_view not_run = "NOT_RUN";           ///< never launched (check)
}  // namespace numerics

/// Where a numerics verdict came from (verify/verified_outputs.hpp).
namespace numerics_source {
inline constexpr std::string_view verified = "VERIFIED";   ///< compared with the fp64 reference here
inline constexpr std::string_view reused = "REUSED";       ///< same inputs and output digest as a verified launch
}  // namespace numerics_source

/// Proof of execution: the timed work was the front end's own kernels and wrote the outputs.
namespace proof {
inline constexpr std::string_view not_executed = "NOT_EXECUTED";       ///< records missing for a launch
inline constexpr std::string_view foreign_kernel = "FOREIGN_KERNEL";   ///< other work in the window
inline constexpr std::string_view output_not_written = "OUTPUT_NOT_WRITTEN";
inline constexpr std::string_view nondeterministic = "NONDETERMINISTIC";
inline constexpr std::string_view executed = "EXECUTED";
inline constexpr std::string_view not_checked = numerics::not_checked;
}  // namespace proof

/// Timing validity of a side's samples. Every invalid verdict starts with "INVALID_".
namespace timing {
inline constexpr std::string_view valid = "VALID";
inline constexpr std::string_view not_measured = "NOT_MEASURED";
inline constexpr std::string_view invalid_no_samples = "INVALID_NO_SAMPLES";
inline constexpr std::string_view invalid_missing_records = "INVALID_MISSING_RECORDS";
inline constexpr std::string_view invalid_zero_timestamp = "INVALID_ZERO_TIMESTAMP";
inline constexpr std::string_view invalid_below_floor = "INVALID_BELOW_FLOOR";
inline constexpr std::string_view invalid_clock_throttled = "INVALID_CLOCK_THROTTLED";
}  // namespace timing

/// Why one sample is not a valid timing (the worker's protocol; such samples are dropped and
/// counted, docs/measurement.md).
namespace sample_problem {
inline constexpr std::string_view dropped_records = "DROPPED_RECORDS";
inline constexpr std::string_view missing_record = "MISSING_RECORD";
inline constexpr std::string_view zero_timestamp = "ZERO_TIMESTAMP";
inline constexpr std::string_view clock_throttled = "CLOCK_THROTTLED";
}  // namespace sample_problem

/// Outcome of one configuration's worker run (the status column of `portbench run`).
namespace status {
inline constexpr std::string_view ok = "OK";
inline constexpr std::string_view error = numerics::error;   ///< a CUDA or setup error (kept in the error text)
inline constexpr std::string_view crash = "CRASH";           ///< the worker died
inline constexpr std::string_view hang = "HANG";             ///< the worker was killed after the timeout
inline constexpr std::string_view bad_report = "BAD_REPORT"; ///< the worker's report line could not be read
inline constexpr std::string_view not_recorded = "NOT_RECORDED";   ///< measured, but the results sink failed
inline constexpr std::string_view not_run = numerics::not_run;
}  // namespace status

/// Marker written last on a run group: a run without it was cut short (crash, kill).
namespace run_state {
inline constexpr std::string_view complete = "COMPLETE";
}  // namespace run_state

/// Operator and overall verdicts of a report (report/model.hpp, stats/parity.hpp). PARITY is
/// the only pass.
namespace parity {
inline constexpr std::string_view parity = "PARITY";
inline constexpr std::string_view below_gate = "BELOW_GATE";
inline constexpr std::string_view inconclusive = "INCONCLUSIVE";
inline constexpr std::string_view no_data = "NO_DATA";
inline constexpr std::string_view checks_failed = "CHECKS_FAILED";   ///< a FAIL, a failed proof, an error
inline constexpr std::string_view unverified = "UNVERIFIED";         ///< some run NOT_CHECKED
inline constexpr std::string_view incomplete = "INCOMPLETE";         ///< some configuration unpaired
}  // namespace parity

/// Baseline against current (stats/regression.hpp, `portbench compare`).
namespace regression {
inline constexpr std::string_view regressed = "REGRESSED";
inline constexpr std::string_view improved = "IMPROVED";
inline constexpr std::string_view unchanged = "UNCHANGED";
inline constexpr std::string_view inconclusive = parity::inconclusive;
}  // namespace regression

/// The agent pipeline (agent/): each stage's output file starts with one of its literals.
namespace stage {
inline constexpr std::string_view blocked = "BLOCKED";              ///< every stage: cannot go on
inline constexpr std::string_view fail_fixable = "FAIL_FIXABLE";    ///< a fix can be attempted
namespace analyze {
inline constexpr std::string_view pass = numerics::pass;
inline constexpr std::string_view fail_fixable = stage::fail_fixable;
inline constexpr std::string_view blocked = stage::blocked;
}  // namespace analyze
namespace translate {
inline constexpr std::string_view compiled = "COMPILED";
inline constexpr std::string_view fail_compile = "FAIL_COMPILE";
inline constexpr std::string_view fail_fixable = stage::fail_fixable;
inline constexpr std::string_view blocked = stage::blocked;
}  // namespace translate
namespace ir_diff {
inline constexpr std::string_view pass = numerics::pass;
inline constexpr std::string_view pass_with_notes = "PASS_WITH_NOTES";
inline constexpr std::string_view fail_fixable = stage::fail_fixable;
inline constexpr std::string_view blocked = stage::blocked;
/// `portbench ir-diff` itself, beside the stage verdicts above.
inline constexpr std::string_view fail_structural = "FAIL_STRUCTURAL";
inline constexpr std::string_view not_comparable = "NOT_COMPARABLE";
}  // namespace ir_diff
namespace verify {
inline constexpr std::string_view all_pass = "ALL_PASS";
inline constexpr std::string_view fail = numerics::fail;
inline constexpr std::string_view blocked = stage::blocked;
}  // namespace verify
namespace benchmark {
inline constexpr std::string_view done = "DONE";
inline constexpr std::string_view investigate = "INVESTIGATE";
inline constexpr std::string_view blocked = stage::blocked;
}  // namespace benchmark
namespace diagnose {
inline constexpr std::string_view fixable = "FIXABLE";
inline constexpr std::string_view aligned = "ALIGNED";
inline constexpr std::string_view blocked = stage::blocked;
}  // namespace diagnose
}  // namespace stage

/// `portbench diagnose`: the run's verdict (first field of its JSON) and the finding tags
/// (docs/diagnose.md gives the evidence rule of each).
namespace diagnose_run {
inline constexpr std::string_view findings = "FINDINGS";                 ///< some configuration has findings
inline constexpr std::string_view no_findings = "NO_FINDINGS";           ///< diagnosed, nothing found
inline constexpr std::string_view nothing_selected = "NOTHING_SELECTED"; ///< no configuration below the gate / matched
inline constexpr std::string_view not_diagnosed = "NOT_DIAGNOSED";       ///< selected, but no bundle could be read
}  // namespace diagnose_run
namespace finding {
inline constexpr std::string_view extra_kernel = "EXTRA_KERNEL";
inline constexpr std::string_view register_spill = "REGISTER_SPILL";
inline constexpr std::string_view fewer_waves = "FEWER_WAVES";
inline constexpr std::string_view lower_occupancy = "LOWER_OCCUPANCY";
inline constexpr std::string_view no_tma = "NO_TMA";
inline constexpr std::string_view narrow_global_loads = "NARROW_GLOBAL_LOADS";
inline constexpr std::string_view narrow_global_stores = "NARROW_GLOBAL_STORES";
inline constexpr std::string_view loop_nest_differs = "LOOP_NEST_DIFFERS";
inline constexpr std::string_view tile_shape_differs = "TILE_SHAPE_DIFFERS";
inline constexpr std::string_view hint_differs = "HINT_DIFFERS";
inline constexpr std::string_view memory_ops_differ = "MEMORY_OPS_DIFFER";
inline constexpr std::string_view rereads_input = "REREADS_INPUT";
inline constexpr std::string_view rounding_differs = "ROUNDING_DIFFERS";
inline constexpr std::string_view more_instructions = "MORE_INSTRUCTIONS";
inline constexpr std::string_view launch_bound = "LAUNCH_BOUND";
inline constexpr std::string_view below_roofline = "BELOW_ROOFLINE";
}  // namespace finding

/// The pipeline as a whole.
namespace pipeline {
inline constexpr std::string_view running = "RUNNING";   ///< not ended yet (agent status)
inline constexpr std::string_view complete = "PIPELINE_COMPLETE";
inline constexpr std::string_view stopped = "PIPELINE_STOPPED";
}  // namespace pipeline

// ---- predicates -------------------------------------------------------------------------------

/// True for a non-empty literal of upper-case letters, digits and '_', starting with a letter:
/// the store accepts any such literal, so a new verdict needs no store change.
[[nodiscard]] constexpr bool is_literal(std::string_view text) noexcept {
  if (text.empty() || text.front() < 'A' || text.front() > 'Z') return false;
  for (char c : text) {
    const bool ok = (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    if (!ok) return false;
  }
  return true;
}

/// Exactly PASS.
[[nodiscard]] constexpr bool numerics_passed(std::string_view v) noexcept { return v == numerics::pass; }
/// Anything but PASS and NOT_CHECKED (FAIL, ERROR, a future failure literal).
[[nodiscard]] constexpr bool numerics_failed(std::string_view v) noexcept {
  return v != numerics::pass && v != numerics::not_checked;
}
/// Exactly EXECUTED.
[[nodiscard]] constexpr bool proof_passed(std::string_view v) noexcept { return v == proof::executed; }
/// Anything but EXECUTED and NOT_CHECKED.
[[nodiscard]] constexpr bool proof_failed(std::string_view v) noexcept {
  return v != proof::executed && v != proof::not_checked;
}
/// Exactly VALID.
[[nodiscard]] constexpr bool timing_valid(std::string_view v) noexcept { return v == timing::valid; }

/// Rank of a proof verdict: when several apply to a side, the highest rank stands.
[[nodiscard]] constexpr int proof_severity(std::string_view v) noexcept {
  if (v == proof::not_executed) return 4;
  if (v == proof::foreign_kernel) return 3;
  if (v == proof::output_not_written) return 2;
  if (v == proof::nondeterministic) return 1;
  return 0;
}

}  // namespace portbench::verdicts
