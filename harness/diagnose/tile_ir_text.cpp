// SPDX-License-Identifier: Apache-2.0
#include "tile_ir_text.hpp"

namespace portbench::diagnose::tile_ir::text {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

std::string collapse_spaces(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  bool space = false;
  for (char c : trim(s)) {
    if (c == ' ' || c == '\t') {
      space = true;
      continue;
    }
    if (space && !out.empty()) out += ' ';
    space = false;
    out += c;
  }
  return out;
}

std::vector<std::string> split_top_level(std::string_view s, char sep) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  scan(s, [&](std::size_t i, int depth) {
    if (depth == 0 && s[i] == sep) {
      parts.emplace_back(trim(s.substr(start, i - start)));
      start = i + 1;
    }
    return true;
  });
  auto last = trim(s.substr(start));
  if (!last.empty() || !parts.empty()) parts.emplace_back(last);
  return parts;
}

std::size_t matching(std::string_view s, std::size_t open) {
  if (open >= s.size()) return std::string_view::npos;
  std::size_t result = std::string_view::npos;
  auto sub = s.substr(open);
  scan(sub, [&](std::size_t i, int depth) {
    // The opening bracket is visited at depth 0; its partner brings depth back to 0.
    if (i > 0 && depth == 0) {
      result = open + i + 1;
      return false;
    }
    return true;
  });
  return result;
}

}  // namespace portbench::diagnose::tile_ir::text
