// SPDX-License-Identifier: Apache-2.0
// Proof-of-execution and timing verdicts, as literal strings in files and tables.
#pragma once
#include <string>

namespace portbench::measure {

// Proof of execution, worst first when several apply.
inline constexpr const char* k_proof_not_executed = "NOT_EXECUTED";       ///< records missing for a launch
inline constexpr const char* k_proof_foreign_kernel = "FOREIGN_KERNEL";   ///< other work in the window
inline constexpr const char* k_proof_output_not_written = "OUTPUT_NOT_WRITTEN";
inline constexpr const char* k_proof_nondeterministic = "NONDETERMINISTIC";
inline constexpr const char* k_proof_executed = "EXECUTED";
inline constexpr const char* k_proof_not_checked = "NOT_CHECKED";

/// Rank of a proof verdict: when several apply to a side, the highest rank stands.
[[nodiscard]] inline int proof_severity(const std::string& proof) noexcept {
  if (proof == k_proof_not_executed) return 4;
  if (proof == k_proof_foreign_kernel) return 3;
  if (proof == k_proof_output_not_written) return 2;
  if (proof == k_proof_nondeterministic) return 1;
  return 0;
}

// Timing validity of a side's samples (the CI reached is kept beside it, not in the verdict).
inline constexpr const char* k_timing_valid = "VALID";
inline constexpr const char* k_timing_no_samples = "INVALID_NO_SAMPLES";
inline constexpr const char* k_timing_missing_records = "INVALID_MISSING_RECORDS";
inline constexpr const char* k_timing_zero_timestamp = "INVALID_ZERO_TIMESTAMP";
inline constexpr const char* k_timing_below_floor = "INVALID_BELOW_FLOOR";

// Outcome of a configuration's worker run.
inline constexpr const char* k_status_ok = "OK";
inline constexpr const char* k_status_error = "ERROR";     ///< a CUDA error (kept in the error text)
inline constexpr const char* k_status_crash = "CRASH";     ///< the worker died
inline constexpr const char* k_status_hang = "HANG";       ///< the worker was killed after the timeout
inline constexpr const char* k_status_not_run = "NOT_RUN";

}  // namespace portbench::measure
