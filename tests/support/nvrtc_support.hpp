// SPDX-License-Identifier: Apache-2.0
// NVRTC for CPU tests that compile the harness's own kernels. NVRTC loads its builtins library
// by name: outside the CUDA tree's library path (this CPU machine's .deps), load it first, as the
// exporters do. Needs PORTBENCH_SOURCE_DIR (every test target defines it).
#pragma once
#include <dlfcn.h>

#include <cstdlib>
#include <exception>
#include <filesystem>
#include <string>

#include "portbench/cuda/nvrtc.hpp"

namespace portbench::testing {

/// True if NVRTC loads; otherwise false with the reason in `why`.
inline bool load_nvrtc(std::string& why) {
  const std::string lib = std::string(PORTBENCH_SOURCE_DIR) + "/.deps/cuda-13.0/nvidia/cu13/lib";
  if (std::filesystem::exists(lib + "/libnvrtc-builtins.so.13.0")) {
    (void)::dlopen((lib + "/libnvrtc-builtins.so.13.0").c_str(), RTLD_NOW | RTLD_GLOBAL);
    ::setenv("PORTBENCH_NVRTC_DIR", lib.c_str(), 0);
  }
  try {
    (void)portbench::cuda::nvrtc_library_version();
    return true;
  } catch (const std::exception& e) {
    why = e.what();
    return false;
  }
}

}  // namespace portbench::testing
