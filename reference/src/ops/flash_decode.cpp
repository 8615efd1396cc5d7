// SPDX-License-Identifier: Apache-2.0
// flash_decode: GQA decode, one query token per head: q [B, Hq, 1, D], k, v [B, Hkv, S, D],
// O = softmax(q K^T * sm_scale) V (sm_scale default 1/sqrt(D)); query head h reads KV head
// h / group_size. Split-KV partials and LSEs are the kernel's scratch; only O is checked, every
// head (a decode reads each key once per query head, like the reference).
#include <cmath>

#include "attention_common.hpp"
#include "common.hpp"
#include "ops.hpp"
#include "unit_op.hpp"

namespace portbench::reference::detail {
namespace {

struct params {
  std::int64_t b, hq, hkv, s, d;
  double scale;
  dtype type;
  explicit params(const config& c)
      : b(dim(c, "batch")), hq(dim(c, "num_q_heads")), hkv(dim(c, "num_kv_heads")), s(dim(c, "seq_len")),
        d(dim(c, "head_dim")), scale(c.real_or("sm_scale", 1.0 / std::sqrt(static_cast<double>(d)))),
        type(float_type(c)) {
    if (hq % hkv != 0 || c.integer_or("group_size", hq / hkv) != hq / hkv) {
      throw spec_error(c.op + ": num_q_heads must be group_size * num_kv_heads");
    }
  }
};

class job final : public unit_job {
 public:
  job(const params& p, const std::vector<host_tensor>& ts)
      : m_p(p), m_q(find_tensor(ts, "q")), m_k(find_tensor(ts, "k")), m_v(find_tensor(ts, "v")) {}
  [[nodiscard]] std::int64_t units() const override { return m_p.b * m_p.hq; }
  void compute(std::int64_t u, unit_values& out) const override {
    const std::int64_t bi = u / m_p.hq, hi = u % m_p.hq;
    const std::int64_t kvh = bi * m_p.hkv + hi / (m_p.hq / m_p.hkv);
    std::vector<double> q(static_cast<std::size_t>(m_p.d)), scratch;
    for (std::int64_t c = 0; c < m_p.d; ++c) q[static_cast<std::size_t>(c)] = m_q[u * m_p.d + c];
    const strided_rows k{m_k, kvh * m_p.s * m_p.d, m_p.d, 1};
    const strided_rows v{m_v, kvh * m_p.s * m_p.d, m_p.d, 1};
    attention_row(0, m_p.s, {m_p.scale, 0.0, std::nullopt}, [&](std::int64_t j) { return k.dot(j, q.data(), m_p.d); },
                  v, m_p.d, out.append(0, u * m_p.d, 1, m_p.d), scratch);
  }

 private:
  params m_p;
  tensor_reader m_q, m_k, m_v;
};

class flash_decode final : public unit_operator {
 public:
  [[nodiscard]] std::string name() const override { return "flash_decode"; }
  [[nodiscard]] std::vector<tensor_spec> tensors(const config& c) const override {
    const params p(c);
    return {dense("q", p.type, {p.b, p.hq, 1, p.d}, tensor_role::in),
            dense("k", p.type, {p.b, p.hkv, p.s, p.d}, tensor_role::in),
            dense("v", p.type, {p.b, p.hkv, p.s, p.d}, tensor_role::in),
            dense("o", p.type, {p.b, p.hq, 1, p.d}, tensor_role::out)};
  }
  [[nodiscard]] std::vector<uniform_fill> uniform_fills(const config&) const override {
    return {
      {"q", -1.0, 1.5},
      {"k", -1.0, 1.5},
      {"v", -1.0, 2.0},
    };
  }
  [[nodiscard]] cost_model cost(const config& c) const override {
    const params p(c);
    const double kv = 2.0 * static_cast<double>(p.b * p.hkv) * static_cast<double>(p.s * p.d);
    const double qo = 2.0 * static_cast<double>(p.b * p.hq * p.d);
    return {bytes_of(p.type, kv + qo), 4.0 * static_cast<double>(p.b * p.hq) * static_cast<double>(p.s * p.d)};
  }

 protected:
  [[nodiscard]] std::vector<std::string> outputs(const config&) const override { return {"o"}; }
  [[nodiscard]] std::unique_ptr<unit_job> make_job(const config& c, const std::vector<host_tensor>& in) const override {
    return std::make_unique<job>(params(c), in);
  }
  [[nodiscard]] std::optional<tolerance> tolerance_for(const config&, const std::string&) const override {
    return tolerance{1e-3, 1e-3};  // test_flash_decode.py test_perf (tighter than test_op)
  }
};

}  // namespace

std::unique_ptr<operator_spec> make_flash_decode() { return std::make_unique<flash_decode>(); }

}  // namespace portbench::reference::detail
