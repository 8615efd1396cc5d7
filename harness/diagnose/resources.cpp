// SPDX-License-Identifier: Apache-2.0
// The occupancy calculation as NVIDIA's calculator does it: registers are allocated per warp in
// units of the device's granularity, shared memory per CTA plus a reserved kilobyte, and the
// fewest CTAs any limit allows is what stays resident.
#include "portbench/diagnose/resources.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace portbench::diagnose {

double launch_resources::fill() const noexcept {
  if (!(waves > 0)) return 0;
  if (waves < 1) return waves;
  return waves / std::ceil(waves);
}

launch_resources resources_of(const bundle::cubin_entry& e, const bundle::launch_spec& l, const device_spec& d) {
  launch_resources r;
  r.registers = e.registers;
  r.max_registers = e.max_registers;
  r.tile_ir = e.tile_ir;
  r.static_shared = e.static_shared_bytes;
  r.dynamic_shared = l.shared_bytes;
  r.local_bytes = std::max(e.frame_bytes, e.min_stack_bytes);   // the stack includes the frame
  r.barriers = e.barriers;
  r.mbarriers = e.mbarriers;
  auto product = [](const std::array<unsigned, 3>& v) { return static_cast<std::int64_t>(v[0]) * v[1] * v[2]; };
  std::int64_t required = static_cast<std::int64_t>(e.required_block[0]) * std::max(1, e.required_block[1]) *
                          std::max(1, e.required_block[2]);
  // A Tile IR launch passes block (1,1,1): the CTA is the compiler's (.reqntid).
  r.threads_per_cta = static_cast<int>(e.tile_ir && required > 0 ? required : product(l.block));
  r.ctas = product(l.grid);

  const int big = std::numeric_limits<int>::max();
  int warps = std::max(1, (r.threads_per_cta + 31) / 32);
  int by_threads = d.max_threads_per_sm / (warps * 32);
  int by_regs = big;
  if (r.registers > 0) {
    int per_warp = (r.registers * 32 + d.register_granularity - 1) / d.register_granularity * d.register_granularity;
    by_regs = d.registers_per_sm / per_warp / warps;
  }
  int by_shared = big;
  std::int64_t shared = r.static_shared + r.dynamic_shared;
  if (shared > 0 && d.shared_per_sm > 0) {
    by_shared = static_cast<int>(d.shared_per_sm / (shared + d.shared_reserved_per_cta));
  }
  r.ctas_per_sm = d.max_ctas_per_sm;
  r.limiter = "CTA slots";
  if (by_threads < r.ctas_per_sm) r.ctas_per_sm = by_threads, r.limiter = "threads";
  if (by_regs < r.ctas_per_sm) r.ctas_per_sm = by_regs, r.limiter = "registers";
  if (by_shared < r.ctas_per_sm) r.ctas_per_sm = by_shared, r.limiter = "shared memory";
  r.occupancy = static_cast<double>(r.ctas_per_sm) * warps / (d.max_threads_per_sm / 32.0);
  if (r.ctas_per_sm > 0 && d.sm_count > 0) {
    r.waves = static_cast<double>(r.ctas) / (static_cast<double>(r.ctas_per_sm) * d.sm_count);
  }
  return r;
}

}  // namespace portbench::diagnose
