// SPDX-License-Identifier: Apache-2.0
#include "format.hpp"

#include <cmath>

#include <fmt/format.h>

namespace portbench::report::detail {

std::string ratio_text(double r) { return std::isfinite(r) ? fmt::format("{:.4f}", r) : "—"; }

std::string interval_text(const stats::interval& i) {
  if (!std::isfinite(i.low) || !std::isfinite(i.high)) return "—";
  return fmt::format("[{:.4f}, {:.4f}]", i.low, i.high);
}

std::string time_text(double ns) {
  if (!std::isfinite(ns)) return "—";
  if (ns < 1e3) return fmt::format("{:.0f} ns", ns);
  if (ns < 1e6) return fmt::format("{:.2f} µs", ns / 1e3);
  if (ns < 1e9) return fmt::format("{:.3f} ms", ns / 1e6);
  return fmt::format("{:.3f} s", ns / 1e9);
}

std::string percent_text(double fraction) {
  return std::isfinite(fraction) ? fmt::format("{:+.1f}%", fraction * 100.0) : "—";
}

std::string counts_text(const verdict_counts& c) {
  std::string out;
  for (const auto& [k, n] : c) out += fmt::format("{}{} {}", out.empty() ? "" : ", ", k, n);
  return out.empty() ? "—" : out;
}

std::string md_cell(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '|') out += "\\|";
    else if (c == '\n' || c == '\r') out += ' ';
    else out += c;
  }
  return out;
}

std::string html_escape(std::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string method_text(const report_options& opts) {
  return fmt::format(
      "Per configuration, ratio = port speed / reference speed = reference time / port time, each "
      "side's time its best of N (the minimum over independent runs of each run's median CUPTI "
      "device time); > 1 means the port is faster. Per operator and overall: geometric mean of the "
      "ratios with a {:.0f}% percentile bootstrap interval ({} resamples of configurations and, "
      "within each, of runs; seed {}). Verdict PARITY when the whole interval is at or above the "
      "gate {:.2f} (non-inferiority at one-sided alpha {:.3f}), BELOW_GATE when it lies below, "
      "INCONCLUSIVE when it straddles; before that NO_DATA (nothing paired), CHECKS_FAILED (a "
      "numerics FAIL, a failed proof or a run error), UNVERIFIED (a run whose numerics or proof was "
      "not checked) and INCOMPLETE (a configuration without valid timings on both sides) apply, "
      "in that order. Nothing unchecked passes.",
      opts.bootstrap.confidence * 100.0, opts.bootstrap.resamples, opts.bootstrap.seed, opts.gate,
      (1.0 - opts.bootstrap.confidence) / 2.0);
}

}  // namespace portbench::report::detail
