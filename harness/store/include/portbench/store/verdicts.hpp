// SPDX-License-Identifier: Apache-2.0
// Verdict literals as they appear in results files. Files carry the strings, never booleans;
// the store accepts any upper-case literal so that new verdicts need no store change, and
// "no check ran" is its own literal that never counts as a pass.
#pragma once
#include <string_view>

namespace portbench::store {

/// Numerics against the fp64 reference.
namespace numerics {
inline constexpr std::string_view pass = "PASS";
inline constexpr std::string_view fail = "FAIL";
inline constexpr std::string_view not_checked = "NOT_CHECKED";
}  // namespace numerics

/// Proof of execution: the timed work was the front end's own kernels and wrote the outputs.
namespace proof {
inline constexpr std::string_view executed = "EXECUTED";
inline constexpr std::string_view not_executed = "NOT_EXECUTED";
inline constexpr std::string_view foreign_kernel = "FOREIGN_KERNEL";
inline constexpr std::string_view output_not_written = "OUTPUT_NOT_WRITTEN";
inline constexpr std::string_view nondeterministic = "NONDETERMINISTIC";
inline constexpr std::string_view not_checked = "NOT_CHECKED";
}  // namespace proof

/// Timing validity of a run's samples. Every invalid verdict starts with "INVALID_".
namespace timing {
inline constexpr std::string_view valid = "VALID";
inline constexpr std::string_view not_measured = "NOT_MEASURED";
inline constexpr std::string_view invalid_no_samples = "INVALID_NO_SAMPLES";
inline constexpr std::string_view invalid_missing_records = "INVALID_MISSING_RECORDS";
inline constexpr std::string_view invalid_zero_timestamp = "INVALID_ZERO_TIMESTAMP";
inline constexpr std::string_view invalid_below_floor = "INVALID_BELOW_FLOOR";
inline constexpr std::string_view invalid_clock_throttled = "INVALID_CLOCK_THROTTLED";
}  // namespace timing

/// Marker written last on a run group: a run without it was cut short (crash, kill).
inline constexpr std::string_view run_complete = "COMPLETE";

/// True for a non-empty literal of upper-case letters, digits and '_', starting with a letter.
[[nodiscard]] bool is_verdict_literal(std::string_view text) noexcept;
[[nodiscard]] bool numerics_passed(std::string_view v) noexcept;  ///< exactly PASS
[[nodiscard]] bool numerics_failed(std::string_view v) noexcept;  ///< anything but PASS/NOT_CHECKED
[[nodiscard]] bool proof_passed(std::string_view v) noexcept;     ///< exactly EXECUTED
[[nodiscard]] bool proof_failed(std::string_view v) noexcept;     ///< anything but EXECUTED/NOT_CHECKED
[[nodiscard]] bool timing_valid(std::string_view v) noexcept;     ///< exactly VALID

}  // namespace portbench::store
