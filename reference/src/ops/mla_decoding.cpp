// SPDX-License-Identifier: Apache-2.0
// mla_decoding (weight-absorbed MLA decode) and mla_decoding_split_kv (the same math, split over
// KV and reduced with splitk_reduce; it returns o only). q [B, H, D], qpe [B, H, Dpe], kv
// [B, S, D] used as both K and V, kpe [B, S, Dpe]; s = (q.kv + qpe.kpe) / sqrt(D + Dpe);
// o [B, H, D] and (mla_decoding) lse [B, H] fp32 in log2 units: (max + ln sum) / ln 2.
// Upstream's perf inputs are torch.ones, which hide most errors; these are random.
// Verification: sampled (batch, head) pairs; split_kv (batch 1) checks every head.
#include <cmath>
#include <numbers>

#include "attention_common.hpp"
#include "common.hpp"
#include "ops.hpp"
#include "unit_op.hpp"

namespace portbench::reference::detail {
namespace {

struct params {
  std::int64_t b, h, s, d, dpe;
  double scale;
  dtype type;
  params(const config& c, bool split)
      : b(dim(c, "batch")), h(dim(c, "num_heads")), s(dim(c, split ? "seq_len" : "S_kv")),
        d(dim_or(c, split ? "head_dim" : "BLOCK_D", 512)), dpe(dim_or(c, split ? "kpe_dim" : "BLOCK_KPE", 64)),
        scale(c.real_or("sm_scale", 1.0 / std::sqrt(static_cast<double>(d + dpe)))), type(float_type(c)) {}
};

class job final : public unit_job {
 public:
  job(const params& p, bool lse, const std::vector<host_tensor>& ts)
      : m_p(p), m_lse(lse), m_q(find_tensor(ts, "q")), m_qpe(find_tensor(ts, "qpe")), m_kv(find_tensor(ts, "kv")),
        m_kpe(find_tensor(ts, "kpe")) {}
  [[nodiscard]] std::int64_t units() const override { return m_p.b * m_p.h; }
  void compute(std::int64_t u, unit_values& out) const override {
    const std::int64_t bi = u / m_p.h;
    std::vector<double> q(static_cast<std::size_t>(m_p.d)), qpe(static_cast<std::size_t>(m_p.dpe)), scratch;
    for (std::int64_t c = 0; c < m_p.d; ++c) q[static_cast<std::size_t>(c)] = m_q[u * m_p.d + c];
    for (std::int64_t c = 0; c < m_p.dpe; ++c) qpe[static_cast<std::size_t>(c)] = m_qpe[u * m_p.dpe + c];
    const strided_rows kv{m_kv, bi * m_p.s * m_p.d, m_p.d, 1};
    const strided_rows kpe{m_kpe, bi * m_p.s * m_p.dpe, m_p.dpe, 1};
    const auto r = attention_row(
        0, m_p.s, {m_p.scale, 0.0, std::nullopt},
        [&](std::int64_t j) { return kv.dot(j, q.data(), m_p.d) + kpe.dot(j, qpe.data(), m_p.dpe); }, kv, m_p.d,
        out.append(0, u * m_p.d, 1, m_p.d), scratch);
    if (m_lse) out.put(1, u, r.lse / std::numbers::ln2);
  }

 private:
  params m_p;
  bool m_lse;
  tensor_reader m_q, m_qpe, m_kv, m_kpe;
};

class mla_decoding final : public unit_operator {
 public:
  explicit mla_decoding(bool split) : m_split(split) {}
  [[nodiscard]] std::string name() const override { return m_split ? "mla_decoding_split_kv" : "mla_decoding"; }
  [[nodiscard]] std::vector<tensor_spec> tensors(const config& c) const override {
    const params p(c, m_split);
    std::vector<tensor_spec> ts{dense("q", p.type, {p.b, p.h, p.d}, tensor_role::in),
                                dense("qpe", p.type, {p.b, p.h, p.dpe}, tensor_role::in),
                                dense("kv", p.type, {p.b, p.s, p.d}, tensor_role::in),
                                dense("kpe", p.type, {p.b, p.s, p.dpe}, tensor_role::in),
                                dense("o", p.type, {p.b, p.h, p.d}, tensor_role::out)};
    if (!m_split) ts.push_back(dense("lse", dtype::f32, {p.b, p.h}, tensor_role::out));
    return ts;
  }
  [[nodiscard]] std::vector<uniform_fill> uniform_fills(const config&) const override {
    return {
      {"q", -1.0, 1.5},
      {"qpe", -1.5, 2.5},
      {"kv", -1.0, 1.5},
      {"kpe", -1.5, 2.5},
    };
  }
  [[nodiscard]] cost_model cost(const config& c) const override {
    const params p(c, m_split);
    const double kv = static_cast<double>(p.b * p.s * (p.d + p.dpe));
    const double qo = static_cast<double>(p.b * p.h * (2 * p.d + p.dpe));
    const double lse = m_split ? 0.0 : 4.0 * static_cast<double>(p.b * p.h);
    return {bytes_of(p.type, kv + qo) + lse,
            2.0 * static_cast<double>(p.b * p.h * p.s) * static_cast<double>(2 * p.d + p.dpe)};
  }

 protected:
  [[nodiscard]] std::vector<std::string> outputs(const config&) const override {
    if (m_split) return {"o"};
    return {"o", "lse"};
  }
  [[nodiscard]] std::unique_ptr<unit_job> make_job(const config& c, const std::vector<host_tensor>& in) const override {
    return std::make_unique<job>(params(c, m_split), !m_split, in);
  }
  [[nodiscard]] std::optional<std::vector<std::int64_t>> sample(const config&, const std::vector<host_tensor>&, std::int64_t units, sample_rng& rng,
                                                                double scale) const override {
    return sample_uniform(units, static_cast<std::int64_t>(64 * scale), rng);
  }
  [[nodiscard]] std::string sampled_method() const override { return "heads"; }
  [[nodiscard]] std::optional<tolerance> tolerance_for(const config& c, const std::string&) const override {
    if (params(c, m_split).type == dtype::f8e5m2) return tolerance{0.5, 0.5};
    return tolerance{1e-2, 1e-2};
  }

 private:
  bool m_split;
};

}  // namespace

std::unique_ptr<operator_spec> make_mla_decoding() { return std::make_unique<mla_decoding>(false); }
std::unique_ptr<operator_spec> make_mla_decoding_split_kv_impl() { return std::make_unique<mla_decoding>(true); }

}  // namespace portbench::reference::detail
