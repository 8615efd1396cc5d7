// SPDX-License-Identifier: Apache-2.0
// The job file (schema "portbench.agent-job/1", docs/agent.md): the operator, the reference
// bundle, the port (source, exporter, current bundle), the configurations, the gate, the
// measurement options of the built-in stages, the stage environment and one command per stage.
#pragma once
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace portbench::agent {

inline constexpr std::string_view k_job_schema = "portbench.agent-job/1";

/// How a stage runs: a built-in (`builtin`: analyze, ir_diff, verify, benchmark, diagnose,
/// retune) or an external command (`argv`, placeholders expanded, no shell).
struct stage_command {
  std::string builtin;
  std::vector<std::string> argv;
  double timeout_s = 0;            ///< 0: the job's default
  nlohmann::json options = nlohmann::json::object();  ///< the built-in's own options
};

/// Options of the built-in stages' `portbench run` calls.
struct measure_options {
  int runs = 2;
  double time_cap_s = 1;
  int min_samples = 10;
  int max_samples = 200;
  double item_timeout_s = 120;     ///< `--timeout` of run and check
  std::string devices = "0";
  std::uint64_t seed = 1;
};

struct gate_options {
  double min_speed = 0.95;         ///< port speed / reference speed
  /// "parity": the report's PARITY verdict (the whole geomean interval at or above the gate);
  /// "geomean": the geomean's estimate at or above it (upstream's rule).
  std::string rule = "parity";
};

struct env_options {
  std::vector<std::string> pass;   ///< names taken from the environment of `portbench agent`
  std::map<std::string, std::string> set;
};

struct job {
  std::filesystem::path file;      ///< where it was read from
  std::filesystem::path root;      ///< base of the job's relative paths (absolute)
  std::string name;
  std::string op;
  std::filesystem::path workdir;   ///< absolute
  std::filesystem::path ref_bundle;
  std::string port_frontend;
  std::filesystem::path port_source;   ///< may be empty
  std::filesystem::path port_bundle;   ///< the port as it is now; may be empty
  std::vector<std::string> exporter;   ///< argv with {suite}, {out} and optionally {tuning}
  std::filesystem::path suite;     ///< a suite file; its entries of `op` are the job's configurations
  nlohmann::json configs = nlohmann::json::array();  ///< or these (suite entries)
  gate_options gate;
  measure_options measure;
  env_options env;
  std::string portbench;           ///< the binary the built-in stages call; empty: this one
  double timeout_s = 1800;         ///< default per stage run
  std::map<std::string, stage_command> stages;   ///< every stage has one after parsing
};

/// The environment names passed to every stage unless the job says otherwise.
[[nodiscard]] const std::vector<std::string>& default_env_pass();

/// Reads and checks a job file. Relative paths are taken from `root` (default: the job
/// file's folder). `workdir_override`, when not empty, replaces the job's workdir. Throws
/// agent_error("<file>", "<field>", "<problem>").
[[nodiscard]] job load_job(const std::filesystem::path& file, const std::string& workdir_override = "");

/// The job with every path absolute, as the work directory keeps it (job.json) for resume.
[[nodiscard]] nlohmann::json to_json(const job& j);
[[nodiscard]] job job_from_json(const nlohmann::json& doc, const std::filesystem::path& file);

}  // namespace portbench::agent
