// SPDX-License-Identifier: Apache-2.0
// Gated delta rule: the recurrent reference against a plain-array loop (with l2norm, initial
// state and final state), and an independent fp64 implementation of the chunked algorithm
// (HF transformers' torch_chunk_gated_delta_rule: decay cumsum, unit-lower-triangular solve,
// inter-chunk recurrence, padding) equal to the recurrence.
#include <gtest/gtest.h>

#include <cmath>

#include "portbench/reference/tolerance.hpp"
#include "test_util.hpp"

namespace pr = portbench::reference;
using pb_test::cfg;
using pb_test::I;
using pb_test::logical;
using pb_test::S;
using out_map = std::map<std::string, std::vector<double>>;

namespace {

struct gdr_inputs {
  std::int64_t B, T, H, K, V;
  std::vector<double> q, k, v, g, beta, s0;
};

gdr_inputs read(const std::vector<pr::host_tensor>& ts, std::int64_t B, std::int64_t T, std::int64_t H, std::int64_t K,
                std::int64_t V, bool init) {
  gdr_inputs in{B, T, H, K, V, logical(pr::find_tensor(ts, "q")), logical(pr::find_tensor(ts, "k")),
                logical(pr::find_tensor(ts, "v")), logical(pr::find_tensor(ts, "g")), logical(pr::find_tensor(ts, "beta")), {}};
  if (init) in.s0 = logical(pr::find_tensor(ts, "initial_state"));
  return in;
}

void l2(std::vector<double>& x) {
  double s = 0;
  for (double v : x) s += v * v;
  for (double& v : x) v /= std::sqrt(s + 1e-6);
}

// Straightforward recurrence over std::vector state.
out_map recurrent_loop(const gdr_inputs& in, bool use_l2) {
  const auto K = static_cast<std::size_t>(in.K), V = static_cast<std::size_t>(in.V);
  std::vector<double> o(static_cast<std::size_t>(in.B * in.T * in.H) * V), fin(static_cast<std::size_t>(in.B * in.H) * K * V);
  for (std::int64_t b = 0; b < in.B; ++b)
    for (std::int64_t h = 0; h < in.H; ++h) {
      std::vector<double> s(K * V, 0.0);
      if (!in.s0.empty()) std::copy_n(in.s0.begin() + (b * in.H + h) * in.K * in.V, K * V, s.begin());
      for (std::int64_t t = 0; t < in.T; ++t) {
        const auto row = static_cast<std::size_t>((b * in.T + t) * in.H + h);
        std::vector<double> q(in.q.begin() + row * K, in.q.begin() + (row + 1) * K), k(in.k.begin() + row * K, in.k.begin() + (row + 1) * K);
        if (use_l2) {
          l2(q);
          l2(k);
        }
        for (double& x : q) x /= std::sqrt(static_cast<double>(K));
        const double decay = std::exp(in.g[row]);
        for (double& x : s) x *= decay;
        for (std::size_t c = 0; c < V; ++c) {
          double mem = 0;
          for (std::size_t a = 0; a < K; ++a) mem += s[a * V + c] * k[a];
          const double delta = (in.v[row * V + c] - mem) * in.beta[row];
          for (std::size_t a = 0; a < K; ++a) s[a * V + c] += k[a] * delta;
        }
        for (std::size_t c = 0; c < V; ++c) {
          double acc = 0;
          for (std::size_t a = 0; a < K; ++a) acc += s[a * V + c] * q[a];
          o[row * V + c] = acc;
        }
      }
      std::copy(s.begin(), s.end(), fin.begin() + (b * in.H + h) * in.K * in.V);
    }
  return {{"o", o}, {"final_state", fin}};
}

using mat = std::vector<std::vector<double>>;
mat zeros(std::size_t r, std::size_t c) { return mat(r, std::vector<double>(c, 0.0)); }
mat mul(const mat& a, const mat& b) {
  mat c = zeros(a.size(), b[0].size());
  for (std::size_t i = 0; i < a.size(); ++i)
    for (std::size_t k = 0; k < b.size(); ++k)
      for (std::size_t j = 0; j < b[0].size(); ++j) c[i][j] += a[i][k] * b[k][j];
  return c;
}
mat transpose(const mat& a) {
  mat t = zeros(a[0].size(), a.size());
  for (std::size_t i = 0; i < a.size(); ++i)
    for (std::size_t j = 0; j < a[0].size(); ++j) t[j][i] = a[i][j];
  return t;
}

// The chunked algorithm, written from HF transformers' torch_chunk_gated_delta_rule.
out_map chunked(const gdr_inputs& in, std::int64_t C, bool use_l2) {
  const auto K = static_cast<std::size_t>(in.K), V = static_cast<std::size_t>(in.V), CS = static_cast<std::size_t>(C);
  const std::int64_t Tp = (in.T + C - 1) / C * C;
  std::vector<double> o(static_cast<std::size_t>(in.B * in.T * in.H) * V), fin(static_cast<std::size_t>(in.B * in.H) * K * V);
  for (std::int64_t b = 0; b < in.B; ++b)
    for (std::int64_t h = 0; h < in.H; ++h) {
      // Padded, scaled per-head sequences (padding: zeros, g = 0, beta = 0).
      mat q = zeros(static_cast<std::size_t>(Tp), K), k = zeros(static_cast<std::size_t>(Tp), K), v = zeros(static_cast<std::size_t>(Tp), V);
      std::vector<double> g(static_cast<std::size_t>(Tp), 0.0), beta(static_cast<std::size_t>(Tp), 0.0);
      for (std::int64_t t = 0; t < in.T; ++t) {
        const auto row = static_cast<std::size_t>((b * in.T + t) * in.H + h);
        std::vector<double> qq(in.q.begin() + row * K, in.q.begin() + (row + 1) * K), kk(in.k.begin() + row * K, in.k.begin() + (row + 1) * K);
        if (use_l2) {
          l2(qq);
          l2(kk);
        }
        for (auto& x : qq) x /= std::sqrt(static_cast<double>(K));
        q[t] = qq;
        k[t] = kk;
        v[t].assign(in.v.begin() + row * V, in.v.begin() + (row + 1) * V);
        g[t] = in.g[row];
        beta[t] = in.beta[row];
      }
      mat s = zeros(K, V);
      if (!in.s0.empty())
        for (std::size_t a = 0; a < K; ++a)
          for (std::size_t c = 0; c < V; ++c) s[a][c] = in.s0[static_cast<std::size_t>((b * in.H + h) * in.K * in.V) + a * V + c];
      for (std::int64_t c0 = 0; c0 < Tp; c0 += C) {
        mat qc(q.begin() + c0, q.begin() + c0 + C), kc(k.begin() + c0, k.begin() + c0 + C), vc(v.begin() + c0, v.begin() + c0 + C);
        std::vector<double> gc(CS);
        double cum = 0;
        for (std::size_t i = 0; i < CS; ++i) gc[i] = (cum += g[static_cast<std::size_t>(c0) + i]);
        mat kb = kc, vb = vc;
        for (std::size_t i = 0; i < CS; ++i) {
          for (auto& x : kb[i]) x *= beta[static_cast<std::size_t>(c0) + i];
          for (auto& x : vb[i]) x *= beta[static_cast<std::size_t>(c0) + i];
        }
        // attn = -(k_beta k^T * decay) strictly lower, then the triangular recurrence, + I.
        mat attn = zeros(CS, CS);
        const mat kk = mul(kb, transpose(kc));
        for (std::size_t i = 0; i < CS; ++i)
          for (std::size_t j = 0; j < i; ++j) attn[i][j] = -kk[i][j] * std::exp(gc[i] - gc[j]);
        for (std::size_t i = 1; i < CS; ++i) {
          const std::vector<double> row(attn[i].begin(), attn[i].begin() + static_cast<std::ptrdiff_t>(i));
          for (std::size_t j = 0; j < i; ++j) {
            double add = 0;
            for (std::size_t m = 0; m < i; ++m) add += row[m] * attn[m][j];
            attn[i][j] = row[j] + add;
          }
        }
        for (std::size_t i = 0; i < CS; ++i) attn[i][i] += 1;
        const mat value = mul(attn, vb);
        mat kbd = kb;
        for (std::size_t i = 0; i < CS; ++i)
          for (auto& x : kbd[i]) x *= std::exp(gc[i]);
        const mat kcum = mul(attn, kbd);
        // Inter-chunk step.
        mat qk = mul(qc, transpose(kc));
        for (std::size_t i = 0; i < CS; ++i)
          for (std::size_t j = 0; j < CS; ++j) qk[i][j] = j <= i ? qk[i][j] * std::exp(gc[i] - gc[j]) : 0.0;
        const mat vprime = mul(kcum, s);
        mat vnew = value;
        for (std::size_t i = 0; i < CS; ++i)
          for (std::size_t c = 0; c < V; ++c) vnew[i][c] -= vprime[i][c];
        mat qd = qc;
        for (std::size_t i = 0; i < CS; ++i)
          for (auto& x : qd[i]) x *= std::exp(gc[i]);
        const mat inter = mul(qd, s), intra = mul(qk, vnew);
        for (std::size_t i = 0; i < CS; ++i) {
          const std::int64_t t = c0 + static_cast<std::int64_t>(i);
          if (t >= in.T) break;
          const auto row = static_cast<std::size_t>((b * in.T + t) * in.H + h);
          for (std::size_t c = 0; c < V; ++c) o[row * V + c] = inter[i][c] + intra[i][c];
        }
        mat kw = kc;
        for (std::size_t i = 0; i < CS; ++i)
          for (auto& x : kw[i]) x *= std::exp(gc[CS - 1] - gc[i]);
        const mat upd = mul(transpose(kw), vnew);
        for (std::size_t a = 0; a < K; ++a)
          for (std::size_t c = 0; c < V; ++c) s[a][c] = s[a][c] * std::exp(gc[CS - 1]) + upd[a][c];
      }
      for (std::size_t a = 0; a < K; ++a)
        for (std::size_t c = 0; c < V; ++c) fin[static_cast<std::size_t>((b * in.H + h) * in.K * in.V) + a * V + c] = s[a][c];
    }
  return {{"o", o}, {"final_state", fin}};
}

}  // namespace

TEST(recurrent_gated_delta_rule, matches_loop_with_l2_and_initial_state) {
  for (bool l2n : {false, true}) {
    const auto c = cfg("recurrent_gated_delta_rule", {{"B", I(2)}, {"T", I(23)}, {"H", I(2)}, {"K", I(8)}, {"V", I(6)},
                                                      {"dtype", S("float32")}, {"use_l2", l2n}, {"use_init", true}});
    pb_test::check_against_independent(c, 5, [&](const auto& ts) { return recurrent_loop(read(ts, 2, 23, 2, 8, 6, true), l2n); });
  }
}

TEST(chunk_gated_delta_rule, chunked_algorithm_equals_the_recurrence) {
  // T = 45 is not a multiple of the chunk (16): exercises the padding.
  for (bool l2n : {false, true}) {
    const auto c = cfg("chunk_gated_delta_rule", {{"B", I(1)}, {"T", I(45)}, {"H", I(2)}, {"K", I(8)}, {"V", I(6)},
                                                  {"chunk_size", I(16)}, {"dtype", S("float32")}, {"use_l2", l2n},
                                                  {"use_init", true}, {"qkv_scale", 0.5}});
    pb_test::check_against_independent(c, 6, [&](const auto& ts) { return chunked(read(ts, 1, 45, 2, 8, 6, true), 16, l2n); });
  }
}

TEST(chunk_gated_delta_rule, a_dropped_decay_fails) {
  // A port that forgets the gate (exp(g) = 1) on one head is caught on the sampled heads.
  const auto c = cfg("chunk_gated_delta_rule", {{"B", I(1)}, {"T", I(64)}, {"H", I(1)}, {"K", I(8)}, {"V", I(8)},
                                                {"dtype", S("bfloat16")}});
  const auto& op = pr::find_operator(c.op);
  auto ts = pr::make_inputs(op, c, 2);
  op.write_reference(c, ts, 1);
  const auto ref = pb_test::verify(op, c, ts, 2);
  auto no_gate = ts;
  auto& g = pr::find_tensor(no_gate, "g");
  std::fill(g.bytes.begin(), g.bytes.end(), std::byte{0});
  op.write_reference(c, no_gate, 1);
  pr::find_tensor(ts, "o").bytes = pr::find_tensor(no_gate, "o").bytes;
  EXPECT_EQ(pr::judge_all(pb_test::verify(op, c, ts, 2), ref).verdict, "FAIL");
}
