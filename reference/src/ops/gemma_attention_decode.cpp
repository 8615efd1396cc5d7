// SPDX-License-Identifier: Apache-2.0
// gemma_attention_decode: one query token per head, q [B, H, 1, D], k, v [B, Hkv, S, D]; logits
// soft-capped (cap * tanh(s / cap)) before the mask; with window > 0 only kv positions
// >= (S - 1) - window are kept. Every head is checked.
#include <cmath>

#include "attention_common.hpp"
#include "common.hpp"
#include "ops.hpp"
#include "unit_op.hpp"

namespace portbench::reference::detail {
namespace {

struct params {
  std::int64_t b, h, hkv, s, d, window;
  double scale, cap;
  dtype type;
  explicit params(const config& c)
      : b(dim(c, "batch")), h(dim(c, "heads")), hkv(dim_or(c, "kv_heads", h)), s(dim(c, "seq_len_kv")),
        d(dim(c, "head_dim")), window(c.integer_or("window", 0)),
        scale(c.real_or("scaling", 1.0 / std::sqrt(static_cast<double>(d)))), cap(c.real_or("soft_cap", 0.0)),
        type(float_type(c)) {
    if (h % hkv != 0) throw spec_error(c.op + ": heads must be a multiple of kv_heads");
  }
  [[nodiscard]] std::int64_t first_key() const { return window > 0 ? std::max<std::int64_t>(0, s - 1 - window) : 0; }
};

class job final : public unit_job {
 public:
  job(const params& p, const std::vector<host_tensor>& ts)
      : m_p(p), m_q(find_tensor(ts, "q")), m_k(find_tensor(ts, "k")), m_v(find_tensor(ts, "v")) {}
  [[nodiscard]] std::int64_t units() const override { return m_p.b * m_p.h; }
  void compute(std::int64_t u, unit_values& out) const override {
    const std::int64_t bi = u / m_p.h, hi = u % m_p.h;
    const std::int64_t kvh = bi * m_p.hkv + hi / (m_p.h / m_p.hkv);
    std::vector<double> q(static_cast<std::size_t>(m_p.d)), scratch;
    for (std::int64_t c = 0; c < m_p.d; ++c) q[static_cast<std::size_t>(c)] = m_q[u * m_p.d + c];
    const strided_rows k{m_k, kvh * m_p.s * m_p.d, m_p.d, 1};
    const strided_rows v{m_v, kvh * m_p.s * m_p.d, m_p.d, 1};
    attention_row(m_p.first_key(), m_p.s, {m_p.scale, m_p.cap, std::nullopt},
                  [&](std::int64_t j) { return k.dot(j, q.data(), m_p.d); }, v, m_p.d,
                  out.append(0, u * m_p.d, 1, m_p.d), scratch);
  }

 private:
  params m_p;
  tensor_reader m_q, m_k, m_v;
};

class gemma_attention_decode final : public unit_operator {
 public:
  [[nodiscard]] std::string name() const override { return "gemma_attention_decode"; }
  [[nodiscard]] std::vector<tensor_spec> tensors(const config& c) const override {
    const params p(c);
    return {dense("q", p.type, {p.b, p.h, 1, p.d}, tensor_role::in),
            dense("k", p.type, {p.b, p.hkv, p.s, p.d}, tensor_role::in),
            dense("v", p.type, {p.b, p.hkv, p.s, p.d}, tensor_role::in),
            dense("o", p.type, {p.b, p.h, 1, p.d}, tensor_role::out)};
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
    const double keys = static_cast<double>(p.s - p.first_key());
    const double kv = 2.0 * static_cast<double>(p.b * p.hkv * p.d) * keys;
    return {bytes_of(p.type, kv + 2.0 * static_cast<double>(p.b * p.h * p.d)),
            4.0 * static_cast<double>(p.b * p.h * p.d) * keys};
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

std::unique_ptr<operator_spec> make_gemma_attention_decode() { return std::make_unique<gemma_attention_decode>(); }

}  // namespace portbench::reference::detail
