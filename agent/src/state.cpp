// SPDX-License-Identifier: Apache-2.0
#include "portbench/agent/state.hpp"

#include "portbench/agent/error.hpp"
#include "portbench/agent/files.hpp"
#include "portbench/agent/verdicts.hpp"

namespace portbench::agent {
namespace {

using json = nlohmann::json;

json pending_json(const pending_run& p) {
  return {{"stage", p.stage}, {"attempt", p.attempt}, {"repair", p.repair}, {"repair_reason", p.repair_reason}};
}

pending_run pending_from(const json& j) {
  return {j.at("stage").get<std::string>(), j.at("attempt").get<int>(), j.at("repair").get<bool>(),
          j.at("repair_reason").get<std::string>()};
}

}  // namespace

std::filesystem::path state_file(const std::filesystem::path& workdir) { return workdir / "state.json"; }

json to_json(const pipeline_state& s) {
  json history = json::array();
  for (const auto& h : s.history) {
    history.push_back({{"seq", h.seq}, {"stage", h.stage}, {"attempt", h.attempt}, {"repair", h.repair},
                       {"verdict", h.verdict}, {"fail_class", h.fail_class}, {"output", h.output},
                       {"outcome", h.outcome}, {"seconds", h.seconds}});
  }
  json doc = {{"schema", k_state_schema}, {"status", s.status},   {"seq", s.seq},
              {"runs", s.runs},           {"port_bundle", s.port_bundle}, {"last_output", s.last_output},
              {"history", history},       {"created_utc", s.created_utc}, {"updated_utc", s.updated_utc}};
  doc["next"] = s.next ? pending_json(*s.next) : json(nullptr);
  if (s.current) {
    doc["current"] = pending_json(s.current->run);
    doc["current"]["seq"] = s.current->seq;
    doc["current"]["pgid"] = s.current->pgid;
    doc["current"]["start_ticks"] = s.current->start_ticks;
    doc["current"]["started_utc"] = s.current->started_utc;
  } else {
    doc["current"] = nullptr;
  }
  doc["stop"] = s.status == pipeline::stopped ? json{{"stage", s.stop_stage}, {"reason", s.stop_reason}} : json(nullptr);
  doc["reason"] = s.stop_reason;   // why it ended (complete or stopped)
  return doc;
}

pipeline_state state_from_json(const json& doc, const std::string& file) {
  try {
    if (doc.at("schema") != k_state_schema) throw agent_error(file, "schema", "not " + std::string(k_state_schema));
    pipeline_state s;
    s.status = doc.at("status").get<std::string>();
    s.seq = doc.at("seq").get<int>();
    s.runs = doc.at("runs").get<std::map<std::string, int>>();
    s.port_bundle = doc.at("port_bundle").get<std::string>();
    s.last_output = doc.at("last_output").get<std::map<std::string, std::string>>();
    s.created_utc = doc.at("created_utc").get<std::string>();
    s.updated_utc = doc.at("updated_utc").get<std::string>();
    if (!doc.at("next").is_null()) s.next = pending_from(doc["next"]);
    if (!doc.at("current").is_null()) {
      const json& c = doc["current"];
      running_run r;
      r.run = pending_from(c);
      r.seq = c.at("seq").get<int>();
      r.pgid = c.at("pgid").get<pid_t>();
      r.start_ticks = c.at("start_ticks").get<unsigned long long>();
      r.started_utc = c.at("started_utc").get<std::string>();
      s.current = r;
    }
    s.stop_reason = doc.value("reason", "");
    if (!doc.at("stop").is_null()) {
      s.stop_stage = doc["stop"].at("stage").get<std::string>();
      s.stop_reason = doc["stop"].at("reason").get<std::string>();
    }
    for (const auto& h : doc.at("history")) {
      s.history.push_back({h.at("seq").get<int>(), h.at("stage").get<std::string>(), h.at("attempt").get<int>(),
                           h.at("repair").get<bool>(), h.at("verdict").get<std::string>(),
                           h.at("fail_class").get<std::string>(), h.at("output").get<std::string>(),
                           h.at("outcome").get<std::string>(), h.at("seconds").get<double>()});
    }
    return s;
  } catch (const json::exception& e) {
    throw agent_error(file, "", std::string("malformed state: ") + e.what());
  }
}

void save_state(const std::filesystem::path& workdir, pipeline_state& s) {
  s.updated_utc = utc_now();
  write_json_atomic(state_file(workdir), to_json(s));
}

pipeline_state load_state(const std::filesystem::path& workdir) {
  auto file = state_file(workdir);
  if (!std::filesystem::exists(file)) {
    throw agent_error(file.string(), "", "no pipeline state here (not a work directory of `portbench agent run`)");
  }
  return state_from_json(read_json(file), file.string());
}

}  // namespace portbench::agent
