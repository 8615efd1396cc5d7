// SPDX-License-Identifier: Apache-2.0
// The agent pipeline's vocabulary under the names agent/ uses: stage names, each stage's
// output verdicts, verify's failure classes and the pipeline's end states. The verdicts are
// defined in portbench/verdicts.hpp (the one place verdicts are spelled) and named here.
#pragma once
#include <string_view>

#include "portbench/verdicts.hpp"

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
inline constexpr std::string_view pass = verdicts::stage::ir_diff::pass;
inline constexpr std::string_view pass_with_notes = verdicts::stage::ir_diff::pass_with_notes;
inline constexpr std::string_view fail_fixable = verdicts::stage::fail_fixable;
inline constexpr std::string_view blocked = verdicts::stage::blocked;  ///< every stage: it cannot go on
// translate
inline constexpr std::string_view compiled = verdicts::stage::translate::compiled;
inline constexpr std::string_view fail_compile = verdicts::stage::translate::fail_compile;
// verify
inline constexpr std::string_view all_pass = verdicts::stage::verify::all_pass;
inline constexpr std::string_view fail = verdicts::stage::verify::fail;
// benchmark
inline constexpr std::string_view done = verdicts::stage::benchmark::done;
inline constexpr std::string_view investigate = verdicts::stage::benchmark::investigate;
// diagnose
inline constexpr std::string_view fixable = verdicts::stage::diagnose::fixable;
inline constexpr std::string_view aligned = verdicts::stage::diagnose::aligned;
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
inline constexpr std::string_view running = verdicts::pipeline::running;
inline constexpr std::string_view complete = verdicts::pipeline::complete;
inline constexpr std::string_view stopped = verdicts::pipeline::stopped;
}  // namespace pipeline

}  // namespace portbench::agent
