// SPDX-License-Identifier: Apache-2.0
// matmul: C[M, N] = op(A) op(B). With transpose_a, a is stored [K, M] (its transpose is used);
// with transpose_b, b is stored [N, K]. offset_a / offset_b shift the operands inside their
// allocations. fp32 runs as TF32 upstream; fp8 e4m3 inputs give an e4m3 output (upstream casts
// back; out_dtype overrides). static_persistent / use_tma pick kernels, not math.
// Verification: Freivalds over all of C plus an exact sampled tile (gemm_common.hpp).
#include "common.hpp"
#include "gemm_common.hpp"
#include "ops.hpp"

namespace portbench::reference::detail {
namespace {

struct params {
  std::int64_t m, n, k, off_a, off_b;
  bool ta, tb;
  dtype type, out_type;
  explicit params(const config& c)
      : m(dim(c, "m")), n(dim(c, "n")), k(dim(c, "k")), off_a(c.integer_or("offset_a", 0)),
        off_b(c.integer_or("offset_b", 0)), ta(c.flag("transpose_a", false)), tb(c.flag("transpose_b", false)),
        type(float_type(c)), out_type(c.type_or("out_dtype", type)) {
    if (off_a < 0 || off_b < 0) throw spec_error(c.op + ": offsets must be >= 0");
  }
};

tensor_spec operand(std::string name, dtype t, std::int64_t rows, std::int64_t cols, std::int64_t offset) {
  tensor_spec s = make_tensor(std::move(name), t, {rows, cols}, tensor_role::in);
  s.offset = offset;
  s.storage_elements = offset + rows * cols;
  return s;
}

class matmul final : public gemm_operator {
 public:
  [[nodiscard]] std::string name() const override { return "matmul"; }
  [[nodiscard]] std::vector<tensor_spec> tensors(const config& c) const override {
    const params p(c);
    return {operand("a", p.type, p.ta ? p.k : p.m, p.ta ? p.m : p.k, p.off_a),
            operand("b", p.type, p.tb ? p.n : p.k, p.tb ? p.k : p.n, p.off_b),
            dense("c", p.out_type, {p.m, p.n}, tensor_role::out)};
  }
  [[nodiscard]] tolerance upstream_tolerance(const config& c, const std::string&) const override {
    if (params(c).type == dtype::f8e4m3) return {1.0, 1.0};
    // fp32 operands go through tf32 tensor cores upstream (10-bit mantissa).
    if (params(c).type == dtype::f32) return {1e-2, 1e-2, 0x1.0p-11};
    return with_long_sum_accumulation({1e-2, 1e-2}, params(c).type);  // test_matmul.py test_perf
  }

 protected:
  [[nodiscard]] std::vector<gemm_problem> problems(const config& c) const override {
    const params p(c);
    gemm_problem g{"a", "b", "c", p.m, p.n, p.k};
    g.a_base = p.off_a;
    set_layout(g.a_rs, g.a_cs, p.m, p.k, p.ta);
    g.b_base = p.off_b;
    set_layout(g.b_rs, g.b_cs, p.k, p.n, p.tb);
    set_layout(g.c_rs, g.c_cs, p.m, p.n, false);
    return {g};
  }
};

}  // namespace

std::unique_ptr<operator_spec> make_matmul() { return std::make_unique<matmul>(); }

}  // namespace portbench::reference::detail
