// SPDX-License-Identifier: Apache-2.0
// The CUDA driver API, loaded at run time: libcuda.so.1 is dlopen'ed and every entry point is
// resolved through cuGetProcAddress for the CUDA 13.0 ABI. Nothing links against libcuda, so
// the library, the CLI and the unit tests run on machines without a GPU or a driver.
#pragma once
#include <cuda.h>

#include <memory>
#include <string>

namespace portbench::cuda {

// Every driver entry point portbench calls. X(name) expands to the cuda.h prototype's name,
// which cuda.h maps to the newest ABI version (cuMemAlloc -> cuMemAlloc_v2).
#define PORTBENCH_DRIVER_FUNCTIONS(X)                                                       \
  X(cuInit) X(cuDriverGetVersion) X(cuGetErrorName) X(cuGetErrorString)                     \
  X(cuDeviceGet) X(cuDeviceGetCount) X(cuDeviceGetName) X(cuDeviceGetAttribute)             \
  X(cuDeviceTotalMem) X(cuDeviceGetPCIBusId)                                                \
  X(cuDevicePrimaryCtxRetain) X(cuDevicePrimaryCtxRelease) X(cuCtxSetCurrent)               \
  X(cuCtxGetCurrent) X(cuCtxResetPersistingL2Cache)                                         \
  X(cuModuleLoadData) X(cuModuleUnload) X(cuModuleGetFunction)                              \
  X(cuFuncGetAttribute) X(cuFuncSetAttribute) X(cuFuncSetCacheConfig) X(cuFuncGetName)      \
  X(cuLaunchKernel) X(cuLaunchKernelEx)                                                     \
  X(cuMemAlloc) X(cuMemFree) X(cuMemcpyHtoD) X(cuMemcpyDtoH) X(cuMemcpyDtoD)                \
  X(cuMemsetD8) X(cuMemsetD32) X(cuMemsetD8Async) X(cuMemsetD32Async) X(cuMemcpyHtoDAsync)  \
  X(cuMemcpyDtoDAsync) X(cuMemGetInfo) X(cuMemsetD16Async)                                  \
  X(cuStreamCreate) X(cuStreamDestroy) X(cuStreamSynchronize) X(cuStreamQuery)              \
  X(cuEventCreate) X(cuEventDestroy) X(cuEventRecord) X(cuEventSynchronize)                 \
  X(cuEventElapsedTime) X(cuEventQuery)

/// Function table of the loaded driver. Obtain it with load_driver(); it stays valid as long
/// as any shared_ptr to it lives (the library handle is closed last).
struct driver_api {
#define PORTBENCH_DRIVER_MEMBER(name) decltype(&::name) name = nullptr;
  PORTBENCH_DRIVER_FUNCTIONS(PORTBENCH_DRIVER_MEMBER)
#undef PORTBENCH_DRIVER_MEMBER
  // At the 13.0 ABI "cuCtxSynchronize" resolves to cuCtxSynchronize_v2(CUcontext), while cuda.h
  // still declares the old, argument-less prototype under that name (no #define maps it):
  // calling it through the old type passed garbage as the context (CUDA_ERROR_CONTEXT_IS_DESTROYED).
  decltype(&::cuCtxSynchronize_v2) cuCtxSynchronize_v2 = nullptr;
  int version = 0;   ///< cuDriverGetVersion, e.g. 13000 for r580
  std::shared_ptr<void> library;   ///< the dlopen handle
};

/// Loads libcuda.so.1, resolves the table and calls cuInit(0). Throws cuda_error naming the
/// step that failed (dlopen, a missing symbol, cuInit's CUresult).
[[nodiscard]] std::shared_ptr<const driver_api> load_driver();

/// True if a driver can be loaded and reports at least one device; never throws. `why`
/// receives the reason when it returns false (for test skips and error messages).
[[nodiscard]] bool device_available(std::string* why = nullptr);

}  // namespace portbench::cuda
