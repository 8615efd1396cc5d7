// SPDX-License-Identifier: Apache-2.0
#include "portbench/reference/config_json.hpp"

#include <type_traits>

#include "portbench/reference/spec.hpp"

namespace portbench::reference {

param_value param_from_json(const nlohmann::json& v) {
  if (v.is_null()) return std::monostate{};
  if (v.is_boolean()) return v.get<bool>();
  if (v.is_number_integer()) {
    // Unsigned values above INT64_MAX would wrap: refuse them rather than change the id.
    if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX)) {
      throw spec_error("integer " + v.dump() + " does not fit in 64 signed bits");
    }
    return v.get<std::int64_t>();
  }
  if (v.is_number()) return v.get<double>();
  if (v.is_string()) return v.get<std::string>();
  throw spec_error("expected null, a boolean, a number or a string");
}

config config_from_json(const std::string& op, const nlohmann::json& params) {
  if (!params.is_object()) throw spec_error("params: expected an object");
  config c{op, {}};
  for (const auto& [key, value] : params.items()) {
    try {
      c.params[key] = param_from_json(value);
    } catch (const spec_error& e) {
      throw spec_error("params." + key + ": " + e.what());
    }
  }
  return c;
}

nlohmann::json params_to_json(const config& c) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [key, value] : c.params) {
    out[key] = std::visit(
        [](const auto& x) -> nlohmann::json {
          using T = std::decay_t<decltype(x)>;
          if constexpr (std::is_same_v<T, std::monostate>) return nullptr;
          else return x;
        },
        value);
  }
  return out;
}

}  // namespace portbench::reference
