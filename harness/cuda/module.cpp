// SPDX-License-Identifier: Apache-2.0
#include "portbench/cuda/module.hpp"

#include <cstdio>

#include "portbench/cuda/error.hpp"

namespace portbench::cuda {

module_ptr module::load(context_ptr ctx, std::span<const std::byte> image, std::string origin) {
  ctx->make_current();
  CUmodule m = nullptr;
  CUresult rc = ctx->api().cuModuleLoadData(&m, image.data());
  if (rc != CUDA_SUCCESS) throw cuda_error(rc, "cuModuleLoadData", origin);
  return module_ptr(new module(std::move(ctx), m, std::move(origin)));
}

module::module(context_ptr ctx, CUmodule m, std::string origin)
    : m_ctx(std::move(ctx)), m_module(m), m_origin(std::move(origin)) {}

module::~module() {
  CUresult rc = m_ctx->api().cuModuleUnload(m_module);
  if (rc != CUDA_SUCCESS && !is_sticky_error(rc)) {
    std::fprintf(stderr, "portbench: warning: cuModuleUnload(%s): %s\n", m_origin.c_str(),
                 result_name(rc));
  }
}

kernel::kernel(module_ptr mod, const std::string& entry) : m_module(std::move(mod)), m_entry(entry) {
  CUresult rc = m_module->ctx()->api().cuModuleGetFunction(&m_fn, m_module->native(), entry.c_str());
  if (rc != CUDA_SUCCESS) {
    throw cuda_error(rc, "cuModuleGetFunction", m_module->origin() + ": entry '" + entry + "'");
  }
}

kernel_attributes kernel::attributes() const {
  const auto& api = m_module->ctx()->api();
  auto get = [&](CUfunction_attribute a) {
    int v = 0;
    PB_CU(api.cuFuncGetAttribute(&v, a, m_fn));
    return v;
  };
  kernel_attributes k;
  k.registers = get(CU_FUNC_ATTRIBUTE_NUM_REGS);
  k.static_shared_bytes = get(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
  k.local_bytes = get(CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES);
  k.max_threads_per_block = get(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  k.ptx_version = get(CU_FUNC_ATTRIBUTE_PTX_VERSION);
  k.binary_version = get(CU_FUNC_ATTRIBUTE_BINARY_VERSION);
  return k;
}

void kernel::allow_dynamic_shared(int bytes) const {
  constexpr int k_default_limit = 48 * 1024;
  if (bytes <= k_default_limit) return;
  const auto& api = m_module->ctx()->api();
  PB_CU(api.cuFuncSetCacheConfig(m_fn, CU_FUNC_CACHE_PREFER_SHARED));
  PB_CU(api.cuFuncSetAttribute(m_fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes));
}

}  // namespace portbench::cuda
