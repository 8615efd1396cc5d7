// SPDX-License-Identifier: Apache-2.0
// Verdict literals of the agent pipeline: each stage's output verdicts, verify's failure
// classes and the pipeline's end states. Literal strings in every file a machine reads.
#pragma once
#include <string_view>

namespace portbench::agent {

/// Stage names, in the order of the happy path (translate, ir_diff, verify, benchmark after
/// analyze; diagnose only on a failure).
namespace stage {
inline constexpr std::string_view analyze = "analyze";
inline constexpr std::string_view translate = "translate";
inline constexpr std::string_view ir_diff = "ir_diff";
inline constexpr std::string_view verify = "verify";
inline constexpr std::string_view benchmark = "benchmark";
inline constexpr std::string_view diagnose = "diagnose";
inline constexpr std::string_view all[] = {analyze, translate, ir_diff, verify, benchmark, diagnose};
}  // namespace stage

namespace verdict {
// analyze, ir_diff
inline constexpr std::string_view pass = "PASS";
inline constexpr std::string_view pass_with_notes = "PASS_WITH_NOTES";
inline constexpr std::string_view fail_fixable = "FAIL_FIXABLE";
inline constexpr std::string_view blocked = "BLOCKED";  ///< every stage: it cannot go on
// translate
inline constexpr std::string_view compiled = "COMPILED";
inline constexpr std::string_view fail_compile = "FAIL_COMPILE";
// verify
inline constexpr std::string_view all_pass = "ALL_PASS";
inline constexpr std::string_view fail = "FAIL";
// benchmark
inline constexpr std::string_view done = "DONE";
inline constexpr std::string_view investigate = "INVESTIGATE";
// diagnose
inline constexpr std::string_view fixable = "FIXABLE";
inline constexpr std::string_view aligned = "ALIGNED";
}  // namespace verdict

/// verify FAIL's class: who has to act.
namespace fail_class {
inline constexpr std::string_view host = "host";      ///< the launch side: bundle, plan, worker
inline constexpr std::string_view kernel = "kernel";  ///< the kernel computes wrongly or not at all
inline constexpr std::string_view env = "env";        ///< the machine: no GPU, driver, toolchain
inline constexpr std::string_view all[] = {host, kernel, env};
}  // namespace fail_class

/// How a pipeline ends, and its state while it has not.
namespace pipeline {
inline constexpr std::string_view running = "RUNNING";
inline constexpr std::string_view complete = "PIPELINE_COMPLETE";
inline constexpr std::string_view stopped = "PIPELINE_STOPPED";
}  // namespace pipeline

}  // namespace portbench::agent
