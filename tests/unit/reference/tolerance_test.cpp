// SPDX-License-Identifier: Apache-2.0
// The tolerance model accepts a correctly rounded output and rejects a perturbed one; nothing
// checked is never a pass; NaN always fails; exact checks need bad == 0.
#include <gtest/gtest.h>

#include <cmath>

#include "portbench/reference/compare.hpp"
#include "portbench/reference/half.hpp"
#include "portbench/reference/random.hpp"
#include "portbench/reference/tolerance.hpp"
#include "test_util.hpp"

namespace pr = portbench::reference;
using pb_test::cfg;
using pb_test::I;
using pb_test::S;

namespace {

pr::compare_report report_of(const std::vector<double>& got, const std::vector<double>& want, pr::dtype t) {
  pr::error_accumulator a(t, pr::default_tolerance(t));
  for (std::size_t i = 0; i < got.size(); ++i) a.add(static_cast<std::int64_t>(i), got[i], want[i], 1.0);
  return a.report("y", "all", static_cast<std::int64_t>(got.size()));
}

}  // namespace

TEST(tolerance, correctly_rounded_scores_at_most_half) {
  pr::sample_rng rng(7);
  std::vector<double> want(4096), got(4096);
  for (std::size_t i = 0; i < want.size(); ++i) {
    want[i] = rng.unit() * 4 - 1;
    got[i] = pr::round_to(pr::dtype::f16, want[i]);
  }
  const auto r = report_of(got, want, pr::dtype::f16);
  EXPECT_EQ(r.checked, 4096);
  EXPECT_LE(r.max_norm_err, 0.5);
  EXPECT_GT(r.max_norm_err, 0.1);  // fp16 rounding is visible in the metric
  EXPECT_EQ(r.bad, 0);
  EXPECT_EQ(pr::judge(r, r, pr::dtype::f16), "PASS");
}

TEST(tolerance, rejects_perturbed_and_accepts_rounded) {
  pr::sample_rng rng(11);
  std::vector<double> want(4096), rounded(4096);
  for (std::size_t i = 0; i < want.size(); ++i) {
    want[i] = rng.unit() * 2 + 0.1;
    rounded[i] = pr::round_to(pr::dtype::bf16, want[i]);
  }
  const auto ref = report_of(rounded, want, pr::dtype::bf16);
  // One element off by 16 ulps fails; the same error spread as 1-ulp noise passes.
  auto one_bad = rounded;
  one_bad[1234] += 16 * pr::machine_epsilon(pr::dtype::bf16) * std::abs(want[1234]);
  const auto p1 = report_of(one_bad, want, pr::dtype::bf16);
  EXPECT_EQ(pr::judge(p1, ref, pr::dtype::bf16), "FAIL");
  auto noisy = rounded;
  for (std::size_t i = 0; i < noisy.size(); i += 2) {
    noisy[i] = pr::round_to(pr::dtype::bf16, want[i] * (1 + pr::machine_epsilon(pr::dtype::bf16)));
  }
  EXPECT_EQ(pr::judge(report_of(noisy, want, pr::dtype::bf16), ref, pr::dtype::bf16), "PASS");
  // Uniformly 3 ulps off: within the max floor, but over the rms floor -> FAIL.
  auto biased = want;
  for (auto& v : biased) v = v * (1 + 3 * pr::machine_epsilon(pr::dtype::bf16));
  EXPECT_EQ(pr::judge(report_of(biased, want, pr::dtype::bf16), ref, pr::dtype::bf16), "FAIL");
}

TEST(tolerance, relative_to_the_reference_front_end) {
  // A reference front end with 20-unit errors (e.g. tf32): a port with 30 passes, 200 fails.
  pr::sample_rng rng(5);
  std::vector<double> want(1000), ref(1000), port_ok(1000), port_bad(1000);
  const double eps = pr::machine_epsilon(pr::dtype::f32);
  for (std::size_t i = 0; i < want.size(); ++i) {
    want[i] = rng.unit() + 1;
    const double sgn = (i % 2) ? 1 : -1;
    ref[i] = want[i] * (1 + sgn * 20 * eps * rng.unit());
    port_ok[i] = want[i] * (1 + sgn * 30 * eps * rng.unit());
    port_bad[i] = want[i] * (1 + sgn * 200 * eps * rng.unit());
  }
  const auto r = report_of(ref, want, pr::dtype::f32);
  EXPECT_EQ(pr::judge(report_of(port_ok, want, pr::dtype::f32), r, pr::dtype::f32), "PASS");
  EXPECT_EQ(pr::judge(report_of(port_bad, want, pr::dtype::f32), r, pr::dtype::f32), "FAIL");
}

TEST(tolerance, nothing_checked_is_not_a_pass) {
  pr::compare_report empty;
  empty.tensor = "y";
  EXPECT_EQ(pr::judge(empty, empty, pr::dtype::f16), "NOT_CHECKED");
  EXPECT_EQ(pr::judge_upstream(empty).verdict, "NOT_CHECKED");
  EXPECT_EQ(pr::judge_all({}, {}).verdict, "NOT_CHECKED");
  const auto ok = report_of({1.0}, {1.0}, pr::dtype::f16);
  EXPECT_EQ(pr::judge_all({ok, empty}, {ok, empty}).verdict, "NOT_CHECKED");
}

TEST(tolerance, nan_fails_even_against_a_nan_reference_front_end) {
  const auto port = report_of({1.0, NAN}, {1.0, 2.0}, pr::dtype::f16);
  EXPECT_EQ(port.nonfinite, 1);
  EXPECT_EQ(pr::judge(port, port, pr::dtype::f16), "FAIL");
  // NaN in the fp64 reference too: not an error (upstream copies reference NaNs).
  const auto both = report_of({1.0, NAN}, {1.0, NAN}, pr::dtype::f16);
  EXPECT_EQ(both.bad, 0);
}

TEST(tolerance, missing_reference_report_judges_against_fp64_alone) {
  const auto good = report_of({1.0, 2.0}, {1.0, 2.001}, pr::dtype::f16);
  const auto bad = report_of({1.0, 2.5}, {1.0, 2.0}, pr::dtype::f16);
  EXPECT_EQ(pr::judge(good, pr::compare_report{}, pr::dtype::f16), "PASS");
  EXPECT_EQ(pr::judge(bad, pr::compare_report{}, pr::dtype::f16), "FAIL");
}

namespace {

// Products of two values of `t` with fp32 accumulation of one term (exact), as a GEMM with a
// short K or an elementwise kernel computes them, many of them near zero: |a| spans four
// decades, b is of order one and of both signs. Returns the fp64 products.
std::vector<double> products_near_zero(pr::dtype t, std::size_t n, std::uint64_t seed) {
  pr::sample_rng rng(seed);
  std::vector<double> out(n);
  for (auto& v : out) {
    const double a = pr::round_to(t, std::pow(10.0, -4 * rng.unit()) * (rng.unit() < 0.5 ? -1 : 1));
    const double b = pr::round_to(t, 2 * rng.unit() - 1);
    v = a * b;
  }
  return out;
}

// The report of `got` against `want` under bmm's upstream tolerance (atol 1e-8, rtol 1e-3),
// which upstream applies against torch's result in the same dtype, never against fp64.
pr::compare_report bmm_like_report(const std::vector<double>& got, const std::vector<double>& want, pr::dtype t) {
  pr::error_accumulator a(t, {1e-8, 1e-3});
  const double s = pr::rms_of(want.data(), static_cast<std::int64_t>(want.size()));
  for (std::size_t i = 0; i < got.size(); ++i) a.add(static_cast<std::int64_t>(i), got[i], want[i], s);
  return a.report("c", "all", static_cast<std::int64_t>(got.size()));
}

std::uint32_t bits_of(pr::dtype t, double v) {
  return t == pr::dtype::f16 ? pr::fp16_from_double(v) : pr::bf16_from_double(v);
}
double value_of(pr::dtype t, std::uint32_t bits) {
  return t == pr::dtype::f16 ? pr::fp16_to_double(static_cast<std::uint16_t>(bits))
                             : pr::bf16_to_double(static_cast<std::uint16_t>(bits));
}

}  // namespace

// Without a reference front end (the reference itself is checked), an output correctly rounded
// to fp16/bf16 from fp64 passes even where upstream's tight rtol counts rounding as an error,
// and a single flipped bit in one computed value near zero still fails.
TEST(tolerance, rounding_rule_accepts_output_rounding_and_rejects_one_flipped_bit) {
  for (const pr::dtype t : {pr::dtype::f16, pr::dtype::bf16}) {
    SCOPED_TRACE(std::string(pr::to_string(t)));
    const auto want = products_near_zero(t, 8192, 21);
    std::vector<double> rounded(want.size());
    for (std::size_t i = 0; i < want.size(); ++i) rounded[i] = pr::round_to(t, want[i]);
    const auto ok = bmm_like_report(rounded, want, t);
    EXPECT_GT(ok.bad, 0) << "upstream's rtol 1e-3 should count some correctly rounded values as bad";
    EXPECT_EQ(ok.beyond_rounding, 0);
    EXPECT_EQ(pr::judge(ok, pr::compare_report{}, t), "PASS") << pr::judge_report(ok, pr::compare_report{}).reason;

    // A value near zero but above the accumulation noise, at a hundredth of the rms, one bit
    // flipped: the sign; the lowest mantissa bit but one; the lowest exponent bit.
    const double s = pr::rms_of(want.data(), static_cast<std::int64_t>(want.size()));
    std::size_t near = 0;
    for (std::size_t i = 0; i < want.size(); ++i) {
      if (std::abs(std::abs(rounded[i]) - 0.01 * s) < std::abs(std::abs(rounded[near]) - 0.01 * s)) near = i;
    }
    ASSERT_LT(std::abs(rounded[near]), 0.02 * s);
    const int mantissa_bits = t == pr::dtype::f16 ? 10 : 7;
    for (const std::uint32_t flip : {0x8000u, 1u << 1, 1u << mantissa_bits}) {
      SCOPED_TRACE("flip 0x" + std::to_string(flip));
      auto broken = rounded;
      broken[near] = value_of(t, bits_of(t, rounded[near]) ^ flip);
      const auto r = bmm_like_report(broken, want, t);
      EXPECT_EQ(r.beyond_rounding, 1);
      EXPECT_EQ(pr::judge(r, pr::compare_report{}, t), "FAIL");
    }
  }
}

// An fp32 GEMM through tf32 tensor cores is 2^12 fp32 ulps from fp64: the operator names its
// computation's roundoff and the rule allows that, not more.
TEST(tolerance, rounding_rule_uses_the_computations_roundoff) {
  pr::sample_rng rng(3);
  std::vector<double> want(2048), tf32_like(2048), wrong(2048);
  for (std::size_t i = 0; i < want.size(); ++i) {
    want[i] = 2 * rng.unit() - 1;
    tf32_like[i] = pr::round_to(pr::dtype::f32, want[i] * (1 + 0x1.0p-11 * (2 * rng.unit() - 1)));
    wrong[i] = tf32_like[i];
  }
  wrong[100] = want[100] + 0.05;   // 100 units of tf32 roundoff at the unit's scale
  auto report = [&](const std::vector<double>& got, double compute_eps) {
    pr::error_accumulator a(pr::dtype::f32, {1e-8, 1e-5, compute_eps});
    for (std::size_t i = 0; i < got.size(); ++i) a.add(static_cast<std::int64_t>(i), got[i], want[i], 0.5);
    return a.report("c", "all", static_cast<std::int64_t>(got.size()));
  };
  EXPECT_EQ(pr::judge(report(tf32_like, 0x1.0p-11), pr::compare_report{}, pr::dtype::f32), "PASS");
  EXPECT_EQ(pr::judge(report(tf32_like, 0), pr::compare_report{}, pr::dtype::f32), "FAIL");
  EXPECT_EQ(pr::judge(report(wrong, 0x1.0p-11), pr::compare_report{}, pr::dtype::f32), "FAIL");
}

TEST(tolerance, model_floor_depends_on_the_output_dtype) {
  const auto f16 = pr::tolerance_model::for_dtype(pr::dtype::f16);
  const auto f32 = pr::tolerance_model::for_dtype(pr::dtype::f32);
  const auto f8 = pr::tolerance_model::for_dtype(pr::dtype::f8e4m3);
  EXPECT_GT(f32.max_floor, f16.max_floor);
  EXPECT_LT(f8.max_floor, f16.max_floor);
  // A port 8 fp32 units off against a near-exact reference front end: noise in fp32, 8 ulps in fp16.
  pr::compare_report ref, port;
  ref.checked = port.checked = 10;
  ref.max_norm_err = ref.rms_norm_err = 0.3;
  port.max_norm_err = 8;
  port.rms_norm_err = 2;
  port.type = ref.type = pr::dtype::f32;
  EXPECT_EQ(pr::judge(port, ref, pr::dtype::f32), "PASS");
  port.type = ref.type = pr::dtype::f16;
  EXPECT_EQ(pr::judge(port, ref, pr::dtype::f16), "FAIL");
}

TEST(tolerance, exact_method) {
  pr::error_accumulator a(pr::dtype::i32, {});
  a.add_verdict(0, true);
  auto r = a.report("ids", "exact", 2);
  EXPECT_EQ(pr::judge(r, r, pr::dtype::i32), "PASS");
  a.add_verdict(1, false);
  r = a.report("ids", "exact", 2);
  EXPECT_EQ(pr::judge(r, r, pr::dtype::i32), "FAIL");
  EXPECT_EQ(r.first_bad_index, 1);
}

TEST(tolerance, verify_then_judge_on_an_operator) {
  const auto c = cfg("rms_norm", {{"m", I(64)}, {"n", I(256)}, {"dtype", S("float16")}});
  const auto& op = pr::find_operator("rms_norm");
  auto ts = pr::make_inputs(op, c, 3);
  op.write_reference(c, ts, 2);
  const auto ref = pb_test::verify(op, c, ts, 3);
  EXPECT_EQ(pr::judge_all(ref, {}).verdict, "PASS");
  auto& y = pr::find_tensor(ts, "y");
  const double v = pr::load_element(y.bytes.data(), y.spec.type, 777);
  pr::store_element(y.bytes.data(), y.spec.type, 777, v * 1.05 + 0.2);  // also outside atol 5e-2
  const auto port = pb_test::verify(op, c, ts, 3);
  const auto j = pr::judge_all(port, ref);
  EXPECT_EQ(j.verdict, "FAIL") << j.reason;
  EXPECT_EQ(port[0].first_bad_index, 777);
}

// A long fp16/bf16 product sum compiled by tileiras: an element that cancels to about 1 against
// terms summing to thousands is, on the H200, about one fp16 unit of the row's scale from fp64
// (tilegym's bmm and its port alike: 0.064 at k = 8192; cuBLAS stays within 6e-4). bmm's rule
// accepts that through the size of the terms, says so, and still fails a flipped sign or
// exponent bit of such an element. The inputs are the operator's own (real fp16/bf16 values),
// the whole 32 x 32 output is checked.
TEST(tolerance, long_product_sums_allow_tileiras_accumulation_and_reject_a_flipped_bit) {
  for (const char* type : {"float16", "bfloat16"}) {
    SCOPED_TRACE(type);
    const auto c = cfg("bmm", {{"batch", I(1)}, {"m", I(32)}, {"n", I(32)}, {"k", I(8192)}, {"dtype", S(type)}});
    const auto& op = pr::find_operator("bmm");
    auto ts = pr::make_inputs(op, c, 11);
    const auto& a = pr::find_tensor(ts, "a");
    const auto& b = pr::find_tensor(ts, "b");
    auto& out = pr::find_tensor(ts, "c");
    const pr::dtype t = out.spec.type;
    std::vector<double> want(32 * 32), terms(32 * 32);
    for (std::int64_t i = 0; i < 32; ++i) {
      for (std::int64_t j = 0; j < 32; ++j) {
        double sum = 0, abs_sum = 0;
        for (std::int64_t k = 0; k < 8192; ++k) {
          const double p = pr::load_element(a.bytes.data(), a.spec.type, i * 8192 + k) *
                           pr::load_element(b.bytes.data(), b.spec.type, k * 32 + j);
          sum += p;
          abs_sum += std::abs(p);
        }
        want[static_cast<std::size_t>(i * 32 + j)] = sum;
        terms[static_cast<std::size_t>(i * 32 + j)] = abs_sum;
      }
    }
    const double s = pr::rms_of(want.data(), static_cast<std::int64_t>(want.size()));
    ASSERT_GT(s, 50.0) << "k = 8192 with the fill's positive mean: outputs around 80";
    // The H200's error: 0.7 fp16 units of the scale, either sign, on every element.
    pr::sample_rng rng(5);
    std::vector<double> h200(want.size());
    for (std::size_t i = 0; i < want.size(); ++i) {
      h200[i] = pr::round_to(t, want[i] + (rng.unit() < 0.5 ? -1 : 1) * 0.7 * 0x1.0p-10 * s);
      pr::store_element(out.bytes.data(), t, static_cast<std::int64_t>(i), h200[i]);
    }
    // The element nearest to 1 in size (a cancelled sum, ulp 2^-10 in fp16) carries the test.
    std::size_t near = 0;
    for (std::size_t i = 0; i < want.size(); ++i) {
      if (std::abs(std::abs(want[i]) - 1.5) < std::abs(std::abs(want[near]) - 1.5)) near = i;
    }
    ASSERT_LT(std::abs(want[near]), 4.0) << "no cancelled element in the sample";

    // Elementwise, without the terms' size the error near zero is beyond rounding; with it, not.
    auto accumulate = [&](const std::vector<double>& got, double per_term) {
      pr::error_accumulator acc(t, {1e-8, 1e-3});
      for (std::size_t i = 0; i < got.size(); ++i) {
        acc.add(static_cast<std::int64_t>(i), got[i], want[i], s, per_term * terms[i]);
      }
      return acc.report("c", "all", static_cast<std::int64_t>(got.size()));
    };
    EXPECT_GT(accumulate(h200, 0).beyond_rounding, 0);
    const auto within = accumulate(h200, 0x1.0p-13);
    EXPECT_EQ(within.beyond_rounding, 0);
    EXPECT_GT(within.within_accumulation_only, 0);

    // Through the operator: PASS against fp64 alone; a flipped sign or lowest exponent bit of
    // the cancelled element FAIL.
    const auto ok = pb_test::verify(op, c, ts, 3);
    const auto j = pr::judge_all(ok, {});
    EXPECT_EQ(j.verdict, "PASS") << j.reason;
    EXPECT_NE(j.reason.find("accumulation bound"), std::string::npos) << "the verdict says what it accepted: " << j.reason;
    const int mantissa_bits = t == pr::dtype::f16 ? 10 : 7;
    for (const std::uint32_t flip : {0x8000u, 1u << mantissa_bits}) {
      SCOPED_TRACE("flip " + std::to_string(flip));
      auto broken = ts;
      const double v = value_of(t, bits_of(t, h200[near]) ^ flip);
      pr::store_element(pr::find_tensor(broken, "c").bytes.data(), t, static_cast<std::int64_t>(near), v);
      const auto bad = pb_test::verify(op, c, broken, 3);
      const auto jb = pr::judge_all(bad, {});
      EXPECT_EQ(jb.verdict, "FAIL") << jb.reason;
    }
  }
}

// The accumulation allowance never exceeds fp32 summation's worst case, gamma_k = k 2^-24: a
// short product (k = 64, gamma = 2^-18) 2^-14 of its terms' size from fp64 fails.
TEST(tolerance, the_accumulation_allowance_is_capped_by_fp32_summations_worst_case) {
  const auto c = cfg("bmm", {{"batch", I(1)}, {"m", I(32)}, {"n", I(32)}, {"k", I(64)}, {"dtype", S("float16")}});
  const auto& op = pr::find_operator("bmm");
  auto ts = pr::make_inputs(op, c, 13);
  op.write_reference(c, ts, 2);
  const auto& a = pr::find_tensor(ts, "a");
  const auto& b = pr::find_tensor(ts, "b");
  auto& out = pr::find_tensor(ts, "c");
  // The element with the smallest |C| against its terms' size.
  std::int64_t worst = 0;
  double worst_ratio = 1e300, worst_want = 0, worst_terms = 0;
  for (std::int64_t i = 0; i < 32 * 32; ++i) {
    double sum = 0, abs_sum = 0;
    for (std::int64_t k = 0; k < 64; ++k) {
      const double p = pr::load_element(a.bytes.data(), a.spec.type, (i / 32) * 64 + k) *
                       pr::load_element(b.bytes.data(), b.spec.type, k * 32 + i % 32);
      sum += p;
      abs_sum += std::abs(p);
    }
    if (std::abs(sum) / abs_sum < worst_ratio) worst = i, worst_ratio = std::abs(sum) / abs_sum, worst_want = sum, worst_terms = abs_sum;
  }
  EXPECT_EQ(pr::judge_all(pb_test::verify(op, c, ts, 3), {}).verdict, "PASS");
  pr::store_element(out.bytes.data(), out.spec.type, worst, worst_want + 0x1.0p-14 * worst_terms);
  const auto j = pr::judge_all(pb_test::verify(op, c, ts, 3), {});
  EXPECT_EQ(j.verdict, "FAIL") << j.reason;
}
