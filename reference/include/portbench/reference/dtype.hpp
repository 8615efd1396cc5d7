// SPDX-License-Identifier: Apache-2.0
// Element types that operators use, with their names as they appear in configs and manifests.
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace portbench::reference {

enum class dtype { f64, f32, f16, bf16, f8e4m3, f8e5m2, i64, i32, i16, i8, u8, boolean };

/// Canonical short name: "fp32", "fp16", "bf16", "fp8e4m3", "i32", ...
[[nodiscard]] std::string_view to_string(dtype t) noexcept;
/// Accepts the canonical names and torch's ("float16", "bfloat16", "float8_e4m3fn", ...).
[[nodiscard]] std::optional<dtype> parse_dtype(std::string_view name) noexcept;
[[nodiscard]] std::size_t size_of(dtype t) noexcept;
[[nodiscard]] bool is_floating(dtype t) noexcept;

/// torch's name ("float16", "bfloat16", "float8_e4m3fn", "int32", ...), as configs spell dtypes.
[[nodiscard]] std::string_view torch_name(dtype t) noexcept;
/// Relative spacing of the format, 2^-mantissa_bits (fp16: 2^-10); 0 for integer types.
[[nodiscard]] double machine_epsilon(dtype t) noexcept;
/// Smallest positive subnormal (fp16: 2^-24); 0 for integer types.
[[nodiscard]] double min_subnormal(dtype t) noexcept;
/// Largest finite value (fp16: 65504, fp8e4m3: 448).
[[nodiscard]] double max_finite(dtype t) noexcept;

}  // namespace portbench::reference
