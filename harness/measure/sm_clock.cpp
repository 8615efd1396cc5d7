// SPDX-License-Identifier: Apache-2.0
#include "portbench/measure/sm_clock.hpp"

#include <dlfcn.h>

namespace portbench::measure {
namespace {

// The few NVML entry points used, declared here (nvml.h is not among the pinned wheels); the
// NVML C ABI for these has been stable since CUDA 5.
using nvml_return = int;
constexpr nvml_return k_nvml_success = 0;
constexpr int k_nvml_clock_sm = 1;
constexpr int k_nvml_clock_mem = 2;

}  // namespace

struct sm_clock::api {
  void* handle = nullptr;
  nvml_return (*init)() = nullptr;
  nvml_return (*shutdown)() = nullptr;
  nvml_return (*by_bus_id)(const char*, void**) = nullptr;
  nvml_return (*clock_info)(void*, int, unsigned*) = nullptr;
  nvml_return (*max_clock_info)(void*, int, unsigned*) = nullptr;
  nvml_return (*driver_version)(char*, unsigned) = nullptr;
};

sm_clock::sm_clock(const std::string& pci_bus_id) {
  auto a = std::make_unique<api>();
  // NODELETE: a vendor library stays mapped to the end (its own threads and atexit handlers may
  // outlive the handle), and a sanitizer's leak report can still name it.
  a->handle = ::dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (!a->handle) {
    m_why = "libnvidia-ml.so.1 not found";
    return;
  }
  a->init = reinterpret_cast<nvml_return (*)()>(::dlsym(a->handle, "nvmlInit_v2"));
  a->shutdown = reinterpret_cast<nvml_return (*)()>(::dlsym(a->handle, "nvmlShutdown"));
  a->by_bus_id = reinterpret_cast<nvml_return (*)(const char*, void**)>(::dlsym(a->handle, "nvmlDeviceGetHandleByPciBusId_v2"));
  a->clock_info = reinterpret_cast<nvml_return (*)(void*, int, unsigned*)>(::dlsym(a->handle, "nvmlDeviceGetClockInfo"));
  a->max_clock_info = reinterpret_cast<nvml_return (*)(void*, int, unsigned*)>(::dlsym(a->handle, "nvmlDeviceGetMaxClockInfo"));
  a->driver_version = reinterpret_cast<nvml_return (*)(char*, unsigned)>(::dlsym(a->handle, "nvmlSystemGetDriverVersion"));
  if (!a->max_clock_info || !a->driver_version || !a->init || !a->shutdown || !a->by_bus_id || !a->clock_info) {
    m_why = "libnvidia-ml.so.1 lacks an expected symbol";
    ::dlclose(a->handle);
    return;
  }
  if (nvml_return rc = a->init(); rc != k_nvml_success) {
    m_why = "nvmlInit_v2 returned " + std::to_string(rc);
    ::dlclose(a->handle);
    return;
  }
  if (nvml_return rc = a->by_bus_id(pci_bus_id.c_str(), &m_device); rc != k_nvml_success) {
    m_why = "nvmlDeviceGetHandleByPciBusId_v2(" + pci_bus_id + ") returned " + std::to_string(rc);
    a->shutdown();
    ::dlclose(a->handle);
    return;
  }
  m_api = std::move(a);
}

sm_clock::~sm_clock() {
  if (m_api) {
    m_api->shutdown();
    ::dlclose(m_api->handle);
  }
}

int sm_clock::sm_mhz() const noexcept {
  unsigned mhz = 0;
  if (!m_api || m_api->clock_info(m_device, k_nvml_clock_sm, &mhz) != k_nvml_success) return -1;
  return static_cast<int>(mhz);
}

int sm_clock::max_sm_mhz() const noexcept {
  unsigned mhz = 0;
  if (!m_api || m_api->max_clock_info(m_device, k_nvml_clock_sm, &mhz) != k_nvml_success) return -1;
  return static_cast<int>(mhz);
}

std::string sm_clock::driver_version() const {
  char buf[96] = {};
  if (!m_api || m_api->driver_version(buf, sizeof buf) != k_nvml_success) return {};
  return buf;
}

int sm_clock::memory_mhz() const noexcept {
  unsigned mhz = 0;
  if (!m_api || m_api->clock_info(m_device, k_nvml_clock_mem, &mhz) != k_nvml_success) return -1;
  return static_cast<int>(mhz);
}

}  // namespace portbench::measure
