// SPDX-License-Identifier: Apache-2.0
// Element error accounting: upstream allclose counts plus the normalised error of the model.
#include <algorithm>
#include <cmath>
#include <limits>

#include "portbench/reference/compare.hpp"
#include "portbench/reference/tolerance.hpp"

namespace portbench::reference {

tolerance default_tolerance(dtype t) noexcept {
  switch (t) {
    case dtype::f64: return {1e-15, 1e-12};
    case dtype::f32: return {1e-8, 1e-5};
    case dtype::f16: return {1e-2, 1e-2};
    case dtype::bf16: return {2e-2, 1e-2};
    case dtype::f8e4m3: return {1e-1, 1e-1};
    case dtype::f8e5m2: return {5e-1, 5e-1};
    default: return {0, 0};
  }
}

double rms_of(const double* values, std::int64_t n) noexcept {
  if (n <= 0) return 0;
  double s = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    if (std::isfinite(values[i])) s += values[i] * values[i];
  }
  return std::sqrt(s / static_cast<double>(n));
}

error_accumulator::error_accumulator(dtype type, tolerance tol)
    : m_type(type), m_tol(tol), m_eps(is_floating(type) ? machine_epsilon(type) : 0.0),
      m_floor(is_floating(type) ? 0.5 * min_subnormal(type) : 1.0),
      m_compute_eps(tol.compute_eps > 0 ? tol.compute_eps : 0x1.0p-23),
      m_min_ulp(is_floating(type) ? min_subnormal(type) : 1.0) {}

namespace {
// Accumulated roundoff a correct kernel may add, in units of the computation's roundoff times
// (|want| + s): fp32 tree reductions of thousands of terms stay inside it, while a flipped bit
// of an fp16 value at a hundredth of its unit's rms does not.
constexpr double k_accumulation_units = 16;
}  // namespace

void error_accumulator::note_outside(std::int64_t index, double d, double abs_want, double scale,
                                     double accumulation_bound) noexcept {
  note_bad(index);
  if (m_eps == 0) {   // integers: exact or wrong
    ++m_beyond_rounding;
    return;
  }
  // One ulp of the output dtype at the element: |want| = f * 2^e with f in [0.5, 1) has
  // ulp eps * 2^(e-1), never below the smallest subnormal.
  int e = 0;
  std::frexp(abs_want, &e);
  const double ulp = std::max(std::ldexp(m_eps, e - 1), m_min_ulp);
  const double roundoff = ulp + k_accumulation_units * m_compute_eps * (abs_want + scale);
  if (d <= roundoff) return;
  if (d <= ulp + accumulation_bound) {
    ++m_within_accumulation_only;
    return;
  }
  ++m_beyond_rounding;
}

void error_accumulator::note_bad(std::int64_t index) noexcept {
  ++m_bad;
  if (m_first_bad < 0 || index < m_first_bad) m_first_bad = index;
}

void error_accumulator::add(std::int64_t index, double got, double want, double scale, double accumulation_bound) noexcept {
  ++m_checked;
  const double d = std::abs(got - want);
  if (!(d <= std::numeric_limits<double>::max())) {  // NaN or inf somewhere: the rare path
    if (std::isnan(want)) {
      // Upstream copies the reference's NaNs into the result: a NaN there is not an error.
      if (!std::isnan(got)) {
        note_bad(index);
        ++m_beyond_rounding;
      }
    } else if (got != want) {
      ++m_nonfinite;
      note_bad(index);
      ++m_beyond_rounding;
      m_max_norm = INFINITY;
      m_max_abs = INFINITY;
    }
    return;
  }
  // The hot path of every full check: one division, the rest compares and multiplies.
  const double aw = std::abs(want);
  m_sum_want2 += want * want;
  m_max_abs = std::max(m_max_abs, d);
  if (d > m_max_rel * aw && aw > 0) m_max_rel = d / aw;
  if (d > m_tol.atol + m_tol.rtol * aw) note_outside(index, d, aw, scale, accumulation_bound);
  const double norm = d / (m_eps * (aw + scale) + m_floor);
  m_max_norm = std::max(m_max_norm, norm);
  m_sum_norm2 += norm * norm;
}

void error_accumulator::add_span(std::int64_t start, std::int64_t stride, std::int64_t count, const double* got,
                                 const double* want, double scale) noexcept {
  double max_abs = m_max_abs, max_rel = m_max_rel, max_norm = m_max_norm, sum_norm2 = 0, sum_want2 = 0;
  const double base = m_eps * scale + m_floor;
  for (std::int64_t k = 0; k < count; ++k) {
    const double d = std::abs(got[k] - want[k]);
    if (!(d <= std::numeric_limits<double>::max())) {
      // Flush the running values, take the rare path, reload.
      m_max_abs = max_abs, m_max_rel = max_rel, m_max_norm = max_norm;
      m_sum_norm2 += sum_norm2, m_sum_want2 += sum_want2;
      sum_norm2 = sum_want2 = 0;
      --m_checked;  // add() counts it again
      add(start + k * stride, got[k], want[k], scale);
      max_abs = m_max_abs, max_rel = m_max_rel, max_norm = m_max_norm;
      continue;
    }
    const double aw = std::abs(want[k]);
    sum_want2 += want[k] * want[k];
    max_abs = std::max(max_abs, d);
    if (d > max_rel * aw && aw > 0) max_rel = d / aw;
    if (d > m_tol.atol + m_tol.rtol * aw) note_outside(start + k * stride, d, aw, scale, 0);
    const double norm = d / (m_eps * aw + base);
    max_norm = std::max(max_norm, norm);
    sum_norm2 += norm * norm;
  }
  m_checked += count;
  m_max_abs = max_abs, m_max_rel = max_rel, m_max_norm = max_norm;
  m_sum_norm2 += sum_norm2, m_sum_want2 += sum_want2;
}

void error_accumulator::add_verdict(std::int64_t index, bool ok) noexcept {
  ++m_checked;
  if (!ok) {
    note_bad(index);
    ++m_beyond_rounding;
    m_max_norm = INFINITY;
  }
}

void error_accumulator::add_normalised(std::int64_t index, double norm_err, bool ok,
                                       bool finite) noexcept {
  ++m_checked;
  if (!finite) {
    ++m_nonfinite;
    note_bad(index);
    ++m_beyond_rounding;
    m_max_norm = INFINITY;
    return;
  }
  // A sketch row is beyond rounding when it is outside allclose and its normalised error is
  // beyond what the model's floor allows for a correct row.
  if (!ok) {
    note_bad(index);
    if (norm_err > tolerance_model{}.max_floor) ++m_beyond_rounding;
  }
  if (norm_err > m_max_norm) m_max_norm = norm_err;
  m_sum_norm2 += norm_err * norm_err;
}

void error_accumulator::merge(const error_accumulator& o) noexcept {
  m_checked += o.m_checked;
  m_bad += o.m_bad;
  if (o.m_first_bad >= 0 && (m_first_bad < 0 || o.m_first_bad < m_first_bad)) m_first_bad = o.m_first_bad;
  m_nonfinite += o.m_nonfinite;
  m_beyond_rounding += o.m_beyond_rounding;
  m_within_accumulation_only += o.m_within_accumulation_only;
  m_max_abs = std::max(m_max_abs, o.m_max_abs);
  m_max_rel = std::max(m_max_rel, o.m_max_rel);
  m_max_norm = std::max(m_max_norm, o.m_max_norm);
  m_sum_norm2 += o.m_sum_norm2;
  m_sum_want2 += o.m_sum_want2;
}

compare_report error_accumulator::report(const std::string& tensor, const std::string& method,
                                         std::int64_t total) const {
  compare_report r;
  r.tensor = tensor;
  r.method = method;
  r.type = m_type;
  r.total = total;
  r.checked = m_checked;
  r.bad = m_bad;
  r.first_bad_index = m_first_bad;
  r.nonfinite = m_nonfinite;
  r.beyond_rounding = m_beyond_rounding;
  r.within_accumulation_only = m_within_accumulation_only;
  r.max_abs_err = m_max_abs;
  r.max_rel_err = m_max_rel;
  r.atol = m_tol.atol;
  r.rtol = m_tol.rtol;
  r.max_norm_err = m_max_norm;
  if (m_checked > 0) {
    r.rms_norm_err = std::sqrt(m_sum_norm2 / static_cast<double>(m_checked));
    r.ref_rms = std::sqrt(m_sum_want2 / static_cast<double>(m_checked));
  }
  if (m_nonfinite > 0) r.rms_norm_err = INFINITY;
  return r;
}

}  // namespace portbench::reference
