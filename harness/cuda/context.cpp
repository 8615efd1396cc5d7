// SPDX-License-Identifier: Apache-2.0
#include "portbench/cuda/context.hpp"

#include <array>
#include <cstdio>

#include "portbench/cuda/error.hpp"

namespace portbench::cuda {
namespace {

int attribute(const driver_api& api, CUdevice dev, CUdevice_attribute attr) {
  int value = 0;
  PB_CU(api.cuDeviceGetAttribute(&value, attr, dev));
  return value;
}

device_info query_info(const driver_api& api, CUdevice dev, int ordinal) {
  device_info info;
  info.ordinal = ordinal;
  std::array<char, 256> name{};
  PB_CU(api.cuDeviceGetName(name.data(), static_cast<int>(name.size()), dev));
  info.name = name.data();
  std::array<char, 64> bus{};
  PB_CU(api.cuDeviceGetPCIBusId(bus.data(), static_cast<int>(bus.size()), dev));
  info.pci_bus_id = bus.data();
  info.cc_major = attribute(api, dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  info.cc_minor = attribute(api, dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  info.sm_count = attribute(api, dev, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  info.l2_bytes = attribute(api, dev, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
  info.persisting_l2_max_bytes = attribute(api, dev, CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE);
  info.max_shared_optin_bytes = attribute(api, dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
  info.sm_clock_khz = attribute(api, dev, CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
  info.memory_clock_khz = attribute(api, dev, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
  info.memory_bus_bits = attribute(api, dev, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
  PB_CU(api.cuDeviceTotalMem(&info.total_memory, dev));
  info.driver_version = api.version;
  return info;
}

}  // namespace

std::shared_ptr<context> context::open(int ordinal, std::shared_ptr<const driver_api> api) {
  if (!api) api = load_driver();
  CUdevice dev = 0;
  PB_CU(api->cuDeviceGet(&dev, ordinal));
  CUcontext ctx = nullptr;
  PB_CU(api->cuDevicePrimaryCtxRetain(&ctx, dev));
  // From here the retain is owned by the object, whose destructor releases it.
  std::shared_ptr<context> self(new context(std::move(api), dev, ctx));
  self->make_current();
  self->m_info = query_info(*self->m_api, dev, ordinal);
  return self;
}

context::context(std::shared_ptr<const driver_api> api, CUdevice dev, CUcontext ctx)
    : m_api(std::move(api)), m_device(dev), m_ctx(ctx) {}

context::~context() {
  CUresult rc = m_api->cuDevicePrimaryCtxRelease(m_device);
  if (rc != CUDA_SUCCESS) {
    std::fprintf(stderr, "portbench: warning: cuDevicePrimaryCtxRelease: %s\n", result_name(rc));
  }
}

void context::make_current() const { PB_CU(m_api->cuCtxSetCurrent(m_ctx)); }
void context::synchronize() const { PB_CU(m_api->cuCtxSynchronize_v2(m_ctx)); }

}  // namespace portbench::cuda
