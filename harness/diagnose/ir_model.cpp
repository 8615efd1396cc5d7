// SPDX-License-Identifier: Apache-2.0
#include "portbench/diagnose/ir_model.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <set>

#include <fmt/format.h>

#include "tile_ir_text.hpp"

namespace portbench::diagnose {
namespace {

namespace text = tile_ir::text;

struct op_rule {
  std::string_view name;
  bool prefix;   ///< matches every op whose name starts with `name`
  op_class cls;
};

// The small table of ops ir-diff treats specially. Everything else is classified by shape:
// an op with regions is control flow, any other op computes.
constexpr std::array<op_rule, 24> k_rules{{
    {"load_", true, op_class::memory},
    {"store_", true, op_class::memory},
    {"atomic_", true, op_class::memory},
    {"reduce", false, op_class::reduction},
    {"scan", false, op_class::reduction},
    {"mma", true, op_class::mma},
    {"assert", false, op_class::check},
    {"print", false, op_class::check},
    {"yield", false, op_class::terminator},
    {"continue", false, op_class::terminator},
    {"break", false, op_class::terminator},
    {"return", false, op_class::terminator},
    {"constant", false, op_class::plumbing},
    {"assume", false, op_class::plumbing},
    {"reshape", false, op_class::plumbing},
    {"broadcast", false, op_class::plumbing},
    {"make_token", false, op_class::plumbing},
    {"join_tokens", false, op_class::plumbing},
    {"make_tensor_view", false, op_class::plumbing},
    {"make_partition_view", false, op_class::plumbing},
    {"get_tile_block_id", false, op_class::plumbing},
    {"get_num_tile_blocks", false, op_class::plumbing},
    {"get_index_space_shape", false, op_class::plumbing},
    {"get_tensor_shape", false, op_class::plumbing},
}};

/// "tile<8x1024xf16>" at or after `from` -> shape "8x1024" and element "f16".
bool tile_type(std::string_view s, std::size_t from, std::string& shape, std::string& element) {
  auto pos = s.find("tile<", from);
  if (pos == std::string_view::npos) return false;
  std::size_t end = text::matching(s, pos + 4);
  if (end == std::string_view::npos) return false;
  std::string_view inner = s.substr(pos + 5, end - pos - 6);
  shape.clear();
  for (;;) {
    std::size_t n = 0;
    while (n < inner.size() && (std::isdigit(static_cast<unsigned char>(inner[n])) || inner[n] == '?')) ++n;
    if (n == 0 || n >= inner.size() || inner[n] != 'x') break;
    if (!shape.empty()) shape += 'x';
    shape += std::string(inner.substr(0, n));
    inner.remove_prefix(n + 1);
  }
  element = std::string(inner);
  return true;
}

/// The value of `key=` / `key =` in `s` up to the next top-level ',' or closing bracket.
std::string keyed_value(std::string_view s, std::string_view key) {
  auto pos = s.find(key);
  while (pos != std::string_view::npos && pos > 0 && text::name_char(s[pos - 1])) pos = s.find(key, pos + 1);
  if (pos == std::string_view::npos) return {};
  std::size_t i = pos + key.size();
  while (i < s.size() && s[i] == ' ') ++i;
  if (i >= s.size() || s[i] != '=') return {};
  ++i;
  while (i < s.size() && s[i] == ' ') ++i;
  std::size_t j = i;
  if (j < s.size() && (s[j] == '(' || s[j] == '[' || s[j] == '<')) {
    std::size_t end = text::matching(s, j);
    return std::string(s.substr(j, end == std::string_view::npos ? std::string_view::npos : end - j));
  }
  while (j < s.size() && s[j] != ',' && s[j] != ')' && s[j] != '>' && s[j] != ']' && s[j] != '}' && s[j] != ' ') ++j;
  return std::string(s.substr(i, j - i));
}

/// One identity value in a canonical spelling: "0.000000e+00 : f32", "0" -> "0";
/// "0xFF800000 : f32", "-inf" -> "-inf".
std::string identity_value(std::string_view v) {
  v = text::trim(v);
  std::string type;
  if (auto colon = v.find(':'); colon != std::string_view::npos) {
    type = std::string(text::trim(v.substr(colon + 1)));
    v = text::trim(v.substr(0, colon));
  }
  std::string s(v);
  double d = 0;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    auto bits = std::strtoull(s.c_str(), nullptr, 16);
    if (type == "f64") {
      std::uint64_t b = bits;
      std::memcpy(&d, &b, sizeof d);
    } else if (type == "f32" || type.empty()) {
      auto b = static_cast<std::uint32_t>(bits);
      float f = 0;
      std::memcpy(&f, &b, sizeof f);
      d = f;
    } else {
      return s + " : " + type;   // f16/bf16 bit patterns: kept as written
    }
  } else if (s == "true" || s == "false") {
    return s;
  } else {
    char* end = nullptr;
    d = std::strtod(s.c_str(), &end);
    if (end == s.c_str()) return s;
  }
  if (std::isinf(d)) return d < 0 ? "-inf" : "inf";
  if (std::isnan(d)) return "nan";
  return fmt::format("{:g}", d);
}

std::string identities_of(std::string_view attrs) {
  std::string list = keyed_value(attrs, "identities");
  if (list.size() < 2) return {};
  std::string out;
  for (const auto& v : text::split_top_level(std::string_view(list).substr(1, list.size() - 2))) {
    out += (out.empty() ? "" : ", ") + identity_value(v);
  }
  return out;
}

/// The first identifier of an op's attribute text before any operand: e.g. "weak".
std::string leading_word(std::string_view attrs) {
  std::size_t n = 0;
  while (n < attrs.size() && (std::isalnum(static_cast<unsigned char>(attrs[n])) || attrs[n] == '_')) ++n;
  if (n == 0 || (n < attrs.size() && attrs[n] == '=')) return {};
  return std::string(attrs.substr(0, n));
}

std::map<std::string, std::string> merged_hints(const tile_ir::hint_map& hints, std::string* targets) {
  std::map<std::string, std::string> out;
  if (auto it = hints.find("default"); it != hints.end()) out = it->second;
  std::string names;
  for (const auto& [target, keys] : hints) {
    names += (names.empty() ? "" : ",") + target;
    if (target == "default") continue;
    for (const auto& [k, v] : keys) out[k] = v;
  }
  if (targets != nullptr) *targets = names;
  return out;
}

memory_access memory_of(const tile_ir::operation& op) {
  memory_access m;
  m.op = op.name;
  m.line = op.line;
  m.direction = op.name.rfind("load", 0) == 0 ? "load" : op.name.rfind("store", 0) == 0 ? "store" : "atomic";
  m.addressing = op.name.find("_view") != std::string::npos  ? "view"
                 : op.name.find("_ptr") != std::string::npos ? "pointer"
                                                             : "other";
  m.ordering = leading_word(op.attributes);
  std::string_view types = op.types;
  std::size_t data_from = 0;
  if (m.direction == "load") {
    auto arrow = types.find("->");
    data_from = arrow == std::string_view::npos ? 0 : arrow;
  }
  // The data tile: the first tile type of values, not of pointers (a pointer store lists the
  // pointer tile before the value tile).
  std::string shape, element;
  for (std::size_t at = data_from; tile_type(types, at, shape, element);) {
    if (m.element.empty() || m.element.rfind("ptr<", 0) == 0) {
      m.tile = shape;
      m.element = element;
    }
    if (element.rfind("ptr<", 0) != 0) break;
    at = types.find("tile<", at) + 5;
  }
  // A view's partition tile is what one access moves; it wins over the data tile's shape.
  auto part = types.find("tile=(");
  if (part != std::string_view::npos) {
    auto close = types.find(')', part);
    if (close != std::string_view::npos) m.tile = std::string(types.substr(part + 6, close - part - 6));
  }
  m.padding = keyed_value(types, "padding_value");
  m.hints = merged_hints(op.hints, nullptr);
  return m;
}

bool is_pure(const tile_ir::operation& op, op_class c) {
  if (c != op_class::compute && c != op_class::plumbing && c != op_class::reduction && c != op_class::mma) return false;
  if (op.results.empty()) return false;
  // A token orders memory effects: whatever produces one is kept.
  for (std::size_t p = op.types.find("token"); p != std::string::npos; p = op.types.find("token", p + 1)) {
    bool left = p == 0 || !text::name_char(op.types[p - 1]);
    bool right = p + 5 >= op.types.size() || !text::name_char(op.types[p + 5]);
    if (left && right) return false;
  }
  return true;
}

struct use_counter {
  std::map<std::string, int> uses;
  std::set<const tile_ir::operation*> dead;

  void count(const tile_ir::region& r) {
    for (const auto& op : r.ops) {
      for (const auto& u : op.operands) ++uses[u.name];
      for (const auto& sub : op.regions) count(sub);
    }
  }
  bool used(const tile_ir::operation& op) const {
    for (const auto& res : op.results) {
      if (auto it = uses.find(res); it != uses.end() && it->second > 0) return true;
      // A use of the whole group ("%for" for "%for#0") counts for each of its results.
      auto hash = res.find('#');
      if (hash != std::string::npos) {
        if (auto it = uses.find(res.substr(0, hash)); it != uses.end() && it->second > 0) return true;
      }
    }
    return false;
  }
  void forget(const tile_ir::operation& op) {
    for (const auto& u : op.operands) --uses[u.name];
    for (const auto& sub : op.regions) {
      for (const auto& inner : sub.ops) {
        if (dead.count(&inner) == 0) forget(inner);
      }
    }
  }
  bool sweep(const tile_ir::region& r) {
    bool changed = false;
    for (const auto& op : r.ops) {
      if (dead.count(&op) != 0) continue;
      op_class c = classify(op);
      if (is_pure(op, c) && !used(op)) {
        dead.insert(&op);
        forget(op);
        changed = true;
        continue;
      }
      for (const auto& sub : op.regions) changed = sweep(sub) || changed;
    }
    return changed;
  }
};

std::string combiner_of(const tile_ir::operation& op) {
  std::vector<std::string> names;
  for (const auto& r : op.regions) {
    for (const auto& inner : r.ops) {
      if (classify(inner) == op_class::compute) names.push_back(inner.name);
    }
  }
  std::sort(names.begin(), names.end());
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : "+") + n;
  return out;
}

/// Which entry argument each view or pointer value comes from: make_tensor_view's base pointer,
/// through assume, make_partition_view and other single-source plumbing ops.
using roots = std::map<std::string, std::string>;

void trace_roots(const tile_ir::region& r, roots& root) {
  for (const auto& op : r.ops) {
    bool passes = op.name == "assume" || op.name == "make_tensor_view" || op.name == "make_partition_view";
    if (passes && !op.operands.empty() && op.results.size() == 1) {
      // assume's predicate operands come first only for pointers it wraps: take the first
      // operand whose root is known.
      for (const auto& u : op.operands) {
        if (auto it = root.find(u.name); it != root.end()) {
          root[op.results[0]] = it->second;
          break;
        }
      }
    }
    for (const auto& sub : op.regions) trace_roots(sub, root);
  }
}

std::string tensor_of(const tile_ir::operation& op, const roots& root) {
  for (const auto& u : op.operands) {
    if (auto it = root.find(u.name); it != root.end()) return it->second;
  }
  return {};
}

void build(const tile_ir::region& r, const use_counter& uc, region_model& out, const roots& root) {
  for (const auto& op : r.ops) {
    if (uc.dead.count(&op) != 0) continue;
    op_class c = classify(op);
    switch (c) {
      case op_class::memory:
        out.memory.push_back(memory_of(op));
        out.memory.back().tensor = tensor_of(op, root);
        break;
      case op_class::reduction: {
        reduction_info red;
        red.op = op.name;
        red.line = op.line;
        std::string dim = keyed_value(op.attributes, "dim");
        if (dim.empty()) dim = keyed_value(op.attributes, "dims");
        red.dims = "dim=" + dim;
        red.identities = identities_of(op.attributes);
        std::string shape, element;
        if (tile_type(op.types, 0, shape, element)) red.input = shape.empty() ? element : shape + "x" + element;
        red.combiner = combiner_of(op);
        out.reductions.push_back(std::move(red));
        break;
      }
      case op_class::mma:
        out.mmas.push_back({op.name, op.types, op.line});
        break;
      case op_class::control: {
        for (const auto& sub : op.regions) {
          region_model child;
          child.label = op.name + "(" + std::to_string(op.results.size()) + " results)";
          if (op.regions.size() > 1) child.label += "." + std::to_string(&sub - op.regions.data());
          build(sub, uc, child, root);
          out.children.push_back(std::move(child));
        }
        break;
      }
      case op_class::check:
        ++out.checks;
        break;
      case op_class::plumbing:
        if (op.name == "assume") {
          auto comma = text::find_top_level(op.attributes, ",");
          ++out.assumptions[std::string(text::trim(std::string_view(op.attributes).substr(0, comma)))];
        }
        break;
      case op_class::terminator:
        break;
      case op_class::compute: {
        ++out.compute[op.name];
        std::string shape, element;
        bool floating = tile_type(op.types, 0, shape, element) &&
                        (element.rfind("f", 0) == 0 || element.rfind("bf", 0) == 0 || element.rfind("tf", 0) == 0);
        // Integer ops' rounding (divi's floor division) is their meaning, not precision.
        std::string rounding = floating ? rounding_of(op) : "";
        if (!rounding.empty()) ++out.rounding[op.name + " " + rounding];
        break;
      }
    }
  }
}

std::string join_hints(const std::map<std::string, std::string>& h) {
  std::string out;
  for (const auto& [k, v] : h) out += (out.empty() ? "" : ", ") + k + " = " + v;
  return out;
}

}  // namespace

op_class classify(const tile_ir::operation& op) noexcept {
  for (const auto& rule : k_rules) {
    bool hit = rule.prefix ? op.name.rfind(rule.name, 0) == 0 : op.name == rule.name;
    if (hit) return rule.cls;
  }
  return op.regions.empty() ? op_class::compute : op_class::control;
}

std::string_view to_string(op_class c) noexcept {
  switch (c) {
    case op_class::memory: return "memory";
    case op_class::reduction: return "reduction";
    case op_class::mma: return "mma";
    case op_class::control: return "control";
    case op_class::plumbing: return "plumbing";
    case op_class::terminator: return "terminator";
    case op_class::check: return "check";
    case op_class::compute: return "compute";
  }
  return "compute";
}

std::string rounding_of(const tile_ir::operation& op) {
  std::string_view a = op.attributes;
  std::string mode;
  if (auto pos = a.find("rounding<"); pos != std::string_view::npos) {
    auto close = a.find('>', pos);
    mode = std::string(a.substr(pos + 9, close == std::string_view::npos ? std::string_view::npos : close - pos - 9));
  } else if (std::string v = keyed_value(a, "rounding_mode"); !v.empty()) {
    // cutile-rs prints the enum's integer (cutile-ir's RoundingMode); tileirdisasm its name.
    static constexpr std::array<std::string_view, 8> names = {"nearest_even", "zero", "negative_inf", "positive_inf",
                                                              "approx", "full", "nearest_int_to_zero", "nearest_away"};
    std::size_t k = v.size() == 1 && v[0] >= '0' && v[0] <= '7' ? static_cast<std::size_t>(v[0] - '0') : names.size();
    mode = k < names.size() ? std::string(names[k]) : "mode " + v;
  }
  if (mode == "nearest_even") mode.clear();   // the default, written or not
  bool ftz = false;
  for (std::size_t p = a.find("flush_to_zero"); p != std::string_view::npos; p = a.find("flush_to_zero", p + 1)) {
    bool left = p == 0 || !text::name_char(a[p - 1]);
    bool right = p + 13 >= a.size() || !text::name_char(a[p + 13]);
    if (left && right) ftz = keyed_value(a, "flush_to_zero") != "false";
  }
  std::string out = mode.empty() ? "" : "rounding=" + mode;
  if (ftz) out += std::string(out.empty() ? "" : " ") + "flush_to_zero";
  return out;
}

std::string memory_access::describe() const {
  std::string s = direction + " " + addressing;
  if (!ordering.empty()) s += " " + ordering;
  s += " " + (tile.empty() ? element : tile + "x" + element);
  if (!padding.empty()) s += " padding=" + padding;
  if (!hints.empty()) s += " hints{" + join_hints(hints) + "}";
  return s;
}

std::string reduction_info::describe() const {
  return op + " " + dims + " identities=[" + identities + "] of " + input + " by " + combiner;
}

namespace {
void collect_loads(const region_model& r, const std::string& path, std::map<std::string, std::vector<std::string>>& by_tensor) {
  for (const auto& m : r.memory) {
    if (m.direction != "load" || m.tensor.empty()) continue;
    auto& paths = by_tensor[m.tensor];
    if (std::find(paths.begin(), paths.end(), path) == paths.end()) paths.push_back(path);
  }
  for (const auto& c : r.children) collect_loads(c, path + "/" + c.label, by_tensor);
}
}  // namespace

std::vector<std::string> reread_tensors(const function_model& f) {
  std::map<std::string, std::vector<std::string>> by_tensor;
  collect_loads(f.body, f.body.label, by_tensor);
  std::vector<std::string> out;
  for (const auto& [tensor, paths] : by_tensor) {
    if (paths.size() < 2) continue;
    std::string where;
    for (const auto& p : paths) where += (where.empty() ? "" : ", ") + p;
    out.push_back(tensor + " loaded in " + std::to_string(paths.size()) + " regions (" + where + ")");
  }
  return out;
}

std::string region_model::shape() const {
  std::string s = label + "{";
  for (std::size_t i = 0; i < children.size(); ++i) s += (i ? " " : "") + children[i].shape();
  return s + "}";
}

function_model normalise(const tile_ir::function& f) {
  function_model m;
  m.symbol = f.symbol;
  m.argument_types = f.argument_types;
  m.hints = merged_hints(f.hints, &m.hint_targets);
  use_counter uc;
  uc.count(f.body);
  while (uc.sweep(f.body)) {
  }
  m.dead_ops = static_cast<int>(uc.dead.size());
  m.body.label = "entry";
  roots root;
  for (std::size_t i = 0; i < f.body.arguments.size(); ++i) root[f.body.arguments[i]] = "argument " + std::to_string(i);
  trace_roots(f.body, root);
  build(f.body, uc, m.body, root);
  return m;
}

}  // namespace portbench::diagnose
