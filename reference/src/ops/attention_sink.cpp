// SPDX-License-Identifier: Apache-2.0
// attention_sink (GPT-OSS) and its split-KV decode form attention_sink_decode (one query token):
// q [B, Sq, Hkv, G, D], k, v [B, Skv, Hkv, D], sinks [Hkv*G], o [B, Sq, Hkv*G*D]. Query i sits at
// position start_q + i; keys after it are masked (causal) and, with a sliding window, keys
// before position - window + 1 too. The softmax denominator gains exp(sink - max) for the
// head's sink logit. The decode form defaults start_q to num_keys - 1 (the newest token).
// Verification: every head of sampled query rows (decode: every row).
#include <cmath>

#include "attention_common.hpp"
#include "common.hpp"
#include "ops.hpp"
#include "unit_op.hpp"

namespace portbench::reference::detail {
namespace {

struct params {
  std::int64_t b, sq, skv, hkv, g, d, start_q, window;
  double scale;
  dtype type;
  params(const config& c, bool decode)
      : b(dim(c, "batch")), sq(decode ? dim_or(c, "num_queries", 1) : dim(c, "num_queries")), skv(dim(c, "num_keys")),
        hkv(dim(c, "num_kv_heads")), g(dim(c, "num_kv_groups")), d(dim(c, "head_dim")),
        start_q(c.integer_or("start_q", decode ? skv - 1 : 0)), window(c.integer_or("sliding_window", 0)),
        scale(c.real_or("sm_scale", 1.0 / std::sqrt(static_cast<double>(d)))), type(float_type(c)) {
    if (decode && sq != 1) throw spec_error(c.op + ": num_queries must be 1");
    if (start_q < 0) throw spec_error(c.op + ": start_q must be >= 0");
  }
  [[nodiscard]] std::int64_t heads() const { return hkv * g; }
};

class job final : public unit_job {
 public:
  job(const params& p, const std::vector<host_tensor>& ts)
      : m_p(p), m_q(find_tensor(ts, "q")), m_k(find_tensor(ts, "k")), m_v(find_tensor(ts, "v")),
        m_sinks(find_tensor(ts, "sinks")) {}
  // Unit: one (batch, query) row, all heads: o[b, i, :] is contiguous.
  [[nodiscard]] std::int64_t units() const override { return m_p.b * m_p.sq; }
  void compute(std::int64_t u, unit_values& out) const override {
    const std::int64_t bi = u / m_p.sq, i = u % m_p.sq;
    const std::int64_t pos = m_p.start_q + i;
    const std::int64_t j1 = std::min(pos + 1, m_p.skv);
    const std::int64_t j0 = m_p.window > 0 ? std::max<std::int64_t>(0, pos - m_p.window + 1) : 0;
    std::vector<double> q(static_cast<std::size_t>(m_p.d)), scratch;
    double* o = out.append(0, u * m_p.heads() * m_p.d, 1, m_p.heads() * m_p.d);
    for (std::int64_t h = 0; h < m_p.heads(); ++h) {
      const std::int64_t kvh = h / m_p.g;
      for (std::int64_t c = 0; c < m_p.d; ++c) q[static_cast<std::size_t>(c)] = m_q[(u * m_p.heads() + h) * m_p.d + c];
      // k[b, j, kvh, :]: rows of stride Hkv*D
      const strided_rows k{m_k, (bi * m_p.skv * m_p.hkv + kvh) * m_p.d, m_p.hkv * m_p.d, 1};
      const strided_rows v{m_v, (bi * m_p.skv * m_p.hkv + kvh) * m_p.d, m_p.hkv * m_p.d, 1};
      attention_row(j0, j1, {m_p.scale, 0.0, m_sinks[h]}, [&](std::int64_t j) { return k.dot(j, q.data(), m_p.d); }, v,
                    m_p.d, o + h * m_p.d, scratch);
    }
  }

 private:
  params m_p;
  tensor_reader m_q, m_k, m_v, m_sinks;
};

class attention_sink final : public unit_operator {
 public:
  explicit attention_sink(bool decode) : m_decode(decode) {}
  [[nodiscard]] std::string name() const override { return m_decode ? "attention_sink_decode" : "attention_sink"; }
  [[nodiscard]] std::vector<tensor_spec> tensors(const config& c) const override {
    const params p(c, m_decode);
    return {dense("q", p.type, {p.b, p.sq, p.hkv, p.g, p.d}, tensor_role::in),
            dense("k", p.type, {p.b, p.skv, p.hkv, p.d}, tensor_role::in),
            dense("v", p.type, {p.b, p.skv, p.hkv, p.d}, tensor_role::in),
            dense("sinks", p.type, {p.heads()}, tensor_role::in),
            dense("o", p.type, {p.b, p.sq, p.heads() * p.d}, tensor_role::out)};
  }
  [[nodiscard]] std::vector<uniform_fill> uniform_fills(const config&) const override {
    return {
      {"q", -1.0, 1.5},
      {"k", -1.0, 1.5},
      {"v", -1.0, 2.0},
      // Sinks comparable to the logits, so the sink term changes the result visibly.
      {"sinks", 0.0, 3.0},
    };
  }
  [[nodiscard]] cost_model cost(const config& c) const override {
    const params p(c, m_decode);
    double pairs = 0;  // visible (query, key) pairs
    // Keys no query attends need not be read: the minimum bytes hold K and V rows [lo, hi) only
    // (a decode query with a 128-key window reads 128 rows, not the whole cache).
    std::int64_t lo = p.skv, hi = 0;
    for (std::int64_t i = 0; i < p.sq; ++i) {
      const std::int64_t pos = p.start_q + i;
      const std::int64_t j1 = std::min(pos + 1, p.skv);
      const std::int64_t j0 = p.window > 0 ? std::max<std::int64_t>(0, pos - p.window + 1) : 0;
      pairs += static_cast<double>(std::max<std::int64_t>(0, j1 - j0));
      if (j1 > j0) {
        lo = std::min(lo, j0);
        hi = std::max(hi, j1);
      }
    }
    const double qo = 2.0 * static_cast<double>(p.b * p.sq * p.heads() * p.d);
    const double kv = 2.0 * static_cast<double>(p.b * std::max<std::int64_t>(0, hi - lo) * p.hkv * p.d);
    return {bytes_of(p.type, qo + kv + static_cast<double>(p.heads())),
            4.0 * static_cast<double>(p.b * p.heads()) * pairs * static_cast<double>(p.d)};
  }

 protected:
  [[nodiscard]] std::vector<std::string> outputs(const config&) const override { return {"o"}; }
  [[nodiscard]] std::unique_ptr<unit_job> make_job(const config& c, const std::vector<host_tensor>& in) const override {
    return std::make_unique<job>(params(c, m_decode), in);
  }
  [[nodiscard]] std::optional<std::vector<std::int64_t>> sample(const config&, const std::vector<host_tensor>&, std::int64_t units, sample_rng& rng,
                                                                double scale) const override {
    // A unit is a query row of all 64 heads: 16 rows cost about 1000 head-rows.
    return sample_uniform(units, static_cast<std::int64_t>(16 * scale), rng);
  }
  [[nodiscard]] std::optional<tolerance> tolerance_for(const config&, const std::string&) const override {
    return tolerance{5e-2, 1e-2};  // test_attention_sink.py
  }

 private:
  bool m_decode;
};

}  // namespace

std::unique_ptr<operator_spec> make_attention_sink() { return std::make_unique<attention_sink>(false); }
std::unique_ptr<operator_spec> make_attention_sink_decode_impl() { return std::make_unique<attention_sink>(true); }

}  // namespace portbench::reference::detail
