// SPDX-License-Identifier: Apache-2.0
// Exact conversions between double and the narrow float formats (fp16, bf16, fp8 e4m3fn and
// e5m2), as bit patterns. Encoding rounds to nearest, ties to even, straight from the double, so
// no double rounding through fp32. Subnormals are kept; overflow gives inf (fp16, bf16, e5m2) or
// NaN (e4m3fn has no inf, as in torch.float8_e4m3fn); NaN keeps its sign and becomes the quiet
// NaN of the format. Decoding is exact (every narrow value is a double).
#pragma once
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

namespace portbench::reference {

/// A binary float format: exponent and mantissa widths; `finite_nan` is the "fn" layout (no
/// inf; only all-ones exponent and mantissa is NaN, as in e4m3fn).
struct float_format {
  int exp_bits;
  int man_bits;
  bool finite_nan;

  [[nodiscard]] constexpr int bias() const { return (1 << (exp_bits - 1)) - 1; }
  [[nodiscard]] constexpr int emin() const { return 1 - bias(); }
  [[nodiscard]] constexpr std::uint32_t sign_bit() const { return 1U << (exp_bits + man_bits); }
  [[nodiscard]] constexpr std::uint32_t exp_mask() const { return ((1U << exp_bits) - 1) << man_bits; }
  [[nodiscard]] constexpr std::uint32_t max_finite_bits() const {
    return finite_nan ? (exp_mask() | ((1U << man_bits) - 2)) : (exp_mask() - (1U << man_bits)) |
                                                                   ((1U << man_bits) - 1);
  }
  [[nodiscard]] constexpr std::uint32_t inf_bits() const { return exp_mask(); }
  [[nodiscard]] constexpr std::uint32_t nan_bits() const {
    return finite_nan ? (exp_mask() | ((1U << man_bits) - 1)) : (exp_mask() | (1U << (man_bits - 1)));
  }
};

inline constexpr float_format fp16_format{5, 10, false};
inline constexpr float_format bf16_format{8, 7, false};
inline constexpr float_format fp8e4m3_format{4, 3, true};
inline constexpr float_format fp8e5m2_format{5, 2, false};

/// Rounds `x` to nearest even in format `f` and returns the bit pattern.
[[nodiscard]] inline std::uint32_t encode_float(double x, float_format f) noexcept {
  const std::uint64_t b = std::bit_cast<std::uint64_t>(x);
  const std::uint32_t sign = (b >> 63) != 0 ? f.sign_bit() : 0U;
  const std::uint64_t mag = b & 0x7FFF'FFFF'FFFF'FFFFULL;
  if (mag >= 0x7FF0'0000'0000'0000ULL) {  // inf or NaN
    if (mag > 0x7FF0'0000'0000'0000ULL || f.finite_nan) return sign | f.nan_bits();
    return sign | f.inf_bits();
  }
  const int e = static_cast<int>(mag >> 52) - 1023;
  const int m = f.man_bits;
  // Below half the smallest subnormal (or an fp64 subnormal): rounds to zero.
  if ((mag >> 52) == 0 || e < f.emin() - m - 1) return sign;
  const std::uint64_t mant = (mag & 0x000F'FFFF'FFFF'FFFFULL) | (1ULL << 52);
  const int qe = e > f.emin() ? e : f.emin();  // exponent of the target's leading bit
  const int shift = 52 - m + (qe - e);         // 52 - m .. 53
  std::uint64_t q = mant >> shift;
  const std::uint64_t rem = mant & ((1ULL << shift) - 1);
  const std::uint64_t half = 1ULL << (shift - 1);
  if (rem > half || (rem == half && (q & 1U) != 0)) ++q;
  // Subnormals and normals in one formula; a carry out of the mantissa bumps the exponent.
  const std::uint64_t bits = (static_cast<std::uint64_t>(qe - f.emin()) << m) + q;
  if (bits > f.max_finite_bits()) return sign | (f.finite_nan ? f.nan_bits() : f.inf_bits());
  return sign | static_cast<std::uint32_t>(bits);
}

/// The exact value of bit pattern `bits` in format `f`.
[[nodiscard]] inline double decode_float(std::uint32_t bits, float_format f) noexcept {
  const bool neg = (bits & f.sign_bit()) != 0;
  const std::uint32_t e = (bits & f.exp_mask()) >> f.man_bits;
  const std::uint32_t m = bits & ((1U << f.man_bits) - 1);
  const std::uint32_t e_all = (1U << f.exp_bits) - 1;
  double v;
  if (f.finite_nan && e == e_all && m == (1U << f.man_bits) - 1) {
    v = std::numeric_limits<double>::quiet_NaN();
  } else if (!f.finite_nan && e == e_all) {
    v = m == 0 ? std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
  } else if (e == 0) {
    v = std::ldexp(static_cast<double>(m), f.emin() - f.man_bits);
  } else {
    v = std::ldexp(static_cast<double>(m | (1U << f.man_bits)),
                   static_cast<int>(e) - f.bias() - f.man_bits);
  }
  return neg ? -v : v;
}

// Named helpers. The fp16 decode uses a table; bf16 decodes by a shift into fp32.
/// Round to nearest even of a double whose exponent is in a narrow format's normal range,
/// by integer arithmetic on its bits: `drop` low mantissa bits go, a carry out of the mantissa
/// bumps the exponent (to inf past the largest finite), `rebias` moves the exponent field.
/// The generic encode_float (subnormals, NaN, inf, overflow) was half of input generation.
[[nodiscard]] inline std::uint32_t round_normal_bits(std::uint64_t mag, int drop, std::uint64_t rebias) noexcept {
  const std::uint64_t lsb = (mag >> drop) & 1U;
  return static_cast<std::uint32_t>(((mag + ((1ULL << (drop - 1)) - 1) + lsb) >> drop) - rebias);
}

[[nodiscard]] inline std::uint16_t fp16_from_double(double x) noexcept {
  const std::uint64_t b = std::bit_cast<std::uint64_t>(x);
  const std::uint64_t mag = b & 0x7FFF'FFFF'FFFF'FFFFULL;
  // |x| in [2^-14, 2^16): fp16 normals, and the values that round up to inf.
  if (mag >= (1009ULL << 52) && mag < (1039ULL << 52)) {
    return static_cast<std::uint16_t>(((b >> 48) & 0x8000U) | round_normal_bits(mag, 42, 1008ULL << 10));
  }
  return static_cast<std::uint16_t>(encode_float(x, fp16_format));
}
[[nodiscard]] double fp16_to_double(std::uint16_t bits) noexcept;
[[nodiscard]] inline std::uint16_t bf16_from_double(double x) noexcept {
  const std::uint64_t b = std::bit_cast<std::uint64_t>(x);
  const std::uint64_t mag = b & 0x7FFF'FFFF'FFFF'FFFFULL;
  // |x| in [2^-126, 2^128): bf16 normals, and the values that round up to inf.
  if (mag >= (897ULL << 52) && mag < (1151ULL << 52)) {
    return static_cast<std::uint16_t>(((b >> 48) & 0x8000U) | round_normal_bits(mag, 45, 896ULL << 7));
  }
  return static_cast<std::uint16_t>(encode_float(x, bf16_format));
}
[[nodiscard]] inline double bf16_to_double(std::uint16_t bits) noexcept {
  return static_cast<double>(std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16));
}
[[nodiscard]] inline std::uint8_t fp8e4m3_from_double(double x) noexcept {
  return static_cast<std::uint8_t>(encode_float(x, fp8e4m3_format));
}
[[nodiscard]] double fp8e4m3_to_double(std::uint8_t bits) noexcept;
[[nodiscard]] inline std::uint8_t fp8e5m2_from_double(double x) noexcept {
  return static_cast<std::uint8_t>(encode_float(x, fp8e5m2_format));
}
[[nodiscard]] double fp8e5m2_to_double(std::uint8_t bits) noexcept;

}  // namespace portbench::reference
