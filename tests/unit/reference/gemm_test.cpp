// SPDX-License-Identifier: Apache-2.0
// matmul, bmm and group_gemm against a naive triple loop over every transpose; Freivalds' check
// catches an error the sampled tile misses; the cache serves the second verification.
#include <gtest/gtest.h>

#include "portbench/reference/cache.hpp"
#include "portbench/reference/tolerance.hpp"
#include "test_util.hpp"

namespace pr = portbench::reference;
using pb_test::cfg;
using pb_test::I;
using pb_test::logical;
using pb_test::S;
using out_map = std::map<std::string, std::vector<double>>;

namespace {

// C = op(A) op(B) from the stored (physical) arrays.
std::vector<double> naive_mm(const std::vector<double>& a, const std::vector<double>& b, std::int64_t m, std::int64_t n,
                             std::int64_t k, bool ta, bool tb) {
  std::vector<double> c(static_cast<std::size_t>(m * n), 0.0);
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (std::int64_t kk = 0; kk < k; ++kk) {
        const double av = ta ? a[static_cast<std::size_t>(kk * m + i)] : a[static_cast<std::size_t>(i * k + kk)];
        const double bv = tb ? b[static_cast<std::size_t>(j * k + kk)] : b[static_cast<std::size_t>(kk * n + j)];
        s += av * bv;
      }
      c[static_cast<std::size_t>(i * n + j)] = s;
    }
  return c;
}

}  // namespace

TEST(matmul, matches_naive_for_every_transpose_and_dtype) {
  for (bool ta : {false, true})
    for (bool tb : {false, true})
      for (const char* t : {"float16", "float32", "bfloat16"}) {
        const std::int64_t M = 33, N = 27, K = 45;
        pb_test::check_against_independent(
            cfg("matmul", {{"m", I(M)}, {"n", I(N)}, {"k", I(K)}, {"dtype", S(t)}, {"transpose_a", ta}, {"transpose_b", tb}}),
            2, [&](const auto& ts) {
              return out_map{{"c", naive_mm(logical(pr::find_tensor(ts, "a")), logical(pr::find_tensor(ts, "b")), M, N, K, ta, tb)}};
            });
      }
}

TEST(matmul, fp8_offsets_and_output_dtype) {
  const std::int64_t M = 16, N = 24, K = 64;
  const auto c = cfg("matmul", {{"m", I(M)}, {"n", I(N)}, {"k", I(K)}, {"dtype", S("float8_e4m3fn")}, {"offset_a", I(5)},
                                {"offset_b", I(3)}, {"out_dtype", S("float16")}});
  const auto& op = pr::find_operator("matmul");
  const auto specs = op.tensors(c);
  EXPECT_EQ(specs[0].offset, 5);
  EXPECT_EQ(specs[0].storage_elements, 5 + M * K);
  EXPECT_EQ(specs[2].type, pr::dtype::f16);
  pb_test::check_against_independent(c, 3, [&](const auto& ts) {
    // Logical reads follow the offset.
    return out_map{{"c", naive_mm(logical(pr::find_tensor(ts, "a")), logical(pr::find_tensor(ts, "b")), M, N, K, false, false)}};
  });
}

TEST(matmul, freivalds_catches_a_block_the_tile_misses) {
  const std::int64_t M = 256, N = 256, K = 64;
  const auto c = cfg("matmul", {{"m", I(M)}, {"n", I(N)}, {"k", I(K)}, {"dtype", S("float16")}});
  const auto& op = pr::find_operator("matmul");
  auto ts = pr::make_inputs(op, c, 4);
  op.write_reference(c, ts, 2);
  const auto ref = pb_test::verify(op, c, ts, 4);
  ASSERT_EQ(ref.size(), 2U);
  EXPECT_EQ(ref[0].method, "tile");
  EXPECT_EQ(ref[1].method, "freivalds");
  EXPECT_EQ(ref[1].checked, M);
  EXPECT_EQ(pr::judge_all(ref, {}).verdict, "PASS");
  // An 8 x 8 block written as zero (a tile a kernel skipped): rows the tile sampled or not,
  // Freivalds sees it.
  auto& out = pr::find_tensor(ts, "c");
  for (std::int64_t i = 100; i < 108; ++i)
    for (std::int64_t j = 40; j < 48; ++j) pr::store_element(out.bytes.data(), out.spec.type, i * N + j, 0.0);
  const auto port = pb_test::verify(op, c, ts, 4);
  EXPECT_EQ(pr::judge_report(port[1], ref[1]).verdict, "FAIL") << pr::judge_report(port[1], ref[1]).reason;
  EXPECT_EQ(pr::judge_all(port, ref).verdict, "FAIL");
  // An uncomputed output (zeros everywhere) fails both checks.
  std::fill(out.bytes.begin(), out.bytes.end(), std::byte{0});
  const auto zero = pb_test::verify(op, c, ts, 4);
  EXPECT_EQ(pr::judge_report(zero[0], ref[0]).verdict, "FAIL");
  EXPECT_EQ(pr::judge_report(zero[1], ref[1]).verdict, "FAIL");
}

TEST(matmul, cache_serves_the_second_verification) {
  const auto c = cfg("matmul", {{"m", I(300)}, {"n", I(200)}, {"k", I(100)}, {"dtype", S("float16")}});
  const auto& op = pr::find_operator("matmul");
  auto ts = pr::make_inputs(op, c, 4);
  op.write_reference(c, ts, 2);
  pr::reference_cache cache;
  pr::verify_options o;
  o.seed = 4;
  o.cache = &cache;
  const auto first = op.verify(c, ts, o);
  const auto second = op.verify(c, ts, o);
  EXPECT_EQ(cache.misses(), 1);
  EXPECT_EQ(cache.hits(), 1);
  ASSERT_EQ(first.size(), second.size());
  for (std::size_t i = 0; i < first.size(); ++i) {
    EXPECT_EQ(first[i].checked, second[i].checked);
    EXPECT_EQ(first[i].max_norm_err, second[i].max_norm_err);
  }
  // Other inputs under the same key are recomputed, not trusted.
  auto other = pr::make_inputs(op, c, 5);
  op.write_reference(c, other, 2);
  const auto third = op.verify(c, other, o);
  EXPECT_EQ(cache.misses(), 2);
  EXPECT_EQ(pr::judge_all(third, {}).verdict, "PASS");
}

TEST(bmm, matches_naive_for_every_transpose) {
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      const std::int64_t Q = 3, M = 20, N = 18, K = 30;
      pb_test::check_against_independent(
          cfg("bmm", {{"batch", I(Q)}, {"m", I(M)}, {"n", I(N)}, {"k", I(K)}, {"transpose_a", ta}, {"transpose_b", tb},
                      {"dtype", S("float16")}}),
          6, [&](const auto& ts) {
            const auto a = logical(pr::find_tensor(ts, "a")), b = logical(pr::find_tensor(ts, "b"));
            std::vector<double> c;
            for (std::int64_t q = 0; q < Q; ++q) {
              const std::vector<double> aq(a.begin() + q * M * K, a.begin() + (q + 1) * M * K);
              const std::vector<double> bq(b.begin() + q * K * N, b.begin() + (q + 1) * K * N);
              const auto cq = naive_mm(aq, bq, M, N, K, ta, tb);
              c.insert(c.end(), cq.begin(), cq.end());
            }
            return out_map{{"c", c}};
          });
    }
}

TEST(group_gemm, matches_naive_per_group) {
  for (bool tb : {false, true}) {
    const std::int64_t G = 3, M = 16, N = 20, K = 24;
    pb_test::check_against_independent(
        cfg("group_gemm", {{"num_groups", I(G)}, {"m", I(M)}, {"n", I(N)}, {"k", I(K)}, {"transpose_b", tb}, {"dtype", S("float16")}}),
        7, [&](const auto& ts) {
          out_map out;
          for (std::int64_t g = 0; g < G; ++g) {
            const auto s = std::to_string(g);
            out["c" + s] = naive_mm(logical(pr::find_tensor(ts, "a" + s)), logical(pr::find_tensor(ts, "b" + s)), M, N, K, false, tb);
          }
          return out;
        });
  }
}
