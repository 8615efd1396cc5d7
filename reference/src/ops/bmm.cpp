// SPDX-License-Identifier: Apache-2.0
// bmm: C[q] = op(A[q]) op(B[q]) for q < batch; a is [Q, M, K] or [Q, K, M] with transpose_a,
// b is [Q, K, N] or [Q, N, K] with transpose_b, c is [Q, M, N]. Verification: Freivalds and a
// sampled tile per batch entry.
#include "common.hpp"
#include "gemm_common.hpp"
#include "ops.hpp"

namespace portbench::reference::detail {
namespace {

struct params {
  std::int64_t q, m, n, k;
  bool ta, tb;
  dtype type, out_type;
  explicit params(const config& c)
      : q(dim(c, "batch")), m(dim(c, "m")), n(dim(c, "n")), k(dim(c, "k")), ta(c.flag("transpose_a", false)),
        tb(c.flag("transpose_b", false)), type(float_type(c)), out_type(c.type_or("out_dtype", type)) {}
};

class bmm final : public gemm_operator {
 public:
  [[nodiscard]] std::string name() const override { return "bmm"; }
  [[nodiscard]] std::vector<tensor_spec> tensors(const config& c) const override {
    const params p(c);
    return {dense("a", p.type, {p.q, p.ta ? p.k : p.m, p.ta ? p.m : p.k}, tensor_role::in),
            dense("b", p.type, {p.q, p.tb ? p.n : p.k, p.tb ? p.k : p.n}, tensor_role::in),
            dense("c", p.out_type, {p.q, p.m, p.n}, tensor_role::out)};
  }
  [[nodiscard]] tolerance upstream_tolerance(const config& c, const std::string&) const override {
    return with_long_sum_accumulation({1e-8, 1e-3}, params(c).type);  // test_bmm.py
  }

 protected:
  [[nodiscard]] std::vector<gemm_problem> problems(const config& c) const override {
    const params p(c);
    std::vector<gemm_problem> out;
    for (std::int64_t b = 0; b < p.q; ++b) {
      gemm_problem g{"a", "b", "c", p.m, p.n, p.k};
      g.a_base = b * p.m * p.k;
      set_layout(g.a_rs, g.a_cs, p.m, p.k, p.ta);
      g.b_base = b * p.k * p.n;
      set_layout(g.b_rs, g.b_cs, p.k, p.n, p.tb);
      g.c_base = b * p.m * p.n;
      set_layout(g.c_rs, g.c_cs, p.m, p.n, false);
      out.push_back(g);
    }
    return out;
  }
};

}  // namespace

std::unique_ptr<operator_spec> make_bmm() { return std::make_unique<bmm>(); }

}  // namespace portbench::reference::detail
