// SPDX-License-Identifier: Apache-2.0
// The failing configurations fed back to translate and diagnose (WORKDIR/failing.json, schema
// "portbench.agent-failing/1"), and a suite of just those (WORKDIR/failing-suite.json) that a
// translate may re-export alone. verify and benchmark outputs replace the list; a diagnose
// output adds its findings to the entries they name.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace portbench::agent {

inline constexpr std::string_view k_failing_schema = "portbench.agent-failing/1";

/// One configuration of the job: its id as portbench prints it, operator and parameters.
struct config_entry {
  std::string id;
  std::string op;
  nlohmann::json params;
  nlohmann::json suite_entry;   ///< the suite entry as written (op, params, any tuning)
};
using config_index = std::vector<config_entry>;

[[nodiscard]] nlohmann::json to_json(const config_index& index);
[[nodiscard]] config_index config_index_from_json(const nlohmann::json& doc);

/// An empty list (before any verify or benchmark ran).
[[nodiscard]] nlohmann::json empty_failing();

/// The configurations a verify output reports as not PASS / not EXECUTED.
[[nodiscard]] nlohmann::json failing_from_verify(const nlohmann::ordered_json& out, int seq,
                                                 const config_index& index);
/// The configurations a benchmark output reports below `gate`, without a ratio, or failing.
[[nodiscard]] nlohmann::json failing_from_benchmark(const nlohmann::ordered_json& out, int seq, double gate,
                                                    const config_index& index);
/// Adds a diagnose output's findings to the entries they name (a finding without a config
/// goes to every entry).
void add_findings(nlohmann::json& failing, const nlohmann::ordered_json& diagnose_out, int seq);

/// `{"suite": ..., "configs": [suite entries of the failing ids]}`.
[[nodiscard]] nlohmann::json failing_suite(const nlohmann::json& failing, const config_index& index,
                                           const std::string& name);

}  // namespace portbench::agent
