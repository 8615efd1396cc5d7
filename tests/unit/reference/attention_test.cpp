// SPDX-License-Identifier: Apache-2.0
// Attention-like operators against naive softmax(QK^T)V loops, plus identities: attention with
// one key returns V; decode equals the last row of causal prefill; gemma with window 0 and a
// huge cap equals fmha; a very negative sink is no sink; attention_sink_decode is the last row of
// attention_sink; mla equals fmha on [q, qpe] / [k, kpe]; splitting KV and reducing with
// splitk_reduce gives flash_decode; mla_decoding_split_kv equals mla_decoding's o.
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

// Naive attention of one query against keys [j0, j1): dense vectors, fp64.
std::vector<double> naive(const std::vector<double>& q, const std::vector<std::vector<double>>& k,
                          const std::vector<std::vector<double>>& v, std::int64_t j0, std::int64_t j1, double scale,
                          double cap = 0, double sink = -INFINITY, double* lse2 = nullptr) {
  std::vector<double> s;
  double mx = sink;
  for (std::int64_t j = j0; j < j1; ++j) {
    double d = 0;
    for (std::size_t c = 0; c < q.size(); ++c) d += q[c] * k[static_cast<std::size_t>(j)][c];
    d *= scale;
    if (cap > 0) d = cap * std::tanh(d / cap);
    s.push_back(d);
    mx = std::max(mx, d);
  }
  double den = std::isinf(sink) ? 0 : std::exp(sink - mx);
  for (double& x : s) den += (x = std::exp(x - mx));
  std::vector<double> o(v[0].size(), 0.0);
  for (std::int64_t j = j0; j < j1; ++j) {
    for (std::size_t c = 0; c < o.size(); ++c) o[c] += s[static_cast<std::size_t>(j - j0)] / den * v[static_cast<std::size_t>(j)][c];
  }
  if (lse2 != nullptr) *lse2 = (mx + std::log(den)) / std::log(2.0);
  return o;
}

// Rows [n, d] of a flat logical array starting at offset, stride between rows.
std::vector<std::vector<double>> rows(const std::vector<double>& a, std::int64_t offset, std::int64_t n, std::int64_t d,
                                      std::int64_t stride) {
  std::vector<std::vector<double>> out(static_cast<std::size_t>(n));
  for (std::int64_t j = 0; j < n; ++j) {
    out[static_cast<std::size_t>(j)].assign(a.begin() + offset + j * stride, a.begin() + offset + j * stride + d);
  }
  return out;
}

std::vector<double> reference_of(const pr::config& c, std::uint64_t seed, const std::string& out,
                                 std::vector<pr::host_tensor>* keep = nullptr) {
  const auto& op = pr::find_operator(c.op);
  auto ts = pr::make_inputs(op, c, seed);
  op.write_reference(c, ts, 2);
  auto r = logical(pr::find_tensor(ts, out));
  if (keep != nullptr) *keep = std::move(ts);
  return r;
}

void expect_close(const std::vector<double>& a, const std::vector<double>& b, double rel) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) ASSERT_NEAR(a[i], b[i], rel * (1 + std::abs(b[i]))) << i;
}

}  // namespace

TEST(fmha, matches_naive_gqa_causal_and_not) {
  for (bool causal : {true, false}) {
    const std::int64_t B = 2, H = 4, HK = 2, S_ = 13, D = 8;
    pb_test::check_against_independent(
        cfg("fmha", {{"batch", I(B)}, {"heads", I(H)}, {"kv_heads", I(HK)}, {"seq_len", I(S_)}, {"head_dim", I(D)},
                     {"dtype", S("float32")}, {"is_causal", causal}}),
        3, [&](const auto& ts) {
          const auto q = logical(pr::find_tensor(ts, "q")), k = logical(pr::find_tensor(ts, "k")),
                     v = logical(pr::find_tensor(ts, "v"));
          std::vector<double> o;
          for (std::int64_t b = 0; b < B; ++b)
            for (std::int64_t h = 0; h < H; ++h) {
              const std::int64_t kv = (b * HK + h / (H / HK)) * S_ * D;
              const auto kr = rows(k, kv, S_, D, D), vr = rows(v, kv, S_, D, D);
              for (std::int64_t i = 0; i < S_; ++i) {
                const std::vector<double> qi(q.begin() + ((b * H + h) * S_ + i) * D, q.begin() + ((b * H + h) * S_ + i + 1) * D);
                const auto r = naive(qi, kr, vr, 0, causal ? i + 1 : S_, 1 / std::sqrt(8.0));
                o.insert(o.end(), r.begin(), r.end());
              }
            }
          return out_map{{"o", o}};
        });
  }
}

TEST(fmha, one_key_returns_v) {
  const auto c = cfg("fmha", {{"batch", I(2)}, {"heads", I(3)}, {"seq_len", I(1)}, {"head_dim", I(16)},
                              {"dtype", S("bfloat16")}, {"is_causal", false}});
  std::vector<pr::host_tensor> ts;
  const auto o = reference_of(c, 9, "o", &ts);
  EXPECT_EQ(pr::find_tensor(ts, "o").bytes, pr::find_tensor(ts, "v").bytes);
  // A causal first row also sees one key only.
  const auto cc = cfg("fmha", {{"batch", I(1)}, {"heads", I(1)}, {"seq_len", I(5)}, {"head_dim", I(4)},
                               {"dtype", S("float32")}, {"is_causal", true}});
  std::vector<pr::host_tensor> t2;
  const auto o2 = reference_of(cc, 9, "o", &t2);
  const auto v2 = logical(pr::find_tensor(t2, "v"));
  for (int d = 0; d < 4; ++d) EXPECT_EQ(o2[static_cast<std::size_t>(d)], v2[static_cast<std::size_t>(d)]);
}

TEST(fmha, sampled_rows_catch_a_corrupted_row) {
  const auto c = cfg("fmha", {{"batch", I(2)}, {"heads", I(4)}, {"seq_len", I(200)}, {"head_dim", I(16)},
                              {"dtype", S("float16")}, {"is_causal", true}});
  const auto& op = pr::find_operator("fmha");
  auto ts = pr::make_inputs(op, c, 1);
  op.write_reference(c, ts, 2);
  const auto ref = pb_test::verify(op, c, ts, 1);
  EXPECT_EQ(ref[0].method, "rows");
  EXPECT_LT(ref[0].checked, ref[0].total);
  // The last row of the last head is always sampled (the longest causal row): break it.
  auto& o = pr::find_tensor(ts, "o");
  for (std::int64_t d = 0; d < 16; ++d) {
    const std::int64_t at = (7 * 200 + 199) * 16 + d;
    pr::store_element(o.bytes.data(), o.spec.type, at, 0.5 * pr::load_element(o.bytes.data(), o.spec.type, at));
  }
  const auto port = pb_test::verify(op, c, ts, 1);
  EXPECT_EQ(pr::judge_all(port, ref).verdict, "FAIL");
}

TEST(flash_decode, matches_naive_gqa) {
  const std::int64_t B = 2, HQ = 8, HK = 2, S_ = 30, D = 16;
  const auto c = cfg("flash_decode", {{"batch", I(B)}, {"num_q_heads", I(HQ)}, {"num_kv_heads", I(HK)}, {"seq_len", I(S_)},
                                      {"head_dim", I(D)}, {"group_size", I(4)}, {"dtype", S("float32")}});
  pb_test::check_against_independent(c, 2, [&](const auto& ts) {
    const auto q = logical(pr::find_tensor(ts, "q")), k = logical(pr::find_tensor(ts, "k")),
               v = logical(pr::find_tensor(ts, "v"));
    std::vector<double> o;
    for (std::int64_t b = 0; b < B; ++b)
      for (std::int64_t h = 0; h < HQ; ++h) {
        const std::int64_t kv = (b * HK + h / 4) * S_ * D;
        const std::vector<double> qi(q.begin() + (b * HQ + h) * D, q.begin() + (b * HQ + h + 1) * D);
        const auto r = naive(qi, rows(k, kv, S_, D, D), rows(v, kv, S_, D, D), 0, S_, 0.25);
        o.insert(o.end(), r.begin(), r.end());
      }
    return out_map{{"o", o}};
  });
}

TEST(gemma_attention, matches_naive_with_cap_and_window) {
  const std::int64_t H = 4, HK = 2, S_ = 21, D = 8, W = 5;
  const auto c = cfg("gemma_attention", {{"batch", I(1)}, {"heads", I(H)}, {"kv_heads", I(HK)}, {"seq_len", I(S_)},
                                         {"head_dim", I(D)}, {"window", I(W)}, {"soft_cap", 3.0}, {"is_causal", true},
                                         {"dtype", S("float32")}});
  pb_test::check_against_independent(c, 7, [&](const auto& ts) {
    const auto q = logical(pr::find_tensor(ts, "q")), k = logical(pr::find_tensor(ts, "k")),
               v = logical(pr::find_tensor(ts, "v"));
    std::vector<double> o;
    for (std::int64_t h = 0; h < H; ++h) {
      const std::int64_t kv = (h / 2) * S_ * D;
      for (std::int64_t i = 0; i < S_; ++i) {
        const std::vector<double> qi(q.begin() + (h * S_ + i) * D, q.begin() + (h * S_ + i + 1) * D);
        // masked: j > i (causal) or |i - j| > W
        const auto r = naive(qi, rows(k, kv, S_, D, D), rows(v, kv, S_, D, D), std::max<std::int64_t>(0, i - W), i + 1,
                             1 / std::sqrt(8.0), 3.0);
        o.insert(o.end(), r.begin(), r.end());
      }
    }
    return out_map{{"o", o}};
  });
}

TEST(gemma_attention, without_cap_and_window_equals_fmha) {
  const auto g = cfg("gemma_attention", {{"batch", I(1)}, {"heads", I(2)}, {"seq_len", I(17)}, {"head_dim", I(8)},
                                         {"window", I(0)}, {"soft_cap", 0.0}, {"is_causal", true}, {"dtype", S("float32")}});
  const auto f = cfg("fmha", {{"batch", I(1)}, {"heads", I(2)}, {"seq_len", I(17)}, {"head_dim", I(8)},
                              {"is_causal", true}, {"dtype", S("float32")}});
  std::vector<pr::host_tensor> gt, ft;
  (void)reference_of(g, 3, "o", &gt);
  const auto& fmha = pr::find_operator("fmha");
  ft = pr::make_inputs(fmha, f, 3);
  for (const char* n : {"q", "k", "v"}) pr::find_tensor(ft, n).bytes = pr::find_tensor(gt, n).bytes;
  fmha.write_reference(f, ft, 1);
  EXPECT_EQ(pr::find_tensor(ft, "o").bytes, pr::find_tensor(gt, "o").bytes);
}

TEST(gemma_attention_decode, matches_naive_window) {
  const std::int64_t H = 4, HK = 2, S_ = 40, D = 8, W = 10;
  const auto c = cfg("gemma_attention_decode", {{"batch", I(1)}, {"heads", I(H)}, {"kv_heads", I(HK)}, {"seq_len_kv", I(S_)},
                                                {"head_dim", I(D)}, {"window", I(W)}, {"soft_cap", 4.0}, {"dtype", S("float32")}});
  pb_test::check_against_independent(c, 5, [&](const auto& ts) {
    const auto q = logical(pr::find_tensor(ts, "q")), k = logical(pr::find_tensor(ts, "k")),
               v = logical(pr::find_tensor(ts, "v"));
    std::vector<double> o;
    for (std::int64_t h = 0; h < H; ++h) {
      const std::vector<double> qi(q.begin() + h * D, q.begin() + (h + 1) * D);
      const auto r = naive(qi, rows(k, (h / 2) * S_ * D, S_, D, D), rows(v, (h / 2) * S_ * D, S_, D, D), S_ - 1 - W, S_,
                           1 / std::sqrt(8.0), 4.0);
      o.insert(o.end(), r.begin(), r.end());
    }
    return out_map{{"o", o}};
  });
}

TEST(attention_sink, matches_naive_and_decode_is_its_last_row) {
  const std::int64_t SQ = 6, SK = 20, HK = 2, G = 2, D = 8, START = 10, W = 4;
  const auto c = cfg("attention_sink", {{"batch", I(1)}, {"num_queries", I(SQ)}, {"num_keys", I(SK)}, {"num_kv_heads", I(HK)},
                                        {"num_kv_groups", I(G)}, {"head_dim", I(D)}, {"sliding_window", I(W)},
                                        {"dtype", S("float32")}, {"start_q", I(START)}});
  pb_test::check_against_independent(c, 4, [&](const auto& ts) {
    const auto q = logical(pr::find_tensor(ts, "q")), k = logical(pr::find_tensor(ts, "k")),
               v = logical(pr::find_tensor(ts, "v")), sinks = logical(pr::find_tensor(ts, "sinks"));
    std::vector<double> o;
    for (std::int64_t i = 0; i < SQ; ++i)
      for (std::int64_t h = 0; h < HK * G; ++h) {
        const std::int64_t pos = START + i, kvh = h / G;
        const std::vector<double> qi(q.begin() + (i * HK * G + h) * D, q.begin() + (i * HK * G + h + 1) * D);
        const auto r = naive(qi, rows(k, kvh * D, SK, D, HK * D), rows(v, kvh * D, SK, D, HK * D),
                             std::max<std::int64_t>(0, pos - W + 1), std::min(pos + 1, SK), 1 / std::sqrt(8.0), 0,
                             sinks[static_cast<std::size_t>(h)]);
        o.insert(o.end(), r.begin(), r.end());
      }
    return out_map{{"o", o}};
  });
  // Decode with start_q = num_keys - 1 equals the prefill row at that position.
  const auto pre = cfg("attention_sink", {{"batch", I(1)}, {"num_queries", I(1)}, {"num_keys", I(SK)}, {"num_kv_heads", I(HK)},
                                          {"num_kv_groups", I(G)}, {"head_dim", I(D)}, {"dtype", S("float32")},
                                          {"start_q", I(SK - 1)}});
  const auto dec = cfg("attention_sink_decode", {{"batch", I(1)}, {"num_keys", I(SK)}, {"num_kv_heads", I(HK)},
                                                 {"num_kv_groups", I(G)}, {"head_dim", I(D)}, {"dtype", S("float32")}});
  EXPECT_EQ(reference_of(pre, 4, "o"), reference_of(dec, 4, "o"));
}

TEST(attention_sink, very_negative_sink_is_no_sink) {
  const auto c = cfg("attention_sink_decode", {{"batch", I(1)}, {"num_keys", I(12)}, {"num_kv_heads", I(1)},
                                               {"num_kv_groups", I(1)}, {"head_dim", I(8)}, {"dtype", S("float32")}});
  const auto& op = pr::find_operator(c.op);
  auto ts = pr::make_inputs(op, c, 2);
  auto& s = pr::find_tensor(ts, "sinks");
  pr::store_element(s.bytes.data(), s.spec.type, 0, -1e4);
  op.write_reference(c, ts, 1);
  const auto q = logical(pr::find_tensor(ts, "q")), k = logical(pr::find_tensor(ts, "k")), v = logical(pr::find_tensor(ts, "v"));
  const auto want = naive(q, rows(k, 0, 12, 8, 8), rows(v, 0, 12, 8, 8), 0, 12, 1 / std::sqrt(8.0));
  expect_close(logical(pr::find_tensor(ts, "o")), want, 1e-6);
  // ... and a large sink shrinks the output towards zero.
  pr::store_element(s.bytes.data(), s.spec.type, 0, 30.0);
  op.write_reference(c, ts, 1);
  for (double x : logical(pr::find_tensor(ts, "o"))) EXPECT_LT(std::abs(x), 1e-6);
}

TEST(mla, equals_fmha_on_concatenated_heads) {
  const std::int64_t B = 1, H = 2, S_ = 9, D = 8, DPE = 4;
  const auto m = cfg("mla", {{"batch", I(B)}, {"heads", I(H)}, {"seq_len", I(S_)}, {"d_model", I(D)}, {"d_pe", I(DPE)},
                             {"dtype", S("float32")}, {"is_causal", true}});
  std::vector<pr::host_tensor> mt;
  const auto o = reference_of(m, 6, "o", &mt);
  const auto q = logical(pr::find_tensor(mt, "q")), k = logical(pr::find_tensor(mt, "k")), v = logical(pr::find_tensor(mt, "v")),
             qpe = logical(pr::find_tensor(mt, "qpe")), kpe = logical(pr::find_tensor(mt, "kpe"));
  std::vector<double> want;
  for (std::int64_t h = 0; h < H; ++h) {
    std::vector<std::vector<double>> kc(S_), vr = rows(v, h * S_ * D, S_, D, D);
    for (std::int64_t j = 0; j < S_; ++j) {
      kc[j].assign(k.begin() + (h * S_ + j) * D, k.begin() + (h * S_ + j + 1) * D);
      kc[j].insert(kc[j].end(), kpe.begin() + j * DPE, kpe.begin() + (j + 1) * DPE);  // one kpe head
    }
    for (std::int64_t i = 0; i < S_; ++i) {
      std::vector<double> qc(q.begin() + (h * S_ + i) * D, q.begin() + (h * S_ + i + 1) * D);
      qc.insert(qc.end(), qpe.begin() + (h * S_ + i) * DPE, qpe.begin() + (h * S_ + i + 1) * DPE);
      const auto r = naive(qc, kc, vr, 0, i + 1, 1 / std::sqrt(12.0));
      want.insert(want.end(), r.begin(), r.end());
    }
  }
  expect_close(o, want, 1e-6);
}

TEST(mla_decoding, matches_naive_with_lse_and_split_kv_agrees) {
  const std::int64_t B = 2, H = 3, S_ = 25, D = 16, DPE = 4;
  const auto c = cfg("mla_decoding", {{"num_heads", I(H)}, {"batch", I(B)}, {"S_kv", I(S_)}, {"BLOCK_D", I(D)},
                                      {"BLOCK_KPE", I(DPE)}, {"dtype", S("float32")}});
  pb_test::check_against_independent(c, 8, [&](const auto& ts) {
    const auto q = logical(pr::find_tensor(ts, "q")), qpe = logical(pr::find_tensor(ts, "qpe")),
               kv = logical(pr::find_tensor(ts, "kv")), kpe = logical(pr::find_tensor(ts, "kpe"));
    std::vector<double> o, lse;
    for (std::int64_t b = 0; b < B; ++b) {
      std::vector<std::vector<double>> kc(S_), vr = rows(kv, b * S_ * D, S_, D, D);
      for (std::int64_t j = 0; j < S_; ++j) {
        kc[j] = vr[j];
        kc[j].insert(kc[j].end(), kpe.begin() + (b * S_ + j) * DPE, kpe.begin() + (b * S_ + j + 1) * DPE);
      }
      for (std::int64_t h = 0; h < H; ++h) {
        std::vector<double> qc(q.begin() + (b * H + h) * D, q.begin() + (b * H + h + 1) * D);
        qc.insert(qc.end(), qpe.begin() + (b * H + h) * DPE, qpe.begin() + (b * H + h + 1) * DPE);
        double l2 = 0;
        const auto r = naive(qc, kc, vr, 0, S_, 1 / std::sqrt(20.0), 0, -INFINITY, &l2);
        o.insert(o.end(), r.begin(), r.end());
        lse.push_back(l2);
      }
    }
    return out_map{{"o", o}, {"lse", lse}};
  });
  const auto s = cfg("mla_decoding_split_kv", {{"batch", I(1)}, {"num_heads", I(H)}, {"head_dim", I(D)}, {"kpe_dim", I(DPE)},
                                               {"seq_len", I(S_)}, {"dtype", S("float32")}});
  const auto d1 = cfg("mla_decoding", {{"num_heads", I(H)}, {"batch", I(1)}, {"S_kv", I(S_)}, {"BLOCK_D", I(D)},
                                       {"BLOCK_KPE", I(DPE)}, {"dtype", S("float32")}});
  EXPECT_EQ(reference_of(s, 8, "o"), reference_of(d1, 8, "o"));
}

TEST(splitk_reduce, split_attention_then_reduce_equals_flash_decode) {
  // Decode attention over 4 KV splits: per split a partial output and its base-2 LSE; reducing
  // them with splitk_reduce must give flash_decode's answer.
  const std::int64_t S_ = 40, D = 8, SPLITS = 4;
  const auto fd = cfg("flash_decode", {{"batch", I(1)}, {"num_q_heads", I(1)}, {"num_kv_heads", I(1)}, {"seq_len", I(S_)},
                                       {"head_dim", I(D)}, {"dtype", S("float32")}});
  std::vector<pr::host_tensor> ft;
  const auto full = reference_of(fd, 3, "o", &ft);
  const auto q = logical(pr::find_tensor(ft, "q")), k = logical(pr::find_tensor(ft, "k")), v = logical(pr::find_tensor(ft, "v"));
  const auto sk = cfg("splitk_reduce", {{"batch", I(1)}, {"num_heads", I(1)}, {"head_dim", I(D)}, {"num_kv_splits", I(SPLITS)},
                                        {"S_kv", I(S_)}, {"dtype", S("float32")}});
  const auto& op = pr::find_operator("splitk_reduce");
  auto st = pr::make_inputs(op, sk, 3);
  auto& po = pr::find_tensor(st, "partial_o");
  auto& pl = pr::find_tensor(st, "lse");
  for (std::int64_t s = 0; s < SPLITS; ++s) {
    double l2 = 0;
    const auto r = naive(q, rows(k, 0, S_, D, D), rows(v, 0, S_, D, D), s * 10, s * 10 + 10, 1 / std::sqrt(8.0), 0, -INFINITY, &l2);
    for (std::int64_t d = 0; d < D; ++d) pr::store_element(po.bytes.data(), po.spec.type, s * D + d, r[static_cast<std::size_t>(d)]);
    pr::store_element(pl.bytes.data(), pl.spec.type, s, l2);
  }
  op.write_reference(sk, st, 1);
  expect_close(logical(pr::find_tensor(st, "o")), full, 1e-6);
}
