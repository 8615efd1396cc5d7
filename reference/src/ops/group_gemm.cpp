// SPDX-License-Identifier: Apache-2.0
// group_gemm: num_groups independent products C_g = A_g B_g (B_g^T with transpose_b) in one
// launch upstream; separate allocations a0.., b0.., c0.. (a_g [M, K], b_g [K, N] or [N, K],
// c_g [M, N]; all groups share the shape in the perf configs). Verification: Freivalds and a
// sampled tile per group.
#include "common.hpp"
#include "gemm_common.hpp"
#include "ops.hpp"

namespace portbench::reference::detail {
namespace {

// "a" + std::to_string(i) trips GCC 12's -Wrestrict false positive (GCC bug 105329).
std::string indexed(const char* prefix, std::int64_t i) {
  std::string s(prefix);
  s += std::to_string(i);
  return s;
}

struct params {
  std::int64_t g, m, n, k;
  bool tb;
  dtype type, out_type;
  explicit params(const config& c)
      : g(dim(c, "num_groups")), m(dim(c, "m")), n(dim(c, "n")), k(dim(c, "k")), tb(c.flag("transpose_b", false)),
        type(float_type(c)), out_type(c.type_or("out_dtype", type)) {}
};

class group_gemm final : public gemm_operator {
 public:
  [[nodiscard]] std::string name() const override { return "group_gemm"; }
  [[nodiscard]] std::vector<tensor_spec> tensors(const config& c) const override {
    const params p(c);
    std::vector<tensor_spec> ts;
    for (std::int64_t i = 0; i < p.g; ++i) ts.push_back(dense(indexed("a", i), p.type, {p.m, p.k}, tensor_role::in));
    for (std::int64_t i = 0; i < p.g; ++i) {
      ts.push_back(dense(indexed("b", i), p.type, {p.tb ? p.n : p.k, p.tb ? p.k : p.n}, tensor_role::in));
    }
    for (std::int64_t i = 0; i < p.g; ++i) ts.push_back(dense(indexed("c", i), p.out_type, {p.m, p.n}, tensor_role::out));
    return ts;
  }
  [[nodiscard]] tolerance upstream_tolerance(const config& c, const std::string&) const override {
    if (params(c).type == dtype::f8e5m2) return {1.0, 1.0};
    if (params(c).type == dtype::f32) return {1e-2, 1e-2, 0x1.0p-11};   // tf32 tensor cores
    return with_long_sum_accumulation({1e-2, 1e-2}, params(c).type);  // test_group_gemm.py test_perf
  }

 protected:
  [[nodiscard]] std::vector<gemm_problem> problems(const config& c) const override {
    const params p(c);
    std::vector<gemm_problem> out;
    for (std::int64_t i = 0; i < p.g; ++i) {
      gemm_problem g{indexed("a", i), indexed("b", i), indexed("c", i), p.m, p.n, p.k};
      set_layout(g.a_rs, g.a_cs, p.m, p.k, false);
      set_layout(g.b_rs, g.b_cs, p.k, p.n, p.tb);
      set_layout(g.c_rs, g.c_cs, p.m, p.n, false);
      out.push_back(g);
    }
    return out;
  }
};

}  // namespace

std::unique_ptr<operator_spec> make_group_gemm() { return std::make_unique<group_gemm>(); }

}  // namespace portbench::reference::detail
