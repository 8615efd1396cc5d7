// SPDX-License-Identifier: Apache-2.0
#include "portbench/cuda/cupti.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <vector>

namespace portbench::cuda {
namespace {

std::string format(CUptiResult code, const std::string& call, const std::string& detail,
                   const code_location& where) {
  std::string msg = call + ": CUPTI error " + std::to_string(static_cast<int>(code));
  if (!detail.empty()) msg += " (" + detail + ")";
  msg += " [" + where.str() + "]";
  return msg;
}

}  // namespace

cupti_error::cupti_error(CUptiResult code, const std::string& call, const std::string& detail, code_location where)
    : portbench::error(format(code, call, detail, where),
                       {.code = static_cast<long long>(code), .code_name = detail, .call = call, .where = where}) {}

void cupti_check(const cupti_api& api, CUptiResult code, const char* call, code_location where) {
  if (code == CUPTI_SUCCESS) return;
  const char* text = nullptr;
  if (api.cuptiGetResultString) api.cuptiGetResultString(code, &text);
  throw cupti_error(code, call, text ? text : "", where);
}

std::shared_ptr<const cupti_api> load_cupti() {
  std::vector<std::string> candidates;
  if (const char* env = std::getenv("PORTBENCH_CUPTI_LIBRARY")) candidates.emplace_back(env);
  for (const char* dir : {"/usr/local/cuda/extras/CUPTI/lib64", "/usr/local/cuda/lib64", PORTBENCH_CUDA_LIBDIR_HINT}) {
    if (*dir) candidates.push_back(std::string(dir) + "/libcupti.so.13");
  }
  candidates.emplace_back("libcupti.so.13");
  void* handle = nullptr;
  std::string tried, used;
  for (const auto& c : candidates) {
    // NODELETE: a vendor library stays mapped to the end (its own threads and atexit handlers may
    // outlive the handle), and a sanitizer's leak report can still name it.
    handle = ::dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (handle) {
      used = c;
      break;
    }
    tried += (tried.empty() ? "" : ", ") + c;
  }
  if (!handle) {
    throw cupti_error(CUPTI_ERROR_NOT_INITIALIZED, "dlopen(libcupti.so.13)", "not found; tried " + tried);
  }
  auto api = std::make_shared<cupti_api>();
  api->library = std::shared_ptr<void>(handle, [](void* h) { ::dlclose(h); });
  api->path = used;
#define PORTBENCH_CUPTI_RESOLVE(name)                                                                \
  api->name = reinterpret_cast<decltype(api->name)>(::dlsym(handle, #name));                         \
  if (!api->name) throw cupti_error(CUPTI_ERROR_NOT_INITIALIZED, "dlsym(" #name ")", used);
  PORTBENCH_CUPTI_FUNCTIONS(PORTBENCH_CUPTI_RESOLVE)
#undef PORTBENCH_CUPTI_RESOLVE
  PB_CUPTI(*api, cuptiGetVersion(&api->version));
  return api;
}

}  // namespace portbench::cuda
