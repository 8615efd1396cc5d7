// SPDX-License-Identifier: Apache-2.0
// The router: prepares a work directory from a job, then runs stage after stage as child
// processes, validates each output against its schema, routes by the table (routing.hpp),
// feeds failing configurations back, and persists the state after every transition.
#pragma once
#include <csignal>
#include <filesystem>
#include <functional>
#include <iosfwd>
#include <string>

#include "portbench/agent/failing.hpp"
#include "portbench/agent/job.hpp"
#include "portbench/agent/state.hpp"

namespace portbench::agent {

struct pipeline_options {
  std::string portbench;        ///< this portbench binary: built-in stages run as its `agent stage`;
                                ///< they call the job's `portbench` (default: this one)
  /// Reads a suite file into the job's configurations with their ids (the CLI passes the
  /// harness's suite parser, so ids are the ones every portbench command prints).
  std::function<config_index(const std::filesystem::path& suite)> load_suite;
  bool overwrite = false;       ///< run: replace the pipeline files of an existing work directory
  std::ostream* progress = nullptr;   ///< one line per stage run
  char** environ = nullptr;     ///< the caller's environment (the whitelist picks from it)
  /// Set from a signal handler: the running stage's group is killed and the pipeline stops
  /// where it is (resumable).
  const volatile std::sig_atomic_t* interrupt = nullptr;
};

struct pipeline_result {
  std::string status;   ///< pipeline::complete, pipeline::stopped, or running when interrupted
  std::string stage;    ///< the stage a stop names
  std::string reason;
  std::filesystem::path workdir;
};

/// `portbench agent run`: prepares WORKDIR (job.json, suite.json, configs.json, an empty
/// failing.json, state.json) and runs the pipeline to its end.
[[nodiscard]] pipeline_result run_pipeline(const job& j, const pipeline_options& opt);

/// `portbench agent resume`: continues from state.json; a stage run a kill interrupted is
/// ended (its process group) and run again. A finished pipeline is reported as it is.
[[nodiscard]] pipeline_result resume_pipeline(const std::filesystem::path& workdir, const pipeline_options& opt);

/// `portbench agent status`: one line per stage run, then where it stands.
[[nodiscard]] std::string describe_state(const pipeline_state& s);

}  // namespace portbench::agent
