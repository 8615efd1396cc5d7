// SPDX-License-Identifier: Apache-2.0
// Private: scanning MLIR text with bracket depth and string literals in mind, shared by the
// Tile IR parser and the signature extraction.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace portbench::diagnose::tile_ir::text {

/// Calls `visit(i, depth)` for every character outside string literals; depth counts open
/// (, [, {, < (an arrow "->" or ">=" closes nothing). Returning false from visit stops.
template <typename Visit>
void scan(std::string_view s, Visit&& visit) {
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
      continue;
    }
    bool arrow = c == '>' && i > 0 && s[i - 1] == '-';
    bool closes = (c == ')' || c == ']' || c == '}' || (c == '>' && !arrow && depth > 0));
    if (closes && depth > 0) --depth;
    if (!visit(i, depth)) return;
    if (c == '(' || c == '[' || c == '{' || (c == '<' && !(i + 1 < s.size() && s[i + 1] == '='))) ++depth;
  }
}

/// Position of the first `needle` at depth 0 outside strings, or npos.
[[nodiscard]] inline std::size_t find_top_level(std::string_view s, std::string_view needle,
                                                std::size_t from = 0) {
  std::size_t found = std::string_view::npos;
  scan(s, [&](std::size_t i, int depth) {
    if (i >= from && depth == 0 && s.substr(i, needle.size()) == needle) {
      found = i;
      return false;
    }
    return true;
  });
  return found;
}

/// Splits at depth-0 commas, trimming each piece.
[[nodiscard]] std::vector<std::string> split_top_level(std::string_view s, char sep = ',');

/// Index just past the bracket that closes the one at `open` (s[open] is one of ([{<), or npos.
[[nodiscard]] std::size_t matching(std::string_view s, std::size_t open);

[[nodiscard]] std::string_view trim(std::string_view s);
[[nodiscard]] std::string collapse_spaces(std::string_view s);

/// True for characters of an SSA name or identifier after '%' / '@' / a letter.
[[nodiscard]] inline bool name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '$' || c == '.' || c == '-';
}

}  // namespace portbench::diagnose::tile_ir::text
