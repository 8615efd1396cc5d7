// SPDX-License-Identifier: Apache-2.0
// Private: Markdown table cells for the diagnose and ir-diff renderers.
#pragma once
#include <string>
#include <string_view>

namespace portbench::diagnose::detail {

/// Escapes '|' and turns newlines into spaces, so any text fits one table cell.
[[nodiscard]] inline std::string md_cell(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    if (c == '|') out += "\\|";
    else if (c == '\n' || c == '\r') out += ' ';
    else out += c;
  }
  return out;
}

/// `text` in backquotes, or "—" when empty.
[[nodiscard]] inline std::string md_code(std::string_view s) {
  if (s.empty()) return "—";
  return "`" + md_cell(s) + "`";
}

}  // namespace portbench::diagnose::detail
