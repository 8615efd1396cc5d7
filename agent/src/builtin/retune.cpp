// SPDX-License-Identifier: Apache-2.0
// translate's built-in `retune`: no language model. For the failing configurations it
// re-exports the port once per tuning candidate, times each candidate against the reference
// with `portbench run`, keeps per configuration the fastest candidate that passes, and exports
// the whole port with the choices made so far (WORKDIR/translate/choices.json).
//
// Candidates come from the exporter itself (the manifest's optional configs[].variants,
// selected with a tuning record passed as {tuning}) and from the job's `overrides` (suite
// entries' "tuning" objects, which the cuTile exporters read: block_rows, tile, occupancy, ...).
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "portbench/agent/context.hpp"
#include "portbench/agent/error.hpp"
#include "portbench/agent/files.hpp"
#include "portbench/agent/verdicts.hpp"
#include "stages.hpp"

namespace portbench::agent::builtins {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using ojson = nlohmann::ordered_json;

struct choice {
  std::string kind;     ///< "variant" (manifest) or "override" (job)
  std::string name;
  json tuning = json::object();
  double ratio = std::nan("");
};

struct candidate {
  choice how;
  std::vector<std::string> ids;   ///< the failing configurations it applies to
};

struct retuner {
  const stage_context& ctx;
  command_runner& cmd;
  json index;                      ///< configs.json
  fs::path choices_file;
  std::map<std::string, choice> choices;   ///< id -> the choice in force
  std::vector<std::string> notes;

  const json& entry_of(const std::string& id) const {
    for (const auto& c : index) {
      if (c.at("id") == id) return c;
    }
    throw agent_error(ctx.text("configs"), id, "not a configuration of the job");
  }

  void load_choices() {
    if (!fs::exists(choices_file)) return;
    const json saved = read_json(choices_file);
    for (const auto& [id, c] : saved.at("configs").items()) {
      choices[id] = {c.at("kind").get<std::string>(), c.at("name").get<std::string>(), c.at("tuning"),
                     c.value("ratio", json(nullptr)).is_number() ? c["ratio"].get<double>() : std::nan("")};
    }
  }

  void save_choices() const {
    json configs = json::object();
    for (const auto& [id, c] : choices) {
      configs[id] = {{"kind", c.kind}, {"name", c.name}, {"tuning", c.tuning},
                     {"ratio", std::isfinite(c.ratio) ? json(c.ratio) : json(nullptr)}};
    }
    write_json_atomic(choices_file, json{{"schema", "portbench.agent-retune-choices/1"}, {"configs", configs}});
  }

  // A suite of these configurations, each with the override in force (or `with` for all).
  fs::path write_suite(const fs::path& dir, const std::string& name, const std::vector<std::string>& ids,
                       const choice* with) const {
    json configs = json::array();
    for (const auto& id : ids) {
      json e = entry_of(id).at("suite_entry");
      const choice* c = with;
      if (c == nullptr && choices.count(id)) c = &choices.at(id);
      if (c != nullptr && c->kind == "override") e["tuning"] = c->tuning;
      configs.push_back(e);
    }
    fs::path file = dir / (name + ".suite.json");
    write_json_atomic(file, json{{"suite", "retune-" + name}, {"configs", configs}});
    return file;
  }

  // A tuning record (portbench.tuning-record/1) naming the variant of each configuration.
  fs::path write_record(const fs::path& dir, const std::string& name, const std::vector<std::string>& ids,
                        const choice* with) const {
    json picks = json::array();
    for (const auto& id : ids) {
      const choice* c = with;
      if (c == nullptr && choices.count(id)) c = &choices.at(id);
      if (c == nullptr || c->kind != "variant") continue;
      const json& e = entry_of(id);
      picks.push_back({{"op", e.at("op")}, {"params", e.at("params")}, {"variant", c->name}});
    }
    fs::path file = dir / (name + ".tuning.json");
    write_json_atomic(file, json{{"schema", "portbench.tuning-record/1"}, {"frontend", ctx.text("port_frontend")},
                                 {"made_by", "portbench agent retune"}, {"date", utc_now()}, {"choices", picks}});
    return file;
  }

  // Runs the exporter into OUT; returns the operator's bundle folder or "" (reason in *why).
  fs::path export_port(const fs::path& dir, const std::string& name, const fs::path& suite, const fs::path& record,
                       std::string* why) {
    fs::path out = dir / name;
    fs::remove_all(out);
    std::map<std::string, std::string> values = placeholders(ctx.doc);
    values["suite"] = suite.string();
    values["out"] = out.string();
    values["tuning"] = record.string();
    std::vector<std::string> argv = expand(ctx.doc.at("exporter").get<std::vector<std::string>>(), values);
    if (argv[0].find('/') != std::string::npos && fs::path(argv[0]).is_relative()) {
      argv[0] = (fs::path(ctx.text("root")) / argv[0]).string();
    }
    command_call c = cmd.program(argv, name + ".export");
    if (!c.ok()) {
      *why = "the exporter failed: " + c.first_error();
      return {};
    }
    std::string op = ctx.text("operator");
    if (fs::exists(out / "manifest.json")) return out;
    if (fs::is_directory(out)) {
      for (const auto& d : fs::directory_iterator(out)) {
        if (d.is_directory() && fs::exists(d.path() / "manifest.json") &&
            read_json(d.path() / "manifest.json").value("operator", "") == op) {
          return d.path();
        }
      }
    }
    *why = "the exporter wrote no bundle of " + op + " below " + out.string();
    return {};
  }

  // Per configuration: ratio when it passes (numerics PASS, proof EXECUTED on both sides).
  std::map<std::string, double> time_bundle(const fs::path& bundle, const fs::path& suite, const fs::path& dir,
                                            const std::string& name, int runs, std::string* why) {
    std::map<std::string, double> out;
    measured m = run_and_report(cmd, ctx, {"--ref", ctx.text("reference_bundle"), "--port", bundle.string()},
                                suite.string(), (dir / (name + ".h5")).string(), name, runs);
    if (m.failure.failed) {
      *why = m.failure.error;
      return out;
    }
    for (const auto& c : m.report.configs) {
      bool pass = c.ref_numerics == verdicts::numerics::pass.data() && c.port_numerics == verdicts::numerics::pass.data() && c.ref_proof == verdicts::proof::executed.data() &&
                  c.port_proof == verdicts::proof::executed.data();
      if (pass && std::isfinite(c.ratio)) out[c.id] = c.ratio;
    }
    return out;
  }

  ojson compiled(const fs::path& bundle, const ojson& changed, const std::string& reason, const ojson& tried) const {
    ojson out;
    out["verdict"] = std::string(verdict::compiled);
    out["stage"] = std::string(stage::translate);
    out["reason"] = reason;
    out["bundle"] = relative(ctx, bundle);
    out["changed"] = changed;
    out["candidates"] = tried;
    out["files"] = {relative(ctx, choices_file)};
    ojson notes_json = ojson::array();
    for (const auto& n : notes) notes_json.push_back(n);
    out["notes"] = notes_json;
    return out;
  }

  ojson not_compiled(std::string_view verdict_text, const std::string& reason) const {
    ojson out;
    out["verdict"] = std::string(verdict_text);
    out["stage"] = std::string(stage::translate);
    out["reason"] = reason;
    ojson notes_json = ojson::array();
    for (const auto& n : notes) notes_json.push_back(n);
    out["notes"] = notes_json;
    return out;
  }

  // The whole port with the choices in force.
  ojson final_export(const fs::path& dir, const ojson& changed, const std::string& reason, const ojson& tried) {
    std::vector<std::string> all;
    for (const auto& c : index) all.push_back(c.at("id").get<std::string>());
    std::string why;
    fs::path bundle = export_port(dir, "port", write_suite(dir, "port", all, nullptr),
                                  write_record(dir, "port", all, nullptr), &why);
    if (bundle.empty()) return not_compiled(verdict::fail_compile, why);
    save_choices();
    return compiled(bundle, changed, reason, tried);
  }

  ojson run() {
    const json& options = ctx.options();
    int runs = options.value("runs", 1);
    std::size_t max_candidates = options.value("max_candidates", 8);
    fs::path dir = ctx.scratch();
    load_choices();
    json failing = read_json(ctx.text("failing"));
    std::vector<std::string> ids;
    for (const auto& e : failing.at("configs")) {
      std::string id = e.at("id").get<std::string>();
      bool known = std::any_of(index.begin(), index.end(), [&](const json& c) { return c.at("id") == id; });
      if (known) ids.push_back(id);
      else notes.push_back(id + ": not a configuration of the job; left out");
    }
    if (ids.empty()) {
      return final_export(dir, ojson::array(),
                          "no failing configuration to retune: the port exported with the choices so far", ojson::array());
    }
    // The port as it stands, for just the failing configurations: what the exporter offers,
    // and the time every candidate has to beat.
    std::string why;
    fs::path current = export_port(dir, "current", write_suite(dir, "current", ids, nullptr),
                                   write_record(dir, "current", ids, nullptr), &why);
    if (current.empty()) return not_compiled(verdict::fail_compile, why);
    json manifest = read_json(current / "manifest.json");

    std::vector<candidate> candidates;
    auto add = [&](const choice& c, const std::string& id) {
      auto it = std::find_if(candidates.begin(), candidates.end(),
                             [&](const candidate& x) { return x.how.kind == c.kind && x.how.name == c.name; });
      if (it == candidates.end()) candidates.push_back({c, {id}});
      else it->ids.push_back(id);
    };
    bool takes_record = false;
    for (const auto& a : ctx.doc.at("exporter")) takes_record = takes_record || a.get<std::string>().find("{tuning}") != std::string::npos;
    const json overrides = options.value("overrides", json::object());
    for (const auto& id : ids) {
      auto variants = adapters::read_variants(manifest, entry_of(id).at("params"));
      if (!variants.empty() && !takes_record) {
        notes.push_back(id + ": the exporter declares " + std::to_string(variants.size()) +
                        " variants but its argv has no {tuning} to select one");
      }
      for (const auto& v : variants) {
        if (takes_record) add({"variant", v.name, v.tuning}, id);
      }
      for (const auto& [name, tuning] : overrides.items()) add({"override", name, tuning}, id);
    }
    if (candidates.empty()) {
      return not_compiled(verdict::blocked, "no tuning candidate for the failing configurations: the exporter declares "
                                            "no variants (configs[].variants) and the job lists no overrides");
    }
    if (candidates.size() > max_candidates) {
      notes.push_back(std::to_string(candidates.size() - max_candidates) + " candidates beyond max_candidates left out");
      candidates.resize(max_candidates);
    }
    std::map<std::string, double> before = time_bundle(current, dir / "current.suite.json", dir, "current", runs, &why);
    if (!why.empty()) return not_compiled(verdict::blocked, "cannot time the current port: " + why);

    ojson tried = ojson::array();
    std::map<std::string, std::pair<const candidate*, double>> best;   // id -> fastest passing
    for (const auto& c : candidates) {
      std::string name = c.how.kind + "-" + c.how.name;
      ojson entry;
      entry["name"] = c.how.name;
      entry["kind"] = c.how.kind;
      entry["tuning"] = ojson::parse(c.how.tuning.dump());
      why.clear();
      fs::path bundle = export_port(dir, name, write_suite(dir, name, c.ids, &c.how), write_record(dir, name, c.ids, &c.how), &why);
      std::map<std::string, double> ratios;
      if (!bundle.empty()) ratios = time_bundle(bundle, dir / (name + ".suite.json"), dir, name, runs, &why);
      ojson results = ojson::object();
      for (const auto& id : c.ids) {
        auto r = ratios.find(id);
        results[id] = r == ratios.end() ? ojson(nullptr) : ojson(r->second);
        if (r == ratios.end()) continue;
        auto& slot = best[id];
        if (slot.first == nullptr || r->second > slot.second) slot = {&c, r->second};
      }
      entry["ratios"] = results;
      if (!why.empty()) entry["problem"] = why;
      tried.push_back(entry);
    }
    ojson changed = ojson::array();
    for (const auto& id : ids) {
      auto b = best.find(id);
      auto cur = before.find(id);
      double before_ratio = cur == before.end() ? std::nan("") : cur->second;
      if (b == best.end() || (std::isfinite(before_ratio) && b->second.second <= before_ratio)) continue;
      choice picked = b->second.first->how;
      picked.ratio = b->second.second;
      choices[id] = picked;
      ojson x;
      x["id"] = id;
      x["variant"] = picked.kind + " " + picked.name;
      x["ratio_before"] = std::isfinite(before_ratio) ? ojson(before_ratio) : ojson(nullptr);
      x["ratio_after"] = picked.ratio;
      changed.push_back(x);
    }
    if (changed.empty()) {
      save_choices();
      notes.push_back("candidates tried: " + tried.dump());
      return not_compiled(verdict::blocked, "no candidate is faster than the current choice on any of the " +
                                                std::to_string(ids.size()) + " failing configurations, or none passes");
    }
    return final_export(dir, changed,
                        "retuned " + std::to_string(changed.size()) + " of " + std::to_string(ids.size()) +
                            " failing configurations over " + std::to_string(candidates.size()) + " candidates",
                        tried);
  }
};

}  // namespace

ojson retune_stage::do_run(const stage_context& ctx, command_runner& cmd) const {
  retuner r{ctx, cmd, read_json(ctx.text("configs")), fs::path(ctx.text("scratch")) / "choices.json", {}, {}};
  return r.run();
}

}  // namespace portbench::agent::builtins
