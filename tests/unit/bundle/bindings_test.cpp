// SPDX-License-Identifier: Apache-2.0
// Every exported bundle's launches bind to its operator's tensors as the reference declares them
// for that configuration: each tensor name, dimension, view offset and scratch buffer a launch
// (of the chosen plan and of every variant) names exists (also in address and descriptor tables) and each value
// fits its type; every fill and copy step's views bind (the tensor exists with that element type,
// every element lies inside its tensor or scratch buffer, a copy's destination overlaps neither
// itself nor its source); and the plan passes every output tensor to some launch or writes it by
// a step. Packing needs no GPU, so this runs on CI for every front end, before a device sees the bundle.
#include <gtest/gtest.h>

#include <cstdio>
#include <set>
#include <string>

#include "portbench/bundle/error.hpp"
#include "portbench/bundle/launcher.hpp"
#include "portbench/bundle/manifest.hpp"
#include "portbench/bundle/steps.hpp"
#include "portbench/reference/spec.hpp"
#include "test_support.hpp"

namespace pb = portbench::bundle;
namespace pr = portbench::reference;
namespace pt = portbench::testing;

namespace {

// Packs every launch of one plan against fake, distinct, 256-byte aligned addresses.
// Returns the plan's number of harness steps (fill, copy, sum).
std::size_t check_plan(const std::string& where, const pb::tensor_bindings& tensors,
                       const std::vector<pr::tensor_spec>& specs, const std::vector<pb::scratch_spec>& scratch,
                       const std::vector<pb::launch_spec>& launches, const std::vector<pb::plan_step>& steps) {
  // Scratch buffers apart by more than any buffer's size, so a step's overlap check sees
  // distinct buffers as distinct.
  pb::scratch_bindings sb;
  CUdeviceptr next = 0x7f0000000000ULL;
  for (const auto& s : scratch) sb.buffers[s.name] = (next += 0x1000000000ULL);
  // Address tables as the harness builds them: every tensor they list must exist.
  for (const auto& names : pb::address_tables(launches)) {
    EXPECT_NO_THROW((void)pb::table_addresses(names, tensors, where)) << where;
    sb.tables[names] = (next += 0x1000000000ULL);
  }
  // Descriptor tables likewise: every tensor exists, with the table's rank, its values in range.
  for (const auto& p : pb::descriptor_tables(launches)) {
    EXPECT_NO_THROW((void)pb::table_descriptors(p, tensors, where)) << where;
    sb.array_tables[p.tensors] = (next += 0x1000000000ULL);
  }
  std::set<std::string> passed;
  for (std::size_t k = 0; k < launches.size(); ++k) {
    const std::string at = where + ".launches[" + std::to_string(k) + "]";
    EXPECT_NO_THROW((void)pb::pack_params(launches[k], tensors, sb, at)) << at;
    for (const auto& p : launches[k].params) {
      if (p.kind == pb::param_kind::ptr) passed.insert(p.tensor);
      if (p.kind == pb::param_kind::ptr_table || p.kind == pb::param_kind::array_table) {
        passed.insert(p.tensors.begin(), p.tensors.end());
      }
    }
  }
  std::size_t count = 0;
  try {
    pb::check_steps(steps, scratch, tensors, sb, where);
  } catch (const pb::bundle_error& e) {
    ADD_FAILURE() << e.what();
  }
  for (const auto& st : steps) {
    if (st.kind == pb::step_kind::fill) passed.insert(st.fill.target.tensor);
    if (st.kind == pb::step_kind::copy) passed.insert(st.copy.dst.tensor);
    if (st.kind == pb::step_kind::sum) passed.insert(st.sum.dst.tensor);
    if (st.kind != pb::step_kind::kernel) ++count;
  }
  for (const auto& s : specs) {
    if (s.role != pr::tensor_role::in) {
      EXPECT_TRUE(passed.count(s.name)) << where << ": output '" << s.name << "' is passed to no launch";
    }
  }
  return count;
}

TEST(Bindings, EveryLaunchOfEveryBundlePacksAgainstTheOperatorsTensors) {
  std::size_t plans = 0, steps = 0;
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
      steps += check_plan(where, tensors, specs, cfg.scratch, cfg.launches, cfg.steps);
      ++plans;
      for (std::size_t v = 0; v < cfg.variants.size(); ++v) {
        steps += check_plan(where + ".variants[" + cfg.variants[v].name + "]", tensors, specs,
                            cfg.variants[v].scratch, cfg.variants[v].launches, cfg.variants[v].steps);
        ++plans;
      }
    }
  }
  EXPECT_GT(plans, 0u);
  // Which bundles have steps depends on the export; say how many were checked. tilegym's
  // attention_sink copies q, k, v and o around its kernel in every configuration.
  std::printf("bindings: %zu plans, %zu harness steps (fill, copy, sum)\n", plans, steps);
  if (std::filesystem::exists(pt::bundle_root() / "tilegym" / "attention_sink" / "manifest.json")) {
    EXPECT_GE(steps, 4u) << "tilegym/attention_sink is exported, but no fill or copy step was checked";
  }
}

}  // namespace
