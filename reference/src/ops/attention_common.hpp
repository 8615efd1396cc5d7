// SPDX-License-Identifier: Apache-2.0
// One attention query row in fp64, shared by every attention-like operator: scores over a
// contiguous key range, optional soft-cap, optional sink logit in the denominator, and the
// log-sum-exp. Masks in these operators (causal, sliding window, decode) are all key ranges.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <vector>

#include "portbench/reference/random.hpp"
#include "portbench/reference/tensor_access.hpp"

namespace portbench::reference::detail {

/// A [rows, cols] strided matrix inside a tensor (e.g. the keys of one batch and head).
struct strided_rows {
  tensor_reader data;
  std::int64_t base = 0;
  std::int64_t row_stride = 0;
  std::int64_t col_stride = 1;
  [[nodiscard]] double at(std::int64_t r, std::int64_t c) const { return data[base + r * row_stride + c * col_stride]; }
  /// Dot product of row r with a dense vector of length n.
  [[nodiscard]] double dot(std::int64_t r, const double* v, std::int64_t n) const {
    thread_local std::vector<double> row;
    row.resize(static_cast<std::size_t>(n));
    data.read(base + r * row_stride, col_stride, n, row.data());
    double s = 0;
    for (std::int64_t c = 0; c < n; ++c) s += row[static_cast<std::size_t>(c)] * v[c];
    return s;
  }
  /// Reads row r into out[0, n).
  void read(std::int64_t r, double* out, std::int64_t n) const { data.read(base + r * row_stride, col_stride, n, out); }
};

struct attention_row_options {
  double scale = 1.0;                  ///< multiplies q.k
  double softcap = 0.0;                ///< > 0: s = cap * tanh(s / cap) (after scaling)
  std::optional<double> sink;          ///< extra logit in the denominator only
};

struct attention_row_result {
  double lse = -INFINITY;   ///< natural log of the softmax denominator (sink included)
};

/// out[0, dv) = sum_j p_j v_j over keys j in [j0, j1), p = softmax(scores). `score(j)` returns the
/// raw q.k for key j (before scale and soft-cap); values come from `v`. An empty range (and no
/// sink) yields zeros and lse = -inf.
template <class ScoreFn>
attention_row_result attention_row(std::int64_t j0, std::int64_t j1, const attention_row_options& o, ScoreFn score,
                                   const strided_rows& v, std::int64_t dv, double* out,
                                   std::vector<double>& scratch) {
  const std::int64_t n = std::max<std::int64_t>(0, j1 - j0);
  scratch.resize(static_cast<std::size_t>(n));
  double mx = o.sink ? *o.sink : -INFINITY;
  for (std::int64_t j = 0; j < n; ++j) {
    double s = score(j0 + j) * o.scale;
    if (o.softcap > 0) s = o.softcap * std::tanh(s / o.softcap);
    scratch[static_cast<std::size_t>(j)] = s;
    mx = std::max(mx, s);
  }
  std::fill(out, out + dv, 0.0);
  if (n == 0 && !o.sink) return {};
  double den = o.sink ? std::exp(*o.sink - mx) : 0.0;
  thread_local std::vector<double> row;
  row.resize(static_cast<std::size_t>(dv));
  for (std::int64_t j = 0; j < n; ++j) {
    const double p = std::exp(scratch[static_cast<std::size_t>(j)] - mx);
    den += p;
    v.read(j0 + j, row.data(), dv);
    for (std::int64_t d = 0; d < dv; ++d) out[d] += p * row[static_cast<std::size_t>(d)];
  }
  for (std::int64_t d = 0; d < dv; ++d) out[d] /= den;
  return {mx + std::log(den)};
}

/// Rows of `units` to check for prefill attention: `budget` rows spread uniformly, plus the
/// first and last rows of the sequence of a few heads (short and full causal rows).
std::optional<std::vector<std::int64_t>> sample_query_rows(std::int64_t heads, std::int64_t rows, std::int64_t budget,
                                                           sample_rng& rng);

}  // namespace portbench::reference::detail
