// SPDX-License-Identifier: Apache-2.0
// Every literal that diagnose and ir-diff write: verdicts, difference kinds and finding tags.
// Defined once here (to be folded into the project's single verdict header); docs/diagnose.md
// says what each means and which evidence raises it.
#pragma once
#include <string_view>

namespace portbench::diagnose {

/// ir-diff verdicts, worst first.
namespace ir_verdict {
inline constexpr std::string_view fail_structural = "FAIL_STRUCTURAL";   ///< a structural difference
inline constexpr std::string_view not_comparable = "NOT_COMPARABLE";     ///< a side has no Tile IR
inline constexpr std::string_view pass_with_notes = "PASS_WITH_NOTES";   ///< only notes
inline constexpr std::string_view pass = "PASS";                         ///< nothing differs
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
inline constexpr std::string_view findings = "FINDINGS";                 ///< some configuration has findings
inline constexpr std::string_view no_findings = "NO_FINDINGS";           ///< diagnosed, nothing found
inline constexpr std::string_view nothing_selected = "NOTHING_SELECTED"; ///< no configuration below the gate / matched
inline constexpr std::string_view not_diagnosed = "NOT_DIAGNOSED";       ///< selected, but no bundle could be read
}  // namespace diagnose_verdict

/// Finding tags (docs/diagnose.md: evidence rule of each).
namespace finding {
inline constexpr std::string_view extra_kernel = "EXTRA_KERNEL";
inline constexpr std::string_view register_spill = "REGISTER_SPILL";
inline constexpr std::string_view fewer_waves = "FEWER_WAVES";
inline constexpr std::string_view lower_occupancy = "LOWER_OCCUPANCY";
inline constexpr std::string_view no_tma = "NO_TMA";
inline constexpr std::string_view narrow_global_loads = "NARROW_GLOBAL_LOADS";
inline constexpr std::string_view narrow_global_stores = "NARROW_GLOBAL_STORES";
inline constexpr std::string_view loop_nest_differs = "LOOP_NEST_DIFFERS";
inline constexpr std::string_view tile_shape_differs = "TILE_SHAPE_DIFFERS";
inline constexpr std::string_view hint_differs = "HINT_DIFFERS";
inline constexpr std::string_view memory_ops_differ = "MEMORY_OPS_DIFFER";
inline constexpr std::string_view rereads_input = "REREADS_INPUT";
inline constexpr std::string_view rounding_differs = "ROUNDING_DIFFERS";
inline constexpr std::string_view more_instructions = "MORE_INSTRUCTIONS";
inline constexpr std::string_view launch_bound = "LAUNCH_BOUND";
inline constexpr std::string_view below_roofline = "BELOW_ROOFLINE";
}  // namespace finding

}  // namespace portbench::diagnose
