// SPDX-License-Identifier: Apache-2.0
// moe against a per-token loop; moe with one expert equals two GEMMs around silu_and_mul (built
// from the matmul and silu_and_mul operators); moe_align_block's buckets, padding and ordering.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "portbench/reference/tolerance.hpp"
#include "test_util.hpp"

namespace pr = portbench::reference;
using pb_test::cfg;
using pb_test::I;
using pb_test::logical;
using pb_test::S;
using out_map = std::map<std::string, std::vector<double>>;

TEST(moe, matches_per_token_loop) {
  const std::int64_t M = 10, H = 16, IS = 8, E = 5, TK = 2;
  pb_test::check_against_independent(
      cfg("moe", {{"num_tokens", I(M)}, {"hidden_size", I(H)}, {"moe_intermediate_size", I(IS)}, {"n_experts", I(E)},
                  {"top_k", I(TK)}, {"dtype", S("float32")}}),
      3, [&](const auto& ts) {
        const auto x = logical(pr::find_tensor(ts, "hidden_states")), w1 = logical(pr::find_tensor(ts, "w1")),
                   w2 = logical(pr::find_tensor(ts, "w2")), rw = logical(pr::find_tensor(ts, "topk_weights")),
                   ids = logical(pr::find_tensor(ts, "topk_ids"));
        std::vector<double> out(static_cast<std::size_t>(M * H), 0.0);
        for (std::int64_t t = 0; t < M; ++t) {
          std::vector<std::int64_t> seen;
          for (std::int64_t k = 0; k < TK; ++k) {
            const auto e = static_cast<std::int64_t>(ids[static_cast<std::size_t>(t * TK + k)]);
            EXPECT_EQ(std::count(seen.begin(), seen.end(), e), 0);  // distinct experts per token
            seen.push_back(e);
            std::vector<double> act(static_cast<std::size_t>(IS));
            for (std::int64_t j = 0; j < IS; ++j) {
              double g = 0, u = 0;
              for (std::int64_t c = 0; c < H; ++c) {
                g += w1[static_cast<std::size_t>((e * 2 * IS + j) * H + c)] * x[static_cast<std::size_t>(t * H + c)];
                u += w1[static_cast<std::size_t>((e * 2 * IS + IS + j) * H + c)] * x[static_cast<std::size_t>(t * H + c)];
              }
              act[static_cast<std::size_t>(j)] = g / (1 + std::exp(-g)) * u;
            }
            for (std::int64_t c = 0; c < H; ++c) {
              double s = 0;
              for (std::int64_t j = 0; j < IS; ++j) s += w2[static_cast<std::size_t>((e * H + c) * IS + j)] * act[static_cast<std::size_t>(j)];
              out[static_cast<std::size_t>(t * H + c)] += rw[static_cast<std::size_t>(t * TK + k)] * s;
            }
          }
        }
        return out_map{{"out", out}};
      });
}

TEST(moe, one_expert_equals_two_gemms_around_silu_and_mul) {
  const std::int64_t M = 6, H = 16, IS = 8;
  const auto mc = cfg("moe", {{"num_tokens", I(M)}, {"hidden_size", I(H)}, {"moe_intermediate_size", I(IS)},
                              {"n_experts", I(1)}, {"top_k", I(1)}, {"dtype", S("float32")}});
  const auto& moe = pr::find_operator("moe");
  auto mt = pr::make_inputs(moe, mc, 5);
  for (double w : logical(pr::find_tensor(mt, "topk_weights"))) ASSERT_EQ(w, 1.0);
  moe.write_reference(mc, mt, 1);

  // gate_up = h w1^T  (matmul with b = w1 stored [2I, H], transpose_b)
  const auto& mm = pr::find_operator("matmul");
  const auto g1 = cfg("matmul", {{"m", I(M)}, {"n", I(2 * IS)}, {"k", I(H)}, {"dtype", S("float32")}, {"transpose_b", true}});
  auto t1 = pr::make_inputs(mm, g1, 1);
  pr::find_tensor(t1, "a").bytes = pr::find_tensor(mt, "hidden_states").bytes;
  pr::find_tensor(t1, "b").bytes = pr::find_tensor(mt, "w1").bytes;
  mm.write_reference(g1, t1, 1);
  // act = silu(gate) * up
  const auto& sm = pr::find_operator("silu_and_mul");
  const auto sc = cfg("silu_and_mul", {{"batch", I(1)}, {"seq_len", I(M)}, {"hidden_size", I(IS)}, {"dtype", S("float32")}});
  auto t2 = pr::make_inputs(sm, sc, 1);
  pr::find_tensor(t2, "x").bytes = pr::find_tensor(t1, "c").bytes;
  sm.write_reference(sc, t2, 1);
  // out = act w2^T
  const auto g2 = cfg("matmul", {{"m", I(M)}, {"n", I(H)}, {"k", I(IS)}, {"dtype", S("float32")}, {"transpose_b", true}});
  auto t3 = pr::make_inputs(mm, g2, 1);
  pr::find_tensor(t3, "a").bytes = pr::find_tensor(t2, "y").bytes;
  pr::find_tensor(t3, "b").bytes = pr::find_tensor(mt, "w2").bytes;
  mm.write_reference(g2, t3, 1);

  const auto want = logical(pr::find_tensor(t3, "c")), got = logical(pr::find_tensor(mt, "out"));
  ASSERT_EQ(want.size(), got.size());
  for (std::size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-5 * (1 + std::abs(want[i])));
}

TEST(moe, sampled_tokens_cover_every_expert) {
  const auto c = cfg("moe", {{"num_tokens", I(200)}, {"hidden_size", I(16)}, {"moe_intermediate_size", I(8)},
                             {"n_experts", I(32)}, {"top_k", I(2)}, {"dtype", S("float16")}});
  const auto& op = pr::find_operator("moe");
  auto ts = pr::make_inputs(op, c, 2);
  op.write_reference(c, ts, 1);
  const auto ref = pb_test::verify(op, c, ts, 2);
  ASSERT_EQ(ref[0].method, "tokens");
  // Corrupt every token of expert 31 alone: whichever tokens were sampled, one routes to it.
  const auto ids = logical(pr::find_tensor(ts, "topk_ids"));
  auto& out = pr::find_tensor(ts, "out");
  for (std::int64_t t = 0; t < 200; ++t) {
    if (ids[static_cast<std::size_t>(2 * t)] != 31 && ids[static_cast<std::size_t>(2 * t + 1)] != 31) continue;
    for (std::int64_t h = 0; h < 16; ++h) {
      const double v = pr::load_element(out.bytes.data(), out.spec.type, t * 16 + h);
      pr::store_element(out.bytes.data(), out.spec.type, t * 16 + h, v + 0.1 * (std::abs(v) + 1));
    }
  }
  EXPECT_EQ(pr::judge_all(pb_test::verify(op, c, ts, 2), ref).verdict, "FAIL");
}

TEST(moe_align_block, buckets_padding_and_order_insensitivity) {
  const std::int64_t M = 20, TK = 2, E = 64, BS = 2;  // more experts than assignments
  const auto c = cfg("moe_align_block", {{"num_tokens", I(M)}, {"top_k", I(TK)}, {"n_experts", I(E)}, {"block_size", I(BS)}});
  const auto& op = pr::find_operator(c.op);
  auto ts = pr::make_inputs(op, c, 3);
  op.write_reference(c, ts, 1);
  const auto ids = logical(pr::find_tensor(ts, "topk_ids"));
  const auto sorted = logical(pr::find_tensor(ts, "sorted_token_ids"));
  const auto experts = logical(pr::find_tensor(ts, "expert_ids"));
  const auto total = static_cast<std::int64_t>(logical(pr::find_tensor(ts, "num_tokens_post_padded"))[0]);
  ASSERT_EQ(total % BS, 0);
  // Independent check: every assignment appears once, in a block of its expert; padding is M*TK.
  std::vector<int> seen(static_cast<std::size_t>(M * TK), 0);
  std::int64_t empty_experts = E;
  std::vector<bool> has(static_cast<std::size_t>(E), false);
  for (std::int64_t i = 0; i < total; ++i) {
    const auto id = static_cast<std::int64_t>(sorted[static_cast<std::size_t>(i)]);
    const auto e = static_cast<std::int64_t>(experts[static_cast<std::size_t>(i / BS)]);
    if (id == M * TK) continue;
    ASSERT_LT(id, M * TK);
    ++seen[static_cast<std::size_t>(id)];
    EXPECT_EQ(static_cast<std::int64_t>(ids[static_cast<std::size_t>(id)]), e);
    if (!has[static_cast<std::size_t>(e)]) --empty_experts;
    has[static_cast<std::size_t>(e)] = true;
  }
  for (int s : seen) EXPECT_EQ(s, 1);
  EXPECT_GT(empty_experts, 0);  // some experts have no tokens (empty buckets) ...
  bool multi_block = false;
  for (std::int64_t b = 1; b < total / BS; ++b) multi_block = multi_block || experts[static_cast<std::size_t>(b)] == experts[static_cast<std::size_t>(b - 1)];
  EXPECT_TRUE(multi_block);  // ... and some have more than one block
  const auto ref = pb_test::verify(op, c, ts, 3);
  EXPECT_EQ(pr::judge_all(ref, {}).verdict, "PASS");
  // Reversing the order inside the first bucket is allowed ...
  auto shuffled = ts;
  auto& st = pr::find_tensor(shuffled, "sorted_token_ids");
  std::int64_t end0 = 0;
  while (end0 < total && experts[static_cast<std::size_t>(end0 / BS)] == experts[0]) end0 += BS;
  std::vector<double> bucket(sorted.begin(), sorted.begin() + end0);
  std::reverse(bucket.begin(), bucket.end());
  for (std::int64_t i = 0; i < end0; ++i) pr::store_element(st.bytes.data(), pr::dtype::i32, i, bucket[static_cast<std::size_t>(i)]);
  EXPECT_EQ(pr::judge_all(pb_test::verify(op, c, shuffled, 3), ref).verdict, "PASS");
  // ... moving an id into another expert's bucket is not.
  pr::store_element(st.bytes.data(), pr::dtype::i32, 0, sorted[static_cast<std::size_t>(end0)]);
  pr::store_element(st.bytes.data(), pr::dtype::i32, end0, bucket[0]);
  EXPECT_EQ(pr::judge_all(pb_test::verify(op, c, shuffled, 3), ref).verdict, "FAIL");
}

TEST(moe_align_block, expert_ids_past_the_used_blocks_are_slack) {
  // Upstream's kernel writes expert_ids only for the blocks it fills (the rest of the
  // allocation keeps whatever was there), so the spec marks the tensor slack and verify()
  // ignores the blocks past num_tokens_post_padded, but none before it.
  const std::int64_t M = 16, TK = 2, E = 8, BS = 4;
  const auto c = cfg("moe_align_block", {{"num_tokens", I(M)}, {"top_k", I(TK)}, {"n_experts", I(E)}, {"block_size", I(BS)}});
  const auto& op = pr::find_operator(c.op);
  for (const auto& t : op.tensors(c)) EXPECT_EQ(t.slack, t.name == "expert_ids") << t.name;
  auto ts = pr::make_inputs(op, c, 5);
  op.write_reference(c, ts, 1);
  const auto total = static_cast<std::int64_t>(logical(pr::find_tensor(ts, "num_tokens_post_padded"))[0]);
  auto& experts = pr::find_tensor(ts, "expert_ids");
  const std::int64_t used = total / BS, blocks = experts.spec.elements();
  ASSERT_LT(used, blocks) << "the configuration must leave unused blocks";
  for (std::int64_t b = used; b < blocks; ++b) pr::store_element(experts.bytes.data(), pr::dtype::i32, b, -7);
  EXPECT_EQ(pr::judge_all(pb_test::verify(op, c, ts, 3), {}).verdict, "PASS");
  pr::store_element(experts.bytes.data(), pr::dtype::i32, used - 1, -7);
  EXPECT_EQ(pr::judge_all(pb_test::verify(op, c, ts, 3), {}).verdict, "FAIL");
}
