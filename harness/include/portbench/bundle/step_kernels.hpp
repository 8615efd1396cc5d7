// SPDX-License-Identifier: Apache-2.0
// The harness's own kernels for a plan's copy, fill and sum steps, compiled at run time with NVRTC
// (no front end involved) for exactly the element types a plan needs: real kernels, so CUPTI
// records them and their time counts in the plan's device time, as torch's copy kernels count
// in upstream's timer. A copy converts between any two element types (floats rounded to
// nearest even, floats to integers truncated, integers wrapped as C++ does); a sum adds the
// elements along one axis in index order in sum_accumulator's type and converts once, as a copy
// would; views have rank <= 6 and any non-negative strides.
#pragma once
#include <cstdint>
#include <map>
#include <string>

#include "portbench/bundle/steps.hpp"
#include "portbench/cuda/module.hpp"
#include "portbench/cuda/stream.hpp"

namespace portbench::bundle {

/// The CUDA C++ source of the kernels in `set` (entries copy_entry, fill_entry, sum_entry).
[[nodiscard]] std::string step_kernel_source(const step_kernel_set& set);

/// Bytes of the one parameter every step kernel takes (a struct, passed by value).
[[nodiscard]] std::size_t step_kernel_param_bytes() noexcept;

class step_kernels {
 public:
  /// Compiles `set` for the context's device (once per process for a given source) and loads it.
  step_kernels(cuda::context_ptr ctx, const step_kernel_set& set);

  /// Enqueues dst[i] = convert(src[i]) over every element (the views have equal shapes).
  void copy(const cuda::stream& s, const bound_copy& c) const;
  /// Enqueues dst[j] = the sum over the axis of src at j (sum_accumulator, one rounding).
  void sum(const cuda::stream& s, const bound_sum& b) const;
  /// Enqueues the fill of every element of `dst` with the low size_of(dst.type) bytes of `bits`.
  void fill(const cuda::stream& s, const bound_view& dst, std::uint64_t bits) const;

 private:
  void launch(const std::string& entry, const cuda::stream& s, void* args, std::int64_t elements) const;

  cuda::context_ptr m_ctx;
  std::map<std::string, cuda::kernel> m_kernels;   ///< by entry name
};

}  // namespace portbench::bundle
