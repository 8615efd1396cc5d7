// SPDX-License-Identifier: Apache-2.0
#include "portbench/measure/output_guard.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "portbench/cuda/error.hpp"
#include "portbench/cuda/nvrtc.hpp"

namespace portbench::measure {
namespace {

// Element i of size s is unwritten when each of its bytes equals the pattern byte at its
// position in the repeating 4-byte pattern (that is how cuMemsetD32 laid it down).
constexpr const char* k_source = R"(
extern "C" __global__ void portbench_count_poison(const unsigned char* buf, unsigned long long elements,
                                                  int element_size, unsigned int pattern,
                                                  unsigned long long* count) {
  unsigned long long local = 0;
  for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < elements;
       i += (unsigned long long)gridDim.x * blockDim.x) {
    bool poisoned = true;
    if (element_size == 4) {
      poisoned = reinterpret_cast<const unsigned int*>(buf)[i] == pattern;
    } else if (element_size == 2) {
      unsigned short want = (i & 1) ? (unsigned short)(pattern >> 16) : (unsigned short)(pattern & 0xffff);
      poisoned = reinterpret_cast<const unsigned short*>(buf)[i] == want;
    } else if (element_size == 8) {
      const unsigned int* w = reinterpret_cast<const unsigned int*>(buf) + 2 * i;
      poisoned = w[0] == pattern && w[1] == pattern;
    } else {
      poisoned = buf[i] == (unsigned char)(pattern >> (8 * (i & 3)));
    }
    local += poisoned ? 1 : 0;
  }
  for (int off = 16; off > 0; off /= 2) local += __shfl_down_sync(0xffffffffu, local, off);
  if ((threadIdx.x & 31) == 0 && local != 0) atomicAdd(count, local);
}
)";

}  // namespace

std::uint32_t poison_pattern(std::uint64_t k) noexcept {
  auto lo = static_cast<std::uint32_t>(k & 0xF);
  auto hi = static_cast<std::uint32_t>((k >> 4) & 0xF);
  // 0xFFFx in each 16-bit half: fp16 and bf16 NaN; 0xFFFxFFFx: fp32 NaN; bytes 0xFx/0xFF.
  return 0xFFF0FFF0u | lo | (hi << 16);
}

output_guard::output_guard(cuda::context_ptr ctx) : m_ctx(std::move(ctx)), m_counter(m_ctx, sizeof(std::uint64_t)) {
  int major = m_ctx->info().cc_major, minor = m_ctx->info().cc_minor;
  auto cubin = cuda::compile_to_cubin(k_source, "portbench_count_poison.cu",
                                      "sm_" + std::to_string(major) + std::to_string(minor));
  m_module = cuda::module::load(m_ctx, cubin, "portbench_count_poison (NVRTC)");
  m_count.emplace(m_module, "portbench_count_poison");
  m_counter.fill_u32(0);
}

void output_guard::enqueue_count(const cuda::stream& s, CUdeviceptr buf, std::size_t bytes, int element_size,
                                 std::uint32_t pattern) const {
  if (element_size != 1 && element_size != 2 && element_size != 4 && element_size != 8) {
    throw std::invalid_argument("output_guard: element size " + std::to_string(element_size));
  }
  unsigned long long elements = bytes / static_cast<std::size_t>(element_size);
  if (elements == 0) return;
  CUdeviceptr counter = m_counter.address();
  void* args[] = {&buf, &elements, &element_size, &pattern, &counter};
  unsigned blocks = static_cast<unsigned>(std::min<unsigned long long>((elements + 255) / 256,
                                                                       static_cast<unsigned long long>(m_ctx->info().sm_count) * 8));
  PB_CU(m_ctx->api().cuLaunchKernel(m_count->native(), blocks, 1, 1, 256, 1, 1, 0, s.native(), args, nullptr));
}

std::uint64_t output_guard::read_and_reset(const cuda::stream& s) const {
  std::uint64_t count = 0;
  s.synchronize();
  PB_CU(m_ctx->api().cuMemcpyDtoH(&count, m_counter.address(), sizeof count));
  m_counter.fill_u32(0);
  return count;
}

}  // namespace portbench::measure
