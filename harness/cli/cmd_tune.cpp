// SPDX-License-Identifier: Apache-2.0
// `portbench tune BUNDLES... [--suite FILE] --out RECORD.json`: times every tuning variant of
// the bundles' configurations against the chosen (default) plan, with the same paired
// measurement as `run`, and writes the tuning record the exporter reads to choose per
// configuration. Exit 0 when every configuration was measured, 1 when a baseline or every
// candidate of one failed, 2 on bad usage or input.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>

#include "commands.hpp"
#include "portbench/sweep/execute.hpp"
#include "portbench/tune/tune.hpp"
#include "portbench/verdicts.hpp"

namespace portbench::cli {
namespace {

struct tune_cli_options {
  tune::tune_options tune;
  std::string out = "configs/tuning/tuning-record.json";
  std::string target = "h200";
};

int run_tune_command(tune_cli_options& o, const std::string& argv_line) {
  o.tune.sweep.worker_exe = sweep::default_worker_exe();
  auto result = tune::run_tune(o.tune);
  for (const auto& [id, why] : result.skipped) std::fprintf(stderr, "portbench: tune: skipped %s: %s\n", id.c_str(), why.c_str());
  if (result.choices.empty()) {
    std::fprintf(stderr, "portbench: tune: no configuration with tuning variants in the given bundles\n");
    return 1;
  }
  bool all_measured = true;
  std::printf("%-56s %-18s %10s %-18s %8s %s\n", "configuration", "baseline", "base us", "chosen", "speedup", "candidates");
  for (const auto& c : result.choices) {
    int eligible = 0;
    for (const auto& k : c.candidates) eligible += k.eligible();
    all_measured = all_measured && c.baseline_ns > 0 && eligible > 0;
    std::printf("%-56s %-18s %10.2f %-18s %8.4f %d of %zu passed\n", c.config_id.c_str(), c.baseline.c_str(),
                c.baseline_ns / 1e3, c.chosen.c_str(), c.speedup_over_default, eligible, c.candidates.size());
    for (const auto& k : c.candidates) {
      // Candidates the budget left out are counted once below, not listed.
      if (!k.eligible() && k.status != verdicts::status::not_run) {
        std::printf("    %s: numerics %s, proof %s, status %s %s\n", k.variant.c_str(), k.numerics.c_str(),
                    k.proof.c_str(), k.status.c_str(), k.error.c_str());
      }
    }
  }
  std::filesystem::path out(o.out);
  if (out.has_parent_path()) std::filesystem::create_directories(out.parent_path());
  const std::string tmp = o.out + ".tmp";
  {
    std::ofstream f(tmp);
    f << tune::to_record(result, o.target, argv_line).dump(1) << "\n";
    if (!f) throw std::runtime_error(tmp + ": cannot write the tuning record");
  }
  std::filesystem::rename(tmp, out);
  std::printf("tuning record: %s (%zu configurations), wall %.1f s\n", o.out.c_str(), result.choices.size(),
              result.summary.wall_s);
  if (result.summary.not_run_budget > 0) {
    std::printf("budget: %d candidate runs not started after %g s (their configurations keep the measured best)\n",
                result.summary.not_run_budget, o.tune.sweep.budget_s);
  }
  return all_measured ? 0 : 1;
}

}  // namespace

command_action add_tune_command(CLI::App& app) {
  auto o = std::make_shared<tune_cli_options>();
  auto argv_line = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand("tune", "Time the bundles' tuning variants and write a tuning record for the exporter");
  auto& t = o->tune;
  cmd->add_option("bundles", t.bundle_dirs, "Bundle folders (or folders holding bundles)")->required();
  cmd->add_option("--suite", t.suite_file, "Only the configurations of this suite");
  cmd->add_option("--out", o->out, "Tuning record to write (JSON)");
  cmd->add_option("--target", o->target, "Target description name recorded in the record (configs/targets/NAME.json)");
  cmd->add_option("--gpu", t.expect_gpu,
                  "The GPU the record is for (its target description's \"gpu\"): another device is refused "
                  "before anything is timed; the record names the device it ran on");
  cmd->add_option("--runs", t.sweep.runs, "Independent worker runs per candidate (best of N)")->check(CLI::PositiveNumber);
  cmd->add_option("--devices", t.sweep.devices, "CUDA device ordinals, one worker each")->delimiter(',');
  cmd->add_option("--budget", t.sweep.budget_s,
                  "Seconds after which no further candidate starts; the record keeps what was measured (0: none)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--timeout", t.sweep.item_timeout_s, "Seconds one candidate may take before its worker is killed");
  cmd->add_option("--time-cap", t.sweep.timing.time_cap_s, "Seconds of sampling per candidate and run at most");
  cmd->add_option("--max-samples", t.sweep.timing.max_samples, "Samples per side at most");
  cmd->callback([cmd, argv_line]() {
    std::string line = "portbench tune";
    for (const auto* opt : cmd->get_options()) {
      for (const auto& v : opt->results()) line += " " + opt->get_name() + " " + v;
    }
    *argv_line = line;
  });
  return [o, argv_line]() { return run_tune_command(*o, *argv_line); };
}

}  // namespace portbench::cli
