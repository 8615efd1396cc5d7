// SPDX-License-Identifier: Apache-2.0
// Seeded fills. Element i draws from (seed, tensor name, i) only: the result does not depend on
// the thread count, and the caller can regenerate any element.
#include <algorithm>
#include <cmath>

#include "portbench/reference/parallel.hpp"
#include "portbench/reference/random.hpp"
#include "portbench/reference/tensor_access.hpp"

namespace portbench::reference {
namespace {

constexpr std::int64_t fill_grain = 1 << 20;

}  // namespace

void fill_uniform(host_tensor& t, std::uint64_t seed, double lo, double hi, unsigned threads) {
  const std::uint64_t key = stream_key(seed, t.spec.name);
  const std::int64_t n = t.spec.storage_elements;
  std::byte* data = t.bytes.data();
  const dtype type = t.spec.type;
  const bool integral = !is_floating(type);
  parallel_blocks(n, fill_grain, threads, [&](std::int64_t, std::int64_t begin, std::int64_t end) {
    constexpr std::int64_t chunk = 4096;
    double buf[chunk];
    for (std::int64_t b = begin; b < end; b += chunk) {
      const std::int64_t m = std::min(chunk, end - b);
      for (std::int64_t k = 0; k < m; ++k) {
        const double u = lo + (hi - lo) * uniform01(key, static_cast<std::uint64_t>(b + k));
        buf[k] = integral ? std::floor(u) : u;
      }
      store_span(data, type, b, m, buf);
    }
  });
}

void fill_constant(host_tensor& t, double v, unsigned threads) {
  const std::int64_t n = t.spec.storage_elements;
  std::byte* data = t.bytes.data();
  const dtype type = t.spec.type;
  parallel_blocks(n, fill_grain, threads, [&](std::int64_t, std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) store_element(data, type, i, v);
  });
}

}  // namespace portbench::reference
