// SPDX-License-Identifier: Apache-2.0
#include "portbench/sweep/suite.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "portbench/reference/config_json.hpp"
#include "portbench/reference/spec.hpp"

namespace portbench::sweep {

using json = nlohmann::json;

suite load_suite(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw suite_error(file, "", "cannot open suite (missing file?)");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_suite(text.str(), file);
}

suite parse_suite(std::string_view text, const std::string& file) {
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::parse_error& e) {
    throw suite_error(file, "", std::string("not valid JSON: ") + e.what());
  }
  if (!doc.is_object()) throw suite_error(file, "(top level)", "expected an object");
  suite s;
  s.file = file;
  s.name = std::filesystem::path(file).stem().string();
  if (auto it = doc.find("suite"); it != doc.end()) {
    if (!it->is_string()) throw suite_error(file, "suite", "expected a string");
    s.name = it->get<std::string>();
  }
  auto configs = doc.find("configs");
  if (configs == doc.end() || !configs->is_array()) throw suite_error(file, "configs", "missing or not an array");
  for (std::size_t i = 0; i < configs->size(); ++i) {
    const json& c = (*configs)[i];
    const std::string where = "configs[" + std::to_string(i) + "]";
    if (!c.is_object()) throw suite_error(file, where, "expected an object");
    auto op = c.find("op");
    if (op == c.end() || !op->is_string()) throw suite_error(file, where + ".op", "missing or not a string");
    auto params = c.find("params");
    if (params == c.end() || !params->is_object()) throw suite_error(file, where + ".params", "missing or not an object");
    suite_entry e;
    e.config.op = op->get<std::string>();
    for (const auto& [key, value] : params->items()) {
      try {
        e.config.params[key] = reference::param_from_json(value);
      } catch (const reference::spec_error& ex) {
        throw suite_error(file, where + ".params." + key, ex.what());
      }
    }
    e.params = *params;
    s.entries.push_back(std::move(e));
  }
  return s;
}

}  // namespace portbench::sweep
