// SPDX-License-Identifier: Apache-2.0
// Decode tables for fp16 and the fp8 formats: exact values stored as float (every fp16 and fp8
// value is a float), built once on first use.
#include <array>
#include <vector>

#include "portbench/reference/half.hpp"
#include "portbench/reference/tensor_access.hpp"

namespace portbench::reference {
namespace detail {
namespace {

template <std::size_t N>
std::vector<float> build_table(float_format f) {
  std::vector<float> t(N);
  for (std::size_t i = 0; i < N; ++i) t[i] = static_cast<float>(decode_float(static_cast<std::uint32_t>(i), f));
  return t;
}

}  // namespace

const float* fp16_table() noexcept {
  static const std::vector<float> table = build_table<65536>(fp16_format);
  return table.data();
}
const float* fp8e4m3_table() noexcept {
  static const std::vector<float> table = build_table<256>(fp8e4m3_format);
  return table.data();
}
const float* fp8e5m2_table() noexcept {
  static const std::vector<float> table = build_table<256>(fp8e5m2_format);
  return table.data();
}

}  // namespace detail

double fp16_to_double(std::uint16_t bits) noexcept { return detail::fp16_table()[bits]; }
double fp8e4m3_to_double(std::uint8_t bits) noexcept { return detail::fp8e4m3_table()[bits]; }
double fp8e5m2_to_double(std::uint8_t bits) noexcept { return detail::fp8e5m2_table()[bits]; }

}  // namespace portbench::reference
