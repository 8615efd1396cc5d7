// SPDX-License-Identifier: Apache-2.0
// mla (DeepSeek MLA prefill): s = (q.k + qpe.kpe) / sqrt(D + Dpe), causal, O = softmax(s) v.
// q, k, v [B, H, S, D] (k, v may have kv_heads for GQA), qpe [B, H, S, Dpe], kpe
// [B, kpe_heads, S, Dpe] shared by the heads (kpe_heads 1). Verification: sampled query rows.
#include <cmath>

#include "attention_common.hpp"
#include "common.hpp"
#include "ops.hpp"
#include "unit_op.hpp"

namespace portbench::reference::detail {
namespace {

struct params {
  std::int64_t b, h, hkv, hpe, s, d, dpe;
  bool causal;
  double scale;
  dtype type;
  explicit params(const config& c)
      : b(dim(c, "batch")), h(dim(c, "heads")), hkv(dim_or(c, "kv_heads", h)), hpe(dim_or(c, "kpe_heads", 1)),
        s(dim(c, "seq_len")), d(dim_or(c, "d_model", 128)), dpe(dim_or(c, "d_pe", 64)),
        causal(c.flag("is_causal", true)),
        scale(c.real_or("sm_scale", 1.0 / std::sqrt(static_cast<double>(d + dpe)))), type(float_type(c)) {
    if (h % hkv != 0 || h % hpe != 0) throw spec_error(c.op + ": heads must be a multiple of kv_heads and kpe_heads");
  }
};

class job final : public unit_job {
 public:
  job(const params& p, const std::vector<host_tensor>& ts)
      : m_p(p), m_q(find_tensor(ts, "q")), m_k(find_tensor(ts, "k")), m_v(find_tensor(ts, "v")),
        m_qpe(find_tensor(ts, "qpe")), m_kpe(find_tensor(ts, "kpe")) {}
  [[nodiscard]] std::int64_t units() const override { return m_p.b * m_p.h * m_p.s; }
  void compute(std::int64_t u, unit_values& out) const override {
    const std::int64_t i = u % m_p.s, bh = u / m_p.s, hi = bh % m_p.h, bi = bh / m_p.h;
    const std::int64_t kvh = bi * m_p.hkv + hi / (m_p.h / m_p.hkv);
    const std::int64_t peh = bi * m_p.hpe + hi / (m_p.h / m_p.hpe);
    std::vector<double> q(static_cast<std::size_t>(m_p.d)), qpe(static_cast<std::size_t>(m_p.dpe)), scratch;
    for (std::int64_t c = 0; c < m_p.d; ++c) q[static_cast<std::size_t>(c)] = m_q[u * m_p.d + c];
    for (std::int64_t c = 0; c < m_p.dpe; ++c) qpe[static_cast<std::size_t>(c)] = m_qpe[u * m_p.dpe + c];
    const strided_rows k{m_k, kvh * m_p.s * m_p.d, m_p.d, 1};
    const strided_rows v{m_v, kvh * m_p.s * m_p.d, m_p.d, 1};
    const strided_rows kpe{m_kpe, peh * m_p.s * m_p.dpe, m_p.dpe, 1};
    attention_row(0, m_p.causal ? i + 1 : m_p.s, {m_p.scale, 0.0, std::nullopt},
                  [&](std::int64_t j) { return k.dot(j, q.data(), m_p.d) + kpe.dot(j, qpe.data(), m_p.dpe); }, v,
                  m_p.d, out.append(0, u * m_p.d, 1, m_p.d), scratch);
  }

 private:
  params m_p;
  tensor_reader m_q, m_k, m_v, m_qpe, m_kpe;
};

class mla final : public unit_operator {
 public:
  [[nodiscard]] std::string name() const override { return "mla"; }
  [[nodiscard]] std::vector<tensor_spec> tensors(const config& c) const override {
    const params p(c);
    return {dense("q", p.type, {p.b, p.h, p.s, p.d}, tensor_role::in),
            dense("k", p.type, {p.b, p.hkv, p.s, p.d}, tensor_role::in),
            dense("v", p.type, {p.b, p.hkv, p.s, p.d}, tensor_role::in),
            dense("qpe", p.type, {p.b, p.h, p.s, p.dpe}, tensor_role::in),
            dense("kpe", p.type, {p.b, p.hpe, p.s, p.dpe}, tensor_role::in),
            dense("o", p.type, {p.b, p.h, p.s, p.d}, tensor_role::out)};
  }
  [[nodiscard]] std::vector<uniform_fill> uniform_fills(const config&) const override {
    return {
      {"q", -1.0, 1.5},
      {"k", -1.0, 1.5},
      {"v", -1.0, 2.0},
      // The rope part with a larger spread, so dropping it changes the scores visibly.
      {"qpe", -1.5, 2.5},
      {"kpe", -1.5, 2.5},
    };
  }
  [[nodiscard]] cost_model cost(const config& c) const override {
    const params p(c);
    const double pairs = p.causal ? 0.5 * static_cast<double>(p.s) * static_cast<double>(p.s + 1)
                                  : static_cast<double>(p.s) * static_cast<double>(p.s);
    const double bh = static_cast<double>(p.b * p.h);
    const double elems = bh * static_cast<double>(p.s * (2 * p.d + p.dpe)) +
                         static_cast<double>(p.b * p.s) * static_cast<double>(2 * p.hkv * p.d + p.hpe * p.dpe);
    return {bytes_of(p.type, elems), 2.0 * bh * pairs * static_cast<double>(2 * p.d + p.dpe)};
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
    if (params(c).type == dtype::f8e5m2) return tolerance{1e-1, 1e-1};
    return tolerance{1e-2, 1e-2};
  }
};

}  // namespace

std::unique_ptr<operator_spec> make_mla() { return std::make_unique<mla>(); }

}  // namespace portbench::reference::detail
