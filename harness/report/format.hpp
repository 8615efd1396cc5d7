// SPDX-License-Identifier: Apache-2.0
// Private: number and text formatting shared by the renderers.
#pragma once
#include <string>
#include <string_view>

#include "portbench/report/model.hpp"

namespace portbench::report::detail {

[[nodiscard]] std::string ratio_text(double r);                 ///< "0.9950" or "—"
[[nodiscard]] std::string interval_text(const stats::interval& i);  ///< "[0.9900, 1.0010]"
[[nodiscard]] std::string time_text(double ns);                 ///< "12.35 µs", "1.204 ms"
[[nodiscard]] std::string percent_text(double fraction);        ///< "+1.2%" or "—"
[[nodiscard]] std::string counts_text(const verdict_counts& c); ///< "PASS 8, FAIL 1"
[[nodiscard]] std::string md_cell(std::string_view text);       ///< escapes '|' and newlines
[[nodiscard]] std::string html_escape(std::string_view text);
/// One-paragraph statement of the method (ratio, best of N, bootstrap, gate).
[[nodiscard]] std::string method_text(const report_options& opts);

}  // namespace portbench::report::detail
