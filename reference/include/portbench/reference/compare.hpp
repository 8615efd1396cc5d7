// SPDX-License-Identifier: Apache-2.0
// Accumulates element errors of one output into a compare_report: the upstream allclose count
// (bad) and the normalised error that the tolerance model (tolerance.hpp) judges.
#pragma once
#include <cstdint>
#include <string>

#include "portbench/reference/spec.hpp"

namespace portbench::reference {

/// Upstream default atol/rtol per dtype (operators.md section 2); integers are exact.
[[nodiscard]] tolerance default_tolerance(dtype t) noexcept;

class error_accumulator {
 public:
  error_accumulator() = default;
  error_accumulator(dtype type, tolerance tol);

  /// One element: `scale` is the rms of the reference over the element's unit (row, head, ...).
  /// `accumulation_bound`: an absolute roundoff the caller can bound for this element (a long
  /// product sum's, see tolerance::accumulation_eps; 0: none), also allowed by the rounding rule.
  void add(std::int64_t index, double got, double want, double scale, double accumulation_bound = 0) noexcept;
  /// `count` elements at storage indices start + k * stride, all with the same `scale`: the
  /// same as calling add() for each, with the running statistics kept in registers.
  void add_span(std::int64_t start, std::int64_t stride, std::int64_t count, const double* got, const double* want,
                double scale) noexcept;
  /// One element checked by a criterion of its own (exact integers, statistics): counts it and,
  /// when !ok, counts it bad.
  void add_verdict(std::int64_t index, bool ok) noexcept;
  /// A precomputed normalised error (used by Freivalds' check, one value per sketch row).
  void add_normalised(std::int64_t index, double norm_err, bool ok, bool finite) noexcept;
  /// Adds `other`'s counts; first_bad_index becomes the smaller one.
  void merge(const error_accumulator& other) noexcept;

  [[nodiscard]] std::int64_t checked() const noexcept { return m_checked; }
  [[nodiscard]] compare_report report(const std::string& tensor, const std::string& method,
                                      std::int64_t total) const;

 private:
  void note_bad(std::int64_t index) noexcept;
  /// An element outside upstream atol/rtol: also counted beyond rounding when it is.
  void note_outside(std::int64_t index, double d, double abs_want, double scale, double accumulation_bound) noexcept;

  dtype m_type = dtype::f32;
  tolerance m_tol{};
  double m_eps = 0x1.0p-23;     // machine_epsilon(m_type), or 0 for integers
  double m_floor = 0x1.0p-150;  // half the smallest subnormal, or 1 for integers
  double m_compute_eps = 0x1.0p-23;   // roundoff of the computation (tolerance::compute_eps)
  double m_min_ulp = 0x1.0p-149;      // the output dtype's smallest subnormal
  std::int64_t m_checked = 0;
  std::int64_t m_bad = 0;
  std::int64_t m_first_bad = -1;
  std::int64_t m_nonfinite = 0;
  std::int64_t m_beyond_rounding = 0;
  std::int64_t m_within_accumulation_only = 0;
  double m_max_abs = 0;
  double m_max_rel = 0;
  double m_max_norm = 0;
  double m_sum_norm2 = 0;
  double m_sum_want2 = 0;
};

/// The rms of `n` values (0 for n == 0).
[[nodiscard]] double rms_of(const double* values, std::int64_t n) noexcept;

}  // namespace portbench::reference
