// SPDX-License-Identifier: Apache-2.0
// The built-ins' common parts: the context, the command runner, the registry and the entry
// point of `portbench agent stage`.
#include "portbench/agent/builtin.hpp"

#include <sstream>

#include "portbench/agent/adapters.hpp"
#include "portbench/agent/error.hpp"
#include "portbench/agent/files.hpp"
#include "portbench/agent/process.hpp"
#include "portbench/agent/schema.hpp"
#include "stages.hpp"

extern char** environ;

namespace portbench::agent {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

std::string tail_lines(const std::string& text, std::size_t lines) {
  std::size_t pos = text.size();
  while (lines > 0 && pos > 0) {
    pos = text.rfind('\n', pos - 1);
    if (pos == std::string::npos) return text;
    --lines;
  }
  return text.substr(pos + (pos < text.size() && text[pos] == '\n' ? 1 : 0));
}

}  // namespace

fs::path stage_context::scratch() const {
  fs::path dir = fs::path(text("scratch")) / std::to_string(seq());
  fs::create_directories(dir);
  return dir;
}

std::vector<std::string> stage_context::config_ids() const {
  std::vector<std::string> ids;
  for (const auto& c : read_json(text("configs"))) ids.push_back(c.at("id").get<std::string>());
  return ids;
}

stage_context read_context(const fs::path& file) {
  json doc = read_json(file);
  if (doc.value("schema", "") != "portbench.agent-context/1") throw agent_error(file.string(), "schema", "not a stage context");
  return {doc, file};
}

std::string command_call::first_error() const {
  // portbench's own error is one line "portbench: error: ..."; else the first line says most
  // (CLI11 ends with "Run with --help ...").
  std::istringstream lines(err_tail);
  std::string line, first, error;
  while (std::getline(lines, line)) {
    if (line.empty()) continue;
    if (first.empty()) first = line;
    if (line.find("error") != std::string::npos) error = line;
  }
  std::string pick = error.empty() ? first : error;
  return pick.empty() ? outcome : pick + " (" + outcome + ")";
}

command_call command_runner::portbench(const std::vector<std::string>& args, const std::string& label) {
  m_calls.push_back(do_run(args, label, true));
  return m_calls.back();
}

command_call command_runner::program(const std::vector<std::string>& argv, const std::string& label) {
  m_calls.push_back(do_run(argv, label, false));
  return m_calls.back();
}

process_command_runner::process_command_runner(const stage_context& ctx) : m_ctx(ctx) {}

command_call process_command_runner::do_run(const std::vector<std::string>& argv, const std::string& label,
                                            bool is_portbench) {
  command_call call;
  call.argv = argv;
  if (is_portbench) call.argv.insert(call.argv.begin(), m_ctx.text("portbench"));
  fs::path dir = m_ctx.scratch();
  process_spec spec;
  spec.argv = call.argv;
  for (char** e = environ; e && *e; ++e) {
    std::string kv(*e);
    auto eq = kv.find('=');
    if (eq != std::string::npos) spec.env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  spec.cwd = m_ctx.workdir();
  spec.own_group = false;   // ends with the stage when the router kills its group
  spec.stdout_file = dir / (label + ".out");
  fs::path err_file = dir / (label + ".err");
  fs::remove(err_file);
  spec.log = err_file;
  call.stdout_file = spec.stdout_file;
  captured c = run_captured(spec);
  call.out = c.out;
  call.seconds = c.result.seconds;
  call.outcome = c.result.describe();
  call.exit_code = c.result.spawn_error.empty() && c.result.signal == 0 && !c.result.timed_out ? c.result.exit_code : -1;
  std::string err;
  try {
    err = read_text(err_file);
  } catch (const agent_error&) {
  }
  call.err_tail = tail_lines(err, 8);
  // The stage log keeps every command and its stderr.
  std::fprintf(stderr, "$");
  for (const auto& a : call.argv) std::fprintf(stderr, " %s", a.c_str());
  std::fprintf(stderr, "\n%s[%s, %.1f s]\n", err.c_str(), call.outcome.c_str(), call.seconds);
  return call;
}

const builtin_stage& find_builtin(std::string_view name) {
  static const builtins::analyze_stage analyze;
  static const builtins::ir_diff_stage ir_diff;
  static const builtins::verify_stage verify;
  static const builtins::benchmark_stage benchmark;
  static const builtins::diagnose_stage diagnose;
  static const builtins::retune_stage retune;
  for (const builtin_stage* s : std::initializer_list<const builtin_stage*>{&analyze, &ir_diff, &verify, &benchmark,
                                                                             &diagnose, &retune}) {
    if (s->name() == name) return *s;
  }
  throw agent_error("builtin", std::string(name), "no such built-in (analyze, ir_diff, verify, benchmark, diagnose, retune)");
}

int run_builtin_stage(std::string_view name, const fs::path& context_file) {
  const builtin_stage& stage_impl = find_builtin(name);
  stage_context ctx = read_context(context_file);
  process_command_runner runner(ctx);
  nlohmann::ordered_json out;
  try {
    out = stage_impl.run(ctx, runner);
  } catch (const std::exception& e) {
    // A command whose output the adapter cannot read: the stage cannot go on, and says why.
    out = adapters::blocked_output(ctx.text("stage"), std::string("built-in ") + std::string(name) + ": " + e.what(),
                                   ctx.gate());
  }
  nlohmann::ordered_json commands = nlohmann::ordered_json::array();
  for (const auto& c : runner.calls()) {
    commands.push_back({{"argv", c.argv}, {"outcome", c.outcome}, {"seconds", c.seconds}});
  }
  out["commands"] = commands;
  write_json_atomic(ctx.text("output"), out);
  return 0;
}

}  // namespace portbench::agent
