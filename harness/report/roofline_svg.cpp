// SPDX-License-Identifier: Apache-2.0
#include "roofline_svg.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "format.hpp"

namespace portbench::report::detail {
namespace {

constexpr double k_width = 580, k_height = 360;
constexpr double k_left = 64, k_right = 16, k_top = 14, k_bottom = 44;

struct log_axis {
  double lo, hi, from, to;   // decades lo..hi map to pixels from..to
  [[nodiscard]] double at(double v) const { return from + (std::log10(v) - lo) / (hi - lo) * (to - from); }
};

std::string decade_label(int e) {
  if (e >= 0 && e <= 3) return fmt::format("{}", static_cast<int>(std::pow(10.0, e)));
  return fmt::format("1e{}", e);
}

std::string point_title(const config_row& row, const char* side, const diagnose::roofline_point& p) {
  return html_escape(fmt::format("{}\n{}: {:.2f} us, {:.0f} GB/s ({:.0f}% of copy), {:.1f} GFLOP/s, {:.3g} flop/B",
                                 row.id, side, p.time_ns / 1e3, p.achieved_gbps, 100 * p.fraction_of_copy,
                                 p.achieved_gflops, p.intensity));
}

}  // namespace

std::vector<roof_sample> roof_samples(const report_data& r, const diagnose::device_spec& d,
                                      std::vector<std::string>& skipped) {
  std::vector<roof_sample> out;
  for (const auto& row : r.configs) {
    if (!row.paired) continue;
    std::string why;
    auto w = diagnose::work_of({row.id, row.op, row.params_json}, &why);
    if (!w) {
      skipped.push_back(row.id + ": " + why);
      continue;
    }
    out.push_back({&row, *w, diagnose::roofline(*w, row.reference.best_ns, d), diagnose::roofline(*w, row.port.best_ns, d)});
  }
  return out;
}

std::string roofline_svg(const std::vector<roof_sample>& samples, const std::string& op, const diagnose::device_spec& d) {
  std::vector<const roof_sample*> mine;
  for (const auto& s : samples) {
    if (s.row->op == op && s.w.flops > 0) mine.push_back(&s);
  }
  if (mine.empty()) return {};
  double copy = d.copy_bandwidth_gbps, fp32 = d.fp32_tflops * 1e3, tensor = d.tensor_tflops * 1e3;
  double imin = 1e300, imax = 0, pmin = 1e300;
  for (const auto* s : mine) {
    imin = std::min(imin, s->reference.intensity);
    imax = std::max(imax, s->reference.intensity);
    pmin = std::min({pmin, s->reference.achieved_gflops, s->port.achieved_gflops});
  }
  double ridge = fp32 / copy;
  log_axis x{std::floor(std::log10(std::min(imin, ridge) / 2)), std::ceil(std::log10(std::max(imax, ridge) * 4)),
             k_left, k_width - k_right};
  log_axis y{std::floor(std::log10(pmin / 2)), std::ceil(std::log10(tensor * 1.2)), k_height - k_bottom, k_top};
  std::string svg = fmt::format(
      "<svg class=\"roofline\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "role=\"img\" aria-label=\"roofline of {2}\" data-operator=\"{2}\">\n",
      k_width, k_height, html_escape(op));
  svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#fff\" stroke=\"#999\"/>\n", k_left, k_top,
                     k_width - k_left - k_right, k_height - k_top - k_bottom);
  for (int e = static_cast<int>(x.lo); e <= static_cast<int>(x.hi); ++e) {
    double px = x.at(std::pow(10.0, e));
    svg += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#eee\"/>"
                       "<text x=\"{0:.1f}\" y=\"{3}\" font-size=\"11\" text-anchor=\"middle\">{4}</text>\n",
                       px, k_top, k_height - k_bottom, k_height - k_bottom + 14, decade_label(e));
  }
  for (int e = static_cast<int>(y.lo); e <= static_cast<int>(y.hi); ++e) {
    double py = y.at(std::pow(10.0, e));
    svg += fmt::format("<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"#eee\"/>"
                       "<text x=\"{3}\" y=\"{4:.1f}\" font-size=\"11\" text-anchor=\"end\">{5}</text>\n",
                       k_left, py, k_width - k_right, k_left - 4, py + 4, decade_label(e));
  }
  svg += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"12\" text-anchor=\"middle\">arithmetic intensity (flop/byte)</text>\n",
                     (k_left + k_width - k_right) / 2, k_height - 8);
  svg += fmt::format("<text x=\"14\" y=\"{0}\" font-size=\"12\" text-anchor=\"middle\" transform=\"rotate(-90 14 {0})\">"
                     "GFLOP/s</text>\n",
                     (k_top + k_height - k_bottom) / 2);
  // Roofs: a bandwidth line y = I x B up to a compute peak, clipped to the plot.
  auto roof = [&](double bandwidth, double peak, const char* colour, const char* dash, const std::string& label) {
    double i0 = std::pow(10.0, x.lo), i1 = std::min(peak / bandwidth, std::pow(10.0, x.hi));
    double y0 = std::max(i0 * bandwidth, std::pow(10.0, y.lo));
    i0 = y0 / bandwidth;
    std::string points = fmt::format("{:.1f},{:.1f} {:.1f},{:.1f}", x.at(i0), y.at(y0), x.at(i1), y.at(i1 * bandwidth));
    if (peak / bandwidth < std::pow(10.0, x.hi)) points += fmt::format(" {:.1f},{:.1f}", k_width - k_right, y.at(peak));
    svg += fmt::format("<polyline class=\"roof\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.6\" {} points=\"{}\">"
                       "<title>{}</title></polyline>\n",
                       colour, dash, points, html_escape(label));
  };
  roof(d.peak_bandwidth_gbps, tensor, "#bbb", "stroke-dasharray=\"4 3\"",
       fmt::format("DRAM peak {:.0f} GB/s, tensor-core peak {:.0f} TFLOP/s", d.peak_bandwidth_gbps, d.tensor_tflops));
  roof(copy, fp32, "#444", "", fmt::format("copy bandwidth {:.0f} GB/s, FP32 peak {:.1f} TFLOP/s", copy, d.fp32_tflops));
  svg += fmt::format("<text x=\"{}\" y=\"{:.1f}\" font-size=\"10\" text-anchor=\"end\" fill=\"#444\">FP32 {:.0f} TFLOP/s</text>\n",
                     k_width - k_right - 4, y.at(fp32) - 4, d.fp32_tflops);
  svg += fmt::format("<text x=\"{}\" y=\"{:.1f}\" font-size=\"10\" text-anchor=\"end\" fill=\"#888\">tensor {:.0f} TFLOP/s</text>\n",
                     k_width - k_right - 4, y.at(tensor) - 4, d.tensor_tflops);
  for (const auto* s : mine) {
    double xr = x.at(s->reference.intensity), yr = y.at(s->reference.achieved_gflops);
    double xp = x.at(s->port.intensity), yp = y.at(s->port.achieved_gflops);
    svg += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#aaa\"/>\n", xr, yr, xp, yp);
    svg += fmt::format("<circle class=\"point reference\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4\" fill=\"#1f77b4\"><title>{}</title></circle>\n",
                       xr, yr, point_title(*s->row, "reference", s->reference));
    svg += fmt::format("<rect class=\"point port\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"7\" height=\"7\" fill=\"#ff7f0e\"><title>{}</title></rect>\n",
                       xp - 3.5, yp - 3.5, point_title(*s->row, "port", s->port));
  }
  svg += fmt::format("<circle cx=\"{0}\" cy=\"{1}\" r=\"4\" fill=\"#1f77b4\"/><text x=\"{2}\" y=\"{3}\" font-size=\"11\">reference</text>"
                     "<rect x=\"{4}\" y=\"{5}\" width=\"7\" height=\"7\" fill=\"#ff7f0e\"/><text x=\"{6}\" y=\"{3}\" font-size=\"11\">port</text>\n",
                     k_left + 14, k_top + 14, k_left + 22, k_top + 18, k_left + 84, k_top + 10.5, k_left + 95);
  svg += "</svg>";
  return svg;
}

}  // namespace portbench::report::detail
