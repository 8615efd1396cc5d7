// SPDX-License-Identifier: Apache-2.0
// A device's primary context, retained for the object's lifetime. Modules, buffers, streams and
// events hold a shared_ptr to their context, so none of them can outlive it.
#pragma once
#include <cuda.h>

#include <cstddef>
#include <memory>
#include <string>

#include "portbench/cuda/driver.hpp"

namespace portbench::cuda {

struct device_info {
  int ordinal = 0;
  std::string name;
  std::string pci_bus_id;
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  int l2_bytes = 0;
  int persisting_l2_max_bytes = 0;
  int max_shared_optin_bytes = 0;
  int sm_clock_khz = 0;       ///< CU_DEVICE_ATTRIBUTE_CLOCK_RATE (peak, as the driver reports)
  int memory_clock_khz = 0;
  int memory_bus_bits = 0;
  std::size_t total_memory = 0;
  int driver_version = 0;
};

class context {
 public:
  /// Loads the driver if needed, retains device `ordinal`'s primary context, makes it current.
  static std::shared_ptr<context> open(int ordinal,
                                       std::shared_ptr<const driver_api> api = nullptr);
  ~context();
  context(const context&) = delete;
  context& operator=(const context&) = delete;

  [[nodiscard]] const driver_api& api() const noexcept { return *m_api; }
  [[nodiscard]] CUcontext native() const noexcept { return m_ctx; }
  [[nodiscard]] CUdevice device() const noexcept { return m_device; }
  [[nodiscard]] const device_info& info() const noexcept { return m_info; }
  /// Makes this context current on the calling thread.
  void make_current() const;
  void synchronize() const;

 private:
  context(std::shared_ptr<const driver_api> api, CUdevice dev, CUcontext ctx);
  std::shared_ptr<const driver_api> m_api;
  CUdevice m_device;
  CUcontext m_ctx;
  device_info m_info;
};

using context_ptr = std::shared_ptr<context>;

}  // namespace portbench::cuda
