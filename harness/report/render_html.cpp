// SPDX-License-Identifier: Apache-2.0
#include <fmt/format.h>

#include <map>

#include "format.hpp"
#include "portbench/report/render.hpp"
#include "roofline_svg.hpp"

namespace portbench::report {
namespace {

using detail::html_escape;

std::string base64(std::string_view bytes) {
  static constexpr char table[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    unsigned v = (static_cast<unsigned char>(bytes[i]) << 16) |
                 (static_cast<unsigned char>(bytes[i + 1]) << 8) | static_cast<unsigned char>(bytes[i + 2]);
    out += table[(v >> 18) & 63];
    out += table[(v >> 12) & 63];
    out += table[(v >> 6) & 63];
    out += table[v & 63];
  }
  if (i < bytes.size()) {
    unsigned v = static_cast<unsigned char>(bytes[i]) << 16;
    if (i + 1 < bytes.size()) v |= static_cast<unsigned char>(bytes[i + 1]) << 8;
    out += table[(v >> 18) & 63];
    out += table[(v >> 12) & 63];
    out += i + 1 < bytes.size() ? table[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

const char* verdict_class(std::string_view v) {
  if (v == verdict::parity) return "pass";
  if (v == verdict::inconclusive || v == verdict::incomplete || v == verdict::unverified) return "warn";
  return "fail";
}

// Tables fit the page (fixed layout, 100% wide): a long configuration id is cut with an
// ellipsis and shown whole in its tooltip, so the verdict column stays on a 1280-pixel screen.
constexpr const char* style = R"(
body{font-family:system-ui,sans-serif;margin:2em;color:#222;max-width:1600px}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:3px 8px;font-size:90%}
table.fit{table-layout:fixed;width:100%}table.fit th{font-size:85%}td.verdict{white-space:nowrap}
td.id{overflow:hidden;text-overflow:ellipsis;white-space:nowrap}td.id code{font-size:95%}
.roofs{display:flex;flex-wrap:wrap;gap:12px}.roofs figure{margin:0}svg.roofline{border:1px solid #ddd}
th{background:#f0f0f0}td.num{text-align:right}.pass{color:#0a7a0a;font-weight:bold}
.warn{color:#a66a00;font-weight:bold}.fail{color:#b00020;font-weight:bold}
img{max-width:100%;border:1px solid #ddd;margin:0.5em 0}code{font-size:90%})";

}  // namespace

std::string render_html(const report_data& r, const std::vector<plot_image>& plots,
                        std::string_view plot_note) {
  const auto& p = r.provenance;
  std::string out = "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">";
  out += fmt::format("<title>portbench report: {}</title><style>{}</style></head><body>\n",
                     html_escape(p.suite), style);
  out += fmt::format("<h1>portbench report: {}</h1>\n", html_escape(p.suite));
  out += fmt::format(
      "<p>Verdict: <span class=\"{}\">{}</span> &mdash; {} operators, {} configurations ({} "
      "paired); overall geomean port/reference speed <b>{}</b> {} (95% bootstrap), gate {:.2f}.</p>\n",
      verdict_class(r.overall_verdict), r.overall_verdict, r.operators.size(), r.configs.size(),
      r.paired, detail::ratio_text(r.overall.estimate), detail::interval_text(r.overall), r.options.gate);
  out += fmt::format("<p>{}</p>\n", html_escape(r.overall_reason));
  out += fmt::format(
      "<table><tr><th>pair</th><td>{} (reference) vs {} (port)</td></tr><tr><th>GPU</th><td>{} "
      "(driver {}, SM {} MHz, memory {} MHz)</td></tr><tr><th>CUDA / CUPTI</th><td>{} / {}</td></tr>"
      "<tr><th>revision</th><td><code>{}</code></td></tr><tr><th>created</th><td>{}</td></tr></table>\n",
      html_escape(p.reference_frontend), html_escape(p.port_frontend), html_escape(p.gpu_name),
      html_escape(p.driver_version), p.sm_clock_mhz, p.memory_clock_mhz, html_escape(p.cuda_version),
      html_escape(p.cupti_version), html_escape(p.git_revision), html_escape(p.created_utc));

  out += "<h2>Operators</h2>\n<table class=\"fit operators\"><colgroup><col style=\"width:11%\"><col style=\"width:5%\">"
         "<col style=\"width:5%\"><col style=\"width:6%\"><col style=\"width:9%\"><col style=\"width:17%\">"
         "<col style=\"width:6%\"><col style=\"width:8%\"><col style=\"width:10%\"><col style=\"width:11%\">"
         "<col style=\"width:12%\"></colgroup>\n<tr><th>operator</th><th>configs</th><th>paired</th>"
         "<th>geomean</th><th>95% interval</th><th>worst configuration</th><th>worst ratio</th><th>numerics</th>"
         "<th>proof</th><th class=\"verdict\">verdict</th><th>reason</th></tr>\n";
  for (const auto& op : r.operators) {
    out += fmt::format(
        "<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
        "<td>{}</td><td class=\"id\" title=\"{}\"><code>{}</code></td><td class=\"num\">{}</td><td>{}</td><td>{}</td>"
        "<td class=\"verdict {}\">{}</td><td>{}</td></tr>\n",
        html_escape(op.op), op.configs, op.paired, detail::ratio_text(op.geomean.estimate),
        detail::interval_text(op.geomean), html_escape(op.worst_config), html_escape(op.worst_config),
        detail::ratio_text(op.worst_ratio),
        html_escape(detail::counts_text(op.numerics)), html_escape(detail::counts_text(op.proof)),
        verdict_class(op.verdict), op.verdict, html_escape(op.reason));
  }
  out += "</table>\n";

  // Rooflines: every configuration's achieved rate against the roofs of the recorded GPU.
  diagnose::run_device device = diagnose::device_of(p);
  std::vector<std::string> skipped;
  auto samples = detail::roof_samples(r, device.spec, skipped);
  out += fmt::format("<h2>Roofline</h2>\n<p>Achieved flop rate against arithmetic intensity, reference (circle) and "
                     "port (square) of each configuration, best of N; roofs of the {}: {:.0f} GB/s copy bandwidth ({}), "
                     "{:.0f} GB/s DRAM peak, {:.1f} TFLOP/s FP32, {:.0f} TFLOP/s tensor cores. Hover a point for its "
                     "figures; the configuration table gives each side's bandwidth.</p>\n<div class=\"roofs\">\n",
                     html_escape(device.spec.name), device.spec.copy_bandwidth_gbps, html_escape(device.spec.copy_source),
                     device.spec.peak_bandwidth_gbps, device.spec.fp32_tflops, device.spec.tensor_tflops);
  std::size_t drawn = 0, no_flops = 0;
  for (const auto& op : r.operators) {
    std::string svg = detail::roofline_svg(samples, op.op, device.spec);
    if (svg.empty()) continue;
    ++drawn;
    out += fmt::format("<figure>{}<figcaption>{}</figcaption></figure>\n", svg, html_escape(op.op));
  }
  for (const auto& s : samples) no_flops += s.w.flops > 0 ? 0 : 1;
  out += "</div>\n";
  if (drawn == 0) out += "<p>No configuration could be placed on a roofline.</p>\n";
  if (no_flops > 0) out += fmt::format("<p>{} configurations do no arithmetic (pure data movement): their bandwidth is in the table only.</p>\n", no_flops);
  for (const auto& n : device.notes) out += fmt::format("<p>Device: {}</p>\n", html_escape(n));
  if (!skipped.empty()) {
    out += fmt::format("<p>Not on the roofline ({}): {}</p>\n", skipped.size(), html_escape(skipped.front()) +
                       (skipped.size() > 1 ? " ..." : ""));
  }
  std::map<const config_row*, const detail::roof_sample*> by_row;
  for (const auto& s : samples) by_row[s.row] = &s;
  auto gbps = [&](const config_row& c, bool port) -> std::string {
    auto it = by_row.find(&c);
    if (it == by_row.end()) return "—";
    const auto& q = port ? it->second->port : it->second->reference;
    return fmt::format("{:.0f} ({:.0f}%)", q.achieved_gbps, 100 * q.fraction_of_copy);
  };
  out += "<h2>Plots</h2>\n";
  for (const auto& img : plots) {
    out += fmt::format("<figure><img alt=\"{0}\" src=\"data:image/png;base64,{1}\"><figcaption>{0}"
                       "</figcaption></figure>\n",
                       html_escape(img.title), base64(img.png));
  }
  if (plots.empty()) out += fmt::format("<p>No plots: {}</p>\n", html_escape(plot_note));
  for (const auto& n : r.notes) out += fmt::format("<p>Note: {}</p>\n", html_escape(n));
  out += fmt::format("<h2>Method</h2>\n<p>{}</p>\n", html_escape(detail::method_text(r.options)));
  out += fmt::format("<h2>Configurations ({})</h2>\n<table class=\"fit configs\"><colgroup><col style=\"width:28%\">"
                     "<col><col><col style=\"width:6%\"><col><col><col style=\"width:6%\"><col><col><col></colgroup>\n"
                     "<tr><th>configuration</th><th>reference best</th><th>port best</th><th>ratio</th>"
                     "<th>reference GB/s (% of copy)</th><th>port GB/s (% of copy)</th><th>runs ref/port</th>"
                     "<th>spread ref/port</th><th>numerics ref/port</th><th>proof ref/port</th></tr>\n",
                     r.configs.size());
  for (const auto& c : r.configs) {
    out += fmt::format(
        "<tr><td class=\"id\" title=\"{0}\"><code>{0}</code></td><td class=\"num\">{1}</td><td class=\"num\">{2}</td>"
        "<td class=\"num\">{3}</td><td class=\"num\">{4}</td><td class=\"num\">{5}</td>"
        "<td>{6}/{7}</td><td>{8} / {9}</td><td>{10} / {11}</td><td>{12} / {13}</td></tr>\n",
        html_escape(c.id), detail::time_text(c.reference.best_ns), detail::time_text(c.port.best_ns),
        detail::ratio_text(c.ratio), gbps(c, false), gbps(c, true), c.reference.timed_runs, c.port.timed_runs,
        detail::percent_text(c.reference.spread), detail::percent_text(c.port.spread), c.reference.numerics,
        c.port.numerics, c.reference.proof, c.port.proof);
  }
  out += "</table>\n</body></html>\n";
  return out;
}

}  // namespace portbench::report
