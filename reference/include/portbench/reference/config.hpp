// SPDX-License-Identifier: Apache-2.0
// One configuration of an operator: named parameters as they appear in configs/*.json.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <variant>

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
};

}  // namespace portbench::reference
