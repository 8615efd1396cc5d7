// SPDX-License-Identifier: Apache-2.0
// A line-oriented parser for pretty-printed MLIR: both Tile IR printers put one operation per
// line, open a region with a trailing '{' and close it with a line starting with '}'. Region
// arguments come as a block label (`^bb0(%a: t):`, cutile-rs) or as a `(%a: t) {` line after the
// op (tileirdisasm's reduce). Locations (`loc(...)`, `#loc = ...`) and comments are dropped.
#include <cctype>

#include "portbench/diagnose/tile_ir.hpp"
#include "tile_ir_text.hpp"

namespace portbench::diagnose::tile_ir {
namespace {

using text::find_top_level;
using text::trim;

[[noreturn]] void fail(const std::string& origin, int line, const std::string& why) {
  throw parse_error(origin + ":" + std::to_string(line) + ": " + why);
}

/// The line without `loc(...)` groups and a trailing `// comment` (outside strings).
std::string strip_locations(std::string_view line) {
  std::string out;
  out.reserve(line.size());
  bool in_string = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (in_string) {
      out += c;
      if (c == '\\' && i + 1 < line.size()) out += line[++i];
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    if (c == '/' && i + 1 < line.size() && line[i + 1] == '/') break;
    bool word_start = i == 0 || !text::name_char(line[i - 1]);
    if (word_start && line.substr(i, 4) == "loc(") {
      std::size_t end = text::matching(line, i + 3);
      if (end != std::string_view::npos) {
        i = end - 1;
        continue;
      }
    }
    out += c;
  }
  return std::string(trim(out));
}

/// Every `%name` / `%name#k` outside strings.
std::vector<value_use> uses_in(std::string_view s) {
  std::vector<value_use> uses;
  text::scan(s, [&](std::size_t i, int) {
    if (s[i] != '%') return true;
    std::size_t j = i + 1;
    while (j < s.size() && text::name_char(s[j]) && s[j] != '.' && s[j] != '-') ++j;
    if (j == i + 1) return true;
    std::string name(s.substr(i + 1, j - i - 1));
    if (j + 1 < s.size() && s[j] == '#' && std::isdigit(static_cast<unsigned char>(s[j + 1]))) {
      std::size_t k = j + 1;
      while (k < s.size() && std::isdigit(static_cast<unsigned char>(s[k]))) ++k;
      name += std::string(s.substr(j, k - j));
    }
    uses.push_back({std::move(name)});
    return true;
  });
  return uses;
}

/// The text with every SSA name replaced by '%' (so two printers' numbering compare equal).
std::string anonymise(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  bool in_string = false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    out += c;
    if (in_string) {
      if (c == '\\' && i + 1 < s.size()) out += s[++i];
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    if (c != '%') continue;
    std::size_t j = i + 1;
    while (j < s.size() && text::name_char(s[j]) && s[j] != '.' && s[j] != '-') ++j;
    if (j + 1 < s.size() && s[j] == '#' && std::isdigit(static_cast<unsigned char>(s[j + 1]))) {
      ++j;
      while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) ++j;
    }
    i = j - 1;
  }
  return text::collapse_spaces(out);
}

/// "%a, %b" or "%for:2" -> value names ("a", "b" / "for#0", "for#1").
std::vector<std::string> result_names(std::string_view s, const std::string& origin, int line) {
  std::vector<std::string> names;
  for (const auto& part : text::split_top_level(s)) {
    if (part.size() < 2 || part[0] != '%') fail(origin, line, "bad result name '" + part + "'");
    auto colon = part.find(':');
    std::string base = part.substr(1, colon == std::string::npos ? std::string::npos : colon - 1);
    if (colon == std::string::npos) {
      names.push_back(base);
      continue;
    }
    int count = 0;
    try {
      count = std::stoi(part.substr(colon + 1));
    } catch (const std::exception&) {
      fail(origin, line, "bad result count in '" + part + "'");
    }
    if (count < 1 || count > 4096) fail(origin, line, "bad result count in '" + part + "'");
    for (int k = 0; k < count; ++k) names.push_back(base + "#" + std::to_string(k));
  }
  return names;
}

/// `(%a: t1, %b: t2)` -> names and types of region or entry arguments.
void parse_arguments(std::string_view s, std::vector<std::string>& names, std::vector<std::string>& types) {
  for (const auto& arg : text::split_top_level(s)) {
    if (arg.empty()) continue;
    auto colon = find_top_level(arg, ":");
    std::string_view name = trim(std::string_view(arg).substr(0, colon));
    if (!name.empty() && name[0] == '%') name.remove_prefix(1);
    names.emplace_back(name);
    types.push_back(colon == std::string_view::npos ? std::string()
                                                    : text::collapse_spaces(std::string_view(arg).substr(colon + 1)));
  }
}

/// Removes `optimization_hints [=] <...>` from `attrs`, returning the parsed hints.
hint_map take_hints(std::string& attrs) {
  auto pos = find_top_level(attrs, "optimization_hints");
  if (pos == std::string_view::npos) return {};
  std::size_t i = pos + std::string_view("optimization_hints").size();
  while (i < attrs.size() && (attrs[i] == ' ' || attrs[i] == '=')) ++i;
  std::size_t lt = attrs.find('<', i);
  if (lt == std::string::npos) return {};
  std::size_t end = text::matching(attrs, lt);
  if (end == std::string_view::npos) return {};
  hint_map hints = parse_hints(std::string_view(attrs).substr(i, end - i));
  attrs = text::collapse_spaces(attrs.substr(0, pos) + " " + attrs.substr(end));
  return hints;
}

operation parse_op(std::string_view line, const std::string& origin, int lineno) {
  operation op;
  op.line = lineno;
  std::string_view rest = line;
  if (!rest.empty() && rest[0] == '%') {
    auto eq = find_top_level(rest, " = ");
    if (eq == std::string_view::npos) fail(origin, lineno, "results without ' = ' in '" + std::string(line) + "'");
    op.results = result_names(rest.substr(0, eq), origin, lineno);
    rest = trim(rest.substr(eq + 3));
  }
  std::size_t n = 0;
  while (n < rest.size() && (text::name_char(rest[n]) && rest[n] != '-')) ++n;
  if (n == 0 || !std::isalpha(static_cast<unsigned char>(rest[0]))) {
    fail(origin, lineno, "expected an operation name in '" + std::string(line) + "'");
  }
  op.name = std::string(rest.substr(0, n));
  constexpr std::string_view dialect = "cuda_tile.";
  if (op.name.rfind(dialect, 0) == 0) op.name.erase(0, dialect.size());
  rest = trim(rest.substr(n));
  op.operands = uses_in(rest);
  // A leading space lets "make_token : token" split like "addf %a, %b : tile<f32>".
  std::string padded = " " + std::string(rest);
  auto colon = find_top_level(padded, " : ");
  std::string attrs = padded.substr(0, colon);
  if (colon != std::string::npos) op.types = text::collapse_spaces(std::string_view(padded).substr(colon + 3));
  op.hints = take_hints(attrs);
  op.attributes = anonymise(attrs);
  return op;
}

/// An entry op becomes a function: symbol, arguments, attributes and hints.
bool to_function(const operation& op, std::string_view source_line, function& f) {
  if (op.regions.empty()) return false;
  auto at = source_line.find('@');
  if (at == std::string_view::npos) return false;
  std::size_t j = at + 1;
  while (j < source_line.size() && text::name_char(source_line[j]) && source_line[j] != '-') ++j;
  if (j >= source_line.size() || source_line[j] != '(') return false;   // a module: "@name {"
  std::size_t close = text::matching(source_line, j);
  if (close == std::string_view::npos) return false;
  f.symbol = std::string(source_line.substr(at + 1, j - at - 1));
  std::vector<std::string> names;
  parse_arguments(source_line.substr(j + 1, close - j - 2), names, f.argument_types);
  std::string_view tail = trim(source_line.substr(close));
  if (!tail.empty() && tail.back() == '{') tail.remove_suffix(1);
  f.attributes = text::collapse_spaces(tail);
  f.hints = op.hints;
  f.body = op.regions.front();
  f.body.arguments = std::move(names);
  f.body.argument_types = f.argument_types;
  f.line = op.line;
  return true;
}

struct open_region {
  operation* owner;   // nullptr for the top level
  region* reg;
};

void collect_functions(const region& r, const std::vector<std::string>& lines, module& m) {
  for (const auto& op : r.ops) {
    function f;
    if (to_function(op, lines[static_cast<std::size_t>(op.line - 1)], f)) {
      m.functions.push_back(std::move(f));
    } else {
      for (const auto& sub : op.regions) collect_functions(sub, lines, m);
    }
  }
}

}  // namespace

const function* module::find(std::string_view symbol) const noexcept {
  for (const auto& f : functions) {
    if (f.symbol == symbol) return &f;
  }
  return nullptr;
}

hint_map parse_hints(std::string_view s) {
  hint_map hints;
  s = trim(s);
  if (!s.empty() && s[0] == '#') {   // an attribute alias spelling: #dialect.name<...>
    std::size_t lt = s.find('<');
    if (lt == std::string_view::npos) return hints;
    s = s.substr(lt);
  }
  if (s.empty() || s[0] != '<') return hints;
  std::size_t end = text::matching(s, 0);
  if (end == std::string_view::npos) return hints;
  for (const auto& entry : text::split_top_level(s.substr(1, end - 2))) {
    auto eq = find_top_level(entry, "=");
    if (eq == std::string_view::npos) continue;
    std::string target(trim(std::string_view(entry).substr(0, eq)));
    std::string_view dict = trim(std::string_view(entry).substr(eq + 1));
    auto& keys = hints[target];
    if (dict.size() < 2 || dict.front() != '{') continue;
    for (const auto& kv : text::split_top_level(dict.substr(1, dict.size() - 2))) {
      auto e = find_top_level(kv, "=");
      if (e == std::string_view::npos) continue;
      keys[std::string(trim(std::string_view(kv).substr(0, e)))] =
          text::collapse_spaces(std::string_view(kv).substr(e + 1));
    }
  }
  return hints;
}

module parse(std::string_view source, const std::string& origin) {
  std::vector<std::string> lines;
  for (std::size_t start = 0; start <= source.size();) {
    std::size_t nl = source.find('\n', start);
    if (nl == std::string_view::npos) nl = source.size();
    lines.emplace_back(strip_locations(source.substr(start, nl - start)));
    start = nl + 1;
  }
  region top;
  std::vector<open_region> stack{{nullptr, &top}};
  for (std::size_t i = 0; i < lines.size(); ++i) {
    int lineno = static_cast<int>(i + 1);
    std::string_view line = lines[i];
    if (line.empty() || line[0] == '#') continue;   // location and attribute alias definitions
    region& cur = *stack.back().reg;
    if (line[0] == '}') {
      if (stack.size() == 1) fail(origin, lineno, "'}' closes no region");
      operation* owner = stack.back().owner;
      stack.pop_back();
      if (line.back() == '{' && line.size() > 1) {   // "} else {": the same op's next region
        owner->regions.emplace_back();
        stack.push_back({owner, &owner->regions.back()});
      }
      continue;
    }
    if (line[0] == '^') {   // block label with arguments: ^bb0(%a: t, %b: t):
      auto open = line.find('(');
      if (open != std::string_view::npos) {
        auto close = text::matching(line, open);
        if (close == std::string_view::npos) fail(origin, lineno, "unbalanced block label");
        parse_arguments(line.substr(open + 1, close - open - 2), cur.arguments, cur.argument_types);
      }
      continue;
    }
    if (line[0] == '(' && line.back() == '{') {   // "(%a: t, %b: t) {": the previous op's region
      if (cur.ops.empty()) fail(origin, lineno, "region arguments without an operation");
      auto close = text::matching(line, 0);
      if (close == std::string_view::npos) fail(origin, lineno, "unbalanced region arguments");
      operation& owner = cur.ops.back();
      owner.regions.emplace_back();
      parse_arguments(line.substr(1, close - 2), owner.regions.back().arguments,
                      owner.regions.back().argument_types);
      stack.push_back({&owner, &owner.regions.back()});
      continue;
    }
    bool opens = line.back() == '{';
    std::string_view body = opens ? trim(line.substr(0, line.size() - 1)) : line;
    cur.ops.push_back(parse_op(body, origin, lineno));
    if (opens) {
      operation& owner = cur.ops.back();
      owner.regions.emplace_back();
      stack.push_back({&owner, &owner.regions.back()});
    }
  }
  if (stack.size() != 1) {
    fail(origin, static_cast<int>(lines.size()), "end of text with " + std::to_string(stack.size() - 1) +
                                                     " region(s) still open");
  }
  module m;
  m.origin = origin;
  collect_functions(top, lines, m);
  return m;
}

}  // namespace portbench::diagnose::tile_ir
