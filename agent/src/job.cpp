// SPDX-License-Identifier: Apache-2.0
// Job file parsing: every field checked, unknown fields refused (a typo must not silently
// drop a stage's timeout or its environment).
#include "portbench/agent/job.hpp"

#include <fstream>
#include <set>

#include "portbench/agent/error.hpp"
#include "portbench/agent/verdicts.hpp"

namespace portbench::agent {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

struct reader {
  std::string file;

  [[noreturn]] void fail(const std::string& field, const std::string& problem) const {
    throw agent_error(file, field, problem);
  }
  void only(const json& obj, const std::string& where, std::initializer_list<const char*> allowed) const {
    for (const auto& [key, value] : obj.items()) {
      bool ok = false;
      for (const char* a : allowed) ok = ok || key == a;
      if (!ok) {
        std::string list;
        for (const char* a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
        fail(where + key, "unknown field (expected one of: " + list + ")");
      }
    }
  }
  const json& object(const json& obj, const std::string& key, const std::string& where) const {
    auto it = obj.find(key);
    if (it == obj.end()) fail(where + key, "missing");
    if (!it->is_object()) fail(where + key, "must be an object");
    return *it;
  }
  std::string text(const json& obj, const std::string& key, const std::string& where, bool required = true,
                   const std::string& fallback = "") const {
    auto it = obj.find(key);
    if (it == obj.end()) {
      if (required) fail(where + key, "missing");
      return fallback;
    }
    if (!it->is_string() || it->get<std::string>().empty()) fail(where + key, "must be a non-empty string");
    return it->get<std::string>();
  }
  double number(const json& obj, const std::string& key, const std::string& where, double fallback, double lo,
                double hi) const {
    auto it = obj.find(key);
    if (it == obj.end()) return fallback;
    if (!it->is_number()) fail(where + key, "must be a number");
    double v = it->get<double>();
    if (!(v >= lo && v <= hi)) fail(where + key, "must lie in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    return v;
  }
  std::vector<std::string> argv(const json& obj, const std::string& key, const std::string& where) const {
    auto it = obj.find(key);
    if (it == obj.end()) fail(where + key, "missing");
    if (!it->is_array() || it->empty()) fail(where + key, "must be a non-empty array of strings (argv; no shell)");
    std::vector<std::string> out;
    for (const auto& a : *it) {
      if (!a.is_string()) fail(where + key, "must be an array of strings (argv; no shell)");
      out.push_back(a.get<std::string>());
    }
    if (out.front().empty()) fail(where + key + "[0]", "empty program");
    return out;
  }
};

fs::path absolute_from(const fs::path& base, const std::string& p) {
  if (p.empty()) return {};
  fs::path path(p);
  fs::path out = (path.is_absolute() ? path : base / path).lexically_normal();
  // "a/b/.." normalises to "a/": no trailing separator, so "{root}/x" and comparisons work.
  if (!out.has_filename() && out.has_relative_path()) out = out.parent_path();
  return out;
}

// The built-in each stage may use.
std::string builtin_for(std::string_view stage_name) {
  if (stage_name == stage::translate) return "retune";
  return std::string(stage_name);
}

stage_command read_stage(const reader& r, const json& spec, const std::string& where, std::string_view stage_name) {
  if (!spec.is_object()) r.fail(where, "must be an object with \"builtin\" or \"argv\"");
  stage_command c;
  bool has_builtin = spec.contains("builtin"), has_argv = spec.contains("argv");
  if (has_builtin == has_argv) r.fail(where, "needs exactly one of \"builtin\" and \"argv\"");
  c.timeout_s = r.number(spec, "timeout_s", where, 0, 1, 7 * 24 * 3600.0);
  if (has_argv) {
    r.only(spec, where, {"argv", "timeout_s"});
    c.argv = r.argv(spec, "argv", where);
    return c;
  }
  c.builtin = r.text(spec, "builtin", where);
  if (c.builtin != builtin_for(stage_name)) {
    r.fail(where + "builtin", "'" + c.builtin + "' is not a built-in of this stage (it has '" +
                                  builtin_for(stage_name) + "')");
  }
  for (const auto& [key, value] : spec.items()) {
    if (key != "builtin" && key != "timeout_s") c.options[key] = value;
  }
  if (c.builtin == "retune") {
    r.only(spec, where, {"builtin", "timeout_s", "overrides", "max_candidates", "runs"});
    if (spec.contains("overrides")) {
      const json& o = spec["overrides"];
      if (!o.is_object()) r.fail(where + "overrides", "must be an object: {\"name\": {tuning keys}, ...}");
      for (const auto& [name, tuning] : o.items()) {
        if (!tuning.is_object()) r.fail(where + "overrides." + name, "must be an object of tuning keys");
      }
    }
  } else if (c.builtin == "ir_diff") {
    r.only(spec, where, {"builtin", "timeout_s", "advisory"});
    if (spec.contains("advisory") && !spec["advisory"].is_boolean()) r.fail(where + "advisory", "must be true or false");
  } else {
    r.only(spec, where, {"builtin", "timeout_s"});
  }
  return c;
}

}  // namespace

const std::vector<std::string>& default_env_pass() {
  // The locale and paths any program needs, and what portbench itself reads (the built-in
  // stages run it): where the driver, CUPTI and NVRTC are, the revision, the plot interpreter.
  static const std::vector<std::string> names = {
      "PATH", "HOME", "LANG", "LC_ALL", "TZ", "TMPDIR", "CUDA_VISIBLE_DEVICES", "LD_LIBRARY_PATH",
      "PORTBENCH_CUPTI_LIBRARY", "PORTBENCH_NVRTC_DIR", "PORTBENCH_GIT_REVISION", "PORTBENCH_PYTHON",
      "PORTBENCH_SCRIPTS_DIR"};
  return names;
}

job job_from_json(const json& doc, const fs::path& file) {
  reader r{file.string()};
  if (!doc.is_object()) r.fail("", "a job is a JSON object");
  r.only(doc, "", {"schema", "name", "operator", "root", "workdir", "reference", "port", "suite", "configs", "gate",
                   "measure", "env", "portbench", "timeout_s", "stages"});
  std::string schema = r.text(doc, "schema", "");
  if (schema != k_job_schema) r.fail("schema", "'" + schema + "' is not " + std::string(k_job_schema));
  job j;
  j.file = fs::absolute(file).lexically_normal();
  j.root = absolute_from(j.file.parent_path(), r.text(doc, "root", "", false, "."));
  j.op = r.text(doc, "operator", "");
  j.name = r.text(doc, "name", "", false, j.op);
  j.workdir = absolute_from(j.root, r.text(doc, "workdir", ""));

  const json& ref = r.object(doc, "reference", "");
  r.only(ref, "reference.", {"bundle"});
  j.ref_bundle = absolute_from(j.root, r.text(ref, "bundle", "reference."));

  const json& port = r.object(doc, "port", "");
  r.only(port, "port.", {"frontend", "source", "bundle", "exporter"});
  j.port_frontend = r.text(port, "frontend", "port.");
  j.port_source = absolute_from(j.root, r.text(port, "source", "port.", false));
  j.port_bundle = absolute_from(j.root, r.text(port, "bundle", "port.", false));
  if (port.contains("exporter")) j.exporter = r.argv(port, "exporter", "port.");

  if (doc.contains("suite") == doc.contains("configs")) r.fail("suite", "give exactly one of \"suite\" and \"configs\"");
  if (doc.contains("suite")) j.suite = absolute_from(j.root, r.text(doc, "suite", ""));
  if (doc.contains("configs")) {
    j.configs = doc["configs"];
    if (!j.configs.is_array() || j.configs.empty()) r.fail("configs", "must be a non-empty array of {op, params}");
    for (std::size_t i = 0; i < j.configs.size(); ++i) {
      const json& c = j.configs[i];
      std::string where = "configs[" + std::to_string(i) + "]";
      if (!c.is_object() || !c.contains("params") || !c["params"].is_object()) r.fail(where, "needs a \"params\" object");
      if (c.value("op", j.op) != j.op) r.fail(where + ".op", "the job's operator is " + j.op);
    }
  }

  if (doc.contains("gate")) {
    const json& g = r.object(doc, "gate", "");
    r.only(g, "gate.", {"min_speed", "rule"});
    j.gate.min_speed = r.number(g, "min_speed", "gate.", 0.95, 0.0, 100.0);
    j.gate.rule = r.text(g, "rule", "gate.", false, "parity");
    if (j.gate.rule != "parity" && j.gate.rule != "geomean") r.fail("gate.rule", "must be parity or geomean");
  }
  if (doc.contains("measure")) {
    const json& m = r.object(doc, "measure", "");
    r.only(m, "measure.", {"runs", "time_cap_s", "min_samples", "max_samples", "timeout_s", "devices", "seed"});
    j.measure.runs = static_cast<int>(r.number(m, "runs", "measure.", 2, 1, 100));
    j.measure.time_cap_s = r.number(m, "time_cap_s", "measure.", 1, 0.001, 3600);
    j.measure.min_samples = static_cast<int>(r.number(m, "min_samples", "measure.", 10, 1, 1e6));
    j.measure.max_samples = static_cast<int>(r.number(m, "max_samples", "measure.", 200, 1, 1e7));
    j.measure.item_timeout_s = r.number(m, "timeout_s", "measure.", 120, 1, 86400);
    j.measure.devices = r.text(m, "devices", "measure.", false, "0");
    j.measure.seed = static_cast<std::uint64_t>(r.number(m, "seed", "measure.", 1, 0, 9e15));
  }
  if (doc.contains("env")) {
    const json& e = r.object(doc, "env", "");
    r.only(e, "env.", {"pass", "set"});
    j.env.pass = default_env_pass();
    if (e.contains("pass")) {
      if (!e["pass"].is_array()) r.fail("env.pass", "must be an array of variable names");
      for (const auto& n : e["pass"]) {
        if (!n.is_string()) r.fail("env.pass", "must be an array of variable names");
        j.env.pass.push_back(n.get<std::string>());
      }
    }
    if (e.contains("set")) {
      if (!e["set"].is_object()) r.fail("env.set", "must be an object of strings");
      for (const auto& [k, v] : e["set"].items()) {
        if (!v.is_string()) r.fail("env.set." + k, "must be a string");
        j.env.set[k] = v.get<std::string>();
      }
    }
  } else {
    j.env.pass = default_env_pass();
  }
  j.portbench = r.text(doc, "portbench", "", false);
  if (!j.portbench.empty()) j.portbench = absolute_from(j.root, j.portbench).string();
  j.timeout_s = r.number(doc, "timeout_s", "", 1800, 1, 7 * 24 * 3600.0);

  const json& stages = r.object(doc, "stages", "");
  for (const auto& [name, spec] : stages.items()) {
    bool known = false;
    for (auto s : stage::all) known = known || name == s;
    if (!known) r.fail("stages." + name, "no such stage (analyze, translate, ir_diff, verify, benchmark, diagnose)");
    j.stages[name] = read_stage(r, spec, "stages." + name + ".", name);
  }
  if (!j.stages.count(std::string(stage::translate))) {
    r.fail("stages.translate", "missing: translate has no built-in but retune ({\"builtin\": \"retune\"}) or a command");
  }
  for (auto s : stage::all) {
    auto& c = j.stages[std::string(s)];
    if (c.builtin.empty() && c.argv.empty()) c.builtin = builtin_for(s);
  }
  if (j.stages[std::string(stage::translate)].builtin == "retune" && j.exporter.empty()) {
    r.fail("port.exporter", "missing: the retune stage re-exports the port with it");
  }
  return j;
}

job load_job(const fs::path& file, const std::string& workdir_override) {
  std::ifstream in(file);
  if (!in) throw agent_error(file.string(), "", "cannot open job file (missing file?)");
  json doc;
  try {
    doc = json::parse(in);
  } catch (const json::exception& e) {   // parse_error, and out_of_range for a number too large
    throw agent_error(file.string(), "", std::string("not valid JSON: ") + e.what());
  }
  job j = job_from_json(doc, file);
  if (!workdir_override.empty()) j.workdir = fs::absolute(workdir_override).lexically_normal();
  if (!fs::is_directory(j.ref_bundle)) throw agent_error(file.string(), "reference.bundle", j.ref_bundle.string() + ": no such folder");
  if (!j.suite.empty() && !fs::exists(j.suite)) throw agent_error(file.string(), "suite", j.suite.string() + ": no such file");
  return j;
}

json to_json(const job& j) {
  json stages = json::object();
  for (const auto& [name, c] : j.stages) {
    json s = c.options;
    if (!c.builtin.empty()) s["builtin"] = c.builtin;
    if (!c.argv.empty()) s["argv"] = c.argv;
    if (c.timeout_s > 0) s["timeout_s"] = c.timeout_s;
    stages[name] = s;
  }
  json port = {{"frontend", j.port_frontend}};
  if (!j.port_source.empty()) port["source"] = j.port_source.string();
  if (!j.port_bundle.empty()) port["bundle"] = j.port_bundle.string();
  if (!j.exporter.empty()) port["exporter"] = j.exporter;
  json doc = {{"schema", k_job_schema},
              {"name", j.name},
              {"operator", j.op},
              {"root", j.root.string()},
              {"workdir", j.workdir.string()},
              {"reference", {{"bundle", j.ref_bundle.string()}}},
              {"port", port},
              {"gate", {{"min_speed", j.gate.min_speed}, {"rule", j.gate.rule}}},
              {"measure", {{"runs", j.measure.runs}, {"time_cap_s", j.measure.time_cap_s},
                           {"min_samples", j.measure.min_samples}, {"max_samples", j.measure.max_samples},
                           {"timeout_s", j.measure.item_timeout_s}, {"devices", j.measure.devices},
                           {"seed", j.measure.seed}}},
              {"env", {{"pass", j.env.pass}, {"set", j.env.set}}},
              {"timeout_s", j.timeout_s},
              {"stages", stages}};
  if (!j.suite.empty()) doc["suite"] = j.suite.string();
  else doc["configs"] = j.configs;
  if (!j.portbench.empty()) doc["portbench"] = j.portbench;
  return doc;
}

}  // namespace portbench::agent
