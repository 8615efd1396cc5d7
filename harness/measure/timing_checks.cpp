// SPDX-License-Identifier: Apache-2.0
#include "portbench/measure/timing_checks.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>

#include "portbench/stats/summary.hpp"

namespace portbench::measure {
namespace {

// Peak DRAM bandwidth (the fastest memory variant of the name) and the highest dense FP8
// tensor-core rate, without sparsity, from NVIDIA's data sheets. Names that contain another's
// come first (GH200 before H200). A100 has no FP8: its dense INT8 rate.
constexpr std::array<device_peaks, 7> k_table{{
    {"B200", 8.0e12, 4.5e15},
    {"GH200", 4.9e12, 1.979e15},
    {"H200", 4.8e12, 1.979e15},
    {"H100", 3.9e12, 1.979e15},
    {"H800", 3.35e12, 1.979e15},
    {"A100", 2.039e12, 6.24e14},
    {"L40S", 8.64e11, 7.33e14},
}};

std::string fmt(const char* f, double a, double b = 0, double c = 0) {
  char buf[160];
  std::snprintf(buf, sizeof buf, f, a, b, c);
  return buf;
}

}  // namespace

median_ci median_with_ci(std::span<const std::int64_t> device_ns) {
  const stats::sample_summary s = stats::summarize(device_ns);
  median_ci r;
  if (s.count == 0) return {0, 1};
  r.median = s.median;
  r.rel_half_width = std::isfinite(s.median_rel_ci) ? s.median_rel_ci : 1.0;
  return r;
}

bool clock_throttled(int sm_mhz, int max_sm_mhz, double fraction) noexcept {
  if (sm_mhz <= 0 || max_sm_mhz <= 0 || fraction <= 0) return false;
  return sm_mhz < fraction * max_sm_mhz;
}

std::span<const device_peaks> device_peak_table() noexcept { return k_table; }

const device_peaks* find_device_peaks(std::string_view gpu_name) noexcept {
  for (const auto& d : k_table) {
    if (gpu_name.find(d.name_contains) != std::string_view::npos) return &d;
  }
  return nullptr;
}

physical_floor floor_of(const reference::cost_model& cost, std::string_view gpu_name, std::int64_t l2_bytes,
                        bool cold_l2) {
  physical_floor out;
  const device_peaks* d = find_device_peaks(gpu_name);
  if (d == nullptr) return out;
  const std::string who = " (" + std::string(gpu_name) + " peak, device table)";
  if (cold_l2) {
    const double dram = std::max(0.0, cost.bytes_moved - static_cast<double>(std::max<std::int64_t>(l2_bytes, 0)));
    const double ns = dram / d->bytes_per_s * 1e9;
    if (ns > out.ns) {
      out.ns = ns;
      out.why = fmt("%.1f MB beyond the %.1f MB L2 at %.2f TB/s", dram / 1e6, static_cast<double>(l2_bytes) / 1e6,
                    d->bytes_per_s / 1e12) + who;
    }
  }
  const double ns = cost.flops / d->flops_per_s * 1e9;
  if (ns > out.ns) {
    out.ns = ns;
    out.why = fmt("%.3g Gflop at %.0f Tflop/s", cost.flops / 1e9, d->flops_per_s / 1e12) + who;
  }
  return out;
}

}  // namespace portbench::measure
