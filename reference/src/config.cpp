// SPDX-License-Identifier: Apache-2.0
// Typed access to configuration parameters, and the stable configuration id.
#include <charconv>
#include <cmath>
#include <type_traits>

#include "portbench/reference/config.hpp"
#include "portbench/reference/spec.hpp"

namespace portbench::reference {
namespace {

[[noreturn]] void missing(const config& c, const std::string& key, const char* what) {
  throw spec_error(c.op + ": parameter '" + key + "' " + what);
}

std::string format_value(const param_value& v) {
  return std::visit(
      [](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
          return "None";
        } else if constexpr (std::is_same_v<T, bool>) {
          return x ? "true" : "false";
        } else if constexpr (std::is_same_v<T, std::int64_t>) {
          return std::to_string(x);
        } else if constexpr (std::is_same_v<T, double>) {
          // Shortest round-trip form, so 1e-05 and 0.00001 give one id.
          char buf[64];
          const auto r = std::to_chars(buf, buf + sizeof buf, x);
          return std::string(buf, r.ptr);
        } else {
          return x;
        }
      },
      v);
}

}  // namespace

std::int64_t config::integer(const std::string& key) const {
  const auto it = params.find(key);
  if (it == params.end()) missing(*this, key, "is required");
  if (const auto* i = std::get_if<std::int64_t>(&it->second)) return *i;
  if (const auto* d = std::get_if<double>(&it->second)) {
    if (std::floor(*d) == *d && std::abs(*d) < 9.0e15) return static_cast<std::int64_t>(*d);
  }
  if (const auto* b = std::get_if<bool>(&it->second)) return *b ? 1 : 0;
  missing(*this, key, "must be an integer");
}

double config::real(const std::string& key) const {
  const auto it = params.find(key);
  if (it == params.end()) missing(*this, key, "is required");
  if (const auto* d = std::get_if<double>(&it->second)) return *d;
  if (const auto* i = std::get_if<std::int64_t>(&it->second)) return static_cast<double>(*i);
  missing(*this, key, "must be a number");
}

std::string config::text(const std::string& key) const {
  const auto it = params.find(key);
  if (it == params.end()) missing(*this, key, "is required");
  if (const auto* s = std::get_if<std::string>(&it->second)) return *s;
  missing(*this, key, "must be a string");
}

std::string config::id() const {
  std::string out = op + "/";
  bool first = true;
  for (const auto& [k, v] : params) {  // std::map: keys sorted
    if (!first) out += ",";
    first = false;
    out += k + "=" + format_value(v);
  }
  return out;
}

bool config::is_null(const std::string& key) const {
  const auto it = params.find(key);
  return it == params.end() || std::holds_alternative<std::monostate>(it->second);
}

std::int64_t config::integer_or(const std::string& key, std::int64_t fallback) const {
  return is_null(key) ? fallback : integer(key);
}

double config::real_or(const std::string& key, double fallback) const {
  return is_null(key) ? fallback : real(key);
}

std::string config::text_or(const std::string& key, const std::string& fallback) const {
  return is_null(key) ? fallback : text(key);
}

bool config::flag(const std::string& key, bool fallback) const {
  if (is_null(key)) return fallback;
  const auto& v = params.at(key);
  if (const auto* b = std::get_if<bool>(&v)) return *b;
  if (const auto* i = std::get_if<std::int64_t>(&v)) return *i != 0;
  if (const auto* s = std::get_if<std::string>(&v)) {
    if (*s == "true" || *s == "True" || *s == "1") return true;
    if (*s == "false" || *s == "False" || *s == "0") return false;
  }
  missing(*this, key, "must be a bool");
}

dtype config::type(const std::string& key) const {
  const std::string name = text(key);
  const auto t = parse_dtype(name);
  if (!t) throw spec_error(op + ": parameter '" + key + "' names an unknown dtype '" + name + "'");
  return *t;
}

dtype config::type_or(const std::string& key, dtype fallback) const {
  return is_null(key) ? fallback : type(key);
}

}  // namespace portbench::reference
