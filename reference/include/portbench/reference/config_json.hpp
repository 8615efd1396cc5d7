// SPDX-License-Identifier: Apache-2.0
// Configuration parameters as JSON (suites, manifests, the worker protocol) and back: the one
// place that maps a JSON value onto a param_value.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "portbench/reference/config.hpp"

namespace portbench::reference {

/// null -> None, true/false, integers (int64), other numbers (double), strings. Arrays and
/// objects throw spec_error("expected null, a boolean, a number or a string").
[[nodiscard]] param_value param_from_json(const nlohmann::json& value);

/// A configuration of `op` from a JSON object of parameters. Throws spec_error naming the key
/// ("params.m: expected ...") or "params: expected an object".
[[nodiscard]] config config_from_json(const std::string& op, const nlohmann::json& params);

/// The parameters as a JSON object: config_from_json(op, params_to_json(c)) == c.
[[nodiscard]] nlohmann::json params_to_json(const config& c);

}  // namespace portbench::reference
