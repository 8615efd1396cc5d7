// SPDX-License-Identifier: Apache-2.0
// `portbench export-gbench FILE --out x.json`: Google Benchmark JSON that google/benchmark's
// tools/compare.py accepts (one repetition per run, plus the best of N as a "_min" aggregate).
#include <string>

#include "commands.hpp"
#include "portbench/report/gbench.hpp"
#include "portbench/report/output.hpp"
#include "portbench/store/reader.hpp"

namespace portbench::cli {
namespace {

struct export_gbench_cli_options {
  std::string file;
  std::string out;
  report::gbench_options gbench;
};

int run_export_gbench(const export_gbench_cli_options& o) {
  store::results_file results = store::read_results(o.file, {.samples = false});
  report::emit(o.out, report::render_gbench_json(results, o.gbench));
  return 0;
}

}  // namespace

command_action add_export_gbench_command(CLI::App& app) {
  auto o = std::make_shared<export_gbench_cli_options>();
  auto* sub = app.add_subcommand("export-gbench", "Export results as Google Benchmark JSON (for tools/compare.py)");
  sub->add_option("file", o->file, "Results file")->required();
  sub->add_option("--out", o->out, "JSON file to write (default: stdout)");
  sub->add_flag("!--no-aggregates", o->gbench.aggregates, "Leave out the '_min' (best of N) aggregates");
  return [o] { return run_export_gbench(*o); };
}

}  // namespace portbench::cli
