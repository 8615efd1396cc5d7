// SPDX-License-Identifier: Apache-2.0
#include <cmath>

#include <nlohmann/json.hpp>

#include "format.hpp"
#include "portbench/report/render.hpp"

namespace portbench::report {
namespace {

using nlohmann::json;

json number(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

json interval_json(const stats::interval& i) {
  return {{"estimate", number(i.estimate)}, {"low", number(i.low)}, {"high", number(i.high)}};
}

json role_json(const role_summary& s) {
  json medians = json::array();
  for (double m : s.run_medians_ns) medians.push_back(number(m));
  return {{"frontend", s.frontend},     {"runs", s.runs},
          {"timed_runs", s.timed_runs}, {"run_medians_ns", medians},
          {"best_ns", number(s.best_ns)}, {"spread", number(s.spread)},
          {"numerics", s.numerics},     {"proof", s.proof},
          {"errors", s.errors}};
}

}  // namespace

std::string render_json(const report_data& r) {
  json out;
  out["schema"] = "portbench.report/1";
  out["files"] = r.files;
  const auto& p = r.provenance;
  out["provenance"] = {{"suite", p.suite},
                       {"gpu_name", p.gpu_name},
                       {"driver_version", p.driver_version},
                       {"sm_clock_mhz", p.sm_clock_mhz},
                       {"memory_clock_mhz", p.memory_clock_mhz},
                       {"cuda_version", p.cuda_version},
                       {"cupti_version", p.cupti_version},
                       {"git_revision", p.git_revision},
                       {"created_utc", p.created_utc},
                       {"reference_frontend", p.reference_frontend},
                       {"port_frontend", p.port_frontend}};
  out["method"] = {{"ratio", "port speed / reference speed = reference best-of-N time / port best-of-N time"},
                   {"gate", r.options.gate},
                   {"confidence", r.options.bootstrap.confidence},
                   {"resamples", r.options.bootstrap.resamples},
                   {"seed", r.options.bootstrap.seed},
                   {"resample_runs", r.options.bootstrap.resample_runs},
                   {"text", detail::method_text(r.options)}};
  out["verdict"] = r.overall_verdict;
  out["reason"] = r.overall_reason;
  out["overall"] = {{"configs", r.configs.size()}, {"paired", r.paired}, {"geomean", interval_json(r.overall)}};
  json ops = json::array();
  for (const auto& op : r.operators) {
    ops.push_back({{"operator", op.op},
                   {"configs", op.configs},
                   {"paired", op.paired},
                   {"geomean", interval_json(op.geomean)},
                   {"worst_config", op.worst_config},
                   {"worst_ratio", number(op.worst_ratio)},
                   {"max_between_run_spread", number(op.max_spread)},
                   {"numerics", op.numerics},
                   {"proof", op.proof},
                   {"timing", op.timing},
                   {"errors", op.errors},
                   {"verdict", op.verdict},
                   {"reason", op.reason}});
  }
  out["operators"] = ops;
  json cfgs = json::array();
  for (const auto& c : r.configs) {
    cfgs.push_back({{"id", c.id},
                    {"operator", c.op},
                    {"paired", c.paired},
                    {"ratio", number(c.ratio)},
                    {"reference", role_json(c.reference)},
                    {"port", role_json(c.port)}});
  }
  out["configs"] = cfgs;
  out["notes"] = r.notes;
  return out.dump(2) + "\n";
}

}  // namespace portbench::report
