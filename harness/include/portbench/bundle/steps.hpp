// SPDX-License-Identifier: Apache-2.0
// Fill, copy and sum steps of a launch plan (docs/bundle-manifest.md, "Fill, copy and sum steps"): their
// views bound to the operator's tensors and the plan's scratch buffers and checked (bounds,
// element types, shapes, overlap), and how the harness carries each one out. The second part
// needs no GPU: which harness kernels a plan runs, with their grids, follows from the manifest
// and the device's SM count alone, so the proof check knows every kernel record a plan makes.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "portbench/bundle/launcher.hpp"
#include "portbench/bundle/manifest.hpp"

namespace portbench::bundle {

/// A view resolved against real (or, in CPU tests, fake) device addresses.
struct bound_view {
  CUdeviceptr base = 0;   ///< element 0 of the buffer the view indexes (a tensor's view start)
  element_type type = element_type::f32;
  std::int64_t offset = 0;
  std::vector<std::int64_t> shape, strides;
  std::int64_t last = 0;  ///< largest element index addressed, offset included

  [[nodiscard]] std::int64_t elements() const noexcept;
  [[nodiscard]] CUdeviceptr first_byte() const noexcept;
  [[nodiscard]] CUdeviceptr end_byte() const noexcept;   ///< one past the last byte addressed
};

/// Binds `v`; throws bundle_error naming `where` when the tensor or buffer does not exist, the
/// element type differs from the tensor's dtype, or an element lies outside the tensor's
/// storage or the buffer's bytes.
[[nodiscard]] bound_view bind_view(const view_spec& v, const tensor_bindings& tensors, const scratch_bindings& scratch,
                                   const std::vector<scratch_spec>& scratch_specs, const std::string& where);

/// A copy's views, bound and checked: besides bind_view's checks, the destination may not
/// overlap itself (two elements at one address would race) nor the source.
struct bound_copy {
  bound_view src, dst;
};
[[nodiscard]] bound_copy bind_copy(const copy_step& c, const tensor_bindings& tensors, const scratch_bindings& scratch,
                                   const std::vector<scratch_spec>& scratch_specs, const std::string& where);

/// A sum's views, bound and checked as a copy's (dst neither overlaps itself nor src).
struct bound_sum {
  bound_view src, dst;
  std::size_t axis = 0;
};
[[nodiscard]] bound_sum bind_sum(const sum_step& s, const tensor_bindings& tensors, const scratch_bindings& scratch,
                                 const std::vector<scratch_spec>& scratch_specs, const std::string& where);

/// Binds every fill, copy and sum step of a plan (what enqueue does before it launches anything);
/// `where` names the plan, e.g. "<manifest>: configs[3]".
void check_steps(const std::vector<plan_step>& steps, const std::vector<scratch_spec>& scratch_specs,
                 const tensor_bindings& tensors, const scratch_bindings& scratch, const std::string& where);

// ---- how steps run (no GPU needed) ----------------------------------------------------------

/// Threads per block of the harness's step kernels.
inline constexpr unsigned k_step_block = 256;

/// Entry name of the harness kernel that copies `src` elements into `dst` elements.
[[nodiscard]] std::string copy_entry(element_type src, element_type dst);
/// Entry name of the harness kernel that sums `src` elements over an axis into `dst` elements.
[[nodiscard]] std::string sum_entry(element_type src, element_type dst);
/// The type a sum accumulates in: f64 where either side is f64, else f32 for floats (torch's
/// accumulate type for fp32, fp16 and bf16 on CUDA), i64 for integers (wrapping).
[[nodiscard]] element_type sum_accumulator(element_type src, element_type dst) noexcept;
/// Entry name of the harness kernel that fills elements of `bytes` bytes (1, 2, 4 or 8).
[[nodiscard]] std::string fill_entry(std::size_t bytes);
/// Grid of a harness step kernel over `elements` elements (grid-stride loop, at most 8 blocks
/// per SM).
[[nodiscard]] dim3 step_grid(std::int64_t elements, unsigned sm_count) noexcept;

/// How a scratch buffer's fill init is laid down (never a kernel, so never timed): a memset of
/// `count` units of `unit` bytes (1, 2 or 4) where the elements are one dense run and the bit
/// pattern repeats in such units, else (`memset` false) an upload of the pattern from the host.
struct fill_method {
  bool memset = false;
  unsigned unit = 0;          ///< memset: 1, 2 or 4 bytes (cuMemsetD8/D16/D32Async)
  std::uint32_t pattern = 0;  ///< memset: the unit's bit pattern
  std::uint64_t count = 0;    ///< memset: units
};
[[nodiscard]] fill_method choose_fill(const view_spec& target, const fill_value& value) noexcept;
/// The view of a whole scratch buffer as elements of `t` (for its fill init).
[[nodiscard]] view_spec whole_scratch(const scratch_spec& s, element_type t);
/// The bytes of `elements` elements holding `value` (the upload of a fill init).
[[nodiscard]] std::vector<std::byte> fill_image(const fill_value& value, std::uint64_t elements);

/// A kernel record the plan's execution makes, in order: per launches[] entry the bundle's
/// kernel, or the harness's copy kernel of a copy step, its fill kernel of a fill step, its sum
/// kernel of a sum step (grid over dst's elements, one thread per output element).
/// Scratch inits (memsets, uploads) make none.
struct expected_record {
  std::string entry;
  dim3 cta_grid{1, 1, 1};   ///< as CUPTI reports it (CTAs, also where the grid counts clusters)
  bool harness = false;     ///< a harness step kernel rather than one of the bundle's entries
};
[[nodiscard]] std::vector<expected_record> expected_records(const std::vector<launch_spec>& launches,
                                                            const std::vector<plan_step>& steps, unsigned sm_count);

/// The harness kernels a plan's steps need (each copy's and sum's type pair, each fill's
/// element size).
struct step_kernel_set {
  std::vector<std::pair<element_type, element_type>> copies;
  std::vector<std::size_t> fill_sizes;
  std::vector<std::pair<element_type, element_type>> sums;
  [[nodiscard]] bool empty() const noexcept { return copies.empty() && fill_sizes.empty() && sums.empty(); }
};
[[nodiscard]] step_kernel_set needed_step_kernels(const std::vector<plan_step>& steps);

}  // namespace portbench::bundle
