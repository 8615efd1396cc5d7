// SPDX-License-Identifier: Apache-2.0
// Device limits and rooflines. The device table holds what a results file does not: peak DRAM
// bandwidth, a measured copy bandwidth, FP32 and tensor-core peaks and the per-SM limits the
// occupancy calculation needs. A configuration's roofline point is its bytes and flops (from
// reference/) over its best-of-N device time. This part reads no bundle, so the report uses it.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "portbench/reference/config.hpp"
#include "portbench/store/results.hpp"

namespace portbench::diagnose {

struct device_spec {
  std::string name;              ///< as the driver names it, e.g. "NVIDIA H200"
  int sm = 0;                    ///< compute capability x 10, e.g. 90
  int sm_count = 0;
  double peak_bandwidth_gbps = 0;   ///< DRAM, vendor figure
  double copy_bandwidth_gbps = 0;   ///< a measured large device-to-device copy (read + write)
  std::string copy_source;          ///< where that figure comes from
  double fp32_tflops = 0;           ///< CUDA cores, dense
  double tensor_tflops = 0;         ///< 16-bit tensor cores, dense
  // Per-SM limits (occupancy).
  int registers_per_sm = 65536;
  int register_granularity = 256;   ///< registers allocated per warp in these units
  int max_registers_per_thread = 255;
  int max_threads_per_sm = 2048;
  int max_ctas_per_sm = 32;
  std::int64_t shared_per_sm = 0;   ///< bytes usable by CTAs
  std::int64_t shared_reserved_per_cta = 1024;
};

/// The table entry whose name `gpu_name` contains (longest match), else nullopt.
[[nodiscard]] std::optional<device_spec> find_device(const std::string& gpu_name);
/// Every entry, for docs and tests.
[[nodiscard]] const std::vector<device_spec>& device_table();

/// The device a results file ran on: the table entry for its GPU name, with the SM count from
/// the recorded device description (provenance `device`) and a measured copy bandwidth (root
/// attribute `copy_bandwidth_gbps`) where the file has them. `notes` says what came from where.
struct run_device {
  device_spec spec;
  bool known = false;            ///< a table entry matched
  std::vector<std::string> notes;
};
[[nodiscard]] run_device device_of(const store::provenance& p, double copy_gbps_override = 0);

/// The configuration a results file stores (operator + params JSON) as reference/ names it;
/// throws std::runtime_error when the params are not a JSON object.
[[nodiscard]] reference::config config_of(const store::config_info& c);

/// Bytes and flops of a configuration from the operator spec; nullopt (with `why`) when the
/// operator or its parameters are unknown to reference/.
struct work {
  double bytes = 0;
  double flops = 0;
};
[[nodiscard]] std::optional<work> work_of(const store::config_info& c, std::string* why = nullptr);

/// One side of one configuration on the roofline.
struct roofline_point {
  double time_ns = 0;
  double achieved_gbps = 0;     ///< bytes / time
  double achieved_gflops = 0;   ///< flops / time
  double intensity = 0;         ///< flops per byte
  double roof_gflops = 0;       ///< min(compute peak, intensity x copy bandwidth)
  double fraction_of_copy = 0;  ///< achieved / copy bandwidth
  double fraction_of_roof = 0;  ///< achieved flop rate / roof (memory-bound: = fraction_of_copy)
  bool memory_bound = true;     ///< intensity below the ridge point
};

/// `tensor` picks the tensor-core peak as the compute roof (the kernel uses tensor cores).
[[nodiscard]] roofline_point roofline(const work& w, double time_ns, const device_spec& d, bool tensor = false);

/// The run with valid timing whose median is smallest; null when there is none.
[[nodiscard]] const store::run_record* best_run(const store::role_results& r);

/// Best of N: the smallest run median over runs with valid timing; NaN when there is none.
[[nodiscard]] double best_of_n_ns(const store::role_results& r);

}  // namespace portbench::diagnose
