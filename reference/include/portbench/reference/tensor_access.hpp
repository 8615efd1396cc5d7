// SPDX-License-Identifier: Apache-2.0
// Reading and writing single elements of a host_tensor as double, whatever its dtype. Writes
// round to nearest even in the tensor's dtype (integers: to nearest, saturating).
#pragma once
#include <cstdint>
#include <cstring>

#include "portbench/reference/half.hpp"
#include "portbench/reference/spec.hpp"

namespace portbench::reference {

/// The value stored at `storage_index` of a buffer of `type`.
[[nodiscard]] double load_element(const std::byte* data, dtype type, std::int64_t storage_index) noexcept;
/// Rounds `v` into `type` and stores it at `storage_index`.
void store_element(std::byte* data, dtype type, std::int64_t storage_index, double v) noexcept;
/// Rounds and stores n values at storage indices start, start + 1, ... (one dtype switch).
void store_span(std::byte* data, dtype type, std::int64_t start, std::int64_t n, const double* v) noexcept;
/// `v` rounded to `type` and read back (the value a correctly rounded kernel would write).
[[nodiscard]] double round_to(dtype type, double v) noexcept;

namespace detail {
/// fp16 and fp8 decode tables (exact values as float), built once.
[[nodiscard]] const float* fp16_table() noexcept;
[[nodiscard]] const float* fp8e4m3_table() noexcept;
[[nodiscard]] const float* fp8e5m2_table() noexcept;
}  // namespace detail

/// A read-only view of a tensor's storage: cheap to copy, indexed by storage index. The hot
/// loops of the references read through this; the common float types decode inline.
class tensor_reader {
 public:
  tensor_reader() = default;
  explicit tensor_reader(const host_tensor& t) : tensor_reader(t.bytes.data(), t.spec.type) {}
  tensor_reader(const std::byte* data, dtype type) : m_data(data), m_type(type) {
    if (type == dtype::f16) m_table = detail::fp16_table();
    if (type == dtype::f8e4m3) m_table = detail::fp8e4m3_table();
    if (type == dtype::f8e5m2) m_table = detail::fp8e5m2_table();
  }
  [[nodiscard]] double operator[](std::int64_t i) const noexcept {
    switch (m_type) {
      case dtype::f32: {
        float v;
        std::memcpy(&v, m_data + i * 4, 4);
        return v;
      }
      case dtype::f16: {
        std::uint16_t b;
        std::memcpy(&b, m_data + i * 2, 2);
        return m_table[b];
      }
      case dtype::bf16: {
        std::uint16_t b;
        std::memcpy(&b, m_data + i * 2, 2);
        return bf16_to_double(b);
      }
      case dtype::f8e4m3:
      case dtype::f8e5m2: return m_table[static_cast<std::uint8_t>(m_data[i])];
      default: return load_element(m_data, m_type, i);
    }
  }
  [[nodiscard]] dtype type() const noexcept { return m_type; }
  /// Decodes elements start, start + stride, ... (n of them) into out: one dtype switch per
  /// call, a tight loop per element (the hot path of the references).
  void read(std::int64_t start, std::int64_t stride, std::int64_t n, double* out) const noexcept;

 private:
  const std::byte* m_data = nullptr;
  dtype m_type = dtype::f32;
  const float* m_table = nullptr;
};

/// A writable view of a tensor's storage.
class tensor_writer {
 public:
  explicit tensor_writer(host_tensor& t) : m_data(t.bytes.data()), m_type(t.spec.type) {}
  void set(std::int64_t i, double v) const noexcept { store_element(m_data, m_type, i, v); }
  [[nodiscard]] double get(std::int64_t i) const noexcept { return load_element(m_data, m_type, i); }

 private:
  std::byte* m_data;
  dtype m_type;
};

}  // namespace portbench::reference
