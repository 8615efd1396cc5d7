// SPDX-License-Identifier: Apache-2.0
#include "portbench/agent/context.hpp"

#include <cstdio>
#include <cstring>

namespace portbench::agent {
namespace {

using json = nlohmann::json;

// Placeholder name -> context key; each also becomes PORTBENCH_AGENT_<NAME>.
constexpr std::pair<const char*, const char*> k_placeholders[] = {
    {"workdir", "workdir"},         {"job", "job"},
    {"root", "root"},               {"operator", "operator"},
    {"ref_bundle", "reference_bundle"}, {"port_bundle", "port_bundle"},
    {"port_source", "port_source"}, {"port_frontend", "port_frontend"},
    {"suite", "suite"},             {"failing", "failing"},
    {"failing_suite", "failing_suite"}, {"output", "output"},
    {"context", "context"},         {"stage", "stage"},
    {"attempt", "attempt"},         {"repair", "repair_reason"},
    {"gate", "gate"},               {"portbench", "portbench"},
    {"log", "log"},
};

std::string as_text(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return "";
  return v.dump();
}

std::string upper(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

std::string workdir_layout::run_name(int seq, const std::string& stage_name) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%03d", seq);
  return std::string(buf) + "-" + stage_name;
}

json make_context(const job& j, const workdir_layout& w, const pipeline_state& s, const pending_run& run, int seq,
                  const std::string& portbench) {
  std::string name = workdir_layout::run_name(seq, run.stage);
  json last = json::object();
  for (const auto& [stage_name, out] : s.last_output) last[stage_name] = (w.root / out).string();
  const auto& cmd = j.stages.at(run.stage);
  return {{"schema", k_context_schema},
          {"stage", run.stage},
          {"attempt", run.attempt},
          {"seq", seq},
          {"repair", run.repair},
          {"repair_reason", run.repair_reason},
          {"workdir", w.root.string()},
          {"job", w.job().string()},
          {"root", j.root.string()},
          {"operator", j.op},
          {"reference_bundle", j.ref_bundle.string()},
          {"port_bundle", s.port_bundle},
          {"port_source", j.port_source.string()},
          {"port_frontend", j.port_frontend},
          {"exporter", j.exporter},
          {"suite", w.suite().string()},
          {"configs", w.configs().string()},
          {"failing", w.failing().string()},
          {"failing_suite", w.failing_suite().string()},
          {"output", (w.stages() / (name + ".json")).string()},
          {"context", (w.stages() / (name + ".context.json")).string()},
          {"log", (w.logs() / (name + ".log")).string()},
          {"scratch", (w.root / run.stage).string()},
          {"gate", j.gate.min_speed},
          {"gate_rule", j.gate.rule},
          {"measure", {{"runs", j.measure.runs}, {"time_cap_s", j.measure.time_cap_s},
                       {"min_samples", j.measure.min_samples}, {"max_samples", j.measure.max_samples},
                       {"timeout_s", j.measure.item_timeout_s}, {"devices", j.measure.devices},
                       {"seed", j.measure.seed}}},
          {"portbench", portbench},
          {"options", cmd.options},
          {"last_outputs", last}};
}

std::map<std::string, std::string> placeholders(const json& context) {
  std::map<std::string, std::string> values;
  for (const auto& [name, key] : k_placeholders) values[name] = as_text(context.value(key, json(nullptr)));
  return values;
}

std::vector<std::string> expand(const std::vector<std::string>& argv, const std::map<std::string, std::string>& values) {
  std::vector<std::string> out;
  for (const auto& arg : argv) {
    std::string text;
    for (std::size_t i = 0; i < arg.size();) {
      if (arg[i] == '{') {
        auto close = arg.find('}', i + 1);
        if (close != std::string::npos) {
          auto it = values.find(arg.substr(i + 1, close - i - 1));
          if (it != values.end()) {
            text += it->second;
            i = close + 1;
            continue;
          }
        }
      }
      text += arg[i++];
    }
    out.push_back(std::move(text));
  }
  return out;
}

std::map<std::string, std::string> stage_environment(const job& j, const json& context, char** caller) {
  std::map<std::string, std::string> env;
  for (char** e = caller; e && *e; ++e) {
    const char* eq = std::strchr(*e, '=');
    if (!eq) continue;
    std::string name(*e, static_cast<std::size_t>(eq - *e));
    for (const auto& allowed : j.env.pass) {
      if (name == allowed) env[name] = eq + 1;
    }
  }
  for (const auto& [k, v] : j.env.set) env[k] = v;
  for (const auto& [name, value] : placeholders(context)) env["PORTBENCH_AGENT_" + upper(name)] = value;
  return env;
}

}  // namespace portbench::agent
