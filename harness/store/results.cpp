// SPDX-License-Identifier: Apache-2.0
#include "portbench/store/results.hpp"

#include "portbench/verdicts.hpp"

namespace portbench::store {

std::string_view to_string(role r) noexcept {
  return r == role::reference ? "reference" : "port";
}

std::optional<role> role_from_string(std::string_view text) noexcept {
  if (text == "reference") return role::reference;
  if (text == "port") return role::port;
  return std::nullopt;
}

void run_record::add_sample(const sample& s) {
  time_ns.push_back(s.device_ns);
  sm_clock_mhz.push_back(s.sm_clock_mhz);
  event_time_ns.push_back(s.event_ns);
  kernel_time_ns.insert(kernel_time_ns.end(), s.kernel_ns.begin(), s.kernel_ns.end());
}

bool run_record::has_valid_timing() const noexcept {
  return ::portbench::verdicts::timing_valid(verdicts.timing) && stats.count > 0;
}

const role_results* config_results::find(role r) const noexcept {
  for (const auto& rr : roles) {
    if (rr.role == r) return &rr;
  }
  return nullptr;
}

role_results* config_results::find(role r) noexcept {
  for (auto& rr : roles) {
    if (rr.role == r) return &rr;
  }
  return nullptr;
}

const config_results* results_file::find(std::string_view config_id) const noexcept {
  for (const auto& c : configs) {
    if (c.info.id == config_id) return &c;
  }
  return nullptr;
}

config_results* results_file::find(std::string_view config_id) noexcept {
  for (auto& c : configs) {
    if (c.info.id == config_id) return &c;
  }
  return nullptr;
}

std::size_t results_file::run_count() const noexcept {
  std::size_t n = 0;
  for (const auto& c : configs) {
    for (const auto& r : c.roles) n += r.runs.size();
  }
  return n;
}

}  // namespace portbench::store
