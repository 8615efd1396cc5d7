// SPDX-License-Identifier: Apache-2.0
// The tolerance model accepts a correctly rounded output and rejects a perturbed one; nothing
// checked is never a pass; NaN always fails; exact checks need bad == 0.
#include <gtest/gtest.h>

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

TEST(tolerance, missing_reference_report_falls_back_to_upstream) {
  const auto good = report_of({1.0, 2.0}, {1.0, 2.001}, pr::dtype::f16);
  const auto bad = report_of({1.0, 2.5}, {1.0, 2.0}, pr::dtype::f16);
  EXPECT_EQ(pr::judge(good, pr::compare_report{}, pr::dtype::f16), "PASS");
  EXPECT_EQ(pr::judge(bad, pr::compare_report{}, pr::dtype::f16), "FAIL");
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
  EXPECT_EQ(pr::judge_all(ref, ref).verdict, "PASS");
  auto& y = pr::find_tensor(ts, "y");
  const double v = pr::load_element(y.bytes.data(), y.spec.type, 777);
  pr::store_element(y.bytes.data(), y.spec.type, 777, v * 1.05 + 0.2);  // also outside atol 5e-2
  const auto port = pb_test::verify(op, c, ts, 3);
  const auto j = pr::judge_all(port, ref);
  EXPECT_EQ(j.verdict, "FAIL") << j.reason;
  EXPECT_EQ(port[0].first_bad_index, 777);
}
