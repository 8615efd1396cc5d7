// SPDX-License-Identifier: Apache-2.0
// Exhaustive tests of the narrow float conversions: every bit pattern round-trips, decoding
// agrees with an independent formula, and rounding is to nearest even at every midpoint.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "portbench/reference/half.hpp"

namespace pr = portbench::reference;

namespace {

// Independent decode: value = (-1)^s * 2^(e - bias) * (1 + m / 2^M), written from the IEEE text.
double slow_decode(std::uint32_t bits, int E, int M, bool fn) {
  const int bias = (1 << (E - 1)) - 1;
  const bool neg = (bits >> (E + M)) & 1U;
  const std::uint32_t e = (bits >> M) & ((1U << E) - 1);
  const std::uint32_t m = bits & ((1U << M) - 1);
  double v;
  if (fn && e == (1U << E) - 1 && m == (1U << M) - 1) return std::numeric_limits<double>::quiet_NaN();
  if (!fn && e == (1U << E) - 1) {
    if (m != 0) return std::numeric_limits<double>::quiet_NaN();
    v = std::numeric_limits<double>::infinity();
  } else if (e == 0) {
    v = static_cast<double>(m) / static_cast<double>(1U << M) * std::pow(2.0, 1 - bias);
  } else {
    v = (1.0 + static_cast<double>(m) / static_cast<double>(1U << M)) * std::pow(2.0, static_cast<int>(e) - bias);
  }
  return neg ? -v : v;
}

void exhaustive(pr::float_format f, std::uint32_t patterns) {
  std::int64_t nans = 0;
  for (std::uint32_t b = 0; b < patterns; ++b) {
    const double v = pr::decode_float(b, f);
    const double slow = slow_decode(b, f.exp_bits, f.man_bits, f.finite_nan);
    if (std::isnan(slow)) {
      ASSERT_TRUE(std::isnan(v)) << std::hex << b;
      ++nans;
      const std::uint32_t back = pr::encode_float(v, f);
      ASSERT_TRUE(std::isnan(pr::decode_float(back, f))) << std::hex << b;
      continue;
    }
    ASSERT_EQ(v, slow) << std::hex << b;
    const std::uint32_t back = pr::encode_float(v, f);
    ASSERT_EQ(back, b) << "pattern " << std::hex << b << " value " << v;
  }
  EXPECT_GT(nans, 0);
}

// Midpoints between neighbours round to the even one; a hair either side rounds to the nearer.
void midpoints(pr::float_format f) {
  const std::uint32_t top = f.max_finite_bits();
  for (std::uint32_t b = 0; b < top; ++b) {
    const double lo = pr::decode_float(b, f);
    const double hi = pr::decode_float(b + 1, f);
    const double mid = 0.5 * (lo + hi);  // exact in double
    const std::uint32_t even = (b & 1U) == 0 ? b : b + 1;
    ASSERT_EQ(pr::encode_float(mid, f), even) << std::hex << b;
    ASSERT_EQ(pr::encode_float(std::nextafter(mid, 0.0), f), b) << std::hex << b;
    ASSERT_EQ(pr::encode_float(std::nextafter(mid, INFINITY), f), b + 1) << std::hex << b;
    ASSERT_EQ(pr::encode_float(-mid, f), even | f.sign_bit()) << std::hex << b;
  }
}

}  // namespace

TEST(half, fp16_all_patterns_round_trip) { exhaustive(pr::fp16_format, 1U << 16); }
TEST(half, bf16_all_patterns_round_trip) { exhaustive(pr::bf16_format, 1U << 16); }
TEST(half, fp8e4m3_all_patterns_round_trip) { exhaustive(pr::fp8e4m3_format, 1U << 8); }
TEST(half, fp8e5m2_all_patterns_round_trip) { exhaustive(pr::fp8e5m2_format, 1U << 8); }

TEST(half, fp16_midpoints_round_to_even) { midpoints(pr::fp16_format); }
TEST(half, bf16_midpoints_round_to_even) { midpoints(pr::bf16_format); }
TEST(half, fp8_midpoints_round_to_even) {
  midpoints(pr::fp8e4m3_format);
  midpoints(pr::fp8e5m2_format);
}

TEST(half, named_helpers_agree_with_tables) {
  for (std::uint32_t b = 0; b < (1U << 16); ++b) {
    const auto h = static_cast<std::uint16_t>(b);
    const double a = pr::fp16_to_double(h);
    const double s = pr::decode_float(b, pr::fp16_format);
    ASSERT_TRUE((std::isnan(a) && std::isnan(s)) || a == s) << b;
    const double c = pr::bf16_to_double(h);
    const double t = pr::decode_float(b, pr::bf16_format);
    ASSERT_TRUE((std::isnan(c) && std::isnan(t)) || c == t) << b;
  }
  for (std::uint32_t b = 0; b < 256; ++b) {
    const auto q = static_cast<std::uint8_t>(b);
    const double a = pr::fp8e4m3_to_double(q), s = pr::decode_float(b, pr::fp8e4m3_format);
    ASSERT_TRUE((std::isnan(a) && std::isnan(s)) || a == s) << b;
    const double c = pr::fp8e5m2_to_double(q), t = pr::decode_float(b, pr::fp8e5m2_format);
    ASSERT_TRUE((std::isnan(c) && std::isnan(t)) || c == t) << b;
  }
}

// fp16_from_double and bf16_from_double take an integer fast path for normal values: at every
// midpoint (and a hair either side) and on random doubles of every magnitude they must agree
// with the generic encoder.
TEST(half, named_encoders_agree_with_generic_encoder) {
  auto check = [](double x) {
    ASSERT_EQ(pr::fp16_from_double(x), pr::encode_float(x, pr::fp16_format)) << x;
    ASSERT_EQ(pr::bf16_from_double(x), pr::encode_float(x, pr::bf16_format)) << x;
  };
  for (const auto f : {pr::fp16_format, pr::bf16_format}) {
    for (std::uint32_t b = 0; b < f.max_finite_bits(); ++b) {
      const double mid = 0.5 * (pr::decode_float(b, f) + pr::decode_float(b + 1, f));
      for (double x : {mid, std::nextafter(mid, 0.0), std::nextafter(mid, INFINITY), pr::decode_float(b, f)}) {
        check(x);
        check(-x);
      }
    }
  }
  std::uint64_t z = 12345;
  for (int i = 0; i < 2000000; ++i) {
    z = z * 6364136223846793005ULL + 1442695040888963407ULL;   // every exponent, sign and mantissa
    double x;
    const std::uint64_t bits = z ^ (z >> 29);
    std::memcpy(&x, &bits, sizeof x);
    check(x);
    check(std::ldexp(static_cast<double>(bits >> 11) * 0x1.0p-53, static_cast<int>(bits % 300) - 150));
  }
  for (double x : {65504.0, 65519.99, 65520.0, 65536.0, 0x1.fffffep127, 0x1.ffp127, 0x1.fffp127, double{INFINITY}, -double{INFINITY},
                   double{NAN}, 0.0, -0.0, std::ldexp(1.0, -14), std::nextafter(std::ldexp(1.0, -14), 0.0),
                   std::ldexp(1.0, -126), std::nextafter(std::ldexp(1.0, -126), 0.0)}) {
    if (std::isnan(x)) {
      EXPECT_EQ(pr::fp16_from_double(x) & 0x7FFF, pr::encode_float(x, pr::fp16_format) & 0x7FFF);
      continue;
    }
    check(x);
    check(-x);
  }
}

TEST(half, known_values) {
  EXPECT_EQ(pr::fp16_from_double(1.0), 0x3C00);
  EXPECT_EQ(pr::fp16_from_double(65504.0), 0x7BFF);
  EXPECT_EQ(pr::fp16_from_double(65519.99), 0x7BFF);
  EXPECT_EQ(pr::fp16_from_double(65520.0), 0x7C00);  // tie to even overflows to inf
  EXPECT_EQ(pr::fp16_from_double(std::ldexp(1.0, -24)), 0x0001);
  EXPECT_EQ(pr::fp16_from_double(std::ldexp(1.0, -25)), 0x0000);  // tie to even: zero
  EXPECT_EQ(pr::fp16_from_double(std::ldexp(1.5, -25)), 0x0001);
  EXPECT_EQ(pr::fp16_from_double(-0.0), 0x8000);
  EXPECT_EQ(pr::fp16_from_double(INFINITY), 0x7C00);
  EXPECT_EQ(pr::fp16_from_double(-NAN) & 0x7FFF, 0x7E00);
  EXPECT_EQ(pr::bf16_from_double(1.0), 0x3F80);
  EXPECT_EQ(pr::bf16_from_double(1.0 + std::ldexp(1.0, -8)), 0x3F80);  // tie to even
  EXPECT_EQ(pr::bf16_from_double(1.0 + 3 * std::ldexp(1.0, -8)), 0x3F82);
  EXPECT_EQ(pr::bf16_from_double(1e39), 0x7F80);
  // e4m3fn: no inf; 448 is the largest; the tie 464 rounds to even (448), above it rounds to
  // the NaN pattern (torch's float8_e4m3fn does the same).
  EXPECT_EQ(pr::fp8e4m3_from_double(448.0), 0x7E);
  EXPECT_EQ(pr::fp8e4m3_from_double(464.0), 0x7E);
  EXPECT_EQ(pr::fp8e4m3_from_double(464.5), 0x7F);
  EXPECT_EQ(pr::fp8e4m3_from_double(INFINITY), 0x7F);
  EXPECT_EQ(pr::fp8e4m3_from_double(-1e6), 0xFF);
  EXPECT_EQ(pr::fp8e4m3_from_double(std::ldexp(1.0, -9)), 0x01);
  EXPECT_EQ(pr::fp8e5m2_from_double(57344.0), 0x7B);
  EXPECT_EQ(pr::fp8e5m2_from_double(61440.0), 0x7C);  // tie: even is inf
  EXPECT_EQ(pr::fp8e5m2_from_double(-INFINITY), 0xFC);
  EXPECT_EQ(pr::fp8e5m2_from_double(std::ldexp(1.0, -16)), 0x01);
  EXPECT_EQ(pr::fp8e5m2_from_double(std::ldexp(1.0, -17)), 0x00);
}

// GCC's _Float16 (software RNE in libgcc) as an independent encoder, where the compiler has it.
#if defined(__FLT16_MANT_DIG__)
TEST(half, fp16_matches_compiler_float16_on_many_floats) {
  std::uint64_t checked = 0;
  for (std::uint64_t u = 0; u < (1ULL << 32); u += 4099) {
    const auto bits = static_cast<std::uint32_t>(u);
    float f;
    std::memcpy(&f, &bits, 4);
    if (std::isnan(f)) continue;
    const _Float16 h = static_cast<_Float16>(f);
    std::uint16_t hb;
    std::memcpy(&hb, &h, 2);
    ASSERT_EQ(pr::fp16_from_double(static_cast<double>(f)), hb) << std::hex << bits;
    ++checked;
  }
  EXPECT_GT(checked, 1000000U);
}
#endif
