// SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "format.hpp"
#include "portbench/report/compare.hpp"

namespace portbench::report {
namespace {

int order(std::string_view v) {
  if (v == stats::regression::regressed) return 0;
  if (v == stats::regression::inconclusive) return 1;
  if (v == stats::regression::improved) return 2;
  return 3;
}

nlohmann::json number(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

}  // namespace

std::string render_compare_markdown(const compare_data& d) {
  std::string out = "# portbench compare\n\n";
  out += fmt::format("Baseline `{}` ({}, {}), current `{}` ({}, {}).\n\n", d.baseline_file,
                     detail::md_cell(d.baseline.git_revision), detail::md_cell(d.baseline.gpu_name),
                     d.current_file, detail::md_cell(d.current.git_revision),
                     detail::md_cell(d.current.gpu_name));
  out += fmt::format("**{}**: ", d.regressed() ? stats::regression::regressed : "no regression");
  std::string counts;
  for (std::string_view v : {stats::regression::regressed, stats::regression::improved,
                             stats::regression::unchanged, stats::regression::inconclusive}) {
    auto it = d.counts.find(std::string(v));
    counts += fmt::format("{}{} {}", counts.empty() ? "" : ", ", v, it == d.counts.end() ? 0 : it->second);
  }
  out += counts + fmt::format(" (of {} configuration/front-end pairs", d.rows.size());
  out += d.only_in_current > 0 ? fmt::format("; {} new in current)", d.only_in_current) : std::string(")");
  out += ".\n\n";
  out += fmt::format("Test: {}.\n\n", d.test_description);
  std::vector<const compare_row*> rows;
  for (const auto& r : d.rows) rows.push_back(&r);
  std::stable_sort(rows.begin(), rows.end(), [](const compare_row* a, const compare_row* b) {
    return order(a->result.verdict) < order(b->result.verdict);
  });
  out += "| configuration | role | front end | baseline | current | change | 95% interval | "
         "best of N | p | runs | verdict | note |\n|---|---|---|---:|---:|---:|---|---:|---:|---|---|---|\n";
  for (const auto* r : rows) {
    std::string fe = r->baseline_frontend == r->current_frontend || r->current_frontend.empty()
                         ? r->baseline_frontend
                         : r->baseline_frontend + " → " + r->current_frontend;
    out += fmt::format(
        "| `{}` | {} | {} | {} | {} | {} | {} | {} | {} | {}/{} | **{}** | {} |\n", detail::md_cell(r->config_id),
        store::to_string(r->role), detail::md_cell(fe), detail::time_text(r->baseline_ns),
        detail::time_text(r->current_ns), detail::percent_text(r->result.ratio - 1.0),
        std::isfinite(r->result.low)
            ? fmt::format("[{}, {}]", detail::percent_text(r->result.low - 1.0),
                          detail::percent_text(r->result.high - 1.0))
            : std::string("—"),
        detail::percent_text(r->result.best_ratio - 1.0),
        std::isfinite(r->result.p_value) ? fmt::format("{:.3g}", r->result.p_value) : std::string("—"),
        r->result.baseline_runs, r->result.current_runs, r->result.verdict, detail::md_cell(r->result.note));
  }
  return out;
}

std::string render_compare_json(const compare_data& d) {
  nlohmann::json out;
  out["schema"] = "portbench.compare/1";
  out["baseline"] = {{"file", d.baseline_file}, {"git_revision", d.baseline.git_revision}, {"gpu_name", d.baseline.gpu_name}};
  out["current"] = {{"file", d.current_file}, {"git_revision", d.current.git_revision}, {"gpu_name", d.current.gpu_name}};
  out["test"] = {{"description", d.test_description},
                 {"threshold", d.options.test.threshold},
                 {"alpha", d.options.test.alpha},
                 {"statistic", "current/baseline device time, geometric mean of per-run medians"}};
  out["regressed"] = d.regressed();
  out["counts"] = d.counts;
  out["only_in_current"] = d.only_in_current;
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& r : d.rows) {
    rows.push_back({{"config", r.config_id},
                    {"operator", r.op},
                    {"role", store::to_string(r.role)},
                    {"baseline_frontend", r.baseline_frontend},
                    {"current_frontend", r.current_frontend},
                    {"baseline_ns", number(r.baseline_ns)},
                    {"current_ns", number(r.current_ns)},
                    {"ratio", number(r.result.ratio)},
                    {"low", number(r.result.low)},
                    {"high", number(r.result.high)},
                    {"p_value", number(r.result.p_value)},
                    {"best_ratio", number(r.result.best_ratio)},
                    {"method", r.result.method},
                    {"baseline_runs", r.result.baseline_runs},
                    {"current_runs", r.result.current_runs},
                    {"verdict", r.result.verdict},
                    {"note", r.result.note}});
  }
  out["rows"] = rows;
  return out.dump(2) + "\n";
}

}  // namespace portbench::report
