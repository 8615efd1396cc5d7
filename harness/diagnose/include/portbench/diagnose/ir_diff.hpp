// SPDX-License-Identifier: Apache-2.0
// Structural comparison of two normalised Tile IR entries (ir_model.hpp): every difference is
// named with both sides' text, classed as structural or a note, and the verdict follows
// (PASS, PASS_WITH_NOTES, FAIL_STRUCTURAL). docs/diagnose.md lists which is which.
#pragma once
#include <string>
#include <vector>

#include "portbench/diagnose/ir_model.hpp"

namespace portbench::diagnose {

struct ir_difference {
  std::string kind;       ///< difference_kind literal
  std::string severity;   ///< severity literal
  std::string where;      ///< region path, e.g. "entry/for(2 results)"; prefixed by the launch
  std::string reference;  ///< the reference's text ("(none)" when it has nothing there)
  std::string port;
};

struct ir_diff_result {
  std::string verdict;    ///< ir_verdict literal
  std::vector<ir_difference> differences;
  [[nodiscard]] int structural() const noexcept;   ///< how many differences are structural
};

/// Compares the reference's entry with the port's; `where` prefixes every difference's place.
[[nodiscard]] std::vector<ir_difference> diff_functions(const function_model& ref, const function_model& port,
                                                        const std::string& where = "");

/// The verdict of a list of differences.
[[nodiscard]] std::string verdict_of(const std::vector<ir_difference>& differences);

/// normalise + diff_functions + verdict_of.
[[nodiscard]] ir_diff_result diff(const tile_ir::function& ref, const tile_ir::function& port);

}  // namespace portbench::diagnose
