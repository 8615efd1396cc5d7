// SPDX-License-Identifier: Apache-2.0
// gemma_attention: BNSD GQA attention with soft-capped logits, s = cap * tanh(q.k * scaling /
// cap), applied before the mask; mask = causal (j > i) OR sliding window (|i - j| > window,
// window 0: none); fp32 softmax upstream, fp64 here. scaling defaults to 1/sqrt(D).
// Verification: sampled query rows.
#include <cmath>

#include "attention_common.hpp"
#include "common.hpp"
#include "ops.hpp"
#include "unit_op.hpp"

namespace portbench::reference::detail {
namespace {

struct params {
  std::int64_t b, h, hkv, s, d, window;
  bool causal;
  double scale, cap;
  dtype type;
  explicit params(const config& c)
      : b(dim(c, "batch")), h(dim(c, "heads")), hkv(dim_or(c, "kv_heads", h)), s(dim(c, "seq_len")),
        d(dim(c, "head_dim")), window(c.integer_or("window", 0)), causal(c.flag("is_causal", true)),
        scale(c.real_or("scaling", 1.0 / std::sqrt(static_cast<double>(d)))), cap(c.real_or("soft_cap", 0.0)),
        type(float_type(c)) {
    if (h % hkv != 0) throw spec_error(c.op + ": heads must be a multiple of kv_heads");
  }
  [[nodiscard]] std::pair<std::int64_t, std::int64_t> keys(std::int64_t i) const {
    std::int64_t j0 = 0, j1 = causal ? i + 1 : s;
    if (window > 0) {
      j0 = std::max<std::int64_t>(0, i - window);
      j1 = std::min(j1, i + window + 1);
    }
    return {j0, j1};
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
    const auto [j0, j1] = m_p.keys(i);
    attention_row(j0, j1, {m_p.scale, m_p.cap, std::nullopt}, [&](std::int64_t j) { return k.dot(j, q.data(), m_p.d); },
                  v, m_p.d, out.append(0, u * m_p.d, 1, m_p.d), scratch);
  }

 private:
  params m_p;
  tensor_reader m_q, m_k, m_v;
};

class gemma_attention final : public unit_operator {
 public:
  [[nodiscard]] std::string name() const override { return "gemma_attention"; }
  [[nodiscard]] std::vector<tensor_spec> tensors(const config& c) const override {
    const params p(c);
    return {dense("q", p.type, {p.b, p.h, p.s, p.d}, tensor_role::in),
            dense("k", p.type, {p.b, p.hkv, p.s, p.d}, tensor_role::in),
            dense("v", p.type, {p.b, p.hkv, p.s, p.d}, tensor_role::in),
            dense("o", p.type, {p.b, p.h, p.s, p.d}, tensor_role::out)};
  }
  [[nodiscard]] std::vector<uniform_fill> uniform_fills(const config&) const override {
    return {
      // Logits around 11 +- 5: large enough that the soft cap (50) bends them visibly (a kernel
      // that skips it is off by about 0.5 at s = 15), not so large that softmax is one-hot.
      {"q", -4.0, 12.0},
      {"k", -1.0, 1.5},
      {"v", -1.0, 2.0},
    };
  }
  [[nodiscard]] cost_model cost(const config& c) const override {
    const params p(c);
    double pairs = 0;
    for (std::int64_t i = 0; i < p.s; ++i) {
      const auto [j0, j1] = p.keys(i);
      pairs += static_cast<double>(j1 - j0);
    }
    const double qo = 2.0 * static_cast<double>(p.b * p.h * p.s * p.d);
    const double kv = 2.0 * static_cast<double>(p.b * p.hkv * p.s * p.d);
    return {bytes_of(p.type, qo + kv), 4.0 * static_cast<double>(p.b * p.h) * pairs * static_cast<double>(p.d)};
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
  [[nodiscard]] std::optional<tolerance> tolerance_for(const config&, const std::string&) const override {
    return tolerance{1e-2, 1e-2};
  }
};

}  // namespace

std::unique_ptr<operator_spec> make_gemma_attention() { return std::make_unique<gemma_attention>(); }

}  // namespace portbench::reference::detail
