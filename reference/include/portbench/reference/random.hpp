// SPDX-License-Identifier: Apache-2.0
// Counter-based random numbers: element i of a tensor depends only on (seed, tensor name, i),
// so inputs are the same whatever the thread count, and any element can be regenerated.
#pragma once
#include <cstdint>
#include <string_view>

#include "portbench/reference/spec.hpp"

namespace portbench::reference {

/// splitmix64's finaliser: a bijective 64-bit mix.
[[nodiscard]] constexpr std::uint64_t mix64(std::uint64_t x) noexcept {
  x += 0x9E37'79B9'7F4A'7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58'476D'1CE4'E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D0'49BB'1331'11EBULL;
  return x ^ (x >> 31);
}

/// FNV-1a of a string, for keys and tensor streams.
[[nodiscard]] constexpr std::uint64_t hash_text(std::string_view s) noexcept {
  std::uint64_t h = 0xCBF2'9CE4'8422'2325ULL;
  for (char ch : s) {
    h ^= static_cast<unsigned char>(ch);
    h *= 0x100'0000'01B3ULL;
  }
  return h;
}

/// The key of one random stream: a seed and a name (usually the tensor's).
[[nodiscard]] constexpr std::uint64_t stream_key(std::uint64_t seed, std::string_view name) noexcept {
  return mix64(seed ^ mix64(hash_text(name)));
}

/// Uniform in [0, 1) for element i of stream `key` (SplitMix64 at position i of stream `key`).
[[nodiscard]] constexpr double uniform01(std::uint64_t key, std::uint64_t i) noexcept {
  return static_cast<double>(mix64(key + i * 0x9E37'79B9'7F4A'7C15ULL) >> 11) * 0x1.0p-53;
}

/// Fills every storage element of `t` with uniform values in [lo, hi), rounded to its dtype.
/// Integer tensors get floor of the draw.
void fill_uniform(host_tensor& t, std::uint64_t seed, double lo, double hi, unsigned threads = 0);
/// Fills every storage element with `v` (rounded to the dtype).
void fill_constant(host_tensor& t, double v, unsigned threads = 0);

/// A small sequential generator for sampling (rows, tiles, Freivalds vectors).
class sample_rng {
 public:
  explicit sample_rng(std::uint64_t key) : m_key(key) {}
  [[nodiscard]] std::uint64_t next() noexcept { return mix64(m_key ^ mix64(m_count++)); }
  /// Uniform integer in [0, n); n > 0.
  [[nodiscard]] std::int64_t below(std::int64_t n) noexcept {
    return static_cast<std::int64_t>(next() % static_cast<std::uint64_t>(n));
  }
  [[nodiscard]] double unit() noexcept { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

 private:
  std::uint64_t m_key;
  std::uint64_t m_count = 0;
};

}  // namespace portbench::reference
