// SPDX-License-Identifier: Apache-2.0
// vector_add and rms_norm against straightforward loops, plus identities.
#include <gtest/gtest.h>

#include <cmath>

#include "portbench/reference/tolerance.hpp"
#include "test_util.hpp"

namespace pr = portbench::reference;
using pb_test::cfg;
using pb_test::I;
using pb_test::logical;
using pb_test::S;

TEST(vector_add, matches_loop) {
  for (const char* t : {"float32", "float16", "bfloat16"}) {
    pb_test::check_against_independent(
        cfg("vector_add", {{"n", I(100003)}, {"dtype", S(t)}}), 1, [](const std::vector<pr::host_tensor>& ts) {
          const auto x = logical(pr::find_tensor(ts, "x")), y = logical(pr::find_tensor(ts, "y"));
          std::vector<double> out(x.size());
          for (std::size_t i = 0; i < x.size(); ++i) out[i] = x[i] + y[i];
          return std::map<std::string, std::vector<double>>{{"out", out}};
        });
  }
}

TEST(vector_add, detects_an_unwritten_tail) {
  const auto c = cfg("vector_add", {{"n", I(70000)}, {"dtype", S("float32")}});
  const auto& op = pr::find_operator("vector_add");
  auto ts = pr::make_inputs(op, c, 9);
  op.write_reference(c, ts, 2);
  const auto ref = pb_test::verify(op, c, ts, 9);
  auto& out = pr::find_tensor(ts, "out");
  for (std::int64_t i = 69990; i < 70000; ++i) pr::store_element(out.bytes.data(), out.spec.type, i, 0.0);
  const auto port = pb_test::verify(op, c, ts, 9);
  EXPECT_EQ(port[0].checked, 70000);
  EXPECT_EQ(port[0].bad, 10);
  EXPECT_EQ(port[0].first_bad_index, 69990);
  EXPECT_EQ(pr::judge_all(port, ref).verdict, "FAIL");
}

TEST(vector_add, inputs_are_seeded_and_not_zero) {
  const auto c = cfg("vector_add", {{"n", I(4096)}, {"dtype", S("float16")}});
  const auto& op = pr::find_operator("vector_add");
  const auto a = pr::make_inputs(op, c, 1), b = pr::make_inputs(op, c, 1), d = pr::make_inputs(op, c, 2);
  EXPECT_EQ(a[0].bytes, b[0].bytes);
  EXPECT_NE(a[0].bytes, d[0].bytes);
  const auto x = logical(a[0]);
  double mean = 0;
  int zeros = 0;
  for (double v : x) {
    mean += v;
    zeros += v == 0.0;
  }
  EXPECT_LT(zeros, 10);
  EXPECT_GT(mean / static_cast<double>(x.size()), 0.3);  // not zero-mean
}

namespace {

std::map<std::string, std::vector<double>> rms_norm_loop(const std::vector<pr::host_tensor>& ts, std::int64_t m,
                                                         std::int64_t n, double eps) {
  const auto x = logical(pr::find_tensor(ts, "x")), w = logical(pr::find_tensor(ts, "w"));
  std::vector<double> y(x.size());
  for (std::int64_t i = 0; i < m; ++i) {
    long double ss = 0;
    for (std::int64_t j = 0; j < n; ++j) ss += x[i * n + j] * x[i * n + j];
    const double r = 1.0 / std::sqrt(static_cast<double>(ss / n) + eps);
    for (std::int64_t j = 0; j < n; ++j) y[i * n + j] = x[i * n + j] * r * w[j];
  }
  return {{"y", y}};
}

}  // namespace

TEST(rms_norm, matches_loop) {
  for (const char* t : {"float16", "bfloat16", "float32"}) {
    pb_test::check_against_independent(cfg("rms_norm", {{"m", I(33)}, {"n", I(768)}, {"dtype", S(t)}}), 4,
                                       [](const auto& ts) { return rms_norm_loop(ts, 33, 768, 1e-5); });
  }
  pb_test::check_against_independent(
      cfg("rms_norm", {{"m", I(7)}, {"n", I(100)}, {"dtype", S("float32")}, {"eps", 1e-2}}), 4,
      [](const auto& ts) { return rms_norm_loop(ts, 7, 100, 1e-2); });
}

TEST(rms_norm, invariant_to_scaling_its_input) {
  const auto c = cfg("rms_norm", {{"m", I(16)}, {"n", I(512)}, {"dtype", S("float32")}, {"eps", 0.0}});
  const auto& op = pr::find_operator("rms_norm");
  auto a = pr::make_inputs(op, c, 5);
  auto b = a;
  auto& xb = pr::find_tensor(b, "x");
  for (std::int64_t i = 0; i < xb.spec.storage_elements; ++i) {
    // Scaling by a power of two is exact, so the outputs must agree bit for bit.
    pr::store_element(xb.bytes.data(), xb.spec.type, i, 8.0 * pr::load_element(xb.bytes.data(), xb.spec.type, i));
  }
  op.write_reference(c, a, 2);
  op.write_reference(c, b, 2);
  EXPECT_EQ(pr::find_tensor(a, "y").bytes, pr::find_tensor(b, "y").bytes);
  // And b's output verifies against a's inputs' reference.
  auto mixed = a;
  pr::find_tensor(mixed, "y").bytes = pr::find_tensor(b, "y").bytes;
  const auto r = pb_test::verify(op, c, mixed, 5);
  EXPECT_EQ(pr::judge_all(r, {}).verdict, "PASS");
}
