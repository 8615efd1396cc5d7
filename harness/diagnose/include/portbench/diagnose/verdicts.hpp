// SPDX-License-Identifier: Apache-2.0
// The literals that diagnose and ir-diff write, under the names this part uses. Verdicts and
// finding tags are defined in portbench/verdicts.hpp (the one place verdicts are spelled) and
// named here; severities and difference kinds are lower-case vocabulary of this part only.
// docs/diagnose.md says what each means and which evidence raises it.
#pragma once
#include <string_view>

#include "portbench/verdicts.hpp"

namespace portbench::diagnose {

/// ir-diff verdicts, worst first.
namespace ir_verdict {
inline constexpr std::string_view fail_structural = verdicts::stage::ir_diff::fail_structural;   ///< a structural difference
inline constexpr std::string_view not_comparable = verdicts::stage::ir_diff::not_comparable;     ///< a side has no Tile IR
inline constexpr std::string_view pass_with_notes = verdicts::stage::ir_diff::pass_with_notes;   ///< only notes
inline constexpr std::string_view pass = verdicts::stage::ir_diff::pass;                         ///< nothing differs
}  // namespace ir_verdict

/// Rank of an ir-diff verdict: 0 is the worst.
[[nodiscard]] int ir_verdict_rank(std::string_view verdict) noexcept;

/// How much a difference weighs.
namespace severity {
inline constexpr std::string_view structural = "structural";
inline constexpr std::string_view note = "note";
}  // namespace severity

/// What differs (ir_difference::kind).
namespace difference_kind {
inline constexpr std::string_view launches = "launches";           ///< launch plans differ in length (structural)
inline constexpr std::string_view control_flow = "control_flow";   ///< loop/branch nesting (structural)
inline constexpr std::string_view memory = "memory";               ///< loads/stores: kind, type, padding (structural)
inline constexpr std::string_view tile_shape = "tile_shape";       ///< tile moved by a memory op (structural)
inline constexpr std::string_view hint = "hint";                   ///< optimisation hints (structural)
inline constexpr std::string_view reduction = "reduction";         ///< reductions and identities (structural)
inline constexpr std::string_view mma = "mma";                     ///< MMA operand/accumulator types (structural)
inline constexpr std::string_view rounding = "rounding";           ///< rounding / flush-to-zero (structural)
inline constexpr std::string_view ops = "ops";                     ///< other compute ops' multiset (note)
inline constexpr std::string_view checks = "checks";               ///< asserts and prints (note)
inline constexpr std::string_view assumptions = "assumptions";     ///< assume predicates (note)
inline constexpr std::string_view signature = "signature";         ///< entry arguments (note: front-end ABI)
}  // namespace difference_kind

/// The top-level verdict of a diagnose run (first field of its JSON).
namespace diagnose_verdict {
inline constexpr std::string_view findings = verdicts::diagnose_run::findings;                 ///< some configuration has findings
inline constexpr std::string_view no_findings = verdicts::diagnose_run::no_findings;           ///< diagnosed, nothing found
inline constexpr std::string_view nothing_selected = verdicts::diagnose_run::nothing_selected; ///< no configuration below the gate / matched
inline constexpr std::string_view not_diagnosed = verdicts::diagnose_run::not_diagnosed;       ///< selected, but no bundle could be read
}  // namespace diagnose_verdict

/// Finding tags (docs/diagnose.md: evidence rule of each).
namespace finding {
inline constexpr std::string_view extra_kernel = verdicts::finding::extra_kernel;
inline constexpr std::string_view register_spill = verdicts::finding::register_spill;
inline constexpr std::string_view fewer_waves = verdicts::finding::fewer_waves;
inline constexpr std::string_view lower_occupancy = verdicts::finding::lower_occupancy;
inline constexpr std::string_view no_tma = verdicts::finding::no_tma;
inline constexpr std::string_view narrow_global_loads = verdicts::finding::narrow_global_loads;
inline constexpr std::string_view narrow_global_stores = verdicts::finding::narrow_global_stores;
inline constexpr std::string_view loop_nest_differs = verdicts::finding::loop_nest_differs;
inline constexpr std::string_view tile_shape_differs = verdicts::finding::tile_shape_differs;
inline constexpr std::string_view hint_differs = verdicts::finding::hint_differs;
inline constexpr std::string_view memory_ops_differ = verdicts::finding::memory_ops_differ;
inline constexpr std::string_view rereads_input = verdicts::finding::rereads_input;
inline constexpr std::string_view rounding_differs = verdicts::finding::rounding_differs;
inline constexpr std::string_view more_instructions = verdicts::finding::more_instructions;
inline constexpr std::string_view launch_bound = verdicts::finding::launch_bound;
inline constexpr std::string_view below_roofline = verdicts::finding::below_roofline;
}  // namespace finding

}  // namespace portbench::diagnose
