// SPDX-License-Identifier: Apache-2.0
// moe_align_block (moe_align_block_size): buckets the flattened (token, k) assignments of
// topk_ids [M, top_k] by expert, in expert order, each bucket padded to a multiple of
// block_size with the value M * top_k. Outputs: sorted_token_ids [M*top_k + E*(block_size-1)],
// expert_ids (one per block), num_tokens_post_padded [1]. The order inside a bucket may differ
// between implementations, so buckets are compared as multisets; everything else exactly.
// Only the first num_tokens_post_padded ids and their blocks are checked (the rest is slack).
#include <algorithm>
#include <cmath>

#include "common.hpp"
#include "ops.hpp"
#include "portbench/reference/compare.hpp"

namespace portbench::reference::detail {
namespace {

struct params {
  std::int64_t m, topk, e, block;
  explicit params(const config& c)
      : m(dim(c, "num_tokens")), topk(dim(c, "top_k")), e(dim(c, "n_experts")), block(dim_or(c, "block_size", 128)) {
    if (topk > e) throw spec_error(c.op + ": top_k must be <= n_experts");
  }
  [[nodiscard]] std::int64_t numel() const { return m * topk; }
  [[nodiscard]] std::int64_t max_padded() const { return numel() + e * (block - 1); }
  [[nodiscard]] std::int64_t max_blocks() const { return (max_padded() + block - 1) / block; }
};

struct alignment {
  std::vector<std::int64_t> start;   // bucket start per expert (E + 1 entries)
  std::vector<std::int64_t> sorted;  // stable order, padded
  std::int64_t total = 0;
};

alignment align(const params& p, const host_tensor& ids) {
  const tensor_reader r(ids);
  std::vector<std::int64_t> count(static_cast<std::size_t>(p.e), 0);
  for (std::int64_t i = 0; i < p.numel(); ++i) {
    const auto ex = static_cast<std::int64_t>(r[i]);
    if (ex < 0 || ex >= p.e) throw spec_error("moe_align_block: topk_ids holds an expert out of range");
    ++count[static_cast<std::size_t>(ex)];
  }
  alignment a;
  a.start.assign(static_cast<std::size_t>(p.e + 1), 0);
  for (std::int64_t ex = 0; ex < p.e; ++ex) {
    const std::int64_t padded = (count[static_cast<std::size_t>(ex)] + p.block - 1) / p.block * p.block;
    a.start[static_cast<std::size_t>(ex + 1)] = a.start[static_cast<std::size_t>(ex)] + padded;
  }
  a.total = a.start.back();
  a.sorted.assign(static_cast<std::size_t>(a.total), p.numel());
  std::vector<std::int64_t> fill = a.start;
  for (std::int64_t i = 0; i < p.numel(); ++i) a.sorted[static_cast<std::size_t>(fill[static_cast<std::size_t>(r[i])]++)] = i;
  return a;
}

class moe_align_block final : public operator_spec {
 public:
  [[nodiscard]] std::string name() const override { return "moe_align_block"; }
  [[nodiscard]] std::vector<tensor_spec> tensors(const config& c) const override {
    const params p(c);
    return {dense("topk_ids", dtype::i32, {p.m, p.topk}, tensor_role::in),
            dense("sorted_token_ids", dtype::i32, {p.max_padded()}, tensor_role::out),
            slack(dense("expert_ids", dtype::i32, {p.max_blocks()}, tensor_role::out)),
            dense("num_tokens_post_padded", dtype::i32, {1}, tensor_role::out)};
  }
  void fill_inputs(const config& c, std::uint64_t seed, std::vector<host_tensor>& ts) const override {
    // Skewed routing (expert ~ E * u^2): low experts get many tokens, some high ones none, so
    // both multi-block buckets and empty buckets occur. Experts within a token are distinct.
    const params p(c);
    host_tensor& ids = find_tensor(ts, "topk_ids");
    sample_rng rng(stream_key(seed, "topk_ids"));
    std::vector<std::int64_t> row;
    for (std::int64_t t = 0; t < p.m; ++t) {
      row.clear();
      while (static_cast<std::int64_t>(row.size()) < p.topk) {
        const double u = rng.unit();
        auto ex = static_cast<std::int64_t>(static_cast<double>(p.e) * u * u);
        while (std::find(row.begin(), row.end(), ex) != row.end()) ex = (ex + 1) % p.e;
        row.push_back(ex);
      }
      for (std::int64_t k = 0; k < p.topk; ++k) {
        store_element(ids.bytes.data(), dtype::i32, t * p.topk + k, static_cast<double>(row[static_cast<std::size_t>(k)]));
      }
    }
  }
  [[nodiscard]] cost_model cost(const config& c) const override {
    const params p(c);
    return {4.0 * static_cast<double>(2 * p.numel() + p.max_blocks() + 1), static_cast<double>(p.numel())};
  }
  [[nodiscard]] tolerance upstream_tolerance(const config&, const std::string&) const override { return {0, 0}; }
  void write_reference(const config& c, std::vector<host_tensor>& ts, unsigned) const override {
    const params p(c);
    const auto a = align(p, find_tensor(ts, "topk_ids"));
    host_tensor& sorted = find_tensor(ts, "sorted_token_ids");
    host_tensor& experts = find_tensor(ts, "expert_ids");
    for (std::int64_t i = 0; i < p.max_padded(); ++i) {
      store_element(sorted.bytes.data(), dtype::i32, i,
                    static_cast<double>(i < a.total ? a.sorted[static_cast<std::size_t>(i)] : p.numel()));
    }
    for (std::int64_t ex = 0; ex < p.e; ++ex) {
      for (std::int64_t b = a.start[static_cast<std::size_t>(ex)] / p.block; b < a.start[static_cast<std::size_t>(ex + 1)] / p.block; ++b) {
        store_element(experts.bytes.data(), dtype::i32, b, static_cast<double>(ex));
      }
    }
    store_element(find_tensor(ts, "num_tokens_post_padded").bytes.data(), dtype::i32, 0, static_cast<double>(a.total));
  }
  [[nodiscard]] std::vector<compare_report> verify(const config& c, const std::vector<host_tensor>& ts) const override {
    return verify(c, ts, verify_options{});
  }
  [[nodiscard]] std::vector<compare_report> verify(const config& c, const std::vector<host_tensor>& ts,
                                                   const verify_options&) const override {
    const params p(c);
    const auto a = align(p, find_tensor(ts, "topk_ids"));
    const tensor_reader sorted(find_tensor(ts, "sorted_token_ids")), experts(find_tensor(ts, "expert_ids")),
        total(find_tensor(ts, "num_tokens_post_padded"));
    error_accumulator n_acc(dtype::i32, {}), e_acc(dtype::i32, {}), s_acc(dtype::i32, {});
    n_acc.add_verdict(0, static_cast<std::int64_t>(total[0]) == a.total);
    std::vector<std::int64_t> got;
    for (std::int64_t ex = 0; ex < p.e; ++ex) {
      const std::int64_t b0 = a.start[static_cast<std::size_t>(ex)], b1 = a.start[static_cast<std::size_t>(ex + 1)];
      for (std::int64_t b = b0 / p.block; b < b1 / p.block; ++b) e_acc.add_verdict(b, static_cast<std::int64_t>(experts[b]) == ex);
      got.clear();
      for (std::int64_t i = b0; i < b1; ++i) got.push_back(static_cast<std::int64_t>(sorted[i]));
      std::sort(got.begin(), got.end());  // the expected bucket is already ascending
      for (std::int64_t i = b0; i < b1; ++i) {
        s_acc.add_verdict(i, got[static_cast<std::size_t>(i - b0)] == a.sorted[static_cast<std::size_t>(i)]);
      }
    }
    auto rs = s_acc.report("sorted_token_ids", "exact", p.max_padded());
    rs.note = "each expert's bucket compared as a multiset; ids past num_tokens_post_padded not checked";
    if (a.total == 0) rs.note += "; no assignments";
    return {rs, e_acc.report("expert_ids", "exact", p.max_blocks()),
            n_acc.report("num_tokens_post_padded", "exact", 1)};
  }
};

}  // namespace

std::unique_ptr<operator_spec> make_moe_align_block() { return std::make_unique<moe_align_block>(); }

}  // namespace portbench::reference::detail
