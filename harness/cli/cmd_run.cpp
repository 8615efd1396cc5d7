// SPDX-License-Identifier: Apache-2.0
// `portbench run [--ref DIR...] [--port DIR... | --aa] [--suite FILE] [options]`: options and
// printing over the sweep layer (plan, describe the devices, record, run, tally).
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <memory>

#include "commands.hpp"
#include "portbench/sweep/execute.hpp"
#include "portbench/sweep/plan.hpp"
#include "portbench/sweep/record.hpp"
#include "sweep_options.hpp"
#include "table.hpp"

namespace portbench::cli {
namespace {

// The documented defaults (docs/cli.md): the main job, tilegym -> cutile_rust on smoke.
constexpr const char* k_default_ref = "bundles/tilegym";
constexpr const char* k_default_port = "bundles/cutile_rust";
constexpr const char* k_default_suite = "configs/smoke.json";

struct run_cli_options {
  sweep::plan_options plan;
  sweep::execute_options exec;
  sweep::record_options record;
  selection_options view;
  std::string out = "results/run.h5";
  bool out_given = false;   ///< --out on the command line: a dry run writes its plan there
  bool aa = false;
};

void apply_defaults(run_cli_options& o) {
  auto need = [](const char* path, const char* what, const char* option) {
    if (!std::filesystem::exists(path)) {
      throw sweep::sweep_error(path, "", std::string("the default ") + what + " is missing (" + option +
                                             " chooses another; scripts/export_bundles.sh writes bundles)");
    }
    return std::string(path);
  };
  if (o.plan.ref_dirs.empty()) o.plan.ref_dirs = {need(k_default_ref, "reference bundle folder", "--ref")};
  if (o.aa) o.plan.port_dirs = o.plan.ref_dirs;
  if (o.plan.port_dirs.empty()) o.plan.port_dirs = {need(k_default_port, "port bundle folder", "--port")};
  if (o.plan.suite_file.empty()) o.plan.suite_file = need(k_default_suite, "suite", "--suite");
}

table result_table(const sweep::sweep_tally& tally) {
  table t{{{"configuration"}, {"ref_frontend"}, {"port_frontend"}, {"ref_best_us", 2}, {"port_best_us", 2},
           {"ratio", 4}, {"spread_pct", 2}, {"numerics"}, {"proof"}, {"timing"}, {"status"}, {"error"}},
          {}};
  for (const auto& r : tally.rows()) {
    t.rows.push_back({r.id, r.ref_frontend, r.port_frontend, number(r.ref_best_ns / 1e3), number(r.port_best_ns / 1e3),
                      number(r.ratio), number(100 * r.spread), r.numerics, r.proof, r.timing, r.status, r.error});
  }
  return t;
}

int run_command(run_cli_options& o, const std::string& argv_line) {
  apply_defaults(o);
  auto plan = sweep::plan_sweep(o.plan);
  report_unplanned(plan);
  if (plan.items.empty()) {
    throw sweep::sweep_error(o.plan.suite_file, "", "no configuration is supported by both sides" + deselected_note(plan));
  }
  const auto eta = estimate_and_shard(plan, o.view, {o.exec.runs, o.exec.devices.size(), o.exec.timing});
  if (o.view.dry_run && o.out_given) {
    // The plan as a results file (configurations declared, no runs, no device): what a sharded
    // job writes to prove with `merge` that its slices cover the suite exactly once.
    auto rec = sweep::results_recorder::open(o.out, o.record, plan, o.exec, {}, argv_line);
    rec.finish({});
    std::fprintf(o.view.format == table_format::text ? stdout : stderr, "plan written: %s (%zu configurations)\n",
                 rec.path().string().c_str(), plan.items.size());
  }
  if (o.view.list || o.view.dry_run) return print_plan(plan, eta, o.view, o.exec.runs, o.exec.devices.size());

  o.exec.worker_exe = sweep::default_worker_exe();
  o.exec.progress = ::isatty(2) && o.view.format == table_format::text;
  const auto devices = sweep::describe_devices(o.exec.worker_exe, o.exec.devices);
  auto rec = sweep::results_recorder::open(o.out, o.record, plan, o.exec, devices, argv_line);
  o.exec.reference_id = rec.reference_id();
  const auto summary = sweep::run_sweep(o.exec, plan, rec.sink(), rec.done());
  rec.finish(summary);

  const auto& tally = rec.tally();
  const auto& c = tally.costs();
  std::vector<std::string> notes;
  if (rec.resumed_runs() > 0) notes.push_back("resumed: " + std::to_string(rec.resumed_runs()) + " runs were already on file");
  if (summary.not_recorded > 0) {
    notes.push_back("NOT RECORDED: " + std::to_string(summary.not_recorded) + " configuration runs could not be written, first: " +
                    summary.first_not_recorded);
  }
  if (summary.not_run_budget > 0) {
    notes.push_back("budget: " + std::to_string(summary.not_run_budget) + " configuration runs not started after " +
                    std::to_string(static_cast<int>(o.exec.budget_s)) + " s (--resume continues)");
  }
  if (summary.stray_lines > 0) {
    notes.push_back(std::to_string(summary.stray_lines) + " worker output lines were not protocol lines, first: " +
                    summary.first_stray_line);
  }
  const table t = result_table(tally);
  const int code = tally.exit_code(plan, summary);
  if (o.view.format == table_format::json) {
    nlohmann::json doc = {{"results", rec.path().string()},
                          {"configurations", to_json(t)},
                          {"geomean", number(tally.geomean())},
                          {"geomean_configurations", tally.geomean_count()},
                          {"wall_s", summary.wall_s},
                          {"timed_device_s", summary.timed_device_s},
                          {"workers_started", summary.workers_started},
                          {"configuration_runs", summary.items_run},
                          {"failed", summary.items_failed},
                          {"worker_time_s", {{"inputs", c.inputs_s}, {"numerics", c.check_s},
                                             {"verification", c.verify_s}, {"sampling", c.sampling_s}}},
                          {"sides_verified", c.verified},
                          {"sides_reused", c.reused},
                          {"notes", notes},
                          {"exit_code", code}};
    std::printf("%s\n", doc.dump().c_str());
    return code;
  }
  // Text and CSV: the table on stdout; with CSV the lines around it go to stderr.
  std::FILE* info = o.view.format == table_format::csv ? stderr : stdout;
  std::fprintf(info, "results: %s\n", rec.path().string().c_str());
  if (o.view.format == table_format::text) std::printf("\n");
  print_table(t, o.view.format);
  std::fprintf(info, "geomean (port/ref speed, %zu configurations): %.4f\n", tally.geomean_count(), tally.geomean());
  std::fprintf(info,
               "wall %.1f s, GPU in timed kernels %.2f s (%.1f%%), workers started %d, configuration runs %d, failed %d\n",
               summary.wall_s, summary.timed_device_s, summary.wall_s > 0 ? 100 * summary.timed_device_s / summary.wall_s : 0.0,
               summary.workers_started, summary.items_run, summary.items_failed);
  std::fprintf(info, "worker time: inputs %.1f s, numerics passes %.1f s (CPU verification %.1f s), timed sampling %.1f s\n",
               c.inputs_s, c.check_s, c.verify_s, c.sampling_s);
  std::fprintf(info, "numerics: %d sides verified against fp64, %d reused a verified output (same inputs, same digest)\n",
               c.verified, c.reused);
  for (const auto& n : notes) std::fprintf(stderr, "portbench: %s\n", n.c_str());
  return code;
}

}  // namespace

command_action add_run_command(CLI::App& app) {
  auto o = std::make_shared<run_cli_options>();
  auto argv_line = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand("run", "Time reference and port bundles on a suite's paired configurations");
  auto& p = o->plan;
  auto& e = o->exec;
  cmd->add_option("--ref", p.ref_dirs, std::string("Reference bundle folders (default ") + k_default_ref + ")");
  cmd->add_option("--port", p.port_dirs, std::string("Port bundle folders (default ") + k_default_port + ")");
  cmd->add_flag("--aa", o->aa, "A/A: the reference bundles on both sides");
  cmd->add_option("--suite", p.suite_file, std::string("Suite file (default ") + k_default_suite + ")");
  add_selection_options(cmd, p.select, o->view);
  cmd->add_option("--runs", e.runs, "Independent worker runs per configuration (best of N)")->check(CLI::PositiveNumber);
  cmd->add_option("--out", o->out, "Results file (HDF5); with --dry-run, the plan is written there (no runs)");
  cmd->add_flag("--resume", o->record.resume, "Append to an existing results file, skipping what it holds");
  cmd->add_flag("--overwrite", o->record.overwrite, "Replace an existing results file");
  cmd->add_option("--devices", e.devices, "CUDA device ordinals, one worker each")->delimiter(',');
  cmd->add_option("--seed", e.seed, "Base seed of the inputs");
  cmd->add_flag("--vary-inputs", e.vary_inputs, "Fresh inputs in every run, each verified (default: the same inputs, verified once)");
  cmd->add_flag("--host-inputs", e.host_inputs, "Generate every input on the host and upload it (default: declared fills on the device)");
  cmd->add_option("--verified-cache", e.verified_dir, "Folder of verified outputs kept between sweeps (default: the sweep's own)");
  cmd->add_option("--budget", e.budget_s, "Seconds after which no further configuration run starts (0: none)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--timeout", e.item_timeout_s, "Seconds one configuration may take before its worker is killed")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--min-samples", e.timing.min_samples, "Samples per side at least");
  cmd->add_option("--max-samples", e.timing.max_samples, "Samples per side at most");
  cmd->add_option("--target-ci", e.timing.target_rel_ci, "Stop when the median's 95% CI half-width is below this fraction");
  cmd->add_option("--time-cap", e.timing.time_cap_s, "Seconds of sampling per configuration and run at most");
  cmd->add_option("--warmup", e.timing.warmup_launches, "Untimed launches per side before sampling");
  cmd->add_flag("!--warm-l2", e.timing.cold_l2, "Do not flush L2 before each sample");
  cmd->add_option("--throttle-fraction", e.timing.throttle_fraction,
                  "A sample below this fraction of the maximum SM clock is throttled and not counted (0: off)")
      ->check(CLI::Range(0.0, 1.0));
  cmd->callback([cmd, argv_line, o]() {
    *argv_line = command_line(cmd, "portbench run");
    o->out_given = cmd->count("--out") > 0;
  });
  return [o, argv_line]() { return run_command(*o, *argv_line); };
}

}  // namespace portbench::cli
