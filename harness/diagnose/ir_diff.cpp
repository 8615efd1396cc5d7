// SPDX-License-Identifier: Apache-2.0
#include "portbench/diagnose/ir_diff.hpp"

#include <algorithm>
#include <set>

#include "portbench/diagnose/verdicts.hpp"

namespace portbench::diagnose {
namespace {

constexpr const char* k_none = "(none)";

struct collector {
  std::vector<ir_difference>& out;
  void add(std::string_view kind, std::string_view sev, const std::string& where, std::string ref, std::string port) {
    out.push_back({std::string(kind), std::string(sev), where, ref.empty() ? k_none : std::move(ref),
                   port.empty() ? k_none : std::move(port)});
  }
};

/// The shape without unit dimensions: "1x1x512" and "512" move the same tile.
std::string squeezed(const std::string& shape) {
  std::string out;
  std::size_t start = 0;
  while (start <= shape.size()) {
    std::size_t x = shape.find('x', start);
    if (x == std::string::npos) x = shape.size();
    std::string dim = shape.substr(start, x - start);
    if (dim != "1") {
      if (!out.empty()) out += 'x';
      out += dim;
    }
    start = x + 1;
  }
  return out;
}

std::string join_map(const std::map<std::string, std::string>& m) {
  if (m.empty()) return "(no hints)";
  std::string s;
  for (const auto& [k, v] : m) s += (s.empty() ? "" : ", ") + k + " = " + v;
  return s;
}

/// Only the entries whose counts differ, as "name xN, ..." per side.
void diff_counts(const counts& ref, const counts& port, std::string& ref_text, std::string& port_text) {
  std::set<std::string> keys;
  for (const auto& [k, v] : ref) keys.insert(k);
  for (const auto& [k, v] : port) keys.insert(k);
  for (const auto& k : keys) {
    int a = ref.count(k) ? ref.at(k) : 0;
    int b = port.count(k) ? port.at(k) : 0;
    if (a == b) continue;
    if (a) ref_text += (ref_text.empty() ? "" : ", ") + k + " x" + std::to_string(a);
    if (b) port_text += (port_text.empty() ? "" : ", ") + k + " x" + std::to_string(b);
  }
}

void compare_hint_maps(const std::map<std::string, std::string>& ref, const std::map<std::string, std::string>& port,
                       const std::string& where, collector& c) {
  std::set<std::string> keys;
  for (const auto& [k, v] : ref) keys.insert(k);
  for (const auto& [k, v] : port) keys.insert(k);
  for (const auto& k : keys) {
    auto a = ref.find(k), b = port.find(k);
    std::string av = a == ref.end() ? "" : k + " = " + a->second;
    std::string bv = b == port.end() ? "" : k + " = " + b->second;
    if (av != bv) c.add(difference_kind::hint, severity::structural, where, av, bv);
  }
}

int no_score(const void*, const void*) { return 0; }

/// Pairs what is identical first, then the rest within `group`, the closest by `score` (first
/// in program order among equals); calls `pair(ref, port)` for each non-identical pair and
/// `alone` for what has no counterpart.
template <typename T, typename Group, typename Pair, typename Alone, typename Score = int (*)(const void*, const void*)>
void match(const std::vector<T>& ref, const std::vector<T>& port, Group group, Pair pair, Alone alone,
           Score score = no_score) {
  std::vector<bool> used_ref(ref.size()), used_port(port.size());
  for (std::size_t i = 0; i < ref.size(); ++i) {
    for (std::size_t j = 0; j < port.size(); ++j) {
      if (!used_port[j] && ref[i].describe() == port[j].describe()) {
        used_ref[i] = used_port[j] = true;
        break;
      }
    }
  }
  for (std::size_t i = 0; i < ref.size(); ++i) {
    if (used_ref[i]) continue;
    std::size_t best = port.size();
    int best_score = -1;
    for (std::size_t j = 0; j < port.size(); ++j) {
      if (used_port[j] || group(ref[i]) != group(port[j])) continue;
      int s = score(&ref[i], &port[j]);
      if (s > best_score) best = j, best_score = s;
    }
    if (best < port.size()) {
      used_ref[i] = used_port[best] = true;
      pair(ref[i], port[best]);
    }
  }
  for (std::size_t i = 0; i < ref.size(); ++i) {
    if (!used_ref[i]) alone(&ref[i], nullptr);
  }
  for (std::size_t j = 0; j < port.size(); ++j) {
    if (!used_port[j]) alone(nullptr, &port[j]);
  }
}

void compare_memory(const region_model& ref, const region_model& port, const std::string& where, collector& c) {
  match(
      ref.memory, port.memory, [](const memory_access& m) { return m.direction; },
      [&](const memory_access& a, const memory_access& b) {
        if (a.tile != b.tile) {
          bool same = squeezed(a.tile) == squeezed(b.tile);   // only unit dimensions differ
          c.add(difference_kind::tile_shape, same ? severity::note : severity::structural, where, a.describe(),
                b.describe());
        }
        if (a.addressing != b.addressing || a.element != b.element || a.padding != b.padding || a.ordering != b.ordering) {
          c.add(difference_kind::memory, severity::structural, where, a.describe(), b.describe());
        }
        if (a.hints != b.hints) {
          c.add(difference_kind::hint, severity::structural, where, a.direction + " " + join_map(a.hints),
                b.direction + " " + join_map(b.hints));
        }
      },
      [&](const memory_access* a, const memory_access* b) {
        c.add(difference_kind::memory, severity::structural, where, a ? a->describe() : "", b ? b->describe() : "");
      },
      [](const void* x, const void* y) {
        // Likely the same tensor: same addressing, element type, padding and tile rank.
        const auto& a = *static_cast<const memory_access*>(x);
        const auto& b = *static_cast<const memory_access*>(y);
        auto rank = [](const std::string& t) { return std::count(t.begin(), t.end(), 'x'); };
        return 8 * (a.addressing == b.addressing) + 4 * (a.element == b.element) + 2 * (a.padding == b.padding) +
               (rank(a.tile) == rank(b.tile));
      });
}

void compare_reductions(const region_model& ref, const region_model& port, const std::string& where, collector& c) {
  match(
      ref.reductions, port.reductions, [](const reduction_info& r) { return r.op; },
      [&](const reduction_info& a, const reduction_info& b) {
        bool only_shape = a.dims == b.dims && a.identities == b.identities && a.combiner == b.combiner;
        c.add(only_shape ? difference_kind::tile_shape : difference_kind::reduction, severity::structural, where,
              a.describe(), b.describe());
      },
      [&](const reduction_info* a, const reduction_info* b) {
        c.add(difference_kind::reduction, severity::structural, where, a ? a->describe() : "",
              b ? b->describe() : "");
      });
}

void compare_region(const region_model& ref, const region_model& port, const std::string& where, collector& c) {
  compare_memory(ref, port, where, c);
  compare_reductions(ref, port, where, c);
  match(
      ref.mmas, port.mmas, [](const mma_info& m) { return m.op; },
      [&](const mma_info& a, const mma_info& b) {
        c.add(difference_kind::mma, severity::structural, where, a.describe(), b.describe());
      },
      [&](const mma_info* a, const mma_info* b) {
        c.add(difference_kind::mma, severity::structural, where, a ? a->describe() : "", b ? b->describe() : "");
      });
  std::string a, b;
  diff_counts(ref.rounding, port.rounding, a, b);
  if (!a.empty() || !b.empty()) c.add(difference_kind::rounding, severity::structural, where, a, b);
  a.clear(), b.clear();
  diff_counts(ref.compute, port.compute, a, b);
  if (!a.empty() || !b.empty()) c.add(difference_kind::ops, severity::note, where, a, b);
  if (ref.checks != port.checks) {
    c.add(difference_kind::checks, severity::note, where, std::to_string(ref.checks) + " asserts/prints",
          std::to_string(port.checks) + " asserts/prints");
  }
  a.clear(), b.clear();
  diff_counts(ref.assumptions, port.assumptions, a, b);
  if (!a.empty() || !b.empty()) c.add(difference_kind::assumptions, severity::note, where, a, b);
  for (std::size_t i = 0; i < ref.children.size() && i < port.children.size(); ++i) {
    compare_region(ref.children[i], port.children[i], where + "/" + ref.children[i].label, c);
  }
}

void merge_into(region_model& into, const region_model& r) {
  into.memory.insert(into.memory.end(), r.memory.begin(), r.memory.end());
  into.reductions.insert(into.reductions.end(), r.reductions.begin(), r.reductions.end());
  into.mmas.insert(into.mmas.end(), r.mmas.begin(), r.mmas.end());
  for (const auto& [k, v] : r.rounding) into.rounding[k] += v;
  for (const auto& [k, v] : r.compute) into.compute[k] += v;
  for (const auto& [k, v] : r.assumptions) into.assumptions[k] += v;
  into.checks += r.checks;
  for (const auto& child : r.children) merge_into(into, child);
}

region_model flattened(const region_model& r) {
  region_model flat;
  flat.label = r.label;
  merge_into(flat, r);
  return flat;
}

std::string signature_text(const function_model& f) {
  std::string s = std::to_string(f.argument_types.size()) + " arguments (";
  for (std::size_t i = 0; i < f.argument_types.size(); ++i) s += (i ? ", " : "") + f.argument_types[i];
  return s + ")";
}

}  // namespace

int ir_verdict_rank(std::string_view v) noexcept {
  if (v == ir_verdict::fail_structural) return 0;
  if (v == ir_verdict::not_comparable) return 1;
  if (v == ir_verdict::pass_with_notes) return 2;
  if (v == ir_verdict::pass) return 3;
  return 0;
}

int ir_diff_result::structural() const noexcept {
  int n = 0;
  for (const auto& d : differences) n += d.severity == severity::structural ? 1 : 0;
  return n;
}

std::vector<ir_difference> diff_functions(const function_model& ref, const function_model& port,
                                          const std::string& where) {
  std::vector<ir_difference> out;
  collector c{out};
  std::string top = where.empty() ? "entry" : where + " entry";
  compare_hint_maps(ref.hints, port.hints, top, c);
  if (ref.argument_types != port.argument_types) {
    c.add(difference_kind::signature, severity::note, top, signature_text(ref), signature_text(port));
  }
  std::string ref_shape = ref.body.shape(), port_shape = port.body.shape();
  if (ref_shape == port_shape) {
    compare_region(ref.body, port.body, top, c);
  } else {
    c.add(difference_kind::control_flow, severity::structural, top, ref_shape, port_shape);
    // Regions cannot be paired: compare what the whole entry does.
    compare_region(flattened(ref.body), flattened(port.body), top + " (all regions)", c);
  }
  return out;
}

std::string verdict_of(const std::vector<ir_difference>& differences) {
  bool note = false;
  for (const auto& d : differences) {
    if (d.severity == severity::structural) return std::string(ir_verdict::fail_structural);
    note = true;
  }
  return std::string(note ? ir_verdict::pass_with_notes : ir_verdict::pass);
}

ir_diff_result diff(const tile_ir::function& ref, const tile_ir::function& port) {
  ir_diff_result r;
  r.differences = diff_functions(normalise(ref), normalise(port));
  r.verdict = verdict_of(r.differences);
  return r;
}

}  // namespace portbench::diagnose
