// SPDX-License-Identifier: Apache-2.0
// What makes a timing trustworthy, as pure functions the worker applies and CPU tests check:
// the median's interval (one method for the stop rule and the stored figure), a throttled SM
// clock, and the physical floor no kernel can beat.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "portbench/reference/spec.hpp"

namespace portbench::measure {

/// Median and the relative half-width of its 95% interval, exactly as the results file stores
/// them (stats::summarize: binomial order statistics). Below 6 samples there is no interval and
/// the half-width is 1 (never "tight"). The stop rule reads the same numbers.
struct median_ci {
  double median = 0;
  double rel_half_width = 1;
};
[[nodiscard]] median_ci median_with_ci(std::span<const std::int64_t> device_ns);

/// True when a sample's SM clock was below `fraction` of the maximum SM clock (both in MHz,
/// from NVML). Unknown clocks (<= 0) or a fraction <= 0 never count as throttled.
[[nodiscard]] bool clock_throttled(int sm_mhz, int max_sm_mhz, double fraction) noexcept;

/// A GPU's peak DRAM bandwidth and its highest dense tensor-core rate, from the vendor's data
/// sheets (docs/measurement.md lists them): a timing faster than these allow is impossible.
struct device_peaks {
  std::string_view name_contains;   ///< matched against the driver's device name, first match wins
  double bytes_per_s = 0;
  double flops_per_s = 0;
};
[[nodiscard]] std::span<const device_peaks> device_peak_table() noexcept;
/// The table entry for a device name such as "NVIDIA H200", or nullptr.
[[nodiscard]] const device_peaks* find_device_peaks(std::string_view gpu_name) noexcept;

/// The least time a launch plan with these costs can take on the device. With a cold L2 the
/// bytes beyond the L2's size must cross DRAM (a kernel's writes can still sit in L2 when it
/// ends, so the L2 is subtracted); with a warm L2 only the flops bound. ns == 0: no floor
/// (unknown device, nothing to bound).
struct physical_floor {
  double ns = 0;
  std::string why;   ///< e.g. "44.0 MB beyond the 50.3 MB L2 at 4.80 TB/s (NVIDIA H200 peak)"
};
[[nodiscard]] physical_floor floor_of(const reference::cost_model& cost, std::string_view gpu_name,
                                      std::int64_t l2_bytes, bool cold_l2);

}  // namespace portbench::measure
