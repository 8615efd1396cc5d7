// SPDX-License-Identifier: Apache-2.0
// The built-in stages (private to the agent library) and the helpers they share.
#pragma once
#include <string>
#include <vector>

#include "portbench/agent/adapters.hpp"
#include "portbench/agent/builtin.hpp"

namespace portbench::agent::builtins {

#define PB_BUILTIN(cls, stage_name)                                                                \
  class cls final : public builtin_stage {                                                         \
    [[nodiscard]] std::string_view do_name() const override { return stage_name; }                  \
    [[nodiscard]] nlohmann::ordered_json do_run(const stage_context& ctx, command_runner& cmd) const override; \
  };
PB_BUILTIN(analyze_stage, "analyze")
PB_BUILTIN(ir_diff_stage, "ir_diff")
PB_BUILTIN(verify_stage, "verify")
PB_BUILTIN(benchmark_stage, "benchmark")
PB_BUILTIN(diagnose_stage, "diagnose")
PB_BUILTIN(retune_stage, "retune")
#undef PB_BUILTIN

/// `--runs R --time-cap T ...` of the job's measure options (runs overridable).
[[nodiscard]] std::vector<std::string> measure_args(const nlohmann::json& measure, int runs = 0);
/// An anchored regex matching exactly these configuration ids (for --filter / --config).
[[nodiscard]] std::string exact_ids_regex(const std::vector<std::string>& ids);

/// `portbench run` of (ref, port, suite) into `out`, then `portbench report --format json`.
struct measured {
  adapters::command_failure failure;
  adapters::report_summary report;
};
[[nodiscard]] measured run_and_report(command_runner& cmd, const stage_context& ctx, std::vector<std::string> sides,
                                      const std::string& suite, const std::string& out, const std::string& label,
                                      int runs = 0);

/// A path relative to the stage's work directory.
[[nodiscard]] std::string relative(const stage_context& ctx, const std::filesystem::path& p);

}  // namespace portbench::agent::builtins
