// SPDX-License-Identifier: Apache-2.0
// Generic launch of a bundle's plan: parameters are packed from the manifest's bindings to the
// operator's tensors; nothing here knows which front end produced the cubin.
#pragma once
#include <cuda.h>

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "portbench/bundle/bundle.hpp"
#include "portbench/cuda/module.hpp"
#include "portbench/cuda/stream.hpp"
#include "portbench/reference/spec.hpp"

namespace portbench::bundle {

struct tensor_binding {
  CUdeviceptr address = 0;   ///< start of the tensor's view
  reference::tensor_spec spec;
};
using tensor_bindings = std::map<std::string, tensor_binding>;
/// Device memory of a plan besides the operator's tensors: its declared scratch buffers, the
/// address tables its `ptr_table` parameters point to (arrays of 64-bit addresses of the listed
/// tensors' views) and the descriptor tables its `array_table` parameters point to (per listed
/// tensor: address, extents, strides as 64-bit words), built by the harness from the bindings.
struct scratch_bindings {
  std::map<std::string, CUdeviceptr> buffers;                     ///< by scratch name
  std::map<std::vector<std::string>, CUdeviceptr> tables;         ///< by the tensors a table lists, in order
  std::map<std::vector<std::string>, CUdeviceptr> array_tables;   ///< by the tensors a table lists, in order
};

/// The distinct tensor lists of the `ptr_table` parameters of `launches`, in first-use order:
/// the address tables a plan needs built.
[[nodiscard]] std::vector<std::vector<std::string>> address_tables(const std::vector<launch_spec>& launches);

/// The contents of the address table of `names`: each tensor's device address (the start of its
/// view, as a `ptr` parameter without offset passes it), in order; throws bundle_error naming
/// `where` and the tensor when one is not bound.
[[nodiscard]] std::vector<std::uint64_t> table_addresses(const std::vector<std::string>& names,
                                                         const tensor_bindings& tensors, const std::string& where);

/// The distinct `array_table` parameters of `launches` (by their tensor lists), in first-use
/// order: the descriptor tables a plan needs built.
[[nodiscard]] std::vector<param_binding> descriptor_tables(const std::vector<launch_spec>& launches);

/// The contents of the descriptor table of array_table parameter `p`: for each listed tensor in
/// order, 1 + 2 rank little-endian 64-bit words with no padding or header: the address of its
/// view's start, its extents, then its strides in elements (two's complement). Throws
/// bundle_error naming `where` and the tensor when one is not bound, has another rank than
/// `p.rank`, or (index type i32) has an extent or stride beyond int32.
[[nodiscard]] std::vector<std::uint64_t> table_descriptors(const param_binding& p, const tensor_bindings& tensors,
                                                           const std::string& where);

/// A launch's parameter buffer and the pointer array cuLaunchKernelEx takes.
class packed_params {
 public:
  packed_params(std::vector<std::byte> storage, const std::vector<std::size_t>& offsets);
  packed_params(const packed_params&) = delete;
  packed_params& operator=(const packed_params&) = delete;
  packed_params(packed_params&&) = default;
  [[nodiscard]] void** pointers() noexcept { return m_pointers.data(); }
  [[nodiscard]] const std::vector<std::byte>& bytes() const noexcept { return m_storage; }

 private:
  std::vector<std::byte> m_storage;
  std::vector<void*> m_pointers;
};

/// Packs `l`'s parameters; throws bundle_error naming `where` if a binding names an unknown
/// tensor, dimension, scratch buffer, address or descriptor table, or a value does not fit its type.
[[nodiscard]] packed_params pack_params(const launch_spec& l, const tensor_bindings& tensors,
                                        const scratch_bindings& scratch, const std::string& where);

class step_kernels;
struct expected_record;

/// A configuration's plan with its modules loaded and kernels resolved, ready to launch.
class loaded_plan {
 public:
  /// Loads each cubin the plan uses once into `ctx`, and compiles the harness kernels its
  /// fill, copy and sum steps need (steps.hpp, step_kernels.hpp).
  loaded_plan(cuda::context_ptr ctx, const bundle& b, const config_plan& plan);
  ~loaded_plan();
  loaded_plan(const loaded_plan&) = delete;
  loaded_plan& operator=(const loaded_plan&) = delete;

  /// Enqueues the plan on `s`: scratch inits, then every kernel launch and step in
  /// manifest order. Binds and checks every step before the first launch.
  void enqueue(const cuda::stream& s, const tensor_bindings& tensors, const scratch_bindings& scratch) const;

  [[nodiscard]] const config_plan& plan() const noexcept { return *m_plan; }
  [[nodiscard]] const std::vector<cuda::kernel>& kernels() const noexcept { return m_kernels; }
  /// The kernel records one execution makes, in order (what the proof check expects).
  [[nodiscard]] const std::vector<expected_record>& expected() const noexcept { return m_expected; }

 private:
  void launch(const plan_step& st, const cuda::stream& s, const tensor_bindings& tensors,
              const scratch_bindings& scratch) const;

  cuda::context_ptr m_ctx;
  const config_plan* m_plan;
  std::string m_manifest;
  std::string m_where;                    ///< "<manifest>: <config id>", for step errors
  std::vector<cuda::kernel> m_kernels;   ///< one per launch
  std::unique_ptr<step_kernels> m_steps;  ///< null when the plan has no harness kernel
  std::vector<expected_record> m_expected;
  std::map<std::string, std::vector<std::byte>> m_init_images;   ///< fill inits uploaded, by scratch name
};

}  // namespace portbench::bundle
