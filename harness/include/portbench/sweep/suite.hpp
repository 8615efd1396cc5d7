// SPDX-License-Identifier: Apache-2.0
// Suites (configs/*.json): a name and a list of configurations, each an operator and its
// parameters. The one parser of suite files; `run`, `cost`, the agent and the nightly script
// read suites through it (target portbench::suite: reference/ and JSON only, no CUDA).
//
//   {"suite": "smoke", "configs": [{"op": "rms_norm", "params": {"m": 4096, "dtype": "float16"}}]}
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "portbench/error.hpp"
#include "portbench/reference/config.hpp"

namespace portbench::sweep {

/// Bad suite: one line naming the file and the field, e.g.
/// "configs/x.json: configs[3].params.m: expected null, a boolean, a number or a string".
class suite_error : public portbench::input_error {
 public:
  using input_error::input_error;
};

struct suite_entry {
  reference::config config;
  nlohmann::json params;   ///< as written in the suite (the worker protocol carries it)
};

struct suite {
  std::string name;   ///< the "suite" field, else the file's stem
  std::string file;   ///< where it was read from ("" for parse_suite without a file)
  std::vector<suite_entry> entries;
};

/// Reads a suite file; throws suite_error naming the file and field.
[[nodiscard]] suite load_suite(const std::string& file);
/// Parses suite text; `file` names it in errors and gives the default name.
[[nodiscard]] suite parse_suite(std::string_view text, const std::string& file);

}  // namespace portbench::sweep
