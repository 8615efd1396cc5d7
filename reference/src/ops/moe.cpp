// SPDX-License-Identifier: Apache-2.0
// moe (vLLM-style fused MoE, upstream fused_moe / e2e_fused): for token t with experts e_k and
// routing weights r_k (k < top_k), out[t] = sum_k r_k * w2[e_k] (silu(g) * u), where [g; u] =
// w1[e_k] h[t] (gate = first I rows, up = last I). w1 [E, 2I, H], w2 [E, H, I]. The kernel's
// alignment buffers and intermediates are its scratch; only out is checked. Verification:
// sampled tokens that together route to every expert, so every expert's weights are exercised.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "common.hpp"
#include "ops.hpp"
#include "unit_op.hpp"

namespace portbench::reference::detail {
namespace {

struct params {
  std::int64_t m, h, i, e, topk;
  dtype type;
  explicit params(const config& c)
      : m(dim(c, "num_tokens")), h(dim(c, "hidden_size")), i(dim(c, "moe_intermediate_size")), e(dim(c, "n_experts")),
        topk(dim(c, "top_k")), type(float_type(c)) {
    if (topk > e) throw spec_error(c.op + ": top_k must be <= n_experts");
  }
};

class job final : public unit_job {
 public:
  job(const params& p, const std::vector<host_tensor>& ts)
      : m_p(p), m_x(find_tensor(ts, "hidden_states")), m_w1(find_tensor(ts, "w1")), m_w2(find_tensor(ts, "w2")),
        m_rw(find_tensor(ts, "topk_weights")), m_ids(find_tensor(ts, "topk_ids")) {}
  [[nodiscard]] std::int64_t units() const override { return m_p.m; }
  void compute(std::int64_t t, unit_values& out) const override {
    const auto H = static_cast<std::size_t>(m_p.h), I = static_cast<std::size_t>(m_p.i);
    std::vector<double> x(H), act(I);
    for (std::size_t c = 0; c < H; ++c) x[c] = m_x[t * m_p.h + static_cast<std::int64_t>(c)];
    double* y = out.append(0, t * m_p.h, 1, m_p.h);
    std::fill(y, y + m_p.h, 0.0);
    for (std::int64_t k = 0; k < m_p.topk; ++k) {
      const auto ex = static_cast<std::int64_t>(m_ids[t * m_p.topk + k]);
      const double r = m_rw[t * m_p.topk + k];
      const std::int64_t w1 = ex * 2 * m_p.i * m_p.h;
      for (std::int64_t j = 0; j < m_p.i; ++j) {
        double g = 0, u = 0;
        for (std::int64_t c = 0; c < m_p.h; ++c) {
          g += m_w1[w1 + j * m_p.h + c] * x[static_cast<std::size_t>(c)];
          u += m_w1[w1 + (m_p.i + j) * m_p.h + c] * x[static_cast<std::size_t>(c)];
        }
        act[static_cast<std::size_t>(j)] = silu(g) * u;
      }
      const std::int64_t w2 = ex * m_p.h * m_p.i;
      for (std::int64_t c = 0; c < m_p.h; ++c) {
        double s = 0;
        for (std::int64_t j = 0; j < m_p.i; ++j) s += m_w2[w2 + c * m_p.i + j] * act[static_cast<std::size_t>(j)];
        y[c] += r * s;
      }
    }
  }

 private:
  params m_p;
  tensor_reader m_x, m_w1, m_w2, m_rw, m_ids;
};

class moe final : public unit_operator {
 public:
  [[nodiscard]] std::string name() const override { return "moe"; }
  [[nodiscard]] std::vector<tensor_spec> tensors(const config& c) const override {
    const params p(c);
    return {dense("hidden_states", p.type, {p.m, p.h}, tensor_role::in),
            dense("w1", p.type, {p.e, 2 * p.i, p.h}, tensor_role::in),
            dense("w2", p.type, {p.e, p.h, p.i}, tensor_role::in),
            dense("topk_weights", dtype::f32, {p.m, p.topk}, tensor_role::in),
            dense("topk_ids", dtype::i32, {p.m, p.topk}, tensor_role::in),
            dense("out", p.type, {p.m, p.h}, tensor_role::out)};
  }
  [[nodiscard]] std::vector<uniform_fill> uniform_fills(const config& c) const override {
    const params p(c);
    // Weights scaled by 1/sqrt(fan-in) with a small positive mean keep activations O(1) and the
    // output away from zero.
    const double s1 = std::sqrt(3.0 / static_cast<double>(p.h)), s2 = std::sqrt(3.0 / static_cast<double>(p.i));
    return {{"hidden_states", -1.0, 1.5}, {"w1", -s1, 1.2 * s1}, {"w2", -s2, 1.2 * s2}};
  }
  void fill_inputs(const config& c, std::uint64_t seed, std::vector<host_tensor>& ts) const override {
    const params p(c);
    // Routing: top_k distinct experts per token, positive weights summing to 1.
    host_tensor& ids = find_tensor(ts, "topk_ids");
    host_tensor& rw = find_tensor(ts, "topk_weights");
    sample_rng rng(stream_key(seed, "routing"));
    std::vector<std::int64_t> perm(static_cast<std::size_t>(p.e));
    for (std::int64_t t = 0; t < p.m; ++t) {
      std::iota(perm.begin(), perm.end(), 0);
      double sum = 0;
      std::vector<double> w(static_cast<std::size_t>(p.topk));
      for (std::int64_t k = 0; k < p.topk; ++k) {
        std::swap(perm[static_cast<std::size_t>(k)], perm[static_cast<std::size_t>(k + rng.below(p.e - k))]);
        w[static_cast<std::size_t>(k)] = 0.2 + rng.unit();
        sum += w[static_cast<std::size_t>(k)];
      }
      for (std::int64_t k = 0; k < p.topk; ++k) {
        store_element(ids.bytes.data(), dtype::i32, t * p.topk + k, static_cast<double>(perm[static_cast<std::size_t>(k)]));
        store_element(rw.bytes.data(), dtype::f32, t * p.topk + k, w[static_cast<std::size_t>(k)] / sum);
      }
    }
  }
  [[nodiscard]] cost_model cost(const config& c) const override {
    const params p(c);
    const double weights = 3.0 * static_cast<double>(p.e * p.i * p.h);
    const double act = 2.0 * static_cast<double>(p.m * p.h);
    return {bytes_of(p.type, weights + act) + 8.0 * static_cast<double>(p.m * p.topk),
            6.0 * static_cast<double>(p.m * p.topk) * static_cast<double>(p.i * p.h)};
  }

 protected:
  [[nodiscard]] std::vector<std::string> outputs(const config&) const override { return {"out"}; }
  [[nodiscard]] std::unique_ptr<unit_job> make_job(const config& c, const std::vector<host_tensor>& in) const override {
    return std::make_unique<job>(params(c), in);
  }
  [[nodiscard]] std::optional<std::vector<std::int64_t>> sample(const config& c, const std::vector<host_tensor>& in,
                                                                std::int64_t units, sample_rng& rng,
                                                                double scale) const override {
    const params p(c);
    const auto budget = std::max<std::int64_t>(1, static_cast<std::int64_t>(16 * scale));
    // Greedy cover: walk tokens in a seeded order, keep those that add an expert not yet seen.
    const tensor_reader ids(find_tensor(in, "topk_ids"));
    std::vector<bool> seen(static_cast<std::size_t>(p.e), false);
    std::vector<std::int64_t> order(static_cast<std::size_t>(units)), out;
    std::iota(order.begin(), order.end(), 0);
    for (std::size_t k = order.size(); k > 1; --k) std::swap(order[k - 1], order[static_cast<std::size_t>(rng.below(static_cast<std::int64_t>(k)))]);
    std::int64_t covered = 0;
    for (std::int64_t t : order) {
      bool adds = false;
      for (std::int64_t k = 0; k < p.topk; ++k) {
        const auto e = static_cast<std::size_t>(ids[t * p.topk + k]);
        if (e < seen.size() && !seen[e]) {
          seen[e] = true;
          ++covered;
          adds = true;
        }
      }
      if (adds || static_cast<std::int64_t>(out.size()) < budget) out.push_back(t);
      if (covered == p.e && static_cast<std::int64_t>(out.size()) >= budget) break;
    }
    if (static_cast<std::int64_t>(out.size()) >= units) return std::nullopt;
    std::sort(out.begin(), out.end());
    return out;
  }
  [[nodiscard]] std::string sampled_method() const override { return "tokens"; }
  [[nodiscard]] std::optional<tolerance> tolerance_for(const config& c, const std::string&) const override {
    switch (params(c).type) {  // test_moe.py test_op (test_perf has no check)
      case dtype::bf16: return tolerance{1e-1, 1e-1};
      case dtype::f8e4m3: return tolerance{5e-1, 5e-1};
      default: return tolerance{5e-2, 5e-2};
    }
  }
};

}  // namespace

std::unique_ptr<operator_spec> make_moe() { return std::make_unique<moe>(); }

}  // namespace portbench::reference::detail
