// SPDX-License-Identifier: Apache-2.0
// The pipeline's persisted state (WORKDIR/state.json, schema "portbench.agent-state/1"):
// written atomically after every transition, so a pipeline killed at any point resumes at the
// stage run it was in (re-run from its start) or at the next one.
#pragma once
#include <sys/types.h>

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace portbench::agent {

inline constexpr std::string_view k_state_schema = "portbench.agent-state/1";

/// A stage run to start.
struct pending_run {
  std::string stage;
  int attempt = 1;              ///< 1 + the stage's counted runs before it
  bool repair = false;          ///< the one re-run after an output that failed its schema
  std::string repair_reason;    ///< the schema problem, given to the repair run
};

/// The stage run in progress (its process group, to end it when a killed pipeline resumes).
struct running_run {
  pending_run run;
  int seq = 0;
  pid_t pgid = 0;
  unsigned long long start_ticks = 0;
  std::string started_utc;
};

/// A finished stage run.
struct finished_run {
  int seq = 0;
  std::string stage;
  int attempt = 1;
  bool repair = false;
  std::string verdict;          ///< the stage's, or BLOCKED when the run broke the protocol
  std::string fail_class;
  std::string output;           ///< relative to the work directory
  std::string outcome;          ///< "exit 0", "timeout after ...", "invalid: ..."
  double seconds = 0;
};

struct pipeline_state {
  std::string status;           ///< pipeline::running | complete | stopped
  int seq = 0;                  ///< the last stage run's number
  std::map<std::string, int> runs;   ///< counted runs per stage (caps)
  std::optional<pending_run> next;
  std::optional<running_run> current;
  std::string port_bundle;      ///< the port the next stages use (absolute); translate changes it
  std::map<std::string, std::string> last_output;  ///< stage -> its last valid output (relative)
  std::vector<finished_run> history;
  std::string stop_stage, stop_reason;
  std::string created_utc, updated_utc;
};

[[nodiscard]] std::filesystem::path state_file(const std::filesystem::path& workdir);
void save_state(const std::filesystem::path& workdir, pipeline_state& s);
/// Throws agent_error naming the file when it is missing or malformed.
[[nodiscard]] pipeline_state load_state(const std::filesystem::path& workdir);

[[nodiscard]] nlohmann::json to_json(const pipeline_state& s);
[[nodiscard]] pipeline_state state_from_json(const nlohmann::json& doc, const std::string& file);

}  // namespace portbench::agent
