// SPDX-License-Identifier: Apache-2.0
// Private: group and attribute names of the results layout (docs/results-layout.md).
#pragma once
#include <string>
#include <string_view>

namespace portbench::store::detail {

inline constexpr const char* configs_group = "configs";

/// Link name for a free-form string: '%' and '/' are percent-encoded, a leading '.' too.
[[nodiscard]] std::string escape_link_name(std::string_view text);

/// "configs/<op>/<id without the 'op/' prefix>", each part escaped. The true id and operator
/// live in the config group's attributes; readers should use those, not the names.
[[nodiscard]] std::string config_group_path(std::string_view config_id, std::string_view op);

/// "run_<index>".
[[nodiscard]] std::string run_group_name(int run);

}  // namespace portbench::store::detail
