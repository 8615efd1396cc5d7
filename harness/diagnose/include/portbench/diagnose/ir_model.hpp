// SPDX-License-Identifier: Apache-2.0
// The normalised model ir-diff compares: per entry, the tree of control-flow regions and, per
// region, what matters for structure and speed (memory accesses, reductions, MMAs, rounding and
// flush-to-zero, hints) and what is only noted (the multiset of other compute ops, checks,
// assumptions). SSA names, locations, op order within a region, dead ops and data-movement
// plumbing (constants, reshapes, broadcasts, views, tokens) are gone. docs/diagnose.md.
#pragma once
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "portbench/diagnose/tile_ir.hpp"

namespace portbench::diagnose {

/// How ir-diff treats an operation. The few ops whose attributes matter are named in one
/// table (ir_model.cpp); anything else with regions is control flow, anything else computes.
enum class op_class { memory, reduction, mma, control, plumbing, terminator, check, compute };

[[nodiscard]] op_class classify(const tile_ir::operation& op) noexcept;
[[nodiscard]] std::string_view to_string(op_class c) noexcept;

/// A load, store or atomic.
struct memory_access {
  std::string direction;    ///< "load", "store", "atomic"
  std::string addressing;   ///< "view" (tensor/partition view; TMA-capable), "pointer", "other"
  std::string ordering;     ///< memory ordering word, e.g. "weak"
  std::string tile;         ///< tile shape moved, e.g. "8x1024" ("" for a scalar)
  std::string element;      ///< element type, e.g. "f16"
  std::string padding;      ///< padding value of the view, e.g. "zero"
  std::map<std::string, std::string> hints;   ///< e.g. latency, allow_tma
  std::string op;           ///< op name
  std::string tensor;       ///< the entry argument it reaches, e.g. "argument 0" ("" if untraced)
  int line = 0;
  /// "load view weak 8x1024xf16 padding=zero" (not the argument: front ends order them differently)
  [[nodiscard]] std::string describe() const;
};

struct reduction_info {
  std::string op;          ///< "reduce", "scan"
  std::string dims;        ///< "dim=1"
  std::string identities;  ///< normalised values, e.g. "0" or "-inf"
  std::string input;       ///< input tile type
  std::string combiner;    ///< compute ops of the body, sorted: "addf"
  int line = 0;
  [[nodiscard]] std::string describe() const;
};

struct mma_info {
  std::string op;
  std::string types;   ///< operand and accumulator types
  int line = 0;
  [[nodiscard]] std::string describe() const { return op + " : " + types; }
};

using counts = std::map<std::string, int>;

struct region_model {
  std::string label;   ///< the control op owning it, e.g. "for(2 results)"; "entry" at the top
  std::vector<memory_access> memory;
  std::vector<reduction_info> reductions;
  std::vector<mma_info> mmas;
  counts rounding;     ///< "divf rounding=approx flush_to_zero" -> count (non-default only)
  counts compute;      ///< op name -> count
  counts assumptions;  ///< predicate -> count, e.g. "div_by<16>"
  int checks = 0;      ///< asserts and prints
  std::vector<region_model> children;   ///< nested control regions, in program order

  /// The nesting alone, e.g. "entry{for(2 results){} for(0 results){}}".
  [[nodiscard]] std::string shape() const;
};

struct function_model {
  std::string symbol;
  std::vector<std::string> argument_types;
  std::map<std::string, std::string> hints;   ///< the hints the target sees (below)
  std::string hint_targets;                   ///< e.g. "default" or "sm_90"
  region_model body;
  int dead_ops = 0;   ///< pure ops removed because nothing used their results
};

/// Normalises one entry: dead pure ops removed (to a fixpoint), plumbing dropped, facts per
/// region. Hints: the `default` set overridden by architecture-specific sets (sm_*).
[[nodiscard]] function_model normalise(const tile_ir::function& f);

/// Tensors the entry loads in more than one region (a first pass and a second over the same
/// input: the input is read from memory twice), e.g. "argument 0 loaded in 2 regions (...)".
[[nodiscard]] std::vector<std::string> reread_tensors(const function_model& f);

/// Rounding-mode attribute values that mean the default (round to nearest even) are dropped.
[[nodiscard]] std::string rounding_of(const tile_ir::operation& op);

}  // namespace portbench::diagnose
