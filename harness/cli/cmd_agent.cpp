// SPDX-License-Identifier: Apache-2.0
// `portbench agent run JOB.json | status WORKDIR | resume WORKDIR`: the bounded port pipeline
// (docs/agent.md). Also `agent routes` / `agent schemas` (the routing table and the stage
// output schemas, as docs/agent.md shows them) and the hidden `agent stage NAME --context F`
// that runs a built-in stage as the router's child process.
#include <csignal>
#include <cstdio>
#include <iostream>
#include <memory>

#include "commands.hpp"
#include "portbench/agent/builtin.hpp"
#include "portbench/agent/pipeline.hpp"
#include "portbench/agent/routing.hpp"
#include "portbench/agent/schema.hpp"
#include "portbench/agent/verdicts.hpp"
#include "portbench/sweep/suite.hpp"

extern char** environ;

namespace portbench::cli {
namespace {

volatile std::sig_atomic_t g_interrupt = 0;   // set by SIGINT/SIGTERM while a pipeline runs

extern "C" void on_interrupt(int) { g_interrupt = 1; }

struct agent_cli_options {
  std::string job_file, workdir, stage_name, context_file;
  std::string status_format = "text", routes_format = "mermaid";
  bool overwrite = false;
};

// The harness's suite parser gives the ids that every portbench command prints.
agent::config_index load_suite_ids(const std::filesystem::path& file) {
  agent::config_index index;
  for (const auto& e : sweep::load_suite(file.string()).entries) {
    index.push_back({e.config.id(), e.config.op, e.params, nlohmann::json::object()});
  }
  return index;
}

agent::pipeline_options options(const agent_cli_options& o, const std::string& portbench) {
  agent::pipeline_options p;
  p.portbench = portbench;
  p.load_suite = load_suite_ids;
  p.overwrite = o.overwrite;
  p.progress = &std::cout;
  p.environ = environ;
  p.interrupt = &g_interrupt;
  return p;
}

int finish(const agent::pipeline_result& r) {
  if (r.status == agent::pipeline::complete) return 0;
  if (r.status == agent::pipeline::stopped) return 1;
  std::printf("interrupted; `portbench agent resume %s` continues\n", r.workdir.string().c_str());
  return 130;
}

// Signals end the running stage's process group and leave the state resumable.
struct interrupt_handlers {
  struct sigaction old_int {}, old_term {};
  interrupt_handlers() {
    struct sigaction sa {};
    sa.sa_handler = on_interrupt;
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGINT, &sa, &old_int);
    ::sigaction(SIGTERM, &sa, &old_term);
  }
  ~interrupt_handlers() {
    ::sigaction(SIGINT, &old_int, nullptr);
    ::sigaction(SIGTERM, &old_term, nullptr);
  }
};

int run_agent(const agent_cli_options& o) {
  agent::job j = agent::load_job(o.job_file, o.workdir);
  interrupt_handlers handlers;
  return finish(agent::run_pipeline(j, options(o, self_executable())));
}

}  // namespace

command_action add_agent_command(CLI::App& app) {
  auto o = std::make_shared<agent_cli_options>();
  auto* cmd = app.add_subcommand("agent", "The bounded port pipeline: run a job, show or resume its state");
  cmd->require_subcommand(1);
  auto* run = cmd->add_subcommand("run", "Run an agent job (portbench.agent-job/1) to PIPELINE_COMPLETE or PIPELINE_STOPPED");
  run->add_option("job", o->job_file, "Job file")->required();
  run->add_option("--workdir", o->workdir, "Work directory (default: the job's workdir)");
  run->add_flag("--overwrite", o->overwrite, "Replace the pipeline files of a work directory that holds one");
  auto* status = cmd->add_subcommand("status", "Show a work directory's stage runs, verdicts and where it stands");
  status->add_option("workdir", o->workdir, "Work directory")->required();
  status->add_option("--format", o->status_format, "text (default) or json (the state file)")
      ->check(CLI::IsMember({"text", "json"}));
  auto* resume = cmd->add_subcommand("resume", "Continue a pipeline where it stopped (a killed run resumes its stage)");
  resume->add_option("workdir", o->workdir, "Work directory")->required();
  auto* routes = cmd->add_subcommand("routes", "Print the routing table and caps (mermaid or md)");
  routes->add_option("--format", o->routes_format, "mermaid (default) or md")->check(CLI::IsMember({"mermaid", "md"}));
  auto* schemas = cmd->add_subcommand("schemas", "Print the stage output schemas (Markdown)");
  auto* stage = cmd->add_subcommand("stage", "");   // the router's child; hidden from --help
  stage->group("");
  stage->add_option("name", o->stage_name, "Built-in stage")->required();
  stage->add_option("--context", o->context_file, "Stage context file")->required();

  return [=]() {
    if (run->parsed()) return run_agent(*o);
    if (status->parsed()) {
      auto s = agent::load_state(o->workdir);
      if (o->status_format == "json") std::printf("%s\n", agent::to_json(s).dump(2).c_str());
      else std::printf("%s", agent::describe_state(s).c_str());
      return 0;
    }
    if (resume->parsed()) {
      interrupt_handlers handlers;
      return finish(agent::resume_pipeline(o->workdir, options(*o, self_executable())));
    }
    if (routes->parsed()) {
      std::printf("%s", o->routes_format == "md" ? agent::routes_markdown().c_str() : agent::routes_mermaid().c_str());
      return 0;
    }
    if (schemas->parsed()) {
      std::printf("%s", agent::schemas_markdown().c_str());
      return 0;
    }
    return agent::run_builtin_stage(o->stage_name, o->context_file);
  };
}

}  // namespace portbench::cli
