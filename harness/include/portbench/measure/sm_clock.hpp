// SPDX-License-Identifier: Apache-2.0
// The SM clock at the time of a sample, read through NVML (libnvidia-ml.so.1, loaded at run
// time and only read: portbench never changes clocks).
#pragma once
#include <memory>
#include <string>

namespace portbench::measure {

class sm_clock {
 public:
  /// `pci_bus_id` as the driver reports it (cuDeviceGetPCIBusId). Never throws: without NVML
  /// every reading is -1 and why() says so.
  explicit sm_clock(const std::string& pci_bus_id);
  ~sm_clock();
  sm_clock(const sm_clock&) = delete;
  sm_clock& operator=(const sm_clock&) = delete;

  [[nodiscard]] int sm_mhz() const noexcept;       ///< current SM clock, -1 if unknown
  [[nodiscard]] int memory_mhz() const noexcept;   ///< current memory clock, -1 if unknown
  [[nodiscard]] int max_sm_mhz() const noexcept;   ///< the SM clock's maximum, -1 if unknown
  /// The kernel driver's version string, e.g. "580.159.04"; empty if unknown.
  [[nodiscard]] std::string driver_version() const;
  [[nodiscard]] const std::string& why() const noexcept { return m_why; }

 private:
  struct api;
  std::unique_ptr<api> m_api;
  void* m_device = nullptr;
  std::string m_why;
};

}  // namespace portbench::measure
