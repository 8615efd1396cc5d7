// SPDX-License-Identifier: Apache-2.0
// diagnose output: Markdown (a summary table, then per configuration the findings and both
// sides side by side) and JSON (schema portbench.diagnose/1, verdict first).
#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "markdown.hpp"
#include "portbench/diagnose/diagnose.hpp"
#include "portbench/diagnose/verdicts.hpp"

namespace portbench::diagnose {
namespace {

using detail::md_cell;
using ojson = nlohmann::ordered_json;

std::string us(double ns) { return std::isfinite(ns) ? fmt::format("{:.2f} us", ns / 1e3) : "—"; }

std::string dims(const bundle::dim3& v) { return fmt::format("{}x{}x{}", v[0], v[1], v[2]); }

/// One cell: the value of `f` for each launch, joined with "; ".
template <typename F>
std::string per_launch(const side_diagnosis& s, F f) {
  if (!s.problem.empty()) return "—";
  std::string out;
  for (const auto& l : s.launches) out += (out.empty() ? "" : "; ") + f(l);
  return out.empty() ? "—" : out;
}

std::string sass_cell(const launch_diagnosis& l, const char* cls) {
  return l.sass ? std::to_string(l.sass->count(cls)) : "n/a";
}

void side_rows(std::string& out, const config_diagnosis& c) {
  const auto& r = c.reference;
  const auto& p = c.port;
  auto row = [&](const std::string& name, const std::string& a, const std::string& b) {
    out += fmt::format("| {} | {} | {} |\n", name, md_cell(a), md_cell(b));
  };
  out += fmt::format("| | reference ({}) | port ({}) |\n|---|---|---|\n", r.frontend, p.frontend);
  auto bundle_text = [](const side_diagnosis& s) {
    if (!s.problem.empty()) return "not diagnosed: " + s.problem;
    return "`" + s.bundle.string() + "` (" + s.bundle_note + ")";
  };
  row("bundle", bundle_text(r), bundle_text(p));
  row("best of N", us(r.best_ns), us(p.best_ns));
  auto kernel_times = [](const side_diagnosis& s) {
    std::string text;
    for (const auto& [entry, ns] : s.kernel_median_ns) text += (text.empty() ? "`" : "; `") + entry + "` " + us(static_cast<double>(ns));
    return text.empty() ? std::string("—") : text;
  };
  if (!r.kernel_median_ns.empty() || !p.kernel_median_ns.empty()) {
    row("per kernel (best run's medians)", kernel_times(r), kernel_times(p));
  }
  auto launch = [](const launch_diagnosis& l) {
    return fmt::format("`{}` grid {} block {}{}", l.entry, dims(l.grid), dims(l.block),
                       l.cluster == bundle::dim3{1, 1, 1} ? std::string() : " cluster " + dims(l.cluster));
  };
  row("launches", per_launch(r, launch), per_launch(p, launch));
  auto threads = [](const launch_diagnosis& l) {
    return fmt::format("{}{}", l.resources.threads_per_cta, l.resources.tile_ir ? " (Tile IR .reqntid)" : "");
  };
  row("threads per CTA", per_launch(r, threads), per_launch(p, threads));
  auto regs = [](const launch_diagnosis& l) {
    return l.resources.max_registers > 0 ? fmt::format("{} (cap {})", l.resources.registers, l.resources.max_registers)
                                         : std::to_string(l.resources.registers);
  };
  row("registers per thread", per_launch(r, regs), per_launch(p, regs));
  auto smem = [](const launch_diagnosis& l) {
    return fmt::format("{} B static, {} B dynamic", l.resources.static_shared, l.resources.dynamic_shared);
  };
  row("shared memory per CTA", per_launch(r, smem), per_launch(p, smem));
  auto local = [](const launch_diagnosis& l) { return fmt::format("{} B", l.resources.local_bytes); };
  row("local memory per thread", per_launch(r, local), per_launch(p, local));
  auto bars = [](const launch_diagnosis& l) { return fmt::format("{} / {}", l.resources.barriers, l.resources.mbarriers); };
  row("barriers / mbarriers", per_launch(r, bars), per_launch(p, bars));
  auto occ = [](const launch_diagnosis& l) {
    return fmt::format("{} CTAs/SM ({}), {:.0f}% of warp slots", l.resources.ctas_per_sm, l.resources.limiter,
                       100 * l.resources.occupancy);
  };
  row("occupancy", per_launch(r, occ), per_launch(p, occ));
  auto waves = [](const launch_diagnosis& l) {
    return fmt::format("{} CTAs: {:.2f} waves ({:.0f}% filled)", l.resources.ctas, l.resources.waves, 100 * l.resources.fill());
  };
  row("waves", per_launch(r, waves), per_launch(p, waves));
  auto loads = [](const launch_diagnosis& l) { return l.sass ? l.sass->widths_text(true) : "n/a: " + l.sass_note; };
  row("SASS global loads", per_launch(r, loads), per_launch(p, loads));
  auto stores = [](const launch_diagnosis& l) { return l.sass ? l.sass->widths_text(false) : "n/a"; };
  row("SASS global stores", per_launch(r, stores), per_launch(p, stores));
  for (const char* cls : {sass_class::tma, sass_class::shared, sass_class::local, sass_class::tensor, sass_class::ffma,
                          sass_class::mufu, sass_class::barrier, sass_class::shuffle}) {
    row(std::string("SASS ") + cls, per_launch(r, [&](const launch_diagnosis& l) { return sass_cell(l, cls); }),
        per_launch(p, [&](const launch_diagnosis& l) { return sass_cell(l, cls); }));
  }
  auto total = [](const launch_diagnosis& l) { return l.sass ? std::to_string(l.sass->total) : "n/a"; };
  row("SASS instructions", per_launch(r, total), per_launch(p, total));
  auto rate = [](const side_diagnosis& s) {
    if (!s.roof) return std::string("—");
    const auto& q = *s.roof;
    return fmt::format("{:.0f} GB/s ({:.0f}% of copy), {:.1f} GFLOP/s, {:.2f} flop/B, {:.0f}% of its {} roof",
                       q.achieved_gbps, 100 * q.fraction_of_copy, q.achieved_gflops, q.intensity,
                       100 * q.fraction_of_roof, q.memory_bound ? "memory" : (s.tensor ? "tensor" : "FP32"));
  };
  row("achieved", rate(r), rate(p));
  out += "\n";
}

ojson side_json(const side_diagnosis& s) {
  ojson j;
  j["frontend"] = s.frontend;
  j["bundle"] = s.bundle.string();
  j["bundle_note"] = s.bundle_note;
  j["problem"] = s.problem;
  j["best_ns"] = std::isfinite(s.best_ns) ? ojson(s.best_ns) : ojson(nullptr);
  ojson kernels = ojson::array();
  for (const auto& [entry, ns] : s.kernel_median_ns) kernels.push_back({{"entry", entry}, {"median_ns", ns}});
  j["kernel_median_ns"] = std::move(kernels);
  ojson launches = ojson::array();
  for (const auto& l : s.launches) {
    const auto& r = l.resources;
    ojson jl;
    jl["entry"] = l.entry;
    jl["cubin"] = l.cubin;
    jl["grid"] = l.grid;
    jl["block"] = l.block;
    jl["cluster"] = l.cluster;
    jl["resources"] = {{"registers", r.registers}, {"max_registers", r.max_registers},
                       {"threads_per_cta", r.threads_per_cta}, {"static_shared_bytes", r.static_shared},
                       {"dynamic_shared_bytes", r.dynamic_shared}, {"local_bytes", r.local_bytes},
                       {"barriers", r.barriers}, {"mbarriers", r.mbarriers}, {"tile_ir", r.tile_ir},
                       {"ctas_per_sm", r.ctas_per_sm}, {"limiter", r.limiter}, {"occupancy", r.occupancy},
                       {"ctas", r.ctas}, {"waves", r.waves}, {"fill", r.fill()}};
    if (l.sass) {
      ojson loads = ojson::object(), stores = ojson::object();
      for (const auto& [b, n] : l.sass->global_load_bits) loads[std::to_string(b)] = n;
      for (const auto& [b, n] : l.sass->global_store_bits) stores[std::to_string(b)] = n;
      jl["sass"] = {{"classes", l.sass->classes}, {"global_load_bits", loads}, {"global_store_bits", stores},
                    {"total", l.sass->total}};
    } else {
      jl["sass"] = nullptr;
      jl["sass_note"] = l.sass_note;
    }
    launches.push_back(std::move(jl));
  }
  j["launches"] = std::move(launches);
  if (s.roof) {
    const auto& q = *s.roof;
    j["roofline"] = {{"achieved_gbps", q.achieved_gbps}, {"achieved_gflops", q.achieved_gflops},
                     {"intensity", q.intensity}, {"roof_gflops", q.roof_gflops},
                     {"fraction_of_copy", q.fraction_of_copy}, {"fraction_of_roof", q.fraction_of_roof},
                     {"memory_bound", q.memory_bound}, {"tensor", s.tensor}};
  } else {
    j["roofline"] = nullptr;
  }
  return j;
}

}  // namespace

std::string render_diagnosis_markdown(const diagnosis& d) {
  std::string out = fmt::format("# portbench diagnose: {}\n\n", d.verdict);
  out += fmt::format("`{}`: suite {}, {} (reference) vs {} (port), {} ({} SMs, copy {:.0f} GB/s), revision `{}`.\n",
                     d.file.string(), d.suite, d.reference_frontend, d.port_frontend, d.gpu_name, d.device.spec.sm_count,
                     d.device.spec.copy_bandwidth_gbps, d.revision);
  out += fmt::format("{} of {} configurations diagnosed ({} paired): {}, slowest first.\n\n", d.configs.size(),
                     d.configs_in_file, d.paired, d.selection);
  out += fmt::format("- SASS: {}\n", d.sass_tool.empty() ? "not needed" : d.sass_tool);
  for (const auto& n : d.notes) out += fmt::format("- {}\n", n);
  out += "\n";
  if (!d.configs.empty()) {
    out += "| # | configuration | port/ref | top finding | evidence |\n|---|---|---|---|---|\n";
    for (std::size_t i = 0; i < d.configs.size(); ++i) {
      const auto& c = d.configs[i];
      const auto* top = c.findings.empty() ? nullptr : &c.findings.front();
      out += fmt::format("| {} | `{}` | {:.3f} | {} | {} |\n", i + 1, md_cell(c.id), c.ratio, top ? top->tag : "—",
                         top ? md_cell(top->evidence) : "");
    }
    out += "\n";
  }
  for (std::size_t i = 0; i < d.configs.size(); ++i) {
    const auto& c = d.configs[i];
    out += fmt::format("## {}. `{}`: port/reference {:.3f}\n\n", i + 1, c.id, c.ratio);
    if (c.findings.empty()) out += "No finding.\n\n";
    else {
      out += "| rank | finding | score | evidence |\n|---|---|---|---|\n";
      for (std::size_t k = 0; k < c.findings.size(); ++k) {
        const auto& f = c.findings[k];
        out += fmt::format("| {} | {} | {:.2f} | {} |\n", k + 1, f.tag, f.score, md_cell(f.evidence));
      }
      out += "\n";
    }
    for (const auto& n : c.notes) out += fmt::format("- {}\n", n);
    if (!c.notes.empty()) out += "\n";
    side_rows(out, c);
    if (c.ir) {
      out += fmt::format("ir-diff: **{}** ({})\n\n", c.ir->verdict, md_cell(c.ir->reason));
      int shown = 0;
      for (const auto& diff : c.ir->differences) {
        if (shown == 0) out += "| severity | kind | where | reference | port |\n|---|---|---|---|---|\n";
        if (++shown > 12) {
          out += fmt::format("| … | | | {} more (portbench ir-diff shows all) | |\n", c.ir->differences.size() - 12);
          break;
        }
        out += fmt::format("| {} | {} | {} | {} | {} |\n", diff.severity, diff.kind, md_cell(diff.where),
                           detail::md_code(diff.reference), detail::md_code(diff.port));
      }
      if (shown > 0) out += "\n";
    } else {
      out += fmt::format("ir-diff: {}\n\n", c.ir_note);
    }
  }
  out += fmt::format("portbench_diagnose_verdict={}\n", d.verdict);
  return out;
}

std::string render_diagnosis_json(const diagnosis& d) {
  ojson out;
  out["verdict"] = d.verdict;
  out["schema"] = "portbench.diagnose/1";
  out["file"] = d.file.string();
  out["provenance"] = {{"suite", d.suite}, {"gpu_name", d.gpu_name}, {"reference_frontend", d.reference_frontend},
                       {"port_frontend", d.port_frontend}, {"git_revision", d.revision}};
  const auto& s = d.device.spec;
  out["device"] = {{"name", s.name}, {"sm_count", s.sm_count}, {"copy_bandwidth_gbps", s.copy_bandwidth_gbps},
                   {"copy_source", s.copy_source}, {"peak_bandwidth_gbps", s.peak_bandwidth_gbps},
                   {"fp32_tflops", s.fp32_tflops}, {"tensor_tflops", s.tensor_tflops}, {"in_table", d.device.known}};
  out["selection"] = d.selection;
  out["configs_in_file"] = d.configs_in_file;
  out["paired"] = d.paired;
  out["sass_tool"] = d.sass_tool;
  out["notes"] = d.notes;
  ojson configs = ojson::array();
  for (const auto& c : d.configs) {
    ojson jc;
    jc["config"] = c.id;
    jc["operator"] = c.op;
    jc["ratio"] = c.ratio;
    ojson fs = ojson::array();
    for (const auto& f : c.findings) fs.push_back({{"tag", f.tag}, {"score", f.score}, {"evidence", f.evidence}});
    jc["findings"] = std::move(fs);
    jc["reference"] = side_json(c.reference);
    jc["port"] = side_json(c.port);
    if (c.ir) {
      ojson ds = ojson::array();
      for (const auto& x : c.ir->differences) {
        ds.push_back({{"severity", x.severity}, {"kind", x.kind}, {"where", x.where}, {"reference", x.reference}, {"port", x.port}});
      }
      jc["ir_diff"] = {{"verdict", c.ir->verdict}, {"reason", c.ir->reason}, {"differences", std::move(ds)}};
    } else {
      jc["ir_diff"] = {{"verdict", nullptr}, {"reason", c.ir_note}};
    }
    jc["notes"] = c.notes;
    configs.push_back(std::move(jc));
  }
  out["configs"] = std::move(configs);
  return out.dump(2) + "\n";
}

}  // namespace portbench::diagnose
