// SPDX-License-Identifier: Apache-2.0
// Runs one stage command as a child process: an argv array (no shell), a given environment
// (nothing inherited), a working directory, stdout and stderr to a log file, stdin from
// /dev/null, in a process group of its own that is killed whole on a timeout and after the
// command ends (so a stage's background processes end with it).
#pragma once
#include <sys/types.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace portbench::agent {

struct process_spec {
  std::vector<std::string> argv;              ///< argv[0]: a path, or a name looked up in env PATH
  std::map<std::string, std::string> env;     ///< the whole environment of the child
  std::filesystem::path cwd;
  std::filesystem::path log;                  ///< stdout and stderr (appended); empty: /dev/null
  std::filesystem::path stdout_file;          ///< stdout alone here (truncated) when set
  double timeout_s = 0;                       ///< 0: none
  double kill_grace_s = 2;                    ///< SIGTERM to the group, then SIGKILL after this
  bool own_group = true;                      ///< false: stays in the caller's group (a built-in's calls)
  /// When it turns nonzero (a signal handler), the command is ended as on a timeout.
  const volatile std::sig_atomic_t* interrupt = nullptr;
};

struct process_result {
  int exit_code = -1;        ///< when it exited
  int signal = 0;            ///< when a signal ended it
  bool timed_out = false;
  bool interrupted = false;  ///< ended because `interrupt` was set
  double seconds = 0;
  std::string spawn_error;   ///< the command could not be started (then nothing ran)
  [[nodiscard]] bool ok() const noexcept {
    return spawn_error.empty() && !timed_out && !interrupted && signal == 0 && exit_code == 0;
  }
  /// "exit 0", "exit 3", "killed by signal 9", "timeout after 5 s", "cannot start: ..."
  [[nodiscard]] std::string describe() const;
};

/// Called once the child runs, with its pid (= its process group id), before waiting.
using started_callback = std::function<void(pid_t)>;

/// Finds argv[0] in the PATH of `env` when it has no '/'. Throws agent_error when not found.
[[nodiscard]] std::string resolve_program(const std::string& program, const std::map<std::string, std::string>& env);

[[nodiscard]] process_result run_process(const process_spec& spec, const started_callback& started = {});

/// The start time of a process (clock ticks since boot, /proc/PID/stat field 22), 0 when it
/// does not exist: with the pid it identifies a process across pid reuse.
[[nodiscard]] unsigned long long process_start_ticks(pid_t pid);

/// Kills the process group `pgid` when its leader still is the process that started at
/// `start_ticks` (a stage left running by a killed pipeline). Returns true if it was alive.
bool kill_stale_group(pid_t pgid, unsigned long long start_ticks);

/// Runs a command and captures its stdout (stderr to `log`), for the built-in stages' calls of
/// portbench subcommands. Stdout goes through `spec.stdout_file` (default: log + ".stdout").
struct captured {
  process_result result;
  std::string out;
};
[[nodiscard]] captured run_captured(const process_spec& spec);

}  // namespace portbench::agent
