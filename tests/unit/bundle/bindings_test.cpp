// SPDX-License-Identifier: Apache-2.0
// Every exported bundle's launches bind to its operator's tensors as the reference declares them
// for that configuration: each tensor name, dimension, view offset and scratch buffer a launch
// (of the chosen plan and of every variant) names exists (also in address tables) and each value fits its type, and the
// plan passes every output tensor to some launch. Packing needs no GPU, so this runs on CI for
// every front end, before a device ever sees the bundle.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "portbench/bundle/error.hpp"
#include "portbench/bundle/launcher.hpp"
#include "portbench/bundle/manifest.hpp"
#include "portbench/reference/spec.hpp"
#include "test_support.hpp"

namespace pb = portbench::bundle;
namespace pr = portbench::reference;
namespace pt = portbench::testing;

namespace {

// Packs every launch of one plan against fake, distinct, 256-byte aligned addresses.
void check_plan(const std::string& where, const pb::tensor_bindings& tensors, const std::vector<pr::tensor_spec>& specs,
                const std::vector<pb::scratch_spec>& scratch, const std::vector<pb::launch_spec>& launches) {
  pb::scratch_bindings sb;
  CUdeviceptr next = 0x7f0000000000ULL;
  for (const auto& s : scratch) sb.buffers[s.name] = (next += 0x100000);
  // Address tables as the harness builds them: every tensor they list must exist.
  for (const auto& names : pb::address_tables(launches)) {
    EXPECT_NO_THROW((void)pb::table_addresses(names, tensors, where)) << where;
    sb.tables[names] = (next += 0x100000);
  }
  std::set<std::string> passed;
  for (std::size_t k = 0; k < launches.size(); ++k) {
    const std::string at = where + ".launches[" + std::to_string(k) + "]";
    EXPECT_NO_THROW((void)pb::pack_params(launches[k], tensors, sb, at)) << at;
    for (const auto& p : launches[k].params) {
      if (p.kind == pb::param_kind::ptr) passed.insert(p.tensor);
      if (p.kind == pb::param_kind::ptr_table) passed.insert(p.tensors.begin(), p.tensors.end());
    }
  }
  for (const auto& s : specs) {
    if (s.role != pr::tensor_role::in) {
      EXPECT_TRUE(passed.count(s.name)) << where << ": output '" << s.name << "' is passed to no launch";
    }
  }
}

TEST(Bindings, EveryLaunchOfEveryBundlePacksAgainstTheOperatorsTensors) {
  std::size_t plans = 0;
  for (const auto& dir : pt::all_bundles()) {
    const pb::manifest m = pb::parse_manifest(dir / "manifest.json");
    const pr::operator_spec& op = pr::find_operator(m.op);
    for (std::size_t i = 0; i < m.configs.size(); ++i) {
      const auto& cfg = m.configs[i];
      const std::string where = m.path.string() + ": configs[" + std::to_string(i) + "] " + cfg.config.id();
      const std::vector<pr::tensor_spec> specs = op.tensors(cfg.config);
      pb::tensor_bindings tensors;
      CUdeviceptr next = 0x100000000ULL;
      for (const auto& s : specs) tensors[s.name] = {(next += 0x10000000000ULL), s};
      check_plan(where, tensors, specs, cfg.scratch, cfg.launches);
      ++plans;
      for (std::size_t v = 0; v < cfg.variants.size(); ++v) {
        check_plan(where + ".variants[" + cfg.variants[v].name + "]", tensors, specs, cfg.variants[v].scratch,
                   cfg.variants[v].launches);
        ++plans;
      }
    }
  }
  EXPECT_GT(plans, 0u);
}

}  // namespace
