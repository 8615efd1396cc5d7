// SPDX-License-Identifier: Apache-2.0
// Small helpers the operator files share: tensor shapes, fills and cost arithmetic.
#pragma once
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "portbench/reference/random.hpp"
#include "portbench/reference/spec.hpp"
#include "portbench/reference/tensor_access.hpp"

namespace portbench::reference::detail {

/// Dense row-major tensor (shorthand for make_tensor).
[[nodiscard]] inline tensor_spec dense(std::string name, dtype t, std::vector<std::int64_t> shape,
                                       tensor_role role) {
  return make_tensor(std::move(name), t, std::move(shape), role);
}

/// `t` marked slack: an output whose result is a data-dependent part of it (spec.hpp).
[[nodiscard]] inline tensor_spec slack(tensor_spec t) {
  t.slack = true;
  return t;
}

/// Bytes of `elements` values of `t`.
[[nodiscard]] inline double bytes_of(dtype t, double elements) {
  return elements * static_cast<double>(size_of(t));
}

/// A positive dimension parameter; throws spec_error naming the operator otherwise.
[[nodiscard]] inline std::int64_t dim(const config& c, const std::string& key) {
  const std::int64_t v = c.integer(key);
  if (v <= 0) throw spec_error(c.op + ": parameter '" + key + "' must be positive");
  return v;
}
[[nodiscard]] inline std::int64_t dim_or(const config& c, const std::string& key, std::int64_t fallback) {
  const std::int64_t v = c.integer_or(key, fallback);
  if (v <= 0) throw spec_error(c.op + ": parameter '" + key + "' must be positive");
  return v;
}

/// A floating dtype parameter (default key "dtype").
[[nodiscard]] inline dtype float_type(const config& c, const std::string& key = "dtype") {
  const dtype t = c.type(key);
  if (!is_floating(t)) throw spec_error(c.op + ": '" + key + "' must be a floating type");
  return t;
}

[[nodiscard]] inline double silu(double x) { return x / (1.0 + std::exp(-x)); }

}  // namespace portbench::reference::detail
