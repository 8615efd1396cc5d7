// SPDX-License-Identifier: Apache-2.0
// A loaded cubin and the kernels in it. Ownership encodes the driver's lifetimes:
// kernel -> module -> context, so a kernel can never outlive the code it launches.
#pragma once
#include <cuda.h>

#include <cstddef>
#include <memory>
#include <span>
#include <string>

#include "portbench/cuda/context.hpp"

namespace portbench::cuda {

class module {
 public:
  /// Loads a cubin image with cuModuleLoadData; `origin` names it in errors (a file path).
  static std::shared_ptr<const module> load(context_ptr ctx, std::span<const std::byte> image,
                                            std::string origin);
  ~module();
  module(const module&) = delete;
  module& operator=(const module&) = delete;

  [[nodiscard]] CUmodule native() const noexcept { return m_module; }
  [[nodiscard]] const context_ptr& ctx() const noexcept { return m_ctx; }
  [[nodiscard]] const std::string& origin() const noexcept { return m_origin; }

 private:
  module(context_ptr ctx, CUmodule m, std::string origin);
  context_ptr m_ctx;
  CUmodule m_module;
  std::string m_origin;
};

using module_ptr = std::shared_ptr<const module>;

struct kernel_attributes {
  int registers = 0;
  int static_shared_bytes = 0;
  int local_bytes = 0;
  int max_threads_per_block = 0;
  int ptx_version = 0;
  int binary_version = 0;
};

class kernel {
 public:
  /// Looks `entry` up in `mod`; throws cuda_error naming the module and the entry.
  kernel(module_ptr mod, const std::string& entry);

  [[nodiscard]] CUfunction native() const noexcept { return m_fn; }
  [[nodiscard]] const std::string& entry() const noexcept { return m_entry; }
  [[nodiscard]] const module& owner() const noexcept { return *m_module; }
  [[nodiscard]] kernel_attributes attributes() const;
  /// Allows `bytes` of dynamic shared memory (opt-in above 48 KiB, as the driver requires).
  void allow_dynamic_shared(int bytes) const;

 private:
  module_ptr m_module;
  CUfunction m_fn = nullptr;
  std::string m_entry;
};

}  // namespace portbench::cuda
