// SPDX-License-Identifier: Apache-2.0
#include "portbench/sweep/summary.hpp"

#include <cmath>
#include <limits>

#include "portbench/stats/bootstrap.hpp"
#include "portbench/stats/ratio.hpp"
#include "portbench/verdicts.hpp"

namespace portbench::sweep {
namespace {

constexpr double nan = std::numeric_limits<double>::quiet_NaN();

// The worst of two literals of one family: a failure literal stands, then "not checked",
// then the pass literal.
std::string worst(const std::string& a, const std::string& b, std::string_view pass,
                  bool (*failed)(std::string_view) noexcept) {
  if (a.empty()) return b;
  if (failed(a)) return a;
  if (failed(b)) return b;
  if (a != pass) return a;
  return b;
}

bool numerics_failed(std::string_view v) noexcept { return verdicts::numerics_failed(v); }
bool proof_failed(std::string_view v) noexcept { return verdicts::proof_failed(v); }
bool timing_failed(std::string_view v) noexcept {
  return v != verdicts::timing::valid && v != verdicts::timing::not_measured;
}

}  // namespace

bool config_row::passed() const {
  if (status != verdicts::status::ok || !verdicts::numerics_passed(numerics)) return false;
  return check || verdicts::proof_passed(proof);
}

void sweep_tally::add(const planned_item& item, int run, const measure::item_report& r) {
  (void)run;
  config_row& row = m_rows[item.id()];
  if (row.id.empty()) {
    row.id = item.id();
    row.op = item.config.op;
    row.ref_frontend = item.reference.frontend;
    row.port_frontend = item.port.frontend;
    row.check = item.port.bundle.empty();
  }
  if (r.status == verdicts::status::not_run) {
    // A run the budget did not start: the row keeps what its other runs measured, and is
    // NOT_RUN only when none did.
    if (row.runs == 0) {
      row.status = r.status;
      row.error = r.error;
    }
    return;
  }
  if (row.runs == 0) {
    row.status = verdicts::status::ok;
    row.error.clear();
  }
  ++row.runs;
  std::vector<const measure::side_report*> sides{&r.ref};
  if (!row.check) sides.push_back(&r.port);
  for (const auto* s : sides) {
    row.numerics = worst(row.numerics, s->numerics, verdicts::numerics::pass, &numerics_failed);
    if (!row.check) {
      row.proof = worst(row.proof, s->proof, verdicts::proof::executed, &proof_failed);
      row.timing = worst(row.timing, s->timing, verdicts::timing::valid, &timing_failed);
    }
    m_costs.check_s += s->check_s;
    m_costs.verify_s += s->verify_s;
    m_costs.verified += s->numerics_source == verdicts::numerics_source::verified;
    m_costs.reused += s->numerics_source == verdicts::numerics_source::reused;
  }
  if (!row.check) {
    if (r.ref.median_ns > 0 && verdicts::timing_valid(r.ref.timing)) row.ref_medians_ns.push_back(r.ref.median_ns);
    if (r.port.median_ns > 0 && verdicts::timing_valid(r.port.timing)) row.port_medians_ns.push_back(r.port.median_ns);
  }
  m_costs.inputs_s += r.inputs_s;
  m_costs.sampling_s += r.sampling_s;
  if (r.status != verdicts::status::ok) {
    row.status = r.status;
    if (row.error.empty()) row.error = r.error;
  }
}

void sweep_tally::not_recorded(const planned_item& item, const std::string& why) {
  config_row& row = m_rows[item.id()];
  if (row.id.empty()) {
    row.id = item.id();
    row.op = item.config.op;
  }
  row.status = verdicts::status::not_recorded;
  if (row.error.empty()) row.error = why;
}

void sweep_tally::finish(config_row& row) const {
  const auto ref = stats::best_of(row.ref_medians_ns);
  const auto port = stats::best_of(row.port_medians_ns);
  row.ref_best_ns = ref.runs ? ref.best : nan;
  row.port_best_ns = port.runs ? port.best : nan;
  row.ratio = ref.runs && port.runs ? stats::speed_ratio(ref.best, port.best) : nan;
  row.spread = std::max(ref.runs ? ref.spread : 0.0, port.runs ? port.spread : 0.0);
}

std::vector<config_row> sweep_tally::rows() const {
  std::vector<config_row> out;
  for (auto [id, row] : m_rows) {
    finish(row);
    out.push_back(std::move(row));
  }
  return out;
}

double sweep_tally::geomean() const {
  std::vector<double> ratios;
  for (const auto& row : rows()) {
    if (row.passed() && std::isfinite(row.ratio)) ratios.push_back(row.ratio);
  }
  return ratios.empty() ? nan : stats::geomean(ratios);
}

std::size_t sweep_tally::geomean_count() const {
  std::size_t n = 0;
  for (const auto& row : rows()) n += row.passed() && std::isfinite(row.ratio);
  return n;
}

int sweep_tally::exit_code(const sweep_plan& plan, const sweep_summary& s) const {
  (void)plan;
  // Runs the budget left unstarted make the sweep incomplete even where every row passed.
  if (s.not_recorded > 0 || s.not_run_budget > 0) return 1;
  for (const auto& [id, row] : m_rows) {
    if (!row.passed()) return 1;
  }
  return 0;
}

}  // namespace portbench::sweep
