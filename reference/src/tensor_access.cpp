// SPDX-License-Identifier: Apache-2.0
// Element loads and stores for every dtype.
#include <cmath>
#include <cstring>
#include <limits>

#include "portbench/reference/tensor_access.hpp"

namespace portbench::reference {
namespace {

template <class T>
T read_as(const std::byte* data, std::int64_t i) noexcept {
  T v;
  std::memcpy(&v, data + i * static_cast<std::int64_t>(sizeof(T)), sizeof(T));
  return v;
}

template <class T>
void write_as(std::byte* data, std::int64_t i, T v) noexcept {
  std::memcpy(data + i * static_cast<std::int64_t>(sizeof(T)), &v, sizeof(T));
}

// Integers: nearest, saturating; NaN stores 0.
template <class T>
T to_integer(double v) noexcept {
  if (std::isnan(v)) return 0;
  const double r = std::nearbyint(v);
  if (r <= static_cast<double>(std::numeric_limits<T>::min())) return std::numeric_limits<T>::min();
  if (r >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
  return static_cast<T>(r);
}

}  // namespace

double load_element(const std::byte* data, dtype type, std::int64_t i) noexcept {
  switch (type) {
    case dtype::f64: return read_as<double>(data, i);
    case dtype::f32: return read_as<float>(data, i);
    case dtype::f16: return fp16_to_double(read_as<std::uint16_t>(data, i));
    case dtype::bf16: return bf16_to_double(read_as<std::uint16_t>(data, i));
    case dtype::f8e4m3: return fp8e4m3_to_double(read_as<std::uint8_t>(data, i));
    case dtype::f8e5m2: return fp8e5m2_to_double(read_as<std::uint8_t>(data, i));
    case dtype::i64: return static_cast<double>(read_as<std::int64_t>(data, i));
    case dtype::i32: return read_as<std::int32_t>(data, i);
    case dtype::i16: return read_as<std::int16_t>(data, i);
    case dtype::i8: return read_as<std::int8_t>(data, i);
    case dtype::u8: return read_as<std::uint8_t>(data, i);
    case dtype::boolean: return read_as<std::uint8_t>(data, i) != 0 ? 1.0 : 0.0;
  }
  return std::numeric_limits<double>::quiet_NaN();
}

void store_element(std::byte* data, dtype type, std::int64_t i, double v) noexcept {
  switch (type) {
    case dtype::f64: write_as<double>(data, i, v); return;
    case dtype::f32: write_as<float>(data, i, static_cast<float>(v)); return;  // RNE in hardware
    case dtype::f16: write_as<std::uint16_t>(data, i, fp16_from_double(v)); return;
    case dtype::bf16: write_as<std::uint16_t>(data, i, bf16_from_double(v)); return;
    case dtype::f8e4m3: write_as<std::uint8_t>(data, i, fp8e4m3_from_double(v)); return;
    case dtype::f8e5m2: write_as<std::uint8_t>(data, i, fp8e5m2_from_double(v)); return;
    case dtype::i64: write_as<std::int64_t>(data, i, to_integer<std::int64_t>(v)); return;
    case dtype::i32: write_as<std::int32_t>(data, i, to_integer<std::int32_t>(v)); return;
    case dtype::i16: write_as<std::int16_t>(data, i, to_integer<std::int16_t>(v)); return;
    case dtype::i8: write_as<std::int8_t>(data, i, to_integer<std::int8_t>(v)); return;
    case dtype::u8: write_as<std::uint8_t>(data, i, to_integer<std::uint8_t>(v)); return;
    case dtype::boolean: write_as<std::uint8_t>(data, i, v != 0.0 ? 1 : 0); return;
  }
}

void tensor_reader::read(std::int64_t start, std::int64_t stride, std::int64_t n, double* out) const noexcept {
  switch (m_type) {
    case dtype::f32:
      for (std::int64_t k = 0; k < n; ++k) out[k] = read_as<float>(m_data, start + k * stride);
      return;
    case dtype::f64:
      for (std::int64_t k = 0; k < n; ++k) out[k] = read_as<double>(m_data, start + k * stride);
      return;
    case dtype::f16:
      for (std::int64_t k = 0; k < n; ++k) out[k] = m_table[read_as<std::uint16_t>(m_data, start + k * stride)];
      return;
    case dtype::bf16:
      for (std::int64_t k = 0; k < n; ++k) out[k] = bf16_to_double(read_as<std::uint16_t>(m_data, start + k * stride));
      return;
    case dtype::f8e4m3:
    case dtype::f8e5m2:
      for (std::int64_t k = 0; k < n; ++k) out[k] = m_table[static_cast<std::uint8_t>(m_data[start + k * stride])];
      return;
    default:
      for (std::int64_t k = 0; k < n; ++k) out[k] = load_element(m_data, m_type, start + k * stride);
  }
}

void store_span(std::byte* data, dtype type, std::int64_t start, std::int64_t n, const double* v) noexcept {
  switch (type) {
    case dtype::f32:
      for (std::int64_t k = 0; k < n; ++k) write_as<float>(data, start + k, static_cast<float>(v[k]));
      return;
    case dtype::f16:
      for (std::int64_t k = 0; k < n; ++k) write_as<std::uint16_t>(data, start + k, fp16_from_double(v[k]));
      return;
    case dtype::bf16:
      for (std::int64_t k = 0; k < n; ++k) write_as<std::uint16_t>(data, start + k, bf16_from_double(v[k]));
      return;
    default:
      for (std::int64_t k = 0; k < n; ++k) store_element(data, type, start + k, v[k]);
  }
}

double round_to(dtype type, double v) noexcept {
  std::byte buf[8];
  store_element(buf, type, 0, v);
  return load_element(buf, type, 0);
}

}  // namespace portbench::reference
