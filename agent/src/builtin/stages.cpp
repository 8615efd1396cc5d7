// SPDX-License-Identifier: Apache-2.0
// analyze, ir_diff, verify, benchmark and diagnose over portbench's own subcommands.
#include "stages.hpp"

#include <sstream>

#include "portbench/agent/error.hpp"
#include "portbench/agent/files.hpp"

namespace portbench::agent::builtins {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using ojson = nlohmann::ordered_json;
using adapters::command_failure;

// Parses a command's stdout as JSON; a failure names the command.
json parse_stdout(const command_call& c, const std::string& what) {
  try {
    return json::parse(c.out);
  } catch (const json::exception& e) {   // parse_error, and out_of_range for a number too large
    throw agent_error(c.stdout_file.string(), "", what + " printed no JSON: " + e.what());
  }
}

command_failure failure_of(const command_call& c) { return {true, c.first_error()}; }

std::string first_device(const json& measure) {
  std::string devices = measure.value("devices", "0");
  return devices.substr(0, devices.find(','));
}

}  // namespace

std::vector<std::string> measure_args(const json& m, int runs) {
  auto text = [](double v) {
    std::ostringstream s;
    s << v;
    return s.str();
  };
  return {"--runs", std::to_string(runs > 0 ? runs : m.at("runs").get<int>()),
          "--time-cap", text(m.at("time_cap_s").get<double>()),
          "--min-samples", std::to_string(m.at("min_samples").get<int>()),
          "--max-samples", std::to_string(m.at("max_samples").get<int>()),
          "--timeout", text(m.at("timeout_s").get<double>()),
          "--devices", m.at("devices").get<std::string>(),
          "--seed", std::to_string(m.at("seed").get<std::uint64_t>())};
}

std::string exact_ids_regex(const std::vector<std::string>& ids) {
  std::string out = "^(";
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (i > 0) out += "|";
    for (char c : ids[i]) {
      if (std::string_view("\\^$.|?*+()[]{}").find(c) != std::string_view::npos) out += '\\';
      out += c;
    }
  }
  return out + ")$";
}

std::string relative(const stage_context& ctx, const fs::path& p) {
  return fs::relative(p, ctx.workdir()).string();
}

measured run_and_report(command_runner& cmd, const stage_context& ctx, std::vector<std::string> sides,
                        const std::string& suite, const std::string& out, const std::string& label, int runs) {
  measured m;
  std::vector<std::string> args = {"run"};
  args.insert(args.end(), sides.begin(), sides.end());
  for (const auto& a : std::vector<std::string>{"--suite", suite, "--out", out, "--overwrite"}) args.push_back(a);
  for (const auto& a : measure_args(ctx.measure(), runs)) args.push_back(a);
  command_call run = cmd.portbench(args, label + ".run");
  // Exit 1 is a sweep that ran and found failures: the report says which.
  if (run.exit_code != 0 && run.exit_code != 1) {
    m.failure = failure_of(run);
    return m;
  }
  command_call report = cmd.portbench({"report", out, "--format", "json", "--gate", std::to_string(ctx.gate())},
                                      label + ".report");
  if (!report.ok()) {
    m.failure = failure_of(report);
    return m;
  }
  m.report = adapters::read_report(parse_stdout(report, "portbench report"));
  return m;
}

ojson analyze_stage::do_run(const stage_context& ctx, command_runner& cmd) const {
  adapters::analyze_inputs in;
  in.job_ids = ctx.config_ids();
  std::string ref = ctx.text("reference_bundle");
  command_call inspect = cmd.portbench({"inspect", ref, "--format", "json"}, "inspect");
  if (!inspect.ok()) {
    in.inspect = failure_of(inspect);
    return adapters::analyze_output(in);
  }
  in.reference = adapters::read_inspect(parse_stdout(inspect, "portbench inspect"));
  fs::path baseline = ctx.scratch() / "baseline.h5";
  measured m = run_and_report(cmd, ctx, {"--aa", "--ref", ref}, ctx.text("suite"), baseline.string(), "baseline");
  in.baseline = m.failure;
  in.report = m.report;
  if (fs::exists(baseline)) in.baseline_file = relative(ctx, baseline);
  return adapters::analyze_output(in);
}

ojson ir_diff_stage::do_run(const stage_context& ctx, command_runner& cmd) const {
  adapters::ir_diff_inputs in;
  in.advisory = ctx.options().value("advisory", false);
  int n = 0;
  for (const auto& id : ctx.config_ids()) {
    // --config is a regular expression (search): anchored and escaped, it names this id alone.
    command_call c = cmd.portbench({"ir-diff", ctx.text("reference_bundle"), ctx.text("port_bundle"), "--config",
                                    exact_ids_regex({id}), "--format", "json"},
                                   "ir-diff-" + std::to_string(n++));
    // ir-diff exits 1 for a structural difference or NOT_COMPARABLE, 2 on bad input.
    if (c.exit_code != 0 && c.exit_code != 1) {
      in.failure = failure_of(c);
      break;
    }
    for (auto& r : adapters::read_ir_diff(parse_stdout(c, "portbench ir-diff"), id)) in.configs.push_back(r);
  }
  return adapters::ir_diff_output(in);
}

ojson verify_stage::do_run(const stage_context& ctx, command_runner& cmd) const {
  adapters::verify_inputs in;
  in.job_ids = ctx.config_ids();
  std::string device = first_device(ctx.measure());
  // The device first: a machine without one is an env failure, whatever check would say.
  command_call describe = cmd.portbench({"worker", "--describe-device", device}, "device");
  if (!describe.ok()) {
    in.device = failure_of(describe);
    return adapters::verify_output(in);
  }
  // One paired run: `check` launches without CUPTI, so it has no proof verdict to give.
  fs::path results = ctx.scratch() / "verify.h5";
  measured m = run_and_report(cmd, ctx, {"--ref", ctx.text("reference_bundle"), "--port", ctx.text("port_bundle")},
                              ctx.text("suite"), results.string(), "verify", 1);
  if (m.failure.failed) {
    in.check = m.failure;
    return adapters::verify_output(in);
  }
  in.rows = adapters::verify_rows(m.report);
  return adapters::verify_output(in);
}

ojson benchmark_stage::do_run(const stage_context& ctx, command_runner& cmd) const {
  fs::path results = ctx.scratch() / "results.h5";
  measured m = run_and_report(cmd, ctx, {"--ref", ctx.text("reference_bundle"), "--port", ctx.text("port_bundle")},
                              ctx.text("suite"), results.string(), "benchmark");
  if (m.failure.failed) return adapters::blocked_output("benchmark", "the benchmark could not run: " + m.failure.error, ctx.gate());
  adapters::benchmark_inputs in{m.report, ctx.config_ids(), ctx.gate(), ctx.text("gate_rule"), relative(ctx, results)};
  return adapters::benchmark_output(in);
}

ojson diagnose_stage::do_run(const stage_context& ctx, command_runner& cmd) const {
  adapters::diagnose_inputs in;
  json failing = read_json(ctx.text("failing"));
  std::vector<std::string> ids;
  for (const auto& e : failing.at("configs")) ids.push_back(e.at("id").get<std::string>());
  if (ids.empty()) ids = ctx.config_ids();
  // A benchmark's results file when the failures come from one; else a short run of the
  // failing configurations gives diagnose its file.
  fs::path results;
  if (failing.contains("results")) results = ctx.workdir() / failing["results"].get<std::string>();
  if (results.empty() || !fs::exists(results)) {
    results = ctx.scratch() / "diagnose.h5";
    std::string suite = failing.at("configs").empty() ? ctx.text("suite") : ctx.text("failing_suite");
    measured m = run_and_report(cmd, ctx, {"--ref", ctx.text("reference_bundle"), "--port", ctx.text("port_bundle")},
                                suite, results.string(), "diagnose", 1);
    if (m.failure.failed) {
      in.failure = m.failure;
      return adapters::diagnose_output(in);
    }
  }
  in.results = relative(ctx, results);
  command_call c = cmd.portbench({"diagnose", results.string(), "--format", "json", "--gate", std::to_string(ctx.gate()),
                                  "--config", exact_ids_regex(ids)},
                                 "diagnose");
  if (c.exit_code != 0 && c.exit_code != 1) {
    in.failure = failure_of(c);
    return adapters::diagnose_output(in);
  }
  in.findings = adapters::read_diagnose(parse_stdout(c, "portbench diagnose"));
  return adapters::diagnose_output(in);
}

}  // namespace portbench::agent::builtins
