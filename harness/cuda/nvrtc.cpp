// SPDX-License-Identifier: Apache-2.0
#include "portbench/cuda/nvrtc.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <memory>

namespace portbench::cuda {
namespace {

#define PORTBENCH_NVRTC_FUNCTIONS(X)                                                              \
  X(nvrtcVersion) X(nvrtcGetErrorString) X(nvrtcCreateProgram) X(nvrtcDestroyProgram)             \
  X(nvrtcCompileProgram) X(nvrtcGetProgramLogSize) X(nvrtcGetProgramLog) X(nvrtcGetCUBINSize)     \
  X(nvrtcGetCUBIN)

struct nvrtc_api {
#define PORTBENCH_NVRTC_MEMBER(name) decltype(&::name) name = nullptr;
  PORTBENCH_NVRTC_FUNCTIONS(PORTBENCH_NVRTC_MEMBER)
#undef PORTBENCH_NVRTC_MEMBER
  std::shared_ptr<void> library;
};

std::shared_ptr<const nvrtc_api> load_nvrtc() {
  void* handle = nullptr;
  std::string tried;
  for (std::string dir : {std::string(std::getenv("PORTBENCH_NVRTC_DIR") ? std::getenv("PORTBENCH_NVRTC_DIR") : ""),
                          std::string("/usr/local/cuda/lib64"), std::string(PORTBENCH_CUDA_LIBDIR_HINT), std::string()}) {
    std::string path = dir.empty() ? "libnvrtc.so.13" : dir + "/libnvrtc.so.13";
    // NODELETE: a vendor library stays mapped to the end (its own threads and atexit handlers may
    // outlive the handle), and a sanitizer's leak report can still name it.
    handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (handle) break;
    tried += (tried.empty() ? "" : ", ") + path;
  }
  if (!handle) throw nvrtc_error(NVRTC_ERROR_INTERNAL_ERROR, "dlopen(libnvrtc.so.13)", "not found; tried " + tried);
  auto api = std::make_shared<nvrtc_api>();
  api->library = std::shared_ptr<void>(handle, [](void* h) { ::dlclose(h); });
#define PORTBENCH_NVRTC_RESOLVE(name)                                                     \
  api->name = reinterpret_cast<decltype(api->name)>(::dlsym(handle, #name));              \
  if (!api->name) throw nvrtc_error(NVRTC_ERROR_INTERNAL_ERROR, "dlsym(" #name ")", "");
  PORTBENCH_NVRTC_FUNCTIONS(PORTBENCH_NVRTC_RESOLVE)
#undef PORTBENCH_NVRTC_RESOLVE
  return api;
}

void check(const nvrtc_api& api, nvrtcResult rc, const char* call, const std::string& detail = {}) {
  if (rc != NVRTC_SUCCESS) throw nvrtc_error(rc, call, std::string(api.nvrtcGetErrorString(rc)) + (detail.empty() ? "" : ": " + detail));
}

}  // namespace

nvrtc_error::nvrtc_error(nvrtcResult code, const std::string& call, const std::string& detail, code_location where)
    : portbench::error(call + ": NVRTC error " + std::to_string(static_cast<int>(code)) + (detail.empty() ? "" : " (" + detail + ")"),
                       {.code = static_cast<long long>(code), .call = call, .where = where}) {}

nvrtc_version nvrtc_library_version() {
  auto api = load_nvrtc();
  nvrtc_version v;
  check(*api, api->nvrtcVersion(&v.major, &v.minor), "nvrtcVersion");
  return v;
}

std::vector<std::byte> compile_to_cubin(const std::string& source, const std::string& name, const std::string& arch) {
  auto api = load_nvrtc();
  nvrtcProgram prog = nullptr;
  check(*api, api->nvrtcCreateProgram(&prog, source.c_str(), name.c_str(), 0, nullptr, nullptr), "nvrtcCreateProgram");
  std::string arch_opt = "--gpu-architecture=" + arch;
  const char* opts[] = {arch_opt.c_str(), "-default-device", "--std=c++17"};
  nvrtcResult rc = api->nvrtcCompileProgram(prog, 3, opts);
  std::string log;
  std::size_t log_size = 0;
  if (api->nvrtcGetProgramLogSize(prog, &log_size) == NVRTC_SUCCESS && log_size > 1) {
    log.resize(log_size);
    if (api->nvrtcGetProgramLog(prog, log.data()) != NVRTC_SUCCESS) log.clear();
  }
  if (rc != NVRTC_SUCCESS) {
    api->nvrtcDestroyProgram(&prog);
    check(*api, rc, "nvrtcCompileProgram", name + ": " + log);
  }
  std::size_t size = 0;
  std::vector<std::byte> cubin;
  try {
    check(*api, api->nvrtcGetCUBINSize(prog, &size), "nvrtcGetCUBINSize");
    cubin.resize(size);
    check(*api, api->nvrtcGetCUBIN(prog, reinterpret_cast<char*>(cubin.data())), "nvrtcGetCUBIN");
  } catch (...) {
    api->nvrtcDestroyProgram(&prog);
    throw;
  }
  check(*api, api->nvrtcDestroyProgram(&prog), "nvrtcDestroyProgram");
  return cubin;
}

}  // namespace portbench::cuda
