// SPDX-License-Identifier: Apache-2.0
// The built-in stages: analyze, ir_diff, verify, benchmark, diagnose and translate's `retune`.
// Each is a small adapter over portbench's own subcommands, run as child processes (the
// agent uses no harness internals): it builds their argv, runs them through a
// command_runner, and converts their JSON output into its stage's schema. The conversions are
// pure functions (adapters.hpp), tested on recorded outputs.
#pragma once
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace portbench::agent {

/// A stage run's context file, as a built-in reads it.
struct stage_context {
  nlohmann::json doc;
  std::filesystem::path file;
  [[nodiscard]] std::string text(const char* key) const { return doc.at(key).get<std::string>(); }
  [[nodiscard]] std::filesystem::path workdir() const { return text("workdir"); }
  [[nodiscard]] std::filesystem::path scratch() const;   ///< WORKDIR/<stage>/<seq>/, created
  [[nodiscard]] int seq() const { return doc.at("seq").get<int>(); }
  [[nodiscard]] double gate() const { return doc.at("gate").get<double>(); }
  [[nodiscard]] const nlohmann::json& measure() const { return doc.at("measure"); }
  [[nodiscard]] const nlohmann::json& options() const { return doc.at("options"); }
  /// The job's configuration ids, in suite order.
  [[nodiscard]] std::vector<std::string> config_ids() const;
};
[[nodiscard]] stage_context read_context(const std::filesystem::path& file);

/// One call of a program (portbench or the port's exporter) and what it gave.
struct command_call {
  std::vector<std::string> argv;
  int exit_code = -1;             ///< -1: it did not exit normally (see `outcome`)
  std::string outcome;            ///< "exit 0", "killed by signal 9", "cannot start: ..."
  std::string out;                ///< stdout
  std::string err_tail;           ///< the last lines of stderr
  double seconds = 0;
  std::filesystem::path stdout_file;
  [[nodiscard]] bool ok() const noexcept { return exit_code == 0; }
  /// The last non-empty stderr line (a portbench error is one line), or the outcome.
  [[nodiscard]] std::string first_error() const;
};

/// Runs the commands of a built-in; the default runs real processes in the stage's process
/// group, stdout to WORKDIR/<stage>/<seq>/<label>.out, stderr to the stage log.
class command_runner {
 public:
  virtual ~command_runner() = default;
  /// `portbench ARGS...`
  command_call portbench(const std::vector<std::string>& args, const std::string& label);
  /// Any program (the exporter).
  command_call program(const std::vector<std::string>& argv, const std::string& label);
  [[nodiscard]] const std::vector<command_call>& calls() const noexcept { return m_calls; }

 private:
  virtual command_call do_run(const std::vector<std::string>& argv, const std::string& label, bool is_portbench) = 0;
  std::vector<command_call> m_calls;
};

class process_command_runner final : public command_runner {
 public:
  explicit process_command_runner(const stage_context& ctx);

 private:
  command_call do_run(const std::vector<std::string>& argv, const std::string& label, bool is_portbench) override;
  const stage_context& m_ctx;
};

/// A built-in stage.
class builtin_stage {
 public:
  virtual ~builtin_stage() = default;
  [[nodiscard]] std::string_view name() const { return do_name(); }
  /// The stage output (verdict first). Failures of the commands it runs are verdicts (BLOCKED,
  /// FAIL env, ...), never exceptions; an exception is a fault of the built-in itself.
  [[nodiscard]] nlohmann::ordered_json run(const stage_context& ctx, command_runner& cmd) const {
    return do_run(ctx, cmd);
  }

 private:
  [[nodiscard]] virtual std::string_view do_name() const = 0;
  [[nodiscard]] virtual nlohmann::ordered_json do_run(const stage_context& ctx, command_runner& cmd) const = 0;
};

/// analyze, ir_diff, verify, benchmark, diagnose, retune. Throws agent_error for another name.
[[nodiscard]] const builtin_stage& find_builtin(std::string_view name);

/// `portbench agent stage NAME --context FILE`: runs the built-in and writes its output
/// (the context's `output`) atomically. Returns the exit code (0 when an output was written).
int run_builtin_stage(std::string_view name, const std::filesystem::path& context_file);

}  // namespace portbench::agent
