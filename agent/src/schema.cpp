// SPDX-License-Identifier: Apache-2.0
// Stage output schemas as data, and the one validator that interprets them.
#include "portbench/agent/schema.hpp"

#include <cmath>
#include <fstream>
#include <sstream>

#include "portbench/agent/error.hpp"
#include "portbench/agent/paths.hpp"
#include "portbench/agent/verdicts.hpp"

namespace portbench::agent {
namespace {

using json = nlohmann::ordered_json;
using k = field_kind;
namespace v = verdict;

// Verdict sets.
constexpr std::string_view k_analyze_verdicts[] = {v::pass, v::fail_fixable, v::blocked};
constexpr std::string_view k_translate_verdicts[] = {v::compiled, v::fail_compile, v::fail_fixable, v::blocked};
constexpr std::string_view k_ir_diff_verdicts[] = {v::pass, v::pass_with_notes, v::fail_fixable, v::blocked};
constexpr std::string_view k_verify_verdicts[] = {v::all_pass, v::fail, v::blocked};
constexpr std::string_view k_benchmark_verdicts[] = {v::done, v::investigate, v::blocked};
constexpr std::string_view k_diagnose_verdicts[] = {v::fixable, v::aligned, v::blocked};

// Items of lists.
constexpr field_rule k_analyze_config[] = {
    {"id", k::text, true}, {"reference_ns", k::number, false, {}, {}, k::object, {}, true},
    {"numerics", k::text}, {"proof", k::text}};
constexpr field_rule k_entry[] = {{"name", k::text, true}, {"registers", k::integer}, {"tile_ir", k::boolean}};
constexpr field_rule k_reference[] = {{"frontend", k::text}, {"operator", k::text},
                                      {"entries", k::list, false, {}, k_entry}};
constexpr field_rule k_changed[] = {
    {"id", k::text, true}, {"variant", k::text},
    {"ratio_before", k::number, false, {}, {}, k::object, {}, true},
    {"ratio_after", k::number, false, {}, {}, k::object, {}, true}};
constexpr field_rule k_difference[] = {{"kind", k::text, true}, {"reference", k::text}, {"port", k::text},
                                       {"where", k::text}};
constexpr field_rule k_ir_config[] = {{"id", k::text, true}, {"verdict", k::text, true},
                                      {"differences", k::list, false, {}, k_difference}};
constexpr field_rule k_verify_config[] = {
    {"id", k::text, true}, {"numerics", k::text, true}, {"proof", k::text, true},
    {"max_abs_err", k::number, false, {}, {}, k::object, {}, true},
    {"max_rel_err", k::number, false, {}, {}, k::object, {}, true},
    {"status", k::text}, {"error", k::text}};
constexpr field_rule k_bench_config[] = {
    {"id", k::text, true}, {"ratio", k::number, true, {}, {}, k::object, {}, true},
    {"reference_ns", k::number, false, {}, {}, k::object, {}, true},
    {"port_ns", k::number, false, {}, {}, k::object, {}, true},
    {"numerics", k::text}, {"proof", k::text}};
constexpr field_rule k_finding[] = {{"config", k::text}, {"tag", k::text, true}, {"evidence", k::text},
                                    {"rank", k::integer}};

// Fields every stage may write.
#define PB_COMMON_FIELDS                                                        \
  {"reason", k::text, false, {}, {}, k::object, v::blocked},                    \
      {"files", k::list, false, {}, {}, k::path}, {"notes", k::list, false, {}, {}, k::text}

constexpr field_rule k_analyze_fields[] = {PB_COMMON_FIELDS,
                                           {"configs", k::list, false, {}, k_analyze_config},
                                           {"reference", k::object, false, {}, k_reference},
                                           {"baseline", k::path}};
constexpr field_rule k_translate_fields[] = {PB_COMMON_FIELDS,
                                             {"bundle", k::bundle, false, {}, {}, k::object, v::compiled},
                                             {"changed", k::list, false, {}, k_changed}};
constexpr field_rule k_ir_diff_fields[] = {PB_COMMON_FIELDS, {"configs", k::list, true, {}, k_ir_config}};
constexpr field_rule k_verify_fields[] = {PB_COMMON_FIELDS,
                                          {"fail_class", k::text, false, fail_class::all, {}, k::object, v::fail},
                                          {"configs", k::list, true, {}, k_verify_config}};
constexpr field_rule k_benchmark_fields[] = {PB_COMMON_FIELDS,
                                             {"gate", k::number, true},
                                             {"geomean", k::number, true, {}, {}, k::object, {}, true},
                                             {"rule", k::text},
                                             {"results", k::path},
                                             {"configs", k::list, true, {}, k_bench_config}};
constexpr field_rule k_diagnose_fields[] = {PB_COMMON_FIELDS, {"findings", k::list, true, {}, k_finding},
                                            {"results", k::path}};
#undef PB_COMMON_FIELDS

constexpr stage_schema k_schemas[] = {
    {stage::analyze, k_analyze_verdicts, v::pass, k_analyze_fields},
    {stage::translate, k_translate_verdicts, v::compiled, k_translate_fields},
    {stage::ir_diff, k_ir_diff_verdicts, v::pass, k_ir_diff_fields},
    {stage::verify, k_verify_verdicts, v::all_pass, k_verify_fields},
    {stage::benchmark, k_benchmark_verdicts, v::done, k_benchmark_fields},
    {stage::diagnose, k_diagnose_verdicts, v::fixable, k_diagnose_fields},
};

const char* kind_name(field_kind kind) {
  switch (kind) {
    case k::text: return "a string";
    case k::number: return "a number";
    case k::integer: return "an integer";
    case k::boolean: return "true or false";
    case k::path: return "a path inside the work directory";
    case k::bundle: return "a bundle folder inside the work directory";
    case k::object: return "an object";
    case k::list: return "an array";
  }
  return "?";
}

const char* kind_plural(field_kind kind) {
  switch (kind) {
    case k::text: return "strings";
    case k::path: return "paths inside the work directory";
    case k::number: return "numbers";
    default: return "values";
  }
}

std::string joined(std::span<const std::string_view> names) {
  std::string out;
  for (auto n : names) out += (out.empty() ? "" : "|") + std::string(n);
  return out;
}

struct checker {
  const std::filesystem::path& workdir;
  std::string verdict_text;

  // Returns "" or the problem with one value.
  std::string value(const field_rule& rule, field_kind kind, const json& val) const {
    if (val.is_null() && rule.nullable) return "";
    switch (kind) {
      case k::text:
        if (!val.is_string()) return std::string("must be ") + kind_name(kind);
        if (!rule.one_of.empty()) {
          for (auto allowed : rule.one_of) {
            if (val.get<std::string>() == allowed) return "";
          }
          return "'" + val.get<std::string>() + "' is not one of " + joined(rule.one_of);
        }
        return "";
      case k::number:
        if (!val.is_number() || !std::isfinite(val.get<double>())) return std::string("must be ") + kind_name(kind);
        return "";
      case k::integer:
        return val.is_number_integer() ? "" : std::string("must be ") + kind_name(kind);
      case k::boolean:
        return val.is_boolean() ? "" : std::string("must be ") + kind_name(kind);
      case k::path:
      case k::bundle: {
        if (!val.is_string()) return std::string("must be ") + kind_name(kind);
        auto resolved = resolve_inside(workdir, val.get<std::string>());
        if (!resolved) return "'" + val.get<std::string>() + "' leaves the work directory " + workdir.string();
        if (!std::filesystem::exists(*resolved)) return "'" + val.get<std::string>() + "' does not exist";
        if (kind == k::bundle && !std::filesystem::exists(*resolved / "manifest.json")) {
          return "'" + val.get<std::string>() + "' holds no manifest.json";
        }
        return "";
      }
      case k::object:
        if (!val.is_object()) return std::string("must be ") + kind_name(kind);
        return "";
      case k::list:
        return val.is_array() ? "" : std::string("must be ") + kind_name(kind);
    }
    return "";
  }

  std::string object(std::span<const field_rule> rules, const json& obj, const std::string& where) const {
    for (const auto& rule : rules) {
      std::string name = where + std::string(rule.name);
      auto it = obj.find(std::string(rule.name));
      if (it == obj.end()) {
        if (rule.required || (!rule.required_for.empty() && rule.required_for == verdict_text)) {
          return name + ": missing" + (rule.required ? "" : " (required with " + std::string(rule.required_for) + ")");
        }
        continue;
      }
      if (auto p = value(rule, rule.kind, *it); !p.empty()) return name + ": " + p;
      if (rule.kind == k::object && !rule.fields.empty()) {
        if (auto p = object(rule.fields, *it, name + "."); !p.empty()) return p;
      }
      if (rule.kind == k::list) {
        for (std::size_t i = 0; i < it->size(); ++i) {
          std::string item_name = name + "[" + std::to_string(i) + "]";
          const json& item = (*it)[i];
          if (rule.item == k::object) {
            if (!item.is_object()) return item_name + ": must be an object";
            if (auto p = object(rule.fields, item, item_name + "."); !p.empty()) return p;
          } else if (auto p = value(rule, rule.item, item); !p.empty()) {
            return item_name + ": " + p;
          }
        }
      }
    }
    return "";
  }
};

// Claims of success must rest on something checked, and agree with the rows they summarise.
std::string semantic(const stage_schema& s, const json& doc, const std::string& verdict_text) {
  auto passes = [](const json& c) { return c.at("numerics") == verdicts::numerics::pass.data() && c.at("proof") == verdicts::proof::executed.data(); };
  if (s.stage == stage::verify && verdict_text == verdict::fail && doc.at("fail_class") == fail_class::kernel) {
    for (const auto& c : doc.at("configs")) {
      if (!passes(c)) return "";
    }
    return "configs: FAIL (kernel) but no configuration fails";
  }
  if (s.stage == stage::diagnose && verdict_text == verdict::fixable) {
    return doc.at("findings").empty() ? "findings: FIXABLE names no finding" : "";
  }
  if (verdict_text != s.pass_verdict || s.stage == stage::translate || s.stage == stage::diagnose) return "";
  auto it = doc.find("configs");
  if (it == doc.end() || it->empty()) {
    return "configs: " + verdict_text + " with no configuration checked (nothing checked is never a pass)";
  }
  if (s.stage == stage::verify) {
    for (const auto& c : *it) {
      if (!passes(c)) {
        return "configs: ALL_PASS but " + c.at("id").get<std::string>() + " has numerics " +
               c.at("numerics").get<std::string>() + ", proof " + c.at("proof").get<std::string>();
      }
    }
  }
  return "";
}

}  // namespace

std::span<const stage_schema> schemas() noexcept { return k_schemas; }

const stage_schema& schema_of(std::string_view name) {
  for (const auto& s : k_schemas) {
    if (s.stage == name) return s;
  }
  throw agent_error("stage", std::string(name), "no such stage (" + joined(stage::all) + ")");
}

nlohmann::ordered_json read_output(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw agent_error(file.string(), "", "no output file (the stage wrote none)");
  std::stringstream text;
  text << in.rdbuf();
  try {
    return json::parse(text.str());
  } catch (const json::parse_error& e) {
    std::string head = text.str().substr(0, 60);
    for (auto& c : head) c = (c == '\n' || c == '\r') ? ' ' : c;
    throw agent_error(file.string(), "", "not JSON (starts \"" + head + "\"): " + e.what());
  }
}

std::string validate(std::string_view stage_name, const json& doc, const std::filesystem::path& workdir) {
  const stage_schema& s = schema_of(stage_name);
  if (!doc.is_object() || doc.empty()) return "not a JSON object";
  if (doc.begin().key() != "verdict") return "first field is '" + doc.begin().key() + "', not 'verdict'";
  const json& verdict_value = doc.begin().value();
  if (!verdict_value.is_string()) return "verdict: must be a string";
  std::string verdict_text = verdict_value.get<std::string>();
  bool known = false;
  for (auto allowed : s.verdicts) known = known || verdict_text == allowed;
  if (!known) return "verdict: '" + verdict_text + "' is not one of " + joined(s.verdicts);
  auto st = doc.find("stage");
  if (st == doc.end() || !st->is_string() || st->get<std::string>() != stage_name) {
    return "stage: must be \"" + std::string(stage_name) + "\"";
  }
  checker c{workdir, verdict_text};
  if (auto p = c.object(s.fields, doc, ""); !p.empty()) return p;
  return semantic(s, doc, verdict_text);
}

std::string schemas_markdown() {
  std::string out;
  auto describe = [](auto&& self, std::span<const field_rule> rules, const std::string& indent) -> std::string {
    std::string text;
    for (const auto& r : rules) {
      text += indent + "- `" + std::string(r.name) + "`: " + kind_name(r.kind);
      if (r.kind == k::list && r.item != k::object) text += std::string(" of ") + kind_plural(r.item);
      if (r.kind == k::list && r.item == k::object) text += " of objects";
      if (r.nullable) text += " or null";
      if (!r.one_of.empty()) text += " (" + joined(r.one_of) + ")";
      if (r.required) text += ", required";
      if (!r.required_for.empty()) text += ", required with " + std::string(r.required_for);
      text += "\n";
      if (!r.fields.empty()) text += self(self, r.fields, indent + "  ");
    }
    return text;
  };
  for (const auto& s : k_schemas) {
    out += "### " + std::string(s.stage) + "\n\n- `verdict` (first field): " + joined(s.verdicts) +
           "\n- `stage`: \"" + std::string(s.stage) + "\"\n";
    out += describe(describe, s.fields, "");
    out += "\n";
  }
  return out;
}

}  // namespace portbench::agent
