// SPDX-License-Identifier: Apache-2.0
// SHA-256 (FIPS 180-4) for cubin provenance; small enough not to warrant a crypto dependency.
#pragma once
#include <cstddef>
#include <span>
#include <string>

namespace portbench::bundle {

/// Lower-case hex digest of `data`.
[[nodiscard]] std::string sha256_hex(std::span<const std::byte> data);

}  // namespace portbench::bundle
