// SPDX-License-Identifier: Apache-2.0
// rope: rotate-half RoPE (NeoX/Llama), in place on q [B, Hq, S, D] and k [B, Hkv, S, D], which
// are transposed views of [B, S, H, D] storage, as upstream passes them. The first
// rope_dim = int(D * partial_rotary_factor) dims rotate: x*cos + rotate_half(x)*sin with
// rotate_half(x) = cat(-x2, x1); the rest pass through. cos and sin [B, S, rope_dim] follow HF
// LlamaRotaryEmbedding (base 10000) at positions 1 + s + 131 b: never position 0 (where rope is
// the identity) and different per batch, so a wrong batch or position index shows. Every
// element is checked; the in-place outputs need the seed (or original inputs) to verify.
#include <cmath>
#include <vector>

#include "common.hpp"
#include "portbench/reference/parallel.hpp"
#include "ops.hpp"
#include "unit_op.hpp"

namespace portbench::reference::detail {
namespace {

struct params {
  std::int64_t b, s, hq, hkv, d, rd;
  dtype type;
  explicit params(const config& c)
      : b(dim(c, "bsz")), s(dim(c, "seq_len")), hq(dim(c, "num_q_heads")), hkv(dim(c, "num_kv_heads")),
        d(dim(c, "head_dim")), rd(0), type(float_type(c)) {
    rd = static_cast<std::int64_t>(static_cast<double>(d) * c.real_or("partial_rotary_factor", 1.0));
    if (rd <= 0 || rd > d || rd % 2 != 0) throw spec_error(c.op + ": rope_dim must be even and in (0, head_dim]");
  }
};

// [B, H, S, D] view of [B, S, H, D] storage.
tensor_spec bshd_view(std::string name, dtype t, std::int64_t b, std::int64_t h, std::int64_t s, std::int64_t d) {
  tensor_spec v = make_tensor(std::move(name), t, {b, h, s, d}, tensor_role::inout);
  v.strides = {s * h * d, d, h * d, 1};
  return v;
}

class job final : public unit_job {
 public:
  job(const params& p, const std::vector<host_tensor>& ts)
      : m_p(p), m_q(find_tensor(ts, "q")), m_k(find_tensor(ts, "k")), m_cos(find_tensor(ts, "cos")),
        m_sin(find_tensor(ts, "sin")) {}
  [[nodiscard]] std::int64_t units() const override { return m_p.b * m_p.s; }
  // Unit: one (batch, position), all q and k heads.
  void compute(std::int64_t u, unit_values& out) const override {
    const std::int64_t bi = u / m_p.s, si = u % m_p.s;
    const std::int64_t cs = u * m_p.rd;  // cos/sin [B, S, rd]
    rotate(0, m_q, m_p.hq, bi, si, cs, out);
    rotate(1, m_k, m_p.hkv, bi, si, cs, out);
  }

 private:
  void rotate(int slot, const tensor_reader& x, std::int64_t heads, std::int64_t bi, std::int64_t si, std::int64_t cs,
              unit_values& out) const {
    const std::int64_t half = m_p.rd / 2;
    for (std::int64_t h = 0; h < heads; ++h) {
      const std::int64_t base = ((bi * m_p.s + si) * heads + h) * m_p.d;  // storage is [B, S, H, D]
      thread_local std::vector<double> in, c, s;
      in.resize(static_cast<std::size_t>(m_p.d));
      c.resize(static_cast<std::size_t>(m_p.rd));
      s.resize(static_cast<std::size_t>(m_p.rd));
      x.read(base, 1, m_p.d, in.data());
      m_cos.read(cs, 1, m_p.rd, c.data());
      m_sin.read(cs, 1, m_p.rd, s.data());
      double* y = out.append(slot, base, 1, m_p.d);
      for (std::int64_t j = 0; j < m_p.rd; ++j) {
        const auto sj = static_cast<std::size_t>(j);
        const double rot = j < half ? -in[sj + static_cast<std::size_t>(half)] : in[sj - static_cast<std::size_t>(half)];
        y[j] = in[sj] * c[sj] + rot * s[sj];
      }
      for (std::int64_t j = m_p.rd; j < m_p.d; ++j) y[j] = in[static_cast<std::size_t>(j)];
    }
  }

  params m_p;
  tensor_reader m_q, m_k, m_cos, m_sin;
};

class rope final : public unit_operator {
 public:
  [[nodiscard]] std::string name() const override { return "rope"; }
  [[nodiscard]] std::vector<tensor_spec> tensors(const config& c) const override {
    const params p(c);
    return {bshd_view("q", p.type, p.b, p.hq, p.s, p.d), bshd_view("k", p.type, p.b, p.hkv, p.s, p.d),
            dense("cos", p.type, {p.b, p.s, p.rd}, tensor_role::in),
            dense("sin", p.type, {p.b, p.s, p.rd}, tensor_role::in)};
  }
  [[nodiscard]] std::vector<uniform_fill> uniform_fills(const config&) const override {
    return {{"q", -1.5, 2.5}, {"k", -2.0, 2.5}};
  }
  void fill_inputs(const config& c, std::uint64_t, std::vector<host_tensor>& ts) const override {
    const params p(c);
    host_tensor& cs = find_tensor(ts, "cos");
    host_tensor& sn = find_tensor(ts, "sin");
    const std::int64_t half = p.rd / 2;
    std::vector<double> inv_freq(static_cast<std::size_t>(p.rd));
    for (std::int64_t j = 0; j < p.rd; ++j) {
      inv_freq[static_cast<std::size_t>(j)] =
          std::pow(10000.0, -static_cast<double>(2 * (j % half)) / static_cast<double>(p.rd));
    }
    parallel_blocks(p.b * p.s, 1024, 0, [&](std::int64_t, std::int64_t begin, std::int64_t end) {
      for (std::int64_t u = begin; u < end; ++u) {
        const std::int64_t bi = u / p.s, si = u % p.s;
        const double pos = static_cast<double>(1 + si + 131 * bi);
        for (std::int64_t j = 0; j < p.rd; ++j) {
          const double a = pos * inv_freq[static_cast<std::size_t>(j)];
          store_element(cs.bytes.data(), p.type, u * p.rd + j, std::cos(a));
          store_element(sn.bytes.data(), p.type, u * p.rd + j, std::sin(a));
        }
      }
    });
  }
  [[nodiscard]] cost_model cost(const config& c) const override {
    const params p(c);
    // In place: only the first rope_dim columns of each head are read and written; the rest
    // of q and k is never touched (counting it put partial-rotary kernels at 3x the copy rate).
    // Of cos and sin, the first half of each row: HF's tables repeat it (fill_inputs), and a
    // kernel that reads it once (tilegym's, the cuTile Rust port) must not be credited with the
    // other half.
    const double r = static_cast<double>(p.b * p.s) * static_cast<double>((p.hq + p.hkv) * p.rd);
    return {bytes_of(p.type, 2 * r + static_cast<double>(p.b * p.s * p.rd)), 3 * r};
  }

 protected:
  [[nodiscard]] std::vector<std::string> outputs(const config&) const override { return {"q", "k"}; }
  [[nodiscard]] std::unique_ptr<unit_job> make_job(const config& c, const std::vector<host_tensor>& in) const override {
    return std::make_unique<job>(params(c), in);
  }
  [[nodiscard]] std::optional<tolerance> tolerance_for(const config& c, const std::string&) const override {
    if (params(c).type == dtype::f32) return tolerance{1e-5, 1e-5};  // test_op
    return tolerance{1e-2, 1e-2};                                     // test_perf
  }
};

}  // namespace

std::unique_ptr<operator_spec> make_rope() { return std::make_unique<rope>(); }

}  // namespace portbench::reference::detail
