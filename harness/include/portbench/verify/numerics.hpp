// SPDX-License-Identifier: Apache-2.0
// One correctness check of a bundle's plan for one configuration: seeded inputs, poisoned
// outputs, launch, compare with the fp64 reference. The verdict is a literal string.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "portbench/bundle/bundle.hpp"
#include "portbench/cuda/context.hpp"
#include "portbench/reference/spec.hpp"
#include "portbench/verdicts.hpp"

namespace portbench::verify {

struct numerics_result {
  std::string verdict{verdicts::numerics::not_checked};   ///< portbench/verdicts.hpp
  std::vector<reference::compare_report> reports;
  std::string error;   ///< what failed, when verdict is ERROR
};

struct check_options {
  std::uint64_t seed = 1;
  std::uint32_t poison = 0xFFFFFFFFu;   ///< all-ones: NaN in every float format
};

/// Runs `plan` of bundle `b` once on `ctx` and verifies every output. CUDA errors propagate as
/// cuda_error (the caller decides whether the context is still usable).
[[nodiscard]] numerics_result check_numerics(const cuda::context_ptr& ctx, const bundle::bundle& b,
                                             const bundle::config_plan& plan, const check_options& opt);

}  // namespace portbench::verify
