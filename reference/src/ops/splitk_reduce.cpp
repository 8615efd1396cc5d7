// SPDX-License-Identifier: Apache-2.0
// splitk_reduce: combines split-KV partial attention outputs o_s [B, H, splits, D] with their
// base-2 log-sum-exp l_s [B, H, splits] (fp32): w_s = 2^(l_s - max l), o = sum w_s o_s / sum w_s.
// S_kv only bounds the splits that hold keys: with split length ceil(S_kv / splits), splits
// past ceil(S_kv / length) are empty and ignored. Linear in o_s: every element is checked.
#include <cmath>

#include "common.hpp"
#include "ops.hpp"
#include "unit_op.hpp"

namespace portbench::reference::detail {
namespace {

struct params {
  std::int64_t b, h, splits, d, s_kv, valid;
  dtype type, lse_type;
  explicit params(const config& c)
      : b(dim(c, "batch")), h(dim(c, "num_heads")), splits(dim(c, "num_kv_splits")), d(dim(c, "head_dim")),
        s_kv(dim_or(c, "S_kv", splits)), valid(0), type(float_type(c)),
        lse_type(c.type_or("lse_dtype", dtype::f32)) {
    const std::int64_t len = (s_kv + splits - 1) / splits;
    valid = std::min(splits, (s_kv + len - 1) / len);
  }
};

class job final : public unit_job {
 public:
  job(const params& p, const std::vector<host_tensor>& ts)
      : m_p(p), m_o(find_tensor(ts, "partial_o")), m_l(find_tensor(ts, "lse")) {}
  [[nodiscard]] std::int64_t units() const override { return m_p.b * m_p.h; }
  void compute(std::int64_t u, unit_values& out) const override {
    double mx = -INFINITY;
    for (std::int64_t s = 0; s < m_p.valid; ++s) mx = std::max(mx, m_l[u * m_p.splits + s]);
    double* y = out.append(0, u * m_p.d, 1, m_p.d);
    for (std::int64_t j = 0; j < m_p.d; ++j) y[j] = 0;
    double den = 0;
    for (std::int64_t s = 0; s < m_p.valid; ++s) {
      const double w = std::exp2(m_l[u * m_p.splits + s] - mx);
      den += w;
      const std::int64_t base = (u * m_p.splits + s) * m_p.d;
      for (std::int64_t j = 0; j < m_p.d; ++j) y[j] += w * m_o[base + j];
    }
    for (std::int64_t j = 0; j < m_p.d; ++j) y[j] /= den;
  }

 private:
  params m_p;
  tensor_reader m_o, m_l;
};

class splitk_reduce final : public unit_operator {
 public:
  [[nodiscard]] std::string name() const override { return "splitk_reduce"; }
  [[nodiscard]] std::vector<tensor_spec> tensors(const config& c) const override {
    const params p(c);
    return {dense("partial_o", p.type, {p.b, p.h, p.splits, p.d}, tensor_role::in),
            dense("lse", p.lse_type, {p.b, p.h, p.splits}, tensor_role::in),
            dense("o", p.type, {p.b, p.h, p.d}, tensor_role::out)};
  }
  [[nodiscard]] std::vector<uniform_fill> uniform_fills(const config&) const override {
    return {
      // LSEs spread over 6 binades around 10: every split carries weight, none dominates.
      {"partial_o", -1.0, 1.5},
      {"lse", 7.0, 13.0},
    };
  }
  [[nodiscard]] cost_model cost(const config& c) const override {
    const params p(c);
    const double bh = static_cast<double>(p.b * p.h);
    const double parts = bh * static_cast<double>(p.splits * p.d);
    return {bytes_of(p.type, parts + bh * static_cast<double>(p.d)) + bytes_of(p.lse_type, bh * static_cast<double>(p.splits)),
            2 * parts};
  }

 protected:
  [[nodiscard]] std::vector<std::string> outputs(const config&) const override { return {"o"}; }
  [[nodiscard]] std::unique_ptr<unit_job> make_job(const config& c, const std::vector<host_tensor>& in) const override {
    return std::make_unique<job>(params(c), in);
  }
  [[nodiscard]] std::optional<tolerance> tolerance_for(const config&, const std::string&) const override {
    return tolerance{1e-2, 1e-2};
  }
};

}  // namespace

std::unique_ptr<operator_spec> make_splitk_reduce() { return std::make_unique<splitk_reduce>(); }

}  // namespace portbench::reference::detail
