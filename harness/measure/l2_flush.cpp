// SPDX-License-Identifier: Apache-2.0
#include "portbench/measure/l2_flush.hpp"

#include <algorithm>
#include <string>

#include "portbench/cuda/error.hpp"
#include "portbench/cuda/nvrtc.hpp"

namespace portbench::measure {
namespace {

// 16-byte loads through L2 (ld.global.cg); the one store depends on every load, so none is
// dropped, and never happens unless the buffer's bytes XOR to that value (they cannot: the
// buffer holds one repeated word and every thread reads an even number of words).
constexpr const char* k_source = R"(
extern "C" __global__ void portbench_l2_read(const uint4* buf, unsigned long long n, unsigned int* sink) {
  unsigned int acc = 0;
  const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
#pragma unroll 4
  for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n; i += stride) {
    const uint4 v = __ldcg(buf + i);
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x9E3779B9u) *sink = acc;
}
)";

constexpr std::size_t k_min_bytes = std::size_t{1} << 20;

}  // namespace

l2_flush::l2_flush(cuda::context_ptr ctx)
    : m_ctx(std::move(ctx)),
      m_buffer(m_ctx, 2 * std::max(static_cast<std::size_t>(std::max(m_ctx->info().l2_bytes, 0)), k_min_bytes)),
      m_sink(m_ctx, sizeof(unsigned)) {
  const auto& info = m_ctx->info();
  auto cubin = cuda::compile_to_cubin(k_source, "portbench_l2_read.cu",
                                      "sm_" + std::to_string(info.cc_major) + std::to_string(info.cc_minor));
  m_module = cuda::module::load(m_ctx, cubin, "portbench_l2_read (NVRTC)");
  m_read.emplace(m_module, "portbench_l2_read");
  m_buffer.fill_u32(0x5A5A5A5Au);
  m_sink.fill_u32(0);
}

void l2_flush::enqueue(const cuda::stream& s) const {
  CUdeviceptr buf = m_buffer.address(), sink = m_sink.address();
  unsigned long long n = m_buffer.size() / 16;
  void* args[] = {&buf, &n, &sink};
  // Eight CTAs an SM keep enough loads in flight to read at DRAM speed.
  const unsigned blocks = static_cast<unsigned>(std::max(m_ctx->info().sm_count, 1)) * 8;
  PB_CU(m_ctx->api().cuLaunchKernel(m_read->native(), blocks, 1, 1, 256, 1, 1, 0, s.native(), args, nullptr));
  PB_CU(m_ctx->api().cuCtxResetPersistingL2Cache());
}

}  // namespace portbench::measure
