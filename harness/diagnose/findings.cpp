// SPDX-License-Identifier: Apache-2.0
// Findings: each rule compares the port with the reference on one kind of evidence and, when it
// fires, gives a literal tag, a score and the evidence of both sides. Causes score above the
// symptom (BELOW_ROOFLINE), so the top finding is what to change first. docs/diagnose.md has
// the rules and their thresholds.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "portbench/diagnose/diagnose.hpp"
#include "portbench/diagnose/verdicts.hpp"

namespace portbench::diagnose {
namespace {

/// The side's largest launch (most threads in the grid): the one waves and occupancy are about.
const launch_diagnosis* main_launch(const side_diagnosis& s) {
  const launch_diagnosis* best = nullptr;
  auto size = [](const launch_diagnosis& l) { return double(l.resources.ctas) * std::max(1, l.resources.threads_per_cta); };
  for (const auto& l : s.launches) {
    if (best == nullptr || size(l) > size(*best)) best = &l;
  }
  return best;
}

/// The side's SASS summed over its launches; nullopt if any launch has no mix.
std::optional<sass_mix> side_sass(const side_diagnosis& s) {
  if (s.launches.empty()) return std::nullopt;
  sass_mix sum;
  for (const auto& l : s.launches) {
    if (!l.sass) return std::nullopt;
    for (const auto& [k, v] : l.sass->classes) sum.classes[k] += v;
    for (const auto& [k, v] : l.sass->global_load_bits) sum.global_load_bits[k] += v;
    for (const auto& [k, v] : l.sass->global_store_bits) sum.global_store_bits[k] += v;
    sum.total += l.sass->total;
  }
  return sum;
}

std::string entries(const side_diagnosis& s) {
  std::string out;
  for (const auto& l : s.launches) out += (out.empty() ? "" : ", ") + l.entry;
  return out;
}

std::string waves_text(const launch_diagnosis& l, const device_spec& d) {
  const auto& r = l.resources;
  return fmt::format("{} CTAs of {} threads, {} per SM ({}) on {} SMs: {:.2f} waves, {:.0f}% of the slots filled",
                     r.ctas, r.threads_per_cta, r.ctas_per_sm, r.limiter, d.sm_count, r.waves, 100 * r.fill());
}

std::string roof_text(const roofline_point& p, const device_spec& d) {
  if (p.memory_bound) {
    return fmt::format("{:.0f} GB/s = {:.0f}% of the {:.0f} GB/s copy bandwidth", p.achieved_gbps,
                       100 * p.fraction_of_copy, d.copy_bandwidth_gbps);
  }
  return fmt::format("{:.0f} GFLOP/s = {:.0f}% of the {:.0f} GFLOP/s compute roof", p.achieved_gflops,
                     100 * p.fraction_of_roof, p.roof_gflops);
}

void from_ir(const config_diagnosis& c, std::vector<finding_item>& out) {
  if (!c.ir) return;
  struct rule {
    std::string_view kind, tag;
    double score;
  };
  const rule rules[] = {{difference_kind::launches, finding::extra_kernel, 0.0},
                        {difference_kind::control_flow, finding::loop_nest_differs, 0.5},
                        {difference_kind::tile_shape, finding::tile_shape_differs, 0.5},
                        {difference_kind::hint, finding::hint_differs, 0.45},
                        {difference_kind::memory, finding::memory_ops_differ, 0.4},
                        {difference_kind::rounding, finding::rounding_differs, 0.2}};
  for (const auto& r : rules) {
    if (r.score == 0) continue;   // launches: EXTRA_KERNEL comes from the plans themselves
    const ir_difference* first = nullptr;
    int n = 0;
    for (const auto& d : c.ir->differences) {
      if (d.kind != r.kind || d.severity != severity::structural) continue;
      if (first == nullptr) first = &d;
      ++n;
    }
    if (first == nullptr) continue;
    out.push_back({std::string(r.tag), r.score,
                   fmt::format("Tile IR at {}: reference `{}`, port `{}`{}", first->where, first->reference, first->port,
                               n > 1 ? fmt::format(" (and {} more)", n - 1) : std::string())});
  }
}

}  // namespace

std::vector<finding_item> find_findings(const config_diagnosis& c, const device_spec& d, const diagnose_options& opts) {
  std::vector<finding_item> out;
  const auto& ref = c.reference;
  const auto& port = c.port;
  bool both = ref.problem.empty() && port.problem.empty() && !ref.launches.empty() && !port.launches.empty();

  if (both && port.launches.size() > ref.launches.size()) {
    out.push_back({std::string(finding::extra_kernel), 0.9,
                   fmt::format("port launches {} kernels ({}), reference {} ({})", port.launches.size(), entries(port),
                               ref.launches.size(), entries(ref))});
  }
  auto ref_sass = side_sass(ref), port_sass = side_sass(port);
  if (both) {
    int ref_local = 0, port_local = 0;
    for (const auto& l : ref.launches) ref_local = std::max(ref_local, l.resources.local_bytes);
    for (const auto& l : port.launches) port_local = std::max(port_local, l.resources.local_bytes);
    // With SASS the spill instructions are the evidence (local memory may be a stack frame the
    // code barely touches); without it, the local memory itself.
    bool have_sass = ref_sass && port_sass;
    int ref_spills = have_sass ? ref_sass->count(sass_class::local) : 0;
    int port_spills = have_sass ? port_sass->count(sass_class::local) : 0;
    bool spills = have_sass ? port_spills > ref_spills : port_local > ref_local;
    if (spills) {
      double weight = have_sass ? std::min(1.0, (port_spills - ref_spills) / 32.0) : 0.5;
      out.push_back({std::string(finding::register_spill), 0.4 + 0.45 * weight,
                     fmt::format("port: {} bytes of local memory per thread, LDL/STL x{}; reference: {} bytes, x{}{}",
                                 port_local, port_spills, ref_local, ref_spills,
                                 have_sass ? "" : " (no SASS: local memory only)")});
    }
    const auto* rm = main_launch(ref);
    const auto* pm = main_launch(port);
    if (rm && pm && rm->resources.ctas_per_sm > 0 && pm->resources.ctas_per_sm > 0) {
      double rf = rm->resources.fill(), pf = pm->resources.fill();
      // Under one wave a quarter fewer filled slots already costs a quarter of the bandwidth.
      bool fewer = pf < rf - 0.1 || (pm->resources.waves < 1 && pf < 0.75 * rf);
      if (fewer) {
        out.push_back({std::string(finding::fewer_waves), 0.5 + 0.4 * (1 - pf / rf),
                       "port " + waves_text(*pm, d) + "; reference " + waves_text(*rm, d)});
      } else if (pm->resources.waves >= 1 && pm->resources.occupancy < 0.75 * rm->resources.occupancy) {
        out.push_back({std::string(finding::lower_occupancy), 0.45,
                       fmt::format("port {} CTAs per SM ({:.0f}% of the warp slots, limited by {}); reference {} ({:.0f}%, {})",
                                   pm->resources.ctas_per_sm, 100 * pm->resources.occupancy, pm->resources.limiter,
                                   rm->resources.ctas_per_sm, 100 * rm->resources.occupancy, rm->resources.limiter)});
      }
    }
  }
  if (ref_sass && port_sass) {
    int ref_tma = ref_sass->count(sass_class::tma), port_tma = port_sass->count(sass_class::tma);
    if (ref_tma > 0 && port_tma == 0) {
      out.push_back({std::string(finding::no_tma), 0.6,
                     fmt::format("reference: {} TMA instructions (UTMALDG/UTMASTG...); port: none, global loads {}",
                                 ref_tma, port_sass->widths_text(true))});
    }
    double rl = ref_sass->mean_load_bits(), pl = port_sass->mean_load_bits();
    if (rl > 0 && pl > 0 && pl < 0.75 * rl) {
      out.push_back({std::string(finding::narrow_global_loads), 0.55,
                     fmt::format("port global loads {} (mean {:.0f} bits); reference {} (mean {:.0f} bits)",
                                 port_sass->widths_text(true), pl, ref_sass->widths_text(true), rl)});
    }
    double rs = ref_sass->mean_store_bits(), ps = port_sass->mean_store_bits();
    if (rs > 0 && ps > 0 && ps < 0.75 * rs) {
      out.push_back({std::string(finding::narrow_global_stores), 0.45,
                     fmt::format("port global stores {} (mean {:.0f} bits); reference {} (mean {:.0f} bits)",
                                 port_sass->widths_text(false), ps, ref_sass->widths_text(false), rs)});
    }
    if (port_sass->total > 1.5 * ref_sass->total && ref_sass->total > 0) {
      out.push_back({std::string(finding::more_instructions), 0.25,
                     fmt::format("port {} SASS instructions (static), reference {}", port_sass->total, ref_sass->total)});
    }
  }
  from_ir(c, out);
  // A port that reads an input in two passes moves more bytes than one that reads it once.
  if (port.tile_ir && !port.rereads.empty() && (!ref.tile_ir || port.rereads.size() > ref.rereads.size())) {
    std::string list;
    for (const auto& r : port.rereads) list += (list.empty() ? "" : "; ") + r;
    out.push_back({std::string(finding::rereads_input), 0.55,
                   "port Tile IR: " + list + "; reference: " +
                       (ref.tile_ir ? (ref.rereads.empty() ? std::string("every input loaded in one region")
                                                           : std::to_string(ref.rereads.size()) + " such input(s)")
                                    : std::string("no Tile IR (its SASS: global loads ") +
                                          (side_sass(ref) ? side_sass(ref)->widths_text(true) : std::string("n/a")) + ")")});
  }
  if (port.best_ns < opts.small_ns) {
    out.push_back({std::string(finding::launch_bound), 0.35,
                   fmt::format("port {:.2f} us, reference {:.2f} us: below {:.0f} us launch latency and the last "
                               "partial wave weigh more than bandwidth",
                               port.best_ns / 1e3, ref.best_ns / 1e3, opts.small_ns / 1e3)});
  } else if (port.roof && port.roof->fraction_of_roof < opts.roof_fraction) {
    double gap = ref.roof ? ref.roof->fraction_of_roof - port.roof->fraction_of_roof : 0;
    out.push_back({std::string(finding::below_roofline), 0.1 + 0.2 * std::clamp(gap, 0.0, 0.5),
                   fmt::format("port {}{}; reference {}", roof_text(*port.roof, d),
                               port.roof->memory_bound ? fmt::format(" (memory-bound, {:.2f} flop/B)", port.roof->intensity)
                                                       : std::string(" (compute-bound)"),
                               ref.roof ? roof_text(*ref.roof, d) : std::string("—"))});
  }
  std::stable_sort(out.begin(), out.end(), [](const finding_item& a, const finding_item& b) { return a.score > b.score; });
  return out;
}

}  // namespace portbench::diagnose
