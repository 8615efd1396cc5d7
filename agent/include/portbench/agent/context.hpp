// SPDX-License-Identifier: Apache-2.0
// What a stage run receives: a context file (WORKDIR/stages/NNN-<stage>.context.json, schema
// "portbench.agent-context/1"), the same facts as argv placeholders ({output}, {failing}, ...)
// and as PORTBENCH_AGENT_* environment variables, and nothing else of the caller's environment
// than the job's whitelist.
#pragma once
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "portbench/agent/job.hpp"
#include "portbench/agent/state.hpp"

namespace portbench::agent {

inline constexpr std::string_view k_context_schema = "portbench.agent-context/1";

/// Every file of the work directory the pipeline keeps.
struct workdir_layout {
  std::filesystem::path root;
  [[nodiscard]] std::filesystem::path job() const { return root / "job.json"; }
  [[nodiscard]] std::filesystem::path suite() const { return root / "suite.json"; }
  [[nodiscard]] std::filesystem::path configs() const { return root / "configs.json"; }
  [[nodiscard]] std::filesystem::path failing() const { return root / "failing.json"; }
  [[nodiscard]] std::filesystem::path failing_suite() const { return root / "failing-suite.json"; }
  [[nodiscard]] std::filesystem::path events() const { return root / "events.jsonl"; }
  [[nodiscard]] std::filesystem::path lock() const { return root / "lock"; }
  [[nodiscard]] std::filesystem::path stages() const { return root / "stages"; }
  [[nodiscard]] std::filesystem::path logs() const { return root / "logs"; }
  /// "007-verify"
  [[nodiscard]] static std::string run_name(int seq, const std::string& stage);
};

/// The context of one stage run.
[[nodiscard]] nlohmann::json make_context(const job& j, const workdir_layout& w, const pipeline_state& s,
                                          const pending_run& run, int seq, const std::string& portbench);

/// Placeholder values ({workdir}, {output}, ...) from a context.
[[nodiscard]] std::map<std::string, std::string> placeholders(const nlohmann::json& context);
/// Replaces every known {name} in each argument; other braces are left as written.
[[nodiscard]] std::vector<std::string> expand(const std::vector<std::string>& argv,
                                              const std::map<std::string, std::string>& values);

/// The whole environment of a stage: the whitelisted names that `caller` has, the job's
/// fixed values, and PORTBENCH_AGENT_* from the context.
[[nodiscard]] std::map<std::string, std::string> stage_environment(const job& j, const nlohmann::json& context,
                                                                   char** caller);

}  // namespace portbench::agent
