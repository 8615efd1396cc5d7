// SPDX-License-Identifier: Apache-2.0
// `portbench merge OUT IN...`: combines shards of a suite and extra runs of the same
// configurations into one results file. Files of different suites, GPUs or front ends are
// refused unless --force.
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "commands.hpp"
#include "portbench/report/output.hpp"
#include "portbench/store/merge.hpp"

namespace portbench::cli {
namespace {

struct merge_cli_options {
  std::string out;
  std::vector<std::string> inputs;
  bool force = false;
  bool overwrite = false;
};

int run_merge(const merge_cli_options& o) {
  std::vector<std::filesystem::path> inputs(o.inputs.begin(), o.inputs.end());
  for (const auto& in : inputs) {
    std::error_code ec;
    if (std::filesystem::equivalent(in, o.out, ec)) {
      throw std::runtime_error(o.out + ": the output is also an input");
    }
  }
  if (std::filesystem::exists(o.out) && !o.overwrite) {
    throw std::runtime_error(o.out + ": exists (pass --overwrite to replace it)");
  }
  std::vector<std::string> notes;
  store::results_file merged = report::load_results(inputs, {.samples = true, .force = o.force}, &notes);
  store::write_results(o.out, merged, {.overwrite = o.overwrite});
  for (const auto& n : notes) std::fprintf(stderr, "portbench: note: %s\n", n.c_str());
  std::printf("merged %zu file(s) into %s: %zu configurations, %zu runs\n", inputs.size(), o.out.c_str(),
              merged.configs.size(), merged.run_count());
  return 0;
}

}  // namespace

command_action add_merge_command(CLI::App& app) {
  auto o = std::make_shared<merge_cli_options>();
  auto* sub = app.add_subcommand("merge", "Merge results files (shards, extra runs) into OUT");
  sub->add_option("out", o->out, "Merged results file to write")->required();
  sub->add_option("inputs", o->inputs, "Results files to merge")->required();
  sub->add_flag("--force", o->force, "Merge files of different suites, GPUs or front ends");
  sub->add_flag("--overwrite", o->overwrite, "Replace OUT if it exists");
  return [o] { return run_merge(*o); };
}

}  // namespace portbench::cli
