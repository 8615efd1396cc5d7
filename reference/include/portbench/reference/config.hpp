// SPDX-License-Identifier: Apache-2.0
// One configuration of an operator: named parameters as they appear in configs/*.json.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <variant>

#include "portbench/reference/dtype.hpp"

namespace portbench::reference {

/// A parameter value: null (upstream "None"), bool, integer, real or string.
using param_value = std::variant<std::monostate, bool, std::int64_t, double, std::string>;

struct config {
  std::string op;                              ///< operator name, e.g. "rms_norm"
  std::map<std::string, param_value> params;   ///< e.g. {"m": 4096, "n": 4096, "dtype": "float16"}

  [[nodiscard]] std::int64_t integer(const std::string& key) const;   ///< throws spec_error if absent
  [[nodiscard]] double real(const std::string& key) const;            ///< accepts integers too
  [[nodiscard]] std::string text(const std::string& key) const;
  [[nodiscard]] bool has(const std::string& key) const { return params.count(key) != 0; }
  /// Stable identifier "op/k1=v1,k2=v2" (keys sorted), used in results files and caches.
  [[nodiscard]] std::string id() const;

  /// Optional parameters: the default when absent or null (upstream "None").
  [[nodiscard]] std::int64_t integer_or(const std::string& key, std::int64_t fallback) const;
  [[nodiscard]] double real_or(const std::string& key, double fallback) const;
  [[nodiscard]] std::string text_or(const std::string& key, const std::string& fallback) const;
  /// A bool parameter; integers 0/1 are accepted too.
  [[nodiscard]] bool flag(const std::string& key, bool fallback) const;
  /// True when the key is absent or explicitly null.
  [[nodiscard]] bool is_null(const std::string& key) const;
  /// Parses a dtype parameter ("float16", "bf16", ...); throws spec_error on an unknown name.
  [[nodiscard]] dtype type(const std::string& key) const;
  [[nodiscard]] dtype type_or(const std::string& key, dtype fallback) const;
};

}  // namespace portbench::reference
