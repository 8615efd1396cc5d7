// SPDX-License-Identifier: Apache-2.0
#include "portbench/diagnose/roofline.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "portbench/reference/spec.hpp"

namespace portbench::diagnose {
namespace {

device_spec entry(std::string name, int sm, int sms, double peak, double copy, std::string copy_source,
                  double fp32, double tensor, std::int64_t smem, int threads = 2048, int ctas = 32) {
  device_spec d;
  d.name = std::move(name);
  d.sm = sm;
  d.sm_count = sms;
  d.peak_bandwidth_gbps = peak;
  d.copy_bandwidth_gbps = copy;
  d.copy_source = std::move(copy_source);
  d.fp32_tflops = fp32;
  d.tensor_tflops = tensor;
  d.shared_per_sm = smem;
  d.max_threads_per_sm = threads;
  d.max_ctas_per_sm = ctas;
  return d;
}

// Vendor datasheet figures (SXM parts, dense tensor peaks). Only the H200's copy bandwidth was
// measured by this project; the others are 90% of peak until someone measures them.
const std::vector<device_spec> k_devices = {
    entry("H200", 90, 132, 4800, 4150, "measured: median of eight 1 GiB copies on the H200 (docs/device-log.md)",
          66.9, 989.4, 233472),
    entry("H100 PCIe", 90, 114, 2000, 1800, "estimate: 90% of peak", 51.2, 756.0, 233472),
    entry("H100", 90, 132, 3350, 3015, "estimate: 90% of peak", 66.9, 989.4, 233472),
    entry("B200", 100, 148, 8000, 7200, "estimate: 90% of peak", 80.0, 2250.0, 233472),
    entry("A100", 80, 108, 2039, 1835, "estimate: 90% of peak", 19.5, 312.0, 167936),
    entry("L40S", 89, 142, 864, 778, "estimate: 90% of peak", 91.6, 362.1, 102400, 1536, 24),
};

reference::param_value to_param(const nlohmann::json& j) {
  if (j.is_null()) return std::monostate{};
  if (j.is_boolean()) return j.get<bool>();
  if (j.is_number_integer()) return j.get<std::int64_t>();
  if (j.is_number()) return j.get<double>();
  if (j.is_string()) return j.get<std::string>();
  return j.dump();
}

}  // namespace

const std::vector<device_spec>& device_table() { return k_devices; }

std::optional<device_spec> find_device(const std::string& gpu_name) {
  const device_spec* best = nullptr;
  for (const auto& d : k_devices) {
    if (gpu_name.find(d.name) != std::string::npos && (best == nullptr || d.name.size() > best->name.size())) best = &d;
  }
  if (best == nullptr) return std::nullopt;
  return *best;
}

run_device device_of(const store::provenance& p, double copy_gbps_override) {
  run_device out;
  if (auto d = find_device(p.gpu_name)) {
    out.spec = *d;
    out.known = true;
  } else {
    out.spec = k_devices.front();
    out.notes.push_back("GPU '" + p.gpu_name + "' is not in the device table: its limits are taken from the " +
                        out.spec.name + " entry");
  }
  out.spec.name = p.gpu_name.empty() ? out.spec.name : p.gpu_name;
  if (auto it = p.extra.find("device"); it != p.extra.end()) {
    auto d = nlohmann::json::parse(it->second, nullptr, false);
    if (d.is_object() && d.contains("sm_count") && d["sm_count"].is_number_integer() && d["sm_count"].get<int>() > 0) {
      out.spec.sm_count = d["sm_count"].get<int>();
      out.notes.push_back(fmt::format("{} SMs, as the run recorded (provenance device)", out.spec.sm_count));
    }
  } else {
    out.notes.push_back(fmt::format("{} SMs from the device table (the file records no device description)",
                                    out.spec.sm_count));
  }
  if (copy_gbps_override > 0) {
    out.spec.copy_bandwidth_gbps = copy_gbps_override;
    out.spec.copy_source = "given on the command line";
  } else if (auto it = p.extra.find("copy_bandwidth_gbps"); it != p.extra.end()) {
    char* end = nullptr;
    double v = std::strtod(it->second.c_str(), &end);
    if (end != it->second.c_str() && v > 0) {
      out.spec.copy_bandwidth_gbps = v;
      out.spec.copy_source = "measured in this run (root attribute copy_bandwidth_gbps)";
    }
  }
  out.notes.push_back(fmt::format("copy bandwidth {:.0f} GB/s ({})", out.spec.copy_bandwidth_gbps, out.spec.copy_source));
  return out;
}

reference::config config_of(const store::config_info& c) {
  auto params = nlohmann::json::parse(c.params_json.empty() ? std::string("{}") : c.params_json, nullptr, false);
  if (!params.is_object()) throw std::runtime_error("configuration '" + c.id + "': params is not a JSON object");
  reference::config cfg;
  cfg.op = c.op;
  for (const auto& [k, v] : params.items()) cfg.params[k] = to_param(v);
  return cfg;
}

std::optional<work> work_of(const store::config_info& c, std::string* why) {
  try {
    reference::config cfg = config_of(c);
    auto cost = reference::find_operator(c.op).cost(cfg);
    if (!(cost.bytes_moved > 0)) throw std::runtime_error("the operator spec gives no bytes moved");
    return work{cost.bytes_moved, cost.flops};
  } catch (const std::exception& e) {
    if (why != nullptr) *why = e.what();
    return std::nullopt;
  }
}

roofline_point roofline(const work& w, double time_ns, const device_spec& d, bool tensor) {
  roofline_point p;
  p.time_ns = time_ns;
  if (!(time_ns > 0)) return p;
  p.achieved_gbps = w.bytes / time_ns;      // bytes per ns = GB/s
  p.achieved_gflops = w.flops / time_ns;
  p.intensity = w.bytes > 0 ? w.flops / w.bytes : 0;
  double peak_gflops = 1e3 * (tensor ? d.tensor_tflops : d.fp32_tflops);
  double memory_roof = p.intensity * d.copy_bandwidth_gbps;
  p.memory_bound = memory_roof < peak_gflops;
  p.roof_gflops = std::min(peak_gflops, memory_roof);
  p.fraction_of_copy = d.copy_bandwidth_gbps > 0 ? p.achieved_gbps / d.copy_bandwidth_gbps : 0;
  p.fraction_of_roof = p.memory_bound || !(p.roof_gflops > 0) ? p.fraction_of_copy : p.achieved_gflops / p.roof_gflops;
  return p;
}

const store::run_record* best_run(const store::role_results& r) {
  const store::run_record* best = nullptr;
  for (const auto& run : r.runs) {
    if (!run.has_valid_timing()) continue;
    if (best == nullptr || run.stats.median_ns < best->stats.median_ns) best = &run;
  }
  return best;
}

double best_of_n_ns(const store::role_results& r) {
  const store::run_record* best = best_run(r);
  return best != nullptr ? best->stats.median_ns : std::numeric_limits<double>::quiet_NaN();
}

}  // namespace portbench::diagnose
