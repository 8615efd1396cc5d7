// SPDX-License-Identifier: Apache-2.0
// `portbench check BUNDLE... [--device N] [--seed S]`: launches every configuration of every
// bundle once on seeded inputs, in worker processes with the run's timeout, and checks it
// against the fp64 reference. Exit 0 when every row is PASS.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "commands.hpp"
#include "portbench/sweep/execute.hpp"
#include "portbench/sweep/plan.hpp"
#include "portbench/verdicts.hpp"
#include "sweep_options.hpp"
#include "table.hpp"

namespace portbench::cli {
namespace {

struct check_cli_options {
  std::vector<std::string> bundles;
  sweep::selection select;
  selection_options view;
  int device = 0;
  std::uint64_t seed = 1;
  double timeout_s = 60;
};

int run_check(const check_cli_options& o) {
  auto plan = sweep::plan_check(o.bundles, o.select);
  if (plan.items.empty()) throw sweep::sweep_error(o.bundles.front(), "", "no configuration to check" + deselected_note(plan));
  const auto eta = estimate_and_shard(plan, o.view, {1, 1, {}});
  if (o.view.list || o.view.dry_run) return print_plan(plan, eta, o.view, 1, 1);

  sweep::execute_options exec;
  exec.runs = 1;
  exec.devices = {o.device};
  exec.seed = o.seed;
  exec.item_timeout_s = o.timeout_s;
  exec.worker_exe = sweep::default_worker_exe();
  const auto devices = sweep::describe_devices(exec.worker_exe, exec.devices);
  table t{{{"frontend"}, {"operator"}, {"config"}, {"numerics"}, {"status"}, {"detail"}}, {}};
  bool all_pass = true;
  const auto summary = sweep::run_sweep(exec, plan, [&](const sweep::planned_item& item, int, const measure::item_report& r) {
    const bool pass = r.status == verdicts::status::ok && verdicts::numerics_passed(r.ref.numerics);
    all_pass = all_pass && pass;
    t.rows.push_back({item.reference.frontend, item.config.op, item.id(), r.ref.numerics, r.status,
                      r.error.empty() ? r.ref.numerics_detail : r.error});
  });
  if (o.view.format == table_format::text) {
    const auto& d = devices.front();
    std::printf("device %s (compute capability %s), driver %s\n", d.gpu_name().c_str(), d.info.value("compute_capability", "?").c_str(),
                d.info.value("driver_version", "?").c_str());
  }
  print_table(t, o.view.format);
  if (summary.stray_lines > 0) {
    std::fprintf(stderr, "portbench: %d worker output lines were not protocol lines, first: %s\n", summary.stray_lines,
                 summary.first_stray_line.c_str());
  }
  return all_pass && summary.items_run == static_cast<int>(plan.items.size()) ? 0 : 1;
}

}  // namespace

command_action add_check_command(CLI::App& app) {
  auto o = std::make_shared<check_cli_options>();
  auto* cmd = app.add_subcommand("check", "Launch every configuration of the bundles once and verify it against the fp64 reference");
  cmd->add_option("bundles", o->bundles, "Bundle folders (or folders holding bundles)")->required();
  cmd->add_option("--device", o->device, "CUDA device ordinal")->check(CLI::NonNegativeNumber);
  cmd->add_option("--seed", o->seed, "Seed of the random inputs");
  cmd->add_option("--timeout", o->timeout_s, "Seconds one configuration may take before its worker is killed")
      ->check(CLI::PositiveNumber);
  add_selection_options(cmd, o->select, o->view);
  return [o]() { return run_check(*o); };
}

}  // namespace portbench::cli
