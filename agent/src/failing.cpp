// SPDX-License-Identifier: Apache-2.0
#include "portbench/agent/failing.hpp"

#include "portbench/agent/verdicts.hpp"

namespace portbench::agent {
namespace {

using json = nlohmann::json;
using ojson = nlohmann::ordered_json;

const config_entry* find(const config_index& index, const std::string& id) {
  for (const auto& c : index) {
    if (c.id == id) return &c;
  }
  return nullptr;
}

json entry_for(const std::string& id, const config_index& index, const char* from) {
  json e = {{"id", id}, {"from", from}, {"findings", json::array()}};
  if (const auto* c = find(index, id)) {
    e["op"] = c->op;
    e["params"] = c->params;
  }
  return e;
}

json text_or_null(const ojson& row, const char* key) {
  auto it = row.find(key);
  return it == row.end() ? json(nullptr) : json::parse(it->dump());
}

json document(json configs, const char* stage_name, int seq) {
  return {{"schema", k_failing_schema}, {"updated_by", {{"stage", stage_name}, {"seq", seq}}},
          {"configs", std::move(configs)}};
}

}  // namespace

json to_json(const config_index& index) {
  json out = json::array();
  for (const auto& c : index) {
    out.push_back({{"id", c.id}, {"op", c.op}, {"params", c.params}, {"suite_entry", c.suite_entry}});
  }
  return out;
}

config_index config_index_from_json(const json& doc) {
  config_index index;
  for (const auto& c : doc) {
    index.push_back({c.at("id").get<std::string>(), c.at("op").get<std::string>(), c.at("params"), c.at("suite_entry")});
  }
  return index;
}

json empty_failing() { return document(json::array(), "", 0); }

json failing_from_verify(const ojson& out, int seq, const config_index& index) {
  json configs = json::array();
  for (const auto& row : out.at("configs")) {
    if (row.at("numerics") == verdicts::numerics::pass.data() && row.at("proof") == verdicts::proof::executed.data()) continue;
    json e = entry_for(row.at("id").get<std::string>(), index, "verify");
    e["numerics"] = row.at("numerics").get<std::string>();
    e["numerics_error"] = {{"max_abs_err", text_or_null(row, "max_abs_err")},
                           {"max_rel_err", text_or_null(row, "max_rel_err")},
                           {"error", text_or_null(row, "error")}};
    e["proof"] = row.at("proof").get<std::string>();
    e["ratio"] = nullptr;
    configs.push_back(std::move(e));
  }
  json doc = document(std::move(configs), "verify", seq);
  if (auto it = out.find("fail_class"); it != out.end()) doc["fail_class"] = it->get<std::string>();
  return doc;
}

json failing_from_benchmark(const ojson& out, int seq, double gate, const config_index& index) {
  json configs = json::array();
  for (const auto& row : out.at("configs")) {
    const auto& ratio = row.at("ratio");
    std::string numerics = row.contains("numerics") ? row["numerics"].get<std::string>() : verdicts::numerics::not_checked.data();
    std::string proof = row.contains("proof") ? row["proof"].get<std::string>() : verdicts::numerics::not_checked.data();
    bool passes = numerics == verdicts::numerics::pass.data() && proof == verdicts::proof::executed.data();
    if (passes && ratio.is_number() && ratio.get<double>() >= gate) continue;
    json e = entry_for(row.at("id").get<std::string>(), index, "benchmark");
    e["numerics"] = numerics;
    e["numerics_error"] = {{"max_abs_err", nullptr}, {"max_rel_err", nullptr}, {"error", text_or_null(row, "error")}};
    e["proof"] = proof;
    e["ratio"] = json::parse(ratio.dump());
    e["reference_ns"] = text_or_null(row, "reference_ns");
    e["port_ns"] = text_or_null(row, "port_ns");
    configs.push_back(std::move(e));
  }
  json doc = document(std::move(configs), "benchmark", seq);
  doc["gate"] = gate;
  if (auto it = out.find("results"); it != out.end()) doc["results"] = it->get<std::string>();
  return doc;
}

void add_findings(json& failing, const ojson& diagnose_out, int seq) {
  for (const auto& f : diagnose_out.at("findings")) {
    json finding = {{"tag", f.at("tag").get<std::string>()}, {"evidence", f.value("evidence", "")}, {"seq", seq}};
    std::string config = f.value("config", "");
    for (auto& e : failing["configs"]) {
      if (config.empty() || e["id"] == config) e["findings"].push_back(finding);
    }
  }
  failing["diagnosed_by"] = {{"stage", stage::diagnose}, {"seq", seq}};
}

json failing_suite(const json& failing, const config_index& index, const std::string& name) {
  json configs = json::array();
  for (const auto& e : failing.at("configs")) {
    if (const auto* c = find(index, e.at("id").get<std::string>())) configs.push_back(c->suite_entry);
  }
  return {{"suite", name}, {"about", "the failing configurations of the agent job (failing.json)"}, {"configs", configs}};
}

}  // namespace portbench::agent
