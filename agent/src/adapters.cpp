// SPDX-License-Identifier: Apache-2.0
// Readers of portbench's JSON outputs and the stage conversions. The literals below are the
// ones portbench's commands print (numerics, proof, parity, ir-diff verdicts), named from
// portbench/verdicts.hpp so that a renamed verdict cannot drift between writer and reader.
#include "portbench/agent/adapters.hpp"

#include <algorithm>
#include <cmath>

#include "portbench/agent/error.hpp"
#include "portbench/agent/verdicts.hpp"

namespace portbench::agent::adapters {
namespace {

using json = nlohmann::json;
using ojson = nlohmann::ordered_json;

// What portbench's commands print.
namespace printed {
constexpr const char* pass = verdicts::numerics::pass.data();
constexpr const char* executed = verdicts::proof::executed.data();
constexpr const char* not_checked = verdicts::numerics::not_checked.data();
constexpr const char* not_run = verdicts::numerics::not_run.data();
constexpr const char* parity = verdicts::parity::parity.data();
constexpr const char* no_data = verdicts::parity::no_data.data();
constexpr const char* ir_pass = verdicts::stage::ir_diff::pass.data();
constexpr const char* ir_notes = verdicts::stage::ir_diff::pass_with_notes.data();
constexpr const char* ir_structural = verdicts::stage::ir_diff::fail_structural.data();
constexpr const char* ir_not_comparable = verdicts::stage::ir_diff::not_comparable.data();
}  // namespace printed

[[noreturn]] void shape(const char* command, const std::string& field, const std::string& problem) {
  throw agent_error(std::string(command) + " output", field, problem);
}

double number_or_nan(const json& obj, const char* key) {
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_number()) return nan;
  return it->get<double>();
}

std::string text_or(const json& obj, std::initializer_list<const char*> keys, const std::string& fallback = "") {
  for (const char* k : keys) {
    auto it = obj.find(k);
    if (it != obj.end() && it->is_string()) return it->get<std::string>();
  }
  return fallback;
}

// The array of rows of a command's table output: the document itself, or one of its keys.
const json& rows_of(const json& doc, std::initializer_list<const char*> keys, const char* command) {
  if (doc.is_array()) return doc;
  if (doc.is_object()) {
    for (const char* k : keys) {
      auto it = doc.find(k);
      if (it != doc.end() && it->is_array()) return *it;
    }
  }
  std::string names;
  for (const char* k : keys) names += (names.empty() ? "" : " or ") + std::string(k);
  shape(command, names, "missing: expected an array of rows");
}

json num(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

bool passes(const std::string& numerics, const std::string& proof) {
  return numerics == printed::pass && proof == printed::executed;
}

// The worse of two sides' verdicts: a side that is not a pass speaks for the configuration.
std::string worse(const std::string& a, const std::string& b, const char* good) {
  if (a != good) return a.empty() ? std::string(printed::not_checked) : a;
  return b.empty() ? std::string(printed::not_checked) : b;
}

ojson base(std::string_view stage_name, std::string_view verdict_text) {
  ojson out;
  out["verdict"] = std::string(verdict_text);
  out["stage"] = std::string(stage_name);
  return out;
}

}  // namespace

report_summary read_report(const json& doc) {
  if (!doc.is_object() || doc.value("schema", "") != "portbench.report/1") shape("report", "schema", "not portbench.report/1");
  report_summary r;
  r.verdict = text_or(doc, {"verdict"});
  r.reason = text_or(doc, {"reason"});
  if (r.verdict.empty()) shape("report", "verdict", "missing");
  if (doc.contains("overall") && doc["overall"].contains("geomean")) {
    const json& g = doc["overall"]["geomean"];
    r.geomean = number_or_nan(g, "estimate");
    r.low = number_or_nan(g, "low");
    r.high = number_or_nan(g, "high");
  }
  for (const auto& c : rows_of(doc, {"configs"}, "report")) {
    report_config rc;
    rc.id = text_or(c, {"id"});
    if (rc.id.empty()) shape("report", "configs[].id", "missing");
    rc.paired = c.value("paired", false);
    rc.ratio = number_or_nan(c, "ratio");
    if (c.contains("reference")) {
      rc.reference_ns = number_or_nan(c["reference"], "best_ns");
      rc.ref_numerics = text_or(c["reference"], {"numerics"});
      rc.ref_proof = text_or(c["reference"], {"proof"});
      for (const auto& e : c["reference"].value("errors", json::array())) rc.errors.push_back("reference " + e.get<std::string>());
    }
    if (c.contains("port")) {
      rc.port_ns = number_or_nan(c["port"], "best_ns");
      rc.port_numerics = text_or(c["port"], {"numerics"});
      rc.port_proof = text_or(c["port"], {"proof"});
      for (const auto& e : c["port"].value("errors", json::array())) rc.errors.push_back("port " + e.get<std::string>());
    }
    r.configs.push_back(std::move(rc));
  }
  return r;
}

std::vector<check_row> verify_rows(const report_summary& report) {
  std::vector<check_row> rows;
  for (const auto& c : report.configs) {
    check_row row;
    row.id = c.id;
    row.numerics = c.port_numerics.empty() ? std::string(printed::not_checked) : c.port_numerics;
    row.proof = c.port_proof.empty() ? std::string(printed::not_checked) : c.port_proof;
    for (const auto& e : c.errors) {
      if (!row.error.empty()) row.error.append("; ");
      row.error.append(e);
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

inspect_info read_inspect(const json& doc) {
  const json& bundles = rows_of(doc, {"bundles"}, "inspect");
  if (bundles.empty()) shape("inspect", "bundles", "empty");
  const json& b = bundles.front();
  inspect_info info;
  info.frontend = text_or(b, {"frontend"});
  info.op = text_or(b, {"operator", "op"});
  info.arch = text_or(b, {"arch"});
  auto add_entries = [&](const json& holder) {
    for (const auto& e : holder.value("entries", json::array())) {
      inspect_entry ie;
      ie.name = text_or(e, {"name"});
      ie.registers = e.contains("registers") && e["registers"].is_number_integer() ? e["registers"].get<int>() : -1;
      ie.tile_ir = e.value("tile_ir", false);
      info.entries.push_back(ie);
    }
  };
  add_entries(b);
  for (const auto& c : b.value("cubins", json::array())) add_entries(c);
  return info;
}

std::vector<ir_diff_config> read_ir_diff(const json& doc, const std::string& id) {
  auto one = [&](const json& c, const std::string& fallback_id) {
    ir_diff_config out;
    out.id = text_or(c, {"config", "id"}, fallback_id);
    out.verdict = text_or(c, {"verdict"});
    if (out.verdict.empty()) shape("ir-diff", "verdict", "missing");
    for (const auto& d : c.value("differences", json::array())) {
      out.differences.push_back({text_or(d, {"kind", "what"}, "difference"), text_or(d, {"reference", "ref"}),
                                 text_or(d, {"port"}), text_or(d, {"where", "path", "region"})});
    }
    return out;
  };
  std::vector<ir_diff_config> out;
  if (doc.is_object() && doc.contains("bundles") && doc["bundles"].is_array()) {
    // portbench.ir_diff/1: per bundle pair (operator), per configuration.
    for (const auto& b : doc["bundles"]) {
      for (const auto& c : b.value("configs", json::array())) out.push_back(one(c, id));
    }
  } else if (doc.is_object() && doc.contains("configs") && doc["configs"].is_array()) {
    for (const auto& c : doc["configs"]) out.push_back(one(c, id));
  } else if (doc.is_object()) {
    out.push_back(one(doc, id));
  } else {
    shape("ir-diff", "", "not a JSON object");
  }
  return out;
}

std::vector<finding> read_diagnose(const json& doc) {
  std::vector<finding> out;
  auto add = [&](const json& f, const std::string& config) {
    finding x;
    x.config = text_or(f, {"config", "id"}, config);
    x.tag = text_or(f, {"tag", "finding"});
    if (x.tag.empty()) shape("diagnose", "findings[].tag", "missing");
    x.evidence = text_or(f, {"evidence", "detail"});
    x.rank = f.contains("rank") && f["rank"].is_number_integer() ? f["rank"].get<int>() : static_cast<int>(out.size()) + 1;
    out.push_back(x);
  };
  if (doc.is_object() && doc.contains("findings") && doc["findings"].is_array()) {
    for (const auto& f : doc["findings"]) add(f, "");
  }
  if (doc.is_object() && doc.contains("configs") && doc["configs"].is_array()) {
    for (const auto& c : doc["configs"]) {
      std::string id = text_or(c, {"id", "config"});
      for (const auto& f : c.value("findings", json::array())) add(f, id);
    }
  }
  if (!doc.is_object() || (!doc.contains("findings") && !doc.contains("configs"))) {
    shape("diagnose", "findings or configs", "missing");
  }
  return out;
}

std::vector<variant> read_variants(const json& manifest, const json& params) {
  std::vector<variant> out;
  for (const auto& c : manifest.value("configs", json::array())) {
    if (c.value("params", json(nullptr)) != params) continue;
    for (const auto& v : c.value("variants", json::array())) {
      std::string name = text_or(v, {"name"});
      if (name.empty()) shape("manifest", "configs[].variants[].name", "missing");
      out.push_back({name, v.value("tuning", json::object())});
    }
  }
  return out;
}

json read_tuning(const json& manifest, const json& params) {
  for (const auto& c : manifest.value("configs", json::array())) {
    if (c.value("params", json(nullptr)) == params) return c.value("tuning", json(nullptr));
  }
  return nullptr;
}

ojson benchmark_output(const benchmark_inputs& in) {
  const report_summary& r = in.report;
  ojson configs = ojson::array();
  int broken = 0, slow = 0;   // no ratio or a failed check; below the gate
  for (const auto& id : in.job_ids) {
    auto it = std::find_if(r.configs.begin(), r.configs.end(), [&](const report_config& c) { return c.id == id; });
    ojson row;
    row["id"] = id;
    if (it == r.configs.end()) {
      row["ratio"] = nullptr;
      row["reference_ns"] = nullptr;
      row["port_ns"] = nullptr;
      row["numerics"] = printed::not_run;
      row["proof"] = printed::not_checked;
      row["error"] = "not in the results (not paired: a side has no plan for it)";
      ++broken;
    } else {
      row["ratio"] = num(it->ratio);
      row["reference_ns"] = num(it->reference_ns);
      row["port_ns"] = num(it->port_ns);
      std::string numerics = worse(it->ref_numerics, it->port_numerics, printed::pass);
      std::string proof = worse(it->ref_proof, it->port_proof, printed::executed);
      row["numerics"] = numerics;
      row["proof"] = proof;
      if (!it->errors.empty()) row["error"] = it->errors.front();
      if (!passes(numerics, proof) || !std::isfinite(it->ratio)) ++broken;
      else if (it->ratio < in.gate) ++slow;
    }
    configs.push_back(row);
  }
  // parity: the report's verdict (the whole interval at or above the gate, every check passed,
  // every configuration paired); geomean: the estimate at or above it, every check passed.
  bool at_gate = in.rule == "parity" ? r.verdict == printed::parity : std::isfinite(r.geomean) && r.geomean >= in.gate;
  std::string_view verdict_text = verdict::investigate;
  std::string reason;
  if (r.verdict == printed::no_data) {
    verdict_text = verdict::blocked;
    reason = "no configuration has valid timings on both sides: " + r.reason;
  } else if (at_gate && broken == 0) {
    verdict_text = verdict::done;
    reason = "report " + r.verdict + ", geomean " + std::to_string(r.geomean) + " against gate " + std::to_string(in.gate);
  } else {
    reason = "report " + r.verdict + " (" + r.reason + "); of " + std::to_string(in.job_ids.size()) +
             " configurations " + std::to_string(slow) + " below the gate, " + std::to_string(broken) +
             " without a ratio or failing a check";
  }
  ojson out = base(stage::benchmark, verdict_text);
  out["reason"] = reason;
  out["gate"] = in.gate;
  out["rule"] = in.rule;
  out["geomean"] = num(r.geomean);
  out["interval"] = {num(r.low), num(r.high)};
  out["report_verdict"] = r.verdict;
  if (!in.results.empty()) out["results"] = in.results;
  out["configs"] = configs;
  return out;
}

ojson verify_output(const verify_inputs& in) {
  ojson configs = ojson::array();
  if (in.device.failed) {
    ojson out = base(stage::verify, verdict::fail);
    out["fail_class"] = std::string(fail_class::env);
    out["reason"] = "no device to verify on: " + in.device.error;
    out["configs"] = configs;
    return out;
  }
  int kernel = 0, host = 0, unchecked = 0;
  std::string first_kernel, first_host, first_unchecked;
  for (const auto& id : in.job_ids) {
    auto it = std::find_if(in.rows.begin(), in.rows.end(), [&](const check_row& r) { return r.id == id; });
    ojson row;
    row["id"] = id;
    if (it == in.rows.end()) {
      row["numerics"] = printed::not_run;
      row["proof"] = printed::not_checked;
      row["error"] = in.check.failed ? in.check.error : "not checked: the port bundle has no plan for it";
      if (host++ == 0) first_host = id + ": " + row["error"].get<std::string>();
    } else {
      row["numerics"] = it->numerics;
      row["proof"] = it->proof;
      row["max_abs_err"] = num(it->max_abs_err);
      row["max_rel_err"] = num(it->max_rel_err);
      if (!it->status.empty()) row["status"] = it->status;
      if (!it->error.empty()) row["error"] = it->error;
      bool numerics_checked = it->numerics != printed::not_checked;
      bool proof_checked = it->proof != printed::not_checked;
      if (numerics_checked && it->numerics != printed::pass) {
        if (kernel++ == 0) first_kernel = id + ": numerics " + it->numerics;
      } else if (proof_checked && it->proof != printed::executed) {
        if (kernel++ == 0) first_kernel = id + ": proof " + it->proof;
      } else if (!numerics_checked || !proof_checked) {
        if (unchecked++ == 0) first_unchecked = id + (numerics_checked ? ": no proof verdict" : ": numerics NOT_CHECKED");
      }
    }
    configs.push_back(row);
  }
  ojson out;
  if (kernel > 0) {
    out = base(stage::verify, verdict::fail);
    out["fail_class"] = std::string(fail_class::kernel);
    out["reason"] = std::to_string(kernel) + " configurations fail (first " + first_kernel + ")";
  } else if (host > 0) {
    out = base(stage::verify, verdict::fail);
    out["fail_class"] = std::string(fail_class::host);
    out["reason"] = std::to_string(host) + " configurations not checked (first " + first_host + ")";
  } else if (unchecked > 0) {
    // Nothing checked is never a pass, and no stage can fix a missing check.
    out = base(stage::verify, verdict::blocked);
    out["reason"] = std::to_string(unchecked) + " configurations without a verdict (first " + first_unchecked + ")";
  } else {
    out = base(stage::verify, verdict::all_pass);
    out["reason"] = std::to_string(configs.size()) + " configurations PASS and EXECUTED";
  }
  out["configs"] = configs;
  return out;
}

ojson analyze_output(const analyze_inputs& in) {
  if (in.inspect.failed || in.baseline.failed) {
    ojson out = base(stage::analyze, verdict::blocked);
    out["reason"] = in.inspect.failed ? "the reference bundle fails inspect: " + in.inspect.error
                                      : "the reference baseline failed: " + in.baseline.error;
    return out;
  }
  ojson configs = ojson::array();
  int failing = 0, timed = 0;
  std::string first;
  for (const auto& id : in.job_ids) {
    auto it = std::find_if(in.report.configs.begin(), in.report.configs.end(),
                           [&](const report_config& c) { return c.id == id; });
    ojson row;
    row["id"] = id;
    row["reference_ns"] = it == in.report.configs.end() ? json(nullptr) : num(it->reference_ns);
    row["numerics"] = it == in.report.configs.end() ? std::string(printed::not_run) : worse(it->ref_numerics, it->port_numerics, printed::pass);
    row["proof"] = it == in.report.configs.end() ? std::string(printed::not_checked) : worse(it->ref_proof, it->port_proof, printed::executed);
    bool ok = passes(row["numerics"], row["proof"]) && !row["reference_ns"].is_null();
    timed += row["reference_ns"].is_null() ? 0 : 1;
    if (!ok && failing++ == 0) first = id + ": numerics " + row["numerics"].get<std::string>() + ", proof " + row["proof"].get<std::string>();
    configs.push_back(row);
  }
  ojson out;
  if (timed == 0) {
    out = base(stage::analyze, verdict::blocked);
    out["reason"] = "no configuration of the reference has a valid timing: " + in.report.reason;
  } else if (failing > 0) {
    out = base(stage::analyze, verdict::fail_fixable);
    out["reason"] = "the reference fails on " + std::to_string(failing) + " configurations (first " + first + ")";
  } else {
    out = base(stage::analyze, verdict::pass);
    out["reason"] = "the reference passes and is timed on all " + std::to_string(configs.size()) + " configurations";
  }
  ojson entries = ojson::array();
  for (const auto& e : in.reference.entries) {
    ojson x;
    x["name"] = e.name;
    if (e.registers >= 0) x["registers"] = e.registers;
    x["tile_ir"] = e.tile_ir;
    entries.push_back(x);
  }
  out["reference"] = {{"frontend", in.reference.frontend}, {"operator", in.reference.op}, {"entries", entries}};
  if (!in.baseline_file.empty()) out["baseline"] = in.baseline_file;
  out["configs"] = configs;
  return out;
}

ojson ir_diff_output(const ir_diff_inputs& in) {
  if (in.failure.failed) {
    ojson out = base(stage::ir_diff, verdict::blocked);
    out["reason"] = "ir-diff failed: " + in.failure.error;
    out["configs"] = ojson::array();
    return out;
  }
  int structural = 0, notes = 0;
  std::string first;
  ojson configs = ojson::array();
  for (const auto& c : in.configs) {
    ojson row;
    row["id"] = c.id;
    if (c.verdict == printed::ir_structural) {
      row["verdict"] = std::string(verdict::fail_fixable);
      if (structural++ == 0 && !c.differences.empty()) first = c.id + ": " + c.differences.front().kind;
    } else if (c.verdict == printed::ir_notes || c.verdict == printed::ir_not_comparable) {
      row["verdict"] = std::string(verdict::pass_with_notes);
      ++notes;
    } else if (c.verdict == printed::ir_pass) {
      row["verdict"] = std::string(verdict::pass);
    } else {
      ojson out = base(stage::ir_diff, verdict::blocked);
      out["reason"] = "ir-diff printed an unknown verdict '" + c.verdict + "' for " + c.id;
      out["configs"] = ojson::array();
      return out;
    }
    row["ir_diff_verdict"] = c.verdict;
    ojson diffs = ojson::array();
    for (const auto& d : c.differences) {
      diffs.push_back({{"kind", d.kind}, {"reference", d.reference}, {"port", d.port}, {"where", d.where}});
    }
    row["differences"] = diffs;
    configs.push_back(row);
  }
  ojson out;
  if (structural > 0 && in.advisory) {
    out = base(stage::ir_diff, verdict::pass_with_notes);
    out["reason"] = "advisory: " + std::to_string(structural) + " configurations differ structurally" +
                    (first.empty() ? "" : " (first " + first + ")");
  } else if (structural > 0) {
    out = base(stage::ir_diff, verdict::fail_fixable);
    out["reason"] = std::to_string(structural) + " configurations differ structurally" + (first.empty() ? "" : " (first " + first + ")");
  } else if (notes > 0) {
    out = base(stage::ir_diff, verdict::pass_with_notes);
    out["reason"] = std::to_string(notes) + " configurations with notes (or a side without Tile IR)";
  } else {
    out = base(stage::ir_diff, verdict::pass);
    out["reason"] = "no structural difference on " + std::to_string(configs.size()) + " configurations";
  }
  out["configs"] = configs;
  return out;
}

ojson blocked_output(std::string_view stage_name, const std::string& reason, double gate) {
  ojson out = base(stage_name, verdict::blocked);
  out["reason"] = reason;
  if (stage_name == stage::benchmark) {
    out["gate"] = gate;
    out["geomean"] = nullptr;
  }
  if (stage_name == stage::diagnose) out["findings"] = ojson::array();
  if (stage_name == stage::ir_diff || stage_name == stage::verify || stage_name == stage::benchmark) {
    out["configs"] = ojson::array();
  }
  return out;
}

ojson diagnose_output(const diagnose_inputs& in) {
  ojson findings = ojson::array();
  if (in.failure.failed) {
    ojson out = base(stage::diagnose, verdict::blocked);
    out["reason"] = "diagnose failed: " + in.failure.error;
    out["findings"] = findings;
    return out;
  }
  for (const auto& f : in.findings) {
    ojson x;
    if (!f.config.empty()) x["config"] = f.config;
    x["tag"] = f.tag;
    x["evidence"] = f.evidence;
    x["rank"] = f.rank;
    findings.push_back(x);
  }
  ojson out = base(stage::diagnose, in.findings.empty() ? verdict::aligned : verdict::fixable);
  out["reason"] = in.findings.empty() ? std::string("no finding: the port matches the reference in everything diagnose compares")
                                      : std::to_string(in.findings.size()) + " findings, top " + in.findings.front().tag;
  if (!in.results.empty()) out["results"] = in.results;
  out["findings"] = findings;
  return out;
}

}  // namespace portbench::agent::adapters
