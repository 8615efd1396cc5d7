// SPDX-License-Identifier: Apache-2.0
// What one launch asks of the GPU, from its cubin entry (.nv.info) and the launch plan:
// registers, shared memory, local memory, barriers, CTAs per SM (the occupancy calculation
// with the device's per-SM limits, naming the limit that binds) and waves.
#pragma once
#include <cstdint>
#include <string>

#include "portbench/bundle/cubin.hpp"
#include "portbench/bundle/manifest.hpp"
#include "portbench/diagnose/roofline.hpp"

namespace portbench::diagnose {

struct launch_resources {
  int registers = -1;            ///< per thread (EIATTR_REGCOUNT)
  int max_registers = -1;        ///< the cap ptxas had (EIATTR_MAXREG_COUNT)
  int threads_per_cta = 0;       ///< the cubin's required block for Tile IR, else the launch's block
  std::int64_t static_shared = 0;
  std::int64_t dynamic_shared = 0;
  int local_bytes = 0;           ///< max(frame, stack) per thread: local memory (spills land here)
  int barriers = 0, mbarriers = 0;
  bool tile_ir = false;
  int ctas_per_sm = 0;           ///< resident CTAs per SM
  std::string limiter;           ///< "registers", "shared memory", "threads", "CTA slots"
  double occupancy = 0;          ///< resident warps / the SM's warp slots
  std::int64_t ctas = 0;         ///< CTAs in the grid
  double waves = 0;              ///< ctas / (ctas_per_sm x SMs)
  /// Share of the last wave's slots that hold work, 1 for whole waves; below one wave the share
  /// of the GPU's resident slots that the grid fills.
  [[nodiscard]] double fill() const noexcept;
};

[[nodiscard]] launch_resources resources_of(const bundle::cubin_entry& e, const bundle::launch_spec& l,
                                            const device_spec& d);

}  // namespace portbench::diagnose
