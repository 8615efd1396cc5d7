// SPDX-License-Identifier: Apache-2.0
// fmha (attention): O = softmax(Q K^T * scale + causal mask) V in BHSD layout, scale 1/sqrt(D)
// unless sm_scale is given, GQA through kv_heads (default: heads). Causal is top-left aligned
// (key j <= query i), as torch's SDPA. fp8 e5m2 inputs give e5m2 outputs (the upstream reference
// casts back; out_dtype overrides). Verification: sampled query rows, all of each sampled row.
#include <cmath>

#include "attention_common.hpp"
#include "common.hpp"
#include "ops.hpp"
#include "unit_op.hpp"

namespace portbench::reference::detail {
namespace {

struct params {
  std::int64_t b, h, hkv, s, d;
  bool causal;
  double scale;
  dtype type, out_type;
  explicit params(const config& c)
      : b(dim(c, "batch")), h(dim(c, "heads")), hkv(dim_or(c, "kv_heads", h)), s(dim(c, "seq_len")),
        d(dim(c, "head_dim")), causal(c.flag("is_causal", false)),
        scale(c.real_or("sm_scale", 1.0 / std::sqrt(static_cast<double>(d)))), type(float_type(c)),
        out_type(c.type_or("out_dtype", type)) {
    if (h % hkv != 0) throw spec_error(c.op + ": heads must be a multiple of kv_heads");
  }
};

class job final : public unit_job {
 public:
  job(const params& p, const std::vector<host_tensor>& ts)
      : m_p(p), m_q(find_tensor(ts, "q")), m_k(find_tensor(ts, "k")), m_v(find_tensor(ts, "v")) {}
  [[nodiscard]] std::int64_t units() const override { return m_p.b * m_p.h * m_p.s; }
  void compute(std::int64_t u, unit_values& out) const override {
    const std::int64_t i = u % m_p.s, bh = u / m_p.s, hi = bh % m_p.h, bi = bh / m_p.h;
    const std::int64_t kvh = bi * m_p.hkv + hi / (m_p.h / m_p.hkv);
    std::vector<double> q(static_cast<std::size_t>(m_p.d)), scratch;
    for (std::int64_t c = 0; c < m_p.d; ++c) q[static_cast<std::size_t>(c)] = m_q[u * m_p.d + c];
    const strided_rows k{m_k, kvh * m_p.s * m_p.d, m_p.d, 1};
    const strided_rows v{m_v, kvh * m_p.s * m_p.d, m_p.d, 1};
    double* o = out.append(0, u * m_p.d, 1, m_p.d);
    attention_row(0, m_p.causal ? i + 1 : m_p.s, {m_p.scale, 0.0, std::nullopt},
                  [&](std::int64_t j) { return k.dot(j, q.data(), m_p.d); }, v, m_p.d, o, scratch);
  }

 private:
  params m_p;
  tensor_reader m_q, m_k, m_v;
};

class fmha final : public unit_operator {
 public:
  [[nodiscard]] std::string name() const override { return "fmha"; }
  [[nodiscard]] std::vector<tensor_spec> tensors(const config& c) const override {
    const params p(c);
    return {dense("q", p.type, {p.b, p.h, p.s, p.d}, tensor_role::in),
            dense("k", p.type, {p.b, p.hkv, p.s, p.d}, tensor_role::in),
            dense("v", p.type, {p.b, p.hkv, p.s, p.d}, tensor_role::in),
            dense("o", p.out_type, {p.b, p.h, p.s, p.d}, tensor_role::out)};
  }
  [[nodiscard]] std::vector<uniform_fill> uniform_fills(const config&) const override {
    return {
      // q and k with a common positive mean give peaked, position-dependent attention; v's
      // offset keeps outputs away from zero so a wrong normaliser shows.
      {"q", -1.0, 1.5},
      {"k", -1.0, 1.5},
      {"v", -1.0, 2.0},
    };
  }
  [[nodiscard]] cost_model cost(const config& c) const override {
    const params p(c);
    const double bh = static_cast<double>(p.b * p.h);
    const double pairs = p.causal ? 0.5 * static_cast<double>(p.s) * static_cast<double>(p.s + 1)
                                  : static_cast<double>(p.s) * static_cast<double>(p.s);
    const double qo = bh * static_cast<double>(p.s * p.d);
    const double kv = 2.0 * static_cast<double>(p.b * p.hkv) * static_cast<double>(p.s * p.d);
    return {bytes_of(p.type, qo + kv) + bytes_of(p.out_type, qo), 4.0 * bh * pairs * static_cast<double>(p.d)};
  }

 protected:
  [[nodiscard]] std::vector<std::string> outputs(const config&) const override { return {"o"}; }
  [[nodiscard]] std::unique_ptr<unit_job> make_job(const config& c, const std::vector<host_tensor>& in) const override {
    return std::make_unique<job>(params(c), in);
  }
  [[nodiscard]] std::optional<std::vector<std::int64_t>> sample(const config& c, const std::vector<host_tensor>&, std::int64_t, sample_rng& rng,
                                                                double scale) const override {
    const params p(c);
    return sample_query_rows(p.b * p.h, p.s, static_cast<std::int64_t>(256 * scale), rng);
  }
  [[nodiscard]] std::optional<tolerance> tolerance_for(const config& c, const std::string&) const override {
    if (params(c).type == dtype::f8e5m2) return tolerance{3.0, 0.0};
    return tolerance{5e-2, 2e-2};  // test_attention.py test_perf
  }
};

}  // namespace

std::unique_ptr<operator_spec> make_fmha() { return std::make_unique<fmha>(); }

}  // namespace portbench::reference::detail
