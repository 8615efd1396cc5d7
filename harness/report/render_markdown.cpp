// SPDX-License-Identifier: Apache-2.0
#include <fmt/format.h>

#include "format.hpp"
#include "portbench/report/render.hpp"

namespace portbench::report {
namespace {

using detail::md_cell;

void provenance_block(std::string& out, const report_data& r) {
  const auto& p = r.provenance;
  out += fmt::format("| | |\n|---|---|\n");
  out += fmt::format("| pair | {} (reference) vs {} (port) |\n", md_cell(p.reference_frontend),
                     md_cell(p.port_frontend));
  out += fmt::format("| GPU | {} (driver {}, SM {} MHz, memory {} MHz) |\n", md_cell(p.gpu_name),
                     md_cell(p.driver_version), p.sm_clock_mhz, p.memory_clock_mhz);
  out += fmt::format("| CUDA / CUPTI | {} / {} |\n", md_cell(p.cuda_version), md_cell(p.cupti_version));
  out += fmt::format("| revision | `{}` |\n", md_cell(p.git_revision));
  out += fmt::format("| created | {} |\n", md_cell(p.created_utc));
  std::string files;
  for (const auto& f : r.files) files += (files.empty() ? "" : ", ") + fmt::format("`{}`", f);
  out += fmt::format("| files | {} |\n\n", md_cell(files));
}

void operator_table(std::string& out, const report_data& r) {
  out += "| operator | configs | paired | geomean | 95% interval | worst configuration | "
         "numerics | proof | verdict |\n";
  out += "|---|---:|---:|---:|---|---|---|---|---|\n";
  for (const auto& op : r.operators) {
    out += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | **{}** |\n", md_cell(op.op),
                       op.configs, op.paired, detail::ratio_text(op.geomean.estimate),
                       detail::interval_text(op.geomean),
                       op.worst_config.empty()
                           ? std::string("—")
                           : fmt::format("`{}` ({})", md_cell(op.worst_config),
                                         detail::ratio_text(op.worst_ratio)),
                       md_cell(detail::counts_text(op.numerics)),
                       md_cell(detail::counts_text(op.proof)), op.verdict);
  }
  out += "\n";
}

void reasons(std::string& out, const report_data& r) {
  bool any = false;
  for (const auto& op : r.operators) {
    if (op.verdict == verdict::parity) continue;
    if (!any) out += "Not at parity:\n\n";
    any = true;
    out += fmt::format("- **{}** {}: {}\n", op.op, op.verdict, md_cell(op.reason));
  }
  if (any) out += "\n";
}

void config_details(std::string& out, const report_data& r) {
  out += fmt::format("<details><summary>Configurations ({})</summary>\n\n", r.configs.size());
  out += "| configuration | reference best | port best | ratio | runs ref/port | spread ref/port "
         "| numerics ref/port | proof ref/port | errors |\n";
  out += "|---|---:|---:|---:|---|---|---|---|---|\n";
  for (const auto& c : r.configs) {
    std::string errors;
    for (const auto& e : c.reference.errors) errors += (errors.empty() ? "" : "; ") + ("reference " + e);
    for (const auto& e : c.port.errors) errors += (errors.empty() ? "" : "; ") + ("port " + e);
    out += fmt::format(
        "| `{}` | {} | {} | {} | {}/{} of {}/{} | {} / {} | {} / {} | {} / {} | {} |\n", md_cell(c.id),
        detail::time_text(c.reference.best_ns), detail::time_text(c.port.best_ns),
        detail::ratio_text(c.ratio), c.reference.timed_runs, c.port.timed_runs, c.reference.runs,
        c.port.runs, detail::percent_text(c.reference.spread), detail::percent_text(c.port.spread),
        c.reference.numerics, c.port.numerics, c.reference.proof, c.port.proof,
        errors.empty() ? std::string() : md_cell(errors));
  }
  out += "\n</details>\n\n";
}

}  // namespace

std::string render_markdown(const report_data& r) {
  std::string out;
  out += fmt::format("# portbench report: {}\n\n", md_cell(r.provenance.suite.empty() ? "(no suite)" : r.provenance.suite));
  out += fmt::format(
      "**Verdict: {}** — {} operators, {} configurations ({} paired); overall geomean port/reference "
      "speed **{}** {} (95% bootstrap), gate {:.2f}.\n\n",
      r.overall_verdict, r.operators.size(), r.configs.size(), r.paired,
      detail::ratio_text(r.overall.estimate), detail::interval_text(r.overall), r.options.gate);
  out += fmt::format("{}\n\n", md_cell(r.overall_reason));
  provenance_block(out, r);
  out += "## Operators\n\n";
  operator_table(out, r);
  reasons(out, r);
  for (const auto& n : r.notes) out += fmt::format("> Note: {}\n\n", md_cell(n));
  out += "## Method\n\n" + detail::method_text(r.options) + "\n\n";
  config_details(out, r);
  out += fmt::format("```\nportbench_verdict={}\nportbench_overall_geomean={}\n```\n", r.overall_verdict,
                     detail::ratio_text(r.overall.estimate));
  return out;
}

}  // namespace portbench::report
