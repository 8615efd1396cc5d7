// SPDX-License-Identifier: Apache-2.0
// Row-wise and elementwise operators against straightforward loops, and identities: softmax
// rows sum to 1 and ignore a shift; layer_norm ignores a shift of its input; silu_and_mul equals
// swiglu on the halves; rope preserves pair norms and is undone by the opposite angle;
// splitk_reduce of one split is the identity; dropout's statistics.
#include <gtest/gtest.h>

#include <cmath>

#include "portbench/reference/random.hpp"
#include "portbench/reference/tolerance.hpp"
#include "test_util.hpp"

namespace pr = portbench::reference;
using pb_test::cfg;
using pb_test::I;
using pb_test::logical;
using pb_test::S;
using out_map = std::map<std::string, std::vector<double>>;

namespace {

double silu(double x) { return x / (1 + std::exp(-x)); }

out_map layer_norm_loop(const std::vector<pr::host_tensor>& ts, std::int64_t m, std::int64_t n, double eps, bool stats) {
  const auto x = logical(pr::find_tensor(ts, "x")), w = logical(pr::find_tensor(ts, "w")),
             b = logical(pr::find_tensor(ts, "b"));
  std::vector<double> y(x.size()), mean(static_cast<std::size_t>(m)), rstd(static_cast<std::size_t>(m));
  for (std::int64_t i = 0; i < m; ++i) {
    double mu = 0, var = 0;
    for (std::int64_t j = 0; j < n; ++j) mu += x[i * n + j] / n;
    for (std::int64_t j = 0; j < n; ++j) var += (x[i * n + j] - mu) * (x[i * n + j] - mu) / n;
    const double r = 1 / std::sqrt(var + eps);
    for (std::int64_t j = 0; j < n; ++j) y[i * n + j] = (x[i * n + j] - mu) * r * w[j] + b[j];
    mean[i] = mu;
    rstd[i] = r;
  }
  if (stats) return {{"y", y}, {"mean", mean}, {"rstd", rstd}};
  return {{"y", y}};
}

}  // namespace

TEST(layer_norm, legacy_and_persistent_match_loop) {
  pb_test::check_against_independent(
      cfg("layer_norm_legacy", {{"variant", S("layer_norm_legacy")}, {"m", I(9)}, {"n", I(130)}, {"dtype", S("float16")}}),
      3, [](const auto& ts) { return layer_norm_loop(ts, 9, 130, 1e-5, false); });
  pb_test::check_against_independent(
      cfg("layer_norm_legacy", {{"variant", S("persistent_layer_norm")}, {"m", I(12)}, {"n", I(64)}, {"dtype", S("bfloat16")}}),
      3, [](const auto& ts) { return layer_norm_loop(ts, 12, 64, 1e-6, true); });
  // The alias defaults to the persistent variant (mean and rstd outputs).
  const auto t = pr::find_operator("persistent_layer_norm")
                     .tensors(cfg("persistent_layer_norm", {{"m", I(4)}, {"n", I(8)}, {"dtype", S("bfloat16")}}));
  EXPECT_EQ(t.size(), 6U);
}

TEST(layer_norm, invariant_to_shifting_its_input) {
  const auto c = cfg("layer_norm_legacy", {{"m", I(8)}, {"n", I(64)}, {"dtype", S("float32")}, {"eps", 0.0}});
  const auto& op = pr::find_operator(c.op);
  auto a = pr::make_inputs(op, c, 2);
  auto b = a;
  auto& xb = pr::find_tensor(b, "x");
  for (std::int64_t i = 0; i < xb.spec.storage_elements; ++i) {
    pr::store_element(xb.bytes.data(), xb.spec.type, i, pr::load_element(xb.bytes.data(), xb.spec.type, i) + 4.0);
  }
  op.write_reference(c, a, 1);
  op.write_reference(c, b, 1);
  const auto ya = logical(pr::find_tensor(a, "y")), yb = logical(pr::find_tensor(b, "y"));
  for (std::size_t i = 0; i < ya.size(); ++i) ASSERT_NEAR(ya[i], yb[i], 1e-5 * (1 + std::abs(ya[i])));
}

TEST(softmax, matches_loop_rows_sum_to_one_and_shift_invariant) {
  const auto c = cfg("softmax", {{"m", I(7)}, {"n", I(1000)}, {"dtype", S("float32")}});
  pb_test::check_against_independent(c, 5, [](const auto& ts) {
    const auto x = logical(pr::find_tensor(ts, "x"));
    std::vector<double> y(x.size());
    for (int i = 0; i < 7; ++i) {
      double s = 0;
      for (int j = 0; j < 1000; ++j) s += std::exp(x[i * 1000 + j]);  // no max-subtraction: inputs < 6
      for (int j = 0; j < 1000; ++j) y[i * 1000 + j] = std::exp(x[i * 1000 + j]) / s;
    }
    return out_map{{"y", y}};
  });
  const auto& op = pr::find_operator("softmax");
  auto ts = pr::make_inputs(op, c, 5);
  op.write_reference(c, ts, 1);
  const auto y = logical(pr::find_tensor(ts, "y"));
  for (int i = 0; i < 7; ++i) {
    double s = 0;
    for (int j = 0; j < 1000; ++j) s += y[i * 1000 + j];
    EXPECT_NEAR(s, 1.0, 1e-5);
  }
  auto shifted = ts;
  auto& x = pr::find_tensor(shifted, "x");
  for (std::int64_t i = 0; i < x.spec.storage_elements; ++i) {
    pr::store_element(x.bytes.data(), x.spec.type, i, pr::load_element(x.bytes.data(), x.spec.type, i) - 3.0);
  }
  const auto r = pb_test::verify(op, c, shifted, 5);  // ts's output checked against shifted inputs
  EXPECT_EQ(pr::judge_all(r, {}).verdict, "PASS") << r[0].max_norm_err;
}

TEST(silu_and_mul, matches_loop_and_equals_swiglu_on_halves) {
  const auto c = cfg("silu_and_mul", {{"batch", I(2)}, {"seq_len", I(5)}, {"hidden_size", I(64)}, {"dtype", S("float32")}});
  pb_test::check_against_independent(c, 8, [](const auto& ts) {
    const auto x = logical(pr::find_tensor(ts, "x"));
    std::vector<double> y(x.size() / 2);
    for (std::size_t r = 0; r < 10; ++r) {
      for (std::size_t j = 0; j < 64; ++j) y[r * 64 + j] = silu(x[r * 128 + j]) * x[r * 128 + 64 + j];
    }
    return out_map{{"y", y}};
  });
  const auto sc = cfg("swiglu", {{"batch", I(2)}, {"seq_len", I(5)}, {"hidden_size", I(64)}, {"dtype", S("float32")}});
  const auto& sm = pr::find_operator("silu_and_mul");
  const auto& sw = pr::find_operator("swiglu");
  auto a = pr::make_inputs(sm, c, 8);
  auto b = pr::make_inputs(sw, sc, 8);
  // Copy the halves of silu_and_mul's x into swiglu's a and b.
  const auto x = logical(pr::find_tensor(a, "x"));
  auto& ta = pr::find_tensor(b, "a");
  auto& tb = pr::find_tensor(b, "b");
  for (std::int64_t r = 0; r < 10; ++r) {
    for (std::int64_t j = 0; j < 64; ++j) {
      pr::store_element(ta.bytes.data(), ta.spec.type, r * 64 + j, x[static_cast<std::size_t>(r * 128 + j)]);
      pr::store_element(tb.bytes.data(), tb.spec.type, r * 64 + j, x[static_cast<std::size_t>(r * 128 + 64 + j)]);
    }
  }
  sm.write_reference(c, a, 1);
  sw.write_reference(sc, b, 1);
  EXPECT_EQ(pr::find_tensor(a, "y").bytes, pr::find_tensor(b, "c").bytes);
}

TEST(swiglu, matches_loop) {
  pb_test::check_against_independent(
      cfg("swiglu", {{"batch", I(3)}, {"seq_len", I(7)}, {"hidden_size", I(100)}, {"dtype", S("bfloat16")}}), 2,
      [](const auto& ts) {
        const auto a = logical(pr::find_tensor(ts, "a")), b = logical(pr::find_tensor(ts, "b"));
        std::vector<double> c(a.size());
        for (std::size_t i = 0; i < a.size(); ++i) c[i] = silu(a[i]) * b[i];
        return out_map{{"c", c}};
      });
}

TEST(rope, matches_loop_on_the_transposed_views) {
  const std::int64_t B = 2, S_ = 3, HQ = 4, HK = 2, D = 32, RD = 16;
  const auto c = cfg("rope", {{"bsz", I(B)}, {"seq_len", I(S_)}, {"num_q_heads", I(HQ)}, {"num_kv_heads", I(HK)},
                              {"head_dim", I(D)}, {"partial_rotary_factor", 0.5}, {"dtype", S("float32")}});
  const auto& op = pr::find_operator("rope");
  const auto specs = op.tensors(c);
  EXPECT_FALSE(specs[0].is_contiguous());  // q is a [B,H,S,D] view of [B,S,H,D]
  EXPECT_EQ(specs[0].strides, (std::vector<std::int64_t>{S_ * HQ * D, D, HQ * D, 1}));
  pb_test::check_against_independent(c, 4, [&](const auto& ts) {
    out_map out;
    const auto cs = logical(pr::find_tensor(ts, "cos")), sn = logical(pr::find_tensor(ts, "sin"));
    for (const char* name : {"q", "k"}) {
      const std::int64_t H = std::string(name) == "q" ? HQ : HK;
      const auto x = logical(pr::find_tensor(ts, name));  // logical [B,H,S,D]
      std::vector<double> y(x.size());
      for (std::int64_t b = 0; b < B; ++b)
        for (std::int64_t h = 0; h < H; ++h)
          for (std::int64_t s = 0; s < S_; ++s)
            for (std::int64_t d = 0; d < D; ++d) {
              const auto at = [&](std::int64_t dd) { return x[static_cast<std::size_t>(((b * H + h) * S_ + s) * D + dd)]; };
              double v = at(d);
              if (d < RD) {
                const double rot = d < RD / 2 ? -at(d + RD / 2) : at(d - RD / 2);
                v = at(d) * cs[static_cast<std::size_t>((b * S_ + s) * RD + d)] + rot * sn[static_cast<std::size_t>((b * S_ + s) * RD + d)];
              }
              y[static_cast<std::size_t>(((b * H + h) * S_ + s) * D + d)] = v;
            }
      out[name] = y;
    }
    return out;
  });
}

TEST(rope, in_place_needs_the_seed_and_cos_sin_are_rotations) {
  const auto c = cfg("rope", {{"bsz", I(1)}, {"seq_len", I(4)}, {"num_q_heads", I(2)}, {"num_kv_heads", I(2)},
                              {"head_dim", I(8)}, {"dtype", S("float32")}});
  const auto& op = pr::find_operator("rope");
  auto ts = pr::make_inputs(op, c, 6);
  const auto cs = logical(pr::find_tensor(ts, "cos")), sn = logical(pr::find_tensor(ts, "sin"));
  int not_identity = 0;
  for (std::size_t i = 0; i < cs.size(); ++i) {
    EXPECT_NEAR(cs[i] * cs[i] + sn[i] * sn[i], 1.0, 1e-6);
    not_identity += std::abs(sn[i]) > 1e-3;
  }
  EXPECT_GT(not_identity, 0);  // never position 0, where rope is the identity
  // HF's tables are cat(freqs, freqs): each row's halves are equal, which tilegym's kernel and
  // the cuTile Rust port rely on (they read the first half only). head_dim 8: rows of 8, halves of 4.
  for (std::size_t row = 0; row < cs.size() / 8; ++row) {
    for (std::size_t j = 0; j < 4; ++j) {
      EXPECT_EQ(cs[row * 8 + j], cs[row * 8 + 4 + j]) << "cos row " << row << " column " << j;
      EXPECT_EQ(sn[row * 8 + j], sn[row * 8 + 4 + j]) << "sin row " << row << " column " << j;
    }
  }
  EXPECT_NE(cs[0], cs[1]);  // and the frequencies differ along a half
  op.write_reference(c, ts, 1);
  const auto no_seed = op.verify(c, ts);
  EXPECT_EQ(pr::judge_all(no_seed, {}).verdict, "NOT_CHECKED");
  const auto with_seed = pb_test::verify(op, c, ts, 6);
  EXPECT_EQ(pr::judge_all(with_seed, {}).verdict, "PASS");
  // Not rotating at all (the output left as the input) fails.
  const auto fresh = pr::make_inputs(op, c, 6);
  const auto untouched = pb_test::verify(op, c, fresh, 6);
  EXPECT_EQ(pr::judge_all(untouched, with_seed).verdict, "FAIL");
}

TEST(splitk_reduce, matches_loop_and_one_split_is_identity) {
  const auto c = cfg("splitk_reduce", {{"batch", I(1)}, {"num_heads", I(3)}, {"head_dim", I(16)}, {"num_kv_splits", I(5)},
                                       {"S_kv", I(100)}, {"dtype", S("float32")}});
  pb_test::check_against_independent(c, 1, [](const auto& ts) {
    const auto o = logical(pr::find_tensor(ts, "partial_o")), l = logical(pr::find_tensor(ts, "lse"));
    std::vector<double> y(3 * 16, 0.0);
    for (int h = 0; h < 3; ++h) {
      double den = 0;
      for (int s = 0; s < 5; ++s) den += std::pow(2.0, l[h * 5 + s]);
      for (int d = 0; d < 16; ++d) {
        for (int s = 0; s < 5; ++s) y[h * 16 + d] += std::pow(2.0, l[h * 5 + s]) / den * o[(h * 5 + s) * 16 + d];
      }
    }
    return out_map{{"o", y}};
  });
  const auto one = cfg("splitk_reduce", {{"batch", I(2)}, {"num_heads", I(2)}, {"head_dim", I(8)}, {"num_kv_splits", I(1)},
                                         {"S_kv", I(9)}, {"dtype", S("float16")}});
  const auto& op = pr::find_operator("splitk_reduce");
  auto ts = pr::make_inputs(op, one, 3);
  op.write_reference(one, ts, 1);
  EXPECT_EQ(pr::find_tensor(ts, "o").bytes, pr::find_tensor(ts, "partial_o").bytes);
}

TEST(dropout, statistics_eval_identity_and_mask_formula) {
  const auto c = cfg("dropout", {{"m", I(100000)}, {"p", 0.3}, {"inplace", false}, {"dtype", S("float16")}});
  const auto& op = pr::find_operator("dropout");
  auto ts = pr::make_inputs(op, c, 4);
  op.write_reference(c, ts, 2);
  const auto x = logical(pr::find_tensor(ts, "x")), y = logical(pr::find_tensor(ts, "y"));
  std::size_t zeros = 0;
  for (std::size_t i = 0; i < y.size(); ++i) {
    ASSERT_NE(x[i], 0.0);
    if (y[i] == 0) {
      ++zeros;
    } else {
      ASSERT_NEAR(y[i], x[i] / 0.7, 2e-3 * std::abs(y[i]));
    }
  }
  EXPECT_NEAR(static_cast<double>(zeros) / static_cast<double>(y.size()), 0.3, 0.01);
  const auto ok = pb_test::verify(op, c, ts, 4);
  EXPECT_EQ(pr::judge_all(ok, {}).verdict, "PASS") << pr::judge_all(ok, {}).reason;
  EXPECT_NE(ok[0].note.find("100000 of 100000"), std::string::npos) << ok[0].note;  // cuTile's mask
  // Keeping everything (no dropout) fails on the ratio; so does scaling kept values wrongly.
  auto all_kept = ts;
  auto& yk = pr::find_tensor(all_kept, "y");
  for (std::int64_t i = 0; i < 100000; ++i) pr::store_element(yk.bytes.data(), yk.spec.type, i, x[static_cast<std::size_t>(i)] / 0.7);
  EXPECT_EQ(pr::judge_all(pb_test::verify(op, c, all_kept, 4), ok).verdict, "FAIL");
  auto unscaled = ts;
  auto& yu = pr::find_tensor(unscaled, "y");
  for (std::int64_t i = 0; i < 100000; ++i) {
    if (y[static_cast<std::size_t>(i)] != 0) pr::store_element(yu.bytes.data(), yu.spec.type, i, x[static_cast<std::size_t>(i)]);
  }
  EXPECT_EQ(pr::judge_all(pb_test::verify(op, c, unscaled, 4), ok).verdict, "FAIL");
  // Eval mode: the identity, exactly.
  const auto ev = cfg("dropout", {{"m", I(1000)}, {"p", 0.3}, {"training", false}, {"dtype", S("float32")}});
  auto e = pr::make_inputs(op, ev, 4);
  op.write_reference(ev, e, 1);
  EXPECT_EQ(pr::find_tensor(e, "x").bytes, pr::find_tensor(e, "y").bytes);
}
