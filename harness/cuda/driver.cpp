// SPDX-License-Identifier: Apache-2.0
#include "portbench/cuda/driver.hpp"

#include <dlfcn.h>

#include <string>

#include "portbench/cuda/error.hpp"

namespace portbench::cuda {
namespace {

// The ABI the harness is compiled for: CUDA 13.0, the r580 driver's.
constexpr int k_driver_abi = 13000;

using get_proc_address_fn = CUresult (*)(const char*, void**, int, cuuint64_t,
                                         CUdriverProcAddressQueryResult*);

template <typename Fn>
void resolve(get_proc_address_fn get_proc, const char* symbol, Fn& out) {
  void* fn = nullptr;
  CUdriverProcAddressQueryResult status{};
  CUresult rc = get_proc(symbol, &fn, k_driver_abi, CU_GET_PROC_ADDRESS_DEFAULT, &status);
  if (rc != CUDA_SUCCESS) throw cuda_error(rc, std::string("cuGetProcAddress(") + symbol + ")", "");
  if (fn == nullptr || status != CU_GET_PROC_ADDRESS_SUCCESS) {
    throw cuda_error(CUDA_ERROR_NOT_FOUND, std::string("cuGetProcAddress(") + symbol + ")",
                     "the driver does not provide it for CUDA " + std::to_string(k_driver_abi));
  }
  out = reinterpret_cast<Fn>(fn);
}

}  // namespace

std::shared_ptr<const driver_api> load_driver() {
  // NODELETE: a vendor library stays mapped to the end (its own threads and atexit handlers may
  // outlive the handle), and a sanitizer's leak report can still name it.
  void* handle = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (handle == nullptr) {
    const char* why = ::dlerror();
    throw cuda_error(CUDA_ERROR_NO_DEVICE, "dlopen(libcuda.so.1)",
                     std::string("no CUDA driver on this machine: ") + (why ? why : "unknown"));
  }
  auto api = std::make_shared<driver_api>();
  api->library = std::shared_ptr<void>(handle, [](void* h) { ::dlclose(h); });
  auto get_proc = reinterpret_cast<get_proc_address_fn>(::dlsym(handle, "cuGetProcAddress_v2"));
  if (get_proc == nullptr) {
    throw cuda_error(CUDA_ERROR_NOT_FOUND, "dlsym(cuGetProcAddress_v2)",
                     "libcuda.so.1 is older than CUDA 12.0");
  }
#define PORTBENCH_DRIVER_RESOLVE(name) resolve(get_proc, #name, api->name);
  PORTBENCH_DRIVER_FUNCTIONS(PORTBENCH_DRIVER_RESOLVE)
#undef PORTBENCH_DRIVER_RESOLVE
  resolve(get_proc, "cuCtxSynchronize", api->cuCtxSynchronize_v2);
  PB_CU(api->cuInit(0));
  PB_CU(api->cuDriverGetVersion(&api->version));
  return api;
}

bool device_available(std::string* why) {
  try {
    auto api = load_driver();
    int count = 0;
    PB_CU(api->cuDeviceGetCount(&count));
    if (count > 0) return true;
    if (why) *why = "the CUDA driver reports no devices";
  } catch (const std::exception& e) {
    if (why) *why = e.what();
  }
  return false;
}

}  // namespace portbench::cuda
