// SPDX-License-Identifier: Apache-2.0
#include "portbench/verify/output_digest.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>

#include "portbench/cuda/error.hpp"
#include "portbench/cuda/nvrtc.hpp"
#include "portbench/reference/parallel.hpp"
#include "portbench/reference/random.hpp"

namespace portbench::verify {
namespace {

// Each 32-bit word i contributes mix(word, position i) to two 64-bit sums with independent
// mixes; sums commute, so blocks combine with atomics in any order. A changed word changes both
// sums except with probability about 2^-128. The last, partial word is zero-padded.
constexpr const char* k_source = R"(
__device__ __forceinline__ unsigned long long mix64(unsigned long long z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
extern "C" __global__ void portbench_digest(const unsigned char* buf, unsigned long long bytes,
                                            unsigned long long salt, unsigned long long* sums) {
  const unsigned int* words = reinterpret_cast<const unsigned int*>(buf);
  const unsigned long long full = bytes / 4;
  unsigned long long a = 0, b = 0;
  for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i <= full;
       i += (unsigned long long)gridDim.x * blockDim.x) {
    unsigned long long w;
    if (i < full) {
      w = words[i];
    } else {
      if (bytes % 4 == 0) break;
      w = 0;
      for (unsigned long long k = 0; k < bytes % 4; ++k) w |= (unsigned long long)buf[4 * full + k] << (8 * k);
    }
    const unsigned long long p = i * 0x9E3779B97F4A7C15ull + salt;
    a += mix64(p ^ (w << 32 | w));
    b += mix64((p + 0x632BE59BD9B4E019ull) ^ (w * 0xD6E8FEB86659FD93ull));
  }
  for (int off = 16; off > 0; off /= 2) {
    a += __shfl_down_sync(0xffffffffu, a, off);
    b += __shfl_down_sync(0xffffffffu, b, off);
  }
  if ((threadIdx.x & 31) == 0) {
    atomicAdd(sums, a);
    atomicAdd(sums + 1, b);
  }
}
)";

// The kernel's mix64 (no increment), for host_digest.
std::uint64_t digest_mix(std::uint64_t z) noexcept {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

std::string hex_of(const std::string& name, std::uint64_t a, std::uint64_t b) {
  char hex[40];
  std::snprintf(hex, sizeof hex, "%016llx%016llx", static_cast<unsigned long long>(a), static_cast<unsigned long long>(b));
  return name + ":" + hex;
}

}  // namespace

std::string host_digest(const std::string& name, std::span<const std::byte> bytes) {
  const std::uint64_t salt = reference::hash_text(name);
  const auto full = static_cast<std::int64_t>(bytes.size() / 4);
  std::atomic<std::uint64_t> a{0}, b{0};
  // Word i of the last, partial word is the tail zero-padded, as in the kernel.
  reference::parallel_blocks(full + 1, std::int64_t{1} << 20, 0, [&](std::int64_t, std::int64_t begin, std::int64_t end) {
    std::uint64_t sa = 0, sb = 0;
    for (std::int64_t i = begin; i < end; ++i) {
      std::uint64_t w = 0;
      if (i < full) {
        std::uint32_t word;
        std::memcpy(&word, bytes.data() + 4 * i, 4);
        w = word;
      } else {
        if (bytes.size() % 4 == 0) break;
        for (std::size_t k = 0; k < bytes.size() % 4; ++k) {
          w |= static_cast<std::uint64_t>(static_cast<unsigned char>(bytes[4 * static_cast<std::size_t>(full) + k])) << (8 * k);
        }
      }
      const std::uint64_t p = static_cast<std::uint64_t>(i) * 0x9E3779B97F4A7C15ULL + salt;
      sa += digest_mix(p ^ (w << 32 | w));
      sb += digest_mix((p + 0x632BE59BD9B4E019ULL) ^ (w * 0xD6E8FEB86659FD93ULL));
    }
    a += sa;
    b += sb;
  });
  return hex_of(name, a.load(), b.load());
}

output_digest::output_digest(cuda::context_ptr ctx) : m_ctx(std::move(ctx)), m_sums(m_ctx, 2 * sizeof(std::uint64_t)) {
  int major = m_ctx->info().cc_major, minor = m_ctx->info().cc_minor;
  auto cubin = cuda::compile_to_cubin(k_source, "portbench_digest.cu", "sm_" + std::to_string(major) + std::to_string(minor));
  m_module = cuda::module::load(m_ctx, cubin, "portbench_digest (NVRTC)");
  m_kernel.emplace(m_module, "portbench_digest");
}

std::string output_digest::of(const cuda::stream& s, const std::vector<device_tensors::output_view>& tensors) const {
  std::string out;
  for (const auto& t : tensors) {
    m_sums.fill_u32(0);
    CUdeviceptr buf = t.address, sums = m_sums.address();
    unsigned long long bytes = t.bytes, salt = reference::hash_text(t.name);
    void* args[] = {&buf, &bytes, &salt, &sums};
    const unsigned long long words = bytes / 4 + 1;
    const auto blocks = static_cast<unsigned>(std::min<unsigned long long>(
        (words + 255) / 256, static_cast<unsigned long long>(m_ctx->info().sm_count) * 8));
    PB_CU(m_ctx->api().cuLaunchKernel(m_kernel->native(), blocks, 1, 1, 256, 1, 1, 0, s.native(), args, nullptr));
    s.synchronize();
    std::uint64_t v[2] = {0, 0};
    PB_CU(m_ctx->api().cuMemcpyDtoH(v, sums, sizeof v));
    out += (out.empty() ? "" : ";") + hex_of(t.name, v[0], v[1]);
  }
  return out;
}

}  // namespace portbench::verify
