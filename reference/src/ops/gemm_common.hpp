// SPDX-License-Identifier: Apache-2.0
// Verification of matrix products C = op(A) op(B) without computing C: Freivalds' check over
// the whole output (C x against A (B x) for random +-1 vectors x: one pass over A, B and C) and
// an exact fp64 tile of sampled rows and columns for element-level error statistics. Shared by
// matmul, bmm and group_gemm through gemm_operator.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "portbench/reference/spec.hpp"

namespace portbench::reference::detail {

/// One product inside the tensors: element (i, k) of op(A) is a[a_base + i*a_rs + k*a_cs], etc.
struct gemm_problem {
  std::string a, b, c;   ///< tensor names
  std::int64_t m = 0, n = 0, k = 0;
  std::int64_t a_base = 0, a_rs = 0, a_cs = 0;
  std::int64_t b_base = 0, b_rs = 0, b_cs = 0;
  std::int64_t c_base = 0, c_rs = 0, c_cs = 0;
};

/// Row-major [rows, cols] (or its transpose when `transposed`: stored [cols, rows]) at `base`.
void set_layout(std::int64_t& rs, std::int64_t& cs, std::int64_t rows, std::int64_t cols, bool transposed);

/// `t` with the accumulation roundoff of tileiras' fp16/bf16 products: 2^-13 per unit of
/// sum_k |a_ik b_kj|. On the H200 tilegym's bmm and its port (identical bytes) put a sampled
/// element that cancels to ~1 0.031 (k = 2048) and 0.064 (k = 8192) from fp64: 2^-14.3 and
/// 2^-15.3 of that sum, where cuBLAS and Triton stay within 6e-4 (docs/reference.md). Other
/// operand types keep `t` as it is.
[[nodiscard]] tolerance with_long_sum_accumulation(tolerance t, dtype operands) noexcept;
/// The allowance per unit of sum_k |a_ik b_kj| for a k-term product: t.accumulation_eps, never
/// more than gamma_k = k u / (1 - k u), u = 2^-24, the worst case of fp32 summation.
[[nodiscard]] double accumulation_per_term(const tolerance& t, std::int64_t k) noexcept;

/// An operator made of products. Subclasses give the tensors, the problems and the tolerance.
class gemm_operator : public operator_spec {
 public:
  [[nodiscard]] std::vector<uniform_fill> uniform_fills(const config& c) const override;
  [[nodiscard]] std::vector<compare_report> verify(const config& c, const std::vector<host_tensor>& ts) const override;
  [[nodiscard]] std::vector<compare_report> verify(const config& c, const std::vector<host_tensor>& ts,
                                                   const verify_options& o) const override;
  /// Full fp64 products with Eigen (small configurations: it allocates M*K + K*N + M*N doubles).
  void write_reference(const config& c, std::vector<host_tensor>& ts, unsigned threads) const override;
  [[nodiscard]] cost_model cost(const config& c) const override;

 protected:
  [[nodiscard]] virtual std::vector<gemm_problem> problems(const config& c) const = 0;
};

}  // namespace portbench::reference::detail
