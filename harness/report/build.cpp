// SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "portbench/report/model.hpp"
#include "portbench/stats/ratio.hpp"
#include "portbench/stats/rng.hpp"
#include "portbench/verdicts.hpp"

namespace portbench::report {
namespace {

/// A failure literal if any run has one, `pass` if all runs pass, else NOT_CHECKED.
std::string worst_literal(const std::vector<std::string>& values, std::string_view pass,
                          bool (*failed)(std::string_view) noexcept) {
  bool all_pass = !values.empty();
  for (const auto& v : values) {
    if (failed(v)) return v;
    all_pass = all_pass && v == pass;
  }
  return std::string(all_pass ? pass : verdicts::numerics::not_checked);
}

role_summary summarize_role(const store::role_results* rr) {
  role_summary s;
  s.numerics = verdicts::numerics::not_checked;
  s.proof = verdicts::proof::not_checked;
  if (rr == nullptr) return s;
  s.frontend = rr->frontend;
  s.runs = rr->runs.size();
  std::vector<std::string> numerics;
  std::vector<std::string> proofs;
  for (const auto& run : rr->runs) {
    numerics.push_back(run.verdicts.numerics);
    proofs.push_back(run.verdicts.proof);
    if (!run.error.empty()) s.errors.push_back(fmt::format("run {}: {}", run.run, run.error));
    if (run.has_valid_timing()) s.run_medians_ns.push_back(run.stats.median_ns);
  }
  stats::best_of_n best = stats::best_of(s.run_medians_ns);
  s.timed_runs = best.runs;
  s.best_ns = best.best;
  s.spread = best.spread;
  s.numerics = worst_literal(numerics, verdicts::numerics::pass, &verdicts::numerics_failed);
  s.proof = worst_literal(proofs, verdicts::proof::executed, &verdicts::proof_failed);
  return s;
}

config_row make_row(const store::config_results& c) {
  config_row row;
  row.id = c.info.id;
  row.op = c.info.op;
  row.params_json = c.info.params_json;
  row.reference = summarize_role(c.find(store::role::reference));
  row.port = summarize_role(c.find(store::role::port));
  row.paired = row.reference.timed_runs > 0 && row.port.timed_runs > 0;
  if (row.paired) row.ratio = stats::speed_ratio(row.reference.best_ns, row.port.best_ns);
  return row;
}

struct run_tally {
  std::size_t failures = 0;
  std::size_t unverified = 0;
  std::string first_failure;
};

void count_runs(const store::config_results& c, operator_summary& op, run_tally& tally) {
  for (const auto& rr : c.roles) {
    for (const auto& run : rr.runs) {
      ++op.numerics[run.verdicts.numerics];
      ++op.proof[run.verdicts.proof];
      ++op.timing[run.verdicts.timing];
      bool failed = verdicts::numerics_failed(run.verdicts.numerics) ||
                    verdicts::proof_failed(run.verdicts.proof) || !run.error.empty();
      if (!run.error.empty()) ++op.errors;
      if (failed) {
        if (tally.failures++ == 0) {
          tally.first_failure = fmt::format(
              "{} {} run {}: {}", c.info.id, store::to_string(rr.role), run.run,
              !run.error.empty() ? run.error
                                 : fmt::format("numerics {}, proof {}", run.verdicts.numerics,
                                               run.verdicts.proof));
        }
      } else if (!verdicts::numerics_passed(run.verdicts.numerics) ||
                 !verdicts::proof_passed(run.verdicts.proof)) {
        ++tally.unverified;
      }
    }
  }
}

std::vector<stats::paired_runs> paired_inputs(const std::vector<const config_row*>& rows) {
  std::vector<stats::paired_runs> out;
  for (const auto* r : rows) {
    if (r->paired) out.push_back({r->reference.run_medians_ns, r->port.run_medians_ns});
  }
  return out;
}

void decide(operator_summary& op, const run_tally& tally, double gate) {
  // A failure is named before a lack of data: a port that errors on every configuration has no
  // timings either, and "no data" would hide why.
  if (tally.failures > 0) {
    op.verdict = verdict::checks_failed;
    op.reason = fmt::format("{} run(s) failed a check or errored, first: {}", tally.failures,
                            tally.first_failure);
  } else if (op.paired == 0) {
    op.verdict = verdict::no_data;
    op.reason = "no configuration has valid timings on both sides";
  } else if (tally.unverified > 0) {
    op.verdict = verdict::unverified;
    op.reason = fmt::format("{} run(s) without PASS numerics and EXECUTED proof", tally.unverified);
  } else if (op.paired < op.configs) {
    op.verdict = verdict::incomplete;
    op.reason = fmt::format("{} of {} configurations lack valid timings on a side",
                            op.configs - op.paired, op.configs);
  } else {
    op.verdict = stats::parity_verdict(op.geomean, gate);
    op.reason = fmt::format("95% interval [{:.4f}, {:.4f}] {} gate {:.2f}", op.geomean.low,
                            op.geomean.high,
                            op.verdict == verdict::parity       ? "at or above"
                            : op.verdict == verdict::below_gate ? "below"
                                                                : "straddles",
                            gate);
  }
}

int precedence(std::string_view v) {
  constexpr std::string_view order[] = {verdict::checks_failed, verdict::below_gate,
                                        verdict::no_data,       verdict::incomplete,
                                        verdict::unverified,    verdict::inconclusive,
                                        verdict::parity};
  for (int i = 0; i < 7; ++i) {
    if (order[i] == v) return i;
  }
  return 0;
}

}  // namespace

report_data build_report(const store::results_file& results, const report_options& opts) {
  report_data out;
  out.files.push_back(results.path.string());
  out.provenance = results.provenance;
  out.options = opts;
  if (results.incomplete_runs > 0) {
    out.notes.push_back(fmt::format("{} run(s) cut short by a crash were skipped", results.incomplete_runs));
  }
  if (!results.unreadable_groups.empty()) {
    out.notes.push_back(fmt::format("{} unreadable group(s) skipped (half-written by a killed writer?), "
                                    "first: {}",
                                    results.unreadable_groups.size(), results.unreadable_groups.front()));
  }
  std::vector<run_tally> tallies;
  for (const auto& c : results.configs) {
    out.configs.push_back(make_row(c));
    auto it = std::find_if(out.operators.begin(), out.operators.end(),
                           [&](const operator_summary& o) { return o.op == c.info.op; });
    if (it == out.operators.end()) {
      out.operators.push_back({.op = c.info.op});
      tallies.emplace_back();
      it = out.operators.end() - 1;
    }
    count_runs(c, *it, tallies[static_cast<std::size_t>(it - out.operators.begin())]);
  }
  std::vector<const config_row*> all;
  for (std::size_t i = 0; i < out.operators.size(); ++i) {
    operator_summary& op = out.operators[i];
    std::vector<const config_row*> rows;
    for (const auto& r : out.configs) {
      if (r.op != op.op) continue;
      rows.push_back(&r);
      all.push_back(&r);
      ++op.configs;
      if (!r.paired) continue;
      ++op.paired;
      if (std::isnan(op.worst_ratio) || r.ratio < op.worst_ratio) {
        op.worst_ratio = r.ratio;
        op.worst_config = r.id;
      }
      for (double s : {r.reference.spread, r.port.spread}) {
        if (!std::isnan(s) && (std::isnan(op.max_spread) || s > op.max_spread)) op.max_spread = s;
      }
    }
    stats::bootstrap_options b = opts.bootstrap;
    b.seed = stats::hash_seed(opts.bootstrap.seed, op.op.c_str());
    op.geomean = stats::geomean_speed_ratio(paired_inputs(rows), b);
    decide(op, tallies[i], opts.gate);
  }
  for (const auto& r : out.configs) out.paired += r.paired ? 1 : 0;
  stats::bootstrap_options b = opts.bootstrap;
  b.seed = stats::hash_seed(opts.bootstrap.seed, "portbench.overall");
  out.overall = stats::geomean_speed_ratio(paired_inputs(all), b);
  if (out.operators.empty()) {
    out.overall_verdict = verdict::no_data;
    out.overall_reason = "the file holds no configurations";
  } else {
    const operator_summary* worst = &out.operators.front();
    for (const auto& op : out.operators) {
      if (precedence(op.verdict) < precedence(worst->verdict)) worst = &op;
    }
    out.overall_verdict = worst->verdict;
    out.overall_reason = worst->verdict == verdict::parity
                             ? "every operator is at parity"
                             : fmt::format("operator {}: {}", worst->op, worst->reason);
  }
  return out;
}

}  // namespace portbench::report
