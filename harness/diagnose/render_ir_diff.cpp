// SPDX-License-Identifier: Apache-2.0
// ir-diff output: Markdown (one section per configuration, a table of differences) and JSON
// (schema portbench.ir_diff/1, verdict first).
#include <fmt/format.h>

#include <map>
#include <nlohmann/json.hpp>

#include "markdown.hpp"
#include "portbench/diagnose/bundle_ir.hpp"
#include "portbench/diagnose/verdicts.hpp"

namespace portbench::diagnose {
namespace {

using ojson = nlohmann::ordered_json;
using detail::md_cell;
using detail::md_code;

std::string launches_text(const std::vector<launch_ir>& ls) {
  std::string s;
  for (const auto& l : ls) {
    if (!s.empty()) s += ", ";
    s += "`" + l.entry + "`";
    if (!l.ir_file.empty()) s += " (" + l.ir_file + ")";
  }
  return s;
}

ojson launches_json(const std::vector<launch_ir>& ls) {
  ojson a = ojson::array();
  for (const auto& l : ls) a.push_back({{"entry", l.entry}, {"ir_file", l.ir_file}});
  return a;
}

}  // namespace

std::string render_ir_diff_markdown(const std::vector<bundle_ir_diff>& diffs) {
  std::string out;
  std::map<std::string, int> tally;
  std::size_t configs = 0;
  for (const auto& b : diffs) {
    for (const auto& c : b.configs) ++tally[c.verdict], ++configs;
  }
  std::string verdict = overall_verdict(diffs);
  out += fmt::format("# ir-diff: {}\n\n", verdict);
  std::string tallies;
  for (const auto& [v, n] : tally) tallies += (tallies.empty() ? "" : ", ") + v + " " + std::to_string(n);
  out += fmt::format("{} operator(s), {} configuration(s): {}.\n\n", diffs.size(), configs, tallies);
  for (const auto& b : diffs) {
    out += fmt::format("## {}: {} `{}` vs {} `{}`: {}\n\n", b.op, b.reference_frontend, b.reference_dir.string(),
                       b.port_frontend, b.port_dir.string(), b.verdict);
    for (const auto& u : b.unpaired) out += fmt::format("- not paired: {}\n", u);
    if (!b.unpaired.empty()) out += "\n";
    for (const auto& c : b.configs) {
      out += fmt::format("### `{}`: {}\n\n", c.config_id, c.verdict);
      out += fmt::format("reference {}; port {}. {}\n\n", launches_text(c.reference), launches_text(c.port),
                         md_cell(c.reason));
      if (c.differences.empty()) continue;
      out += "| severity | kind | where | reference | port |\n|---|---|---|---|---|\n";
      for (const auto& d : c.differences) {
        out += fmt::format("| {} | {} | {} | {} | {} |\n", d.severity, d.kind, md_cell(d.where),
                           md_code(d.reference), md_code(d.port));
      }
      out += "\n";
    }
  }
  out += fmt::format("portbench_ir_diff_verdict={}\n", verdict);
  return out;
}

std::string render_ir_diff_json(const std::vector<bundle_ir_diff>& diffs) {
  ojson out;
  out["verdict"] = overall_verdict(diffs);
  out["schema"] = "portbench.ir_diff/1";
  ojson bundles = ojson::array();
  for (const auto& b : diffs) {
    ojson jb;
    jb["operator"] = b.op;
    jb["verdict"] = b.verdict;
    jb["reference"] = {{"frontend", b.reference_frontend}, {"bundle", b.reference_dir.string()}};
    jb["port"] = {{"frontend", b.port_frontend}, {"bundle", b.port_dir.string()}};
    jb["unpaired"] = b.unpaired;
    ojson configs = ojson::array();
    for (const auto& c : b.configs) {
      ojson jc;
      jc["config"] = c.config_id;
      jc["verdict"] = c.verdict;
      jc["reason"] = c.reason;
      jc["reference_launches"] = launches_json(c.reference);
      jc["port_launches"] = launches_json(c.port);
      ojson ds = ojson::array();
      for (const auto& d : c.differences) {
        ds.push_back({{"severity", d.severity}, {"kind", d.kind}, {"where", d.where},
                      {"reference", d.reference}, {"port", d.port}});
      }
      jc["differences"] = std::move(ds);
      configs.push_back(std::move(jc));
    }
    jb["configs"] = std::move(configs);
    bundles.push_back(std::move(jb));
  }
  out["bundles"] = std::move(bundles);
  return out.dump(2) + "\n";
}

}  // namespace portbench::diagnose
