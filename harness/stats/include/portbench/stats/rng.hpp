// SPDX-License-Identifier: Apache-2.0
// A small seeded generator (xoshiro256**, seeded through splitmix64) with our own index
// mapping, so a bootstrap gives the same interval on every platform and standard library.
#pragma once
#include <cstddef>
#include <cstdint>

namespace portbench::stats {

class rng {
 public:
  explicit rng(std::uint64_t seed) noexcept {
    for (auto& word : m_s) word = splitmix(seed);
  }
  std::uint64_t next() noexcept {
    const std::uint64_t result = rotl(m_s[1] * 5, 7) * 9;
    const std::uint64_t t = m_s[1] << 17;
    m_s[2] ^= m_s[0];
    m_s[3] ^= m_s[1];
    m_s[1] ^= m_s[2];
    m_s[0] ^= m_s[3];
    m_s[2] ^= t;
    m_s[3] = rotl(m_s[3], 45);
    return result;
  }
  /// Uniform index in [0, n) for n > 0 (multiply-shift; bias below 2^-40 for n < 2^24).
  std::size_t index(std::size_t n) noexcept {
    return static_cast<std::size_t>(mul_high(next(), static_cast<std::uint64_t>(n)));
  }
  /// Uniform in [0, 1).
  double uniform() noexcept { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

 private:
  /// High 64 bits of the 128-bit product a * b.
  static std::uint64_t mul_high(std::uint64_t a, std::uint64_t b) noexcept {
    const std::uint64_t a_lo = a & 0xffffffffULL, a_hi = a >> 32;
    const std::uint64_t b_lo = b & 0xffffffffULL, b_hi = b >> 32;
    const std::uint64_t lo_lo = a_lo * b_lo;
    const std::uint64_t hi_lo = a_hi * b_lo;
    const std::uint64_t lo_hi = a_lo * b_hi;
    const std::uint64_t cross = (lo_lo >> 32) + (hi_lo & 0xffffffffULL) + lo_hi;
    return a_hi * b_hi + (hi_lo >> 32) + (cross >> 32);
  }
  static std::uint64_t rotl(std::uint64_t x, int k) noexcept { return (x << k) | (x >> (64 - k)); }
  static std::uint64_t splitmix(std::uint64_t& state) noexcept {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  std::uint64_t m_s[4];
};

/// Stable 64-bit hash of a string (FNV-1a), to derive per-group seeds from one seed.
[[nodiscard]] constexpr std::uint64_t hash_seed(std::uint64_t seed, const char* text) noexcept {
  std::uint64_t h = 0xcbf29ce484222325ULL ^ seed;
  for (; *text != '\0'; ++text) {
    h ^= static_cast<unsigned char>(*text);
    h *= 0x100000001b3ULL;
  }
  return h;
}

}  // namespace portbench::stats
