// SPDX-License-Identifier: Apache-2.0
// dtype names (canonical and torch spellings) and format constants.
#include "portbench/reference/dtype.hpp"

#include <array>
#include <cmath>
#include <utility>

namespace portbench::reference {
namespace {

struct dtype_info {
  dtype type;
  std::string_view canonical;
  std::string_view torch;
  std::size_t size;
  int man_bits;        // -1 for integers
  int emin;            // exponent of the smallest normal
  double max_value;
};

constexpr std::array<dtype_info, 12> infos{{
    {dtype::f64, "fp64", "float64", 8, 52, -1022, 1.7976931348623157e308},
    {dtype::f32, "fp32", "float32", 4, 23, -126, 3.4028234663852886e38},
    {dtype::f16, "fp16", "float16", 2, 10, -14, 65504.0},
    {dtype::bf16, "bf16", "bfloat16", 2, 7, -126, 3.3895313892515355e38},
    {dtype::f8e4m3, "fp8e4m3", "float8_e4m3fn", 1, 3, -6, 448.0},
    {dtype::f8e5m2, "fp8e5m2", "float8_e5m2", 1, 2, -14, 57344.0},
    {dtype::i64, "i64", "int64", 8, -1, 0, 9.2233720368547758e18},
    {dtype::i32, "i32", "int32", 4, -1, 0, 2147483647.0},
    {dtype::i16, "i16", "int16", 2, -1, 0, 32767.0},
    {dtype::i8, "i8", "int8", 1, -1, 0, 127.0},
    {dtype::u8, "u8", "uint8", 1, -1, 0, 255.0},
    {dtype::boolean, "bool", "bool", 1, -1, 0, 1.0},
}};

const dtype_info& info(dtype t) noexcept { return infos[static_cast<std::size_t>(t)]; }

// Other spellings seen in configs, manifests and torch reprs.
constexpr std::array<std::pair<std::string_view, dtype>, 22> aliases{{
    {"double", dtype::f64},       {"f64", dtype::f64},          {"float", dtype::f32},
    {"f32", dtype::f32},          {"half", dtype::f16},         {"f16", dtype::f16},
    {"bfloat16", dtype::bf16},    {"float8_e4m3", dtype::f8e4m3}, {"fp8_e4m3fn", dtype::f8e4m3},
    {"fp8_e4m3", dtype::f8e4m3},  {"e4m3", dtype::f8e4m3},      {"fp8e4m3fn", dtype::f8e4m3},
    {"fp8_e5m2", dtype::f8e5m2},  {"e5m2", dtype::f8e5m2},      {"long", dtype::i64},
    {"int", dtype::i32},          {"short", dtype::i16},        {"uint8_t", dtype::u8},
    {"boolean", dtype::boolean},  {"f8e4m3", dtype::f8e4m3},    {"f8e5m2", dtype::f8e5m2},
    {"tf32", dtype::f32},
}};

}  // namespace

std::string_view to_string(dtype t) noexcept { return info(t).canonical; }
std::string_view torch_name(dtype t) noexcept { return info(t).torch; }
std::size_t size_of(dtype t) noexcept { return info(t).size; }
bool is_floating(dtype t) noexcept { return info(t).man_bits >= 0; }

std::optional<dtype> parse_dtype(std::string_view name) noexcept {
  if (name.substr(0, 6) == "torch.") name.remove_prefix(6);
  for (const auto& i : infos) {
    if (name == i.canonical || name == i.torch) return i.type;
  }
  for (const auto& [alias, t] : aliases) {
    if (name == alias) return t;
  }
  return std::nullopt;
}

double machine_epsilon(dtype t) noexcept {
  const int m = info(t).man_bits;
  return m < 0 ? 0.0 : std::ldexp(1.0, -m);
}

double min_subnormal(dtype t) noexcept {
  const auto& i = info(t);
  return i.man_bits < 0 ? 0.0 : std::ldexp(1.0, i.emin - i.man_bits);
}

double max_finite(dtype t) noexcept { return info(t).max_value; }

}  // namespace portbench::reference
