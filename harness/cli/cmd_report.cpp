// SPDX-License-Identifier: Apache-2.0
// `portbench report FILE... [--format md|json|html] [--gate 0.95] [--out PATH]`: per operator
// the geomean of port/reference speed with its bootstrap interval and the parity verdict.
// Several files (shards, extra runs) are combined first. Exit 0; with --check, 1 unless the
// overall verdict is PARITY.
#include <cstdio>
#include <string>
#include <vector>

#include "commands.hpp"
#include "portbench/report/model.hpp"
#include "portbench/report/output.hpp"
#include "portbench/report/plots.hpp"
#include "portbench/report/render.hpp"

namespace portbench::cli {
namespace {

struct report_cli_options {
  std::vector<std::string> files;
  std::string format = "md";
  std::string out;
  bool force = false;
  bool check = false;
  report::report_options report;
};

int run_report(const report_cli_options& o) {
  std::vector<std::filesystem::path> files(o.files.begin(), o.files.end());
  std::vector<std::string> notes;
  store::results_file results =
      report::load_results(files, {.samples = false, .force = o.force}, &notes);
  report::report_data data = report::build_report(results, o.report);
  data.files = o.files;
  data.notes.insert(data.notes.end(), notes.begin(), notes.end());
  std::string text;
  if (o.format == "json") {
    text = report::render_json(data);
  } else if (o.format == "html") {
    report::plot_result plots = report::draw_plots(files, report::render_json(data),
                                                   report::default_plot_options());
    if (!plots.error.empty()) std::fprintf(stderr, "portbench: warning: no plots: %s\n", plots.error.c_str());
    text = report::render_html(data, plots.images, plots.error);
  } else {
    text = report::render_markdown(data);
  }
  report::emit(o.out, text);
  if (!o.out.empty()) {
    std::fprintf(stderr, "portbench: %s report written to %s (verdict %s)\n", o.format.c_str(),
                 o.out.c_str(), data.overall_verdict.c_str());
  }
  return o.check && data.overall_verdict != report::verdict::parity ? 1 : 0;
}

}  // namespace

command_action add_report_command(CLI::App& app) {
  auto o = std::make_shared<report_cli_options>();
  auto* sub = app.add_subcommand("report", "Per-operator geomean, interval and parity verdict of results files");
  sub->add_option("files", o->files, "Results files (.h5); several are combined")->required();
  sub->add_option("--format", o->format, "md (default, fit for a CI job summary), json or html")
      ->check(CLI::IsMember({"md", "json", "html"}));
  sub->add_option("--gate", o->report.gate, "Parity gate on port/reference speed (default 0.95)")
      ->check(CLI::Range(0.0, 10.0));
  sub->add_option("--out", o->out, "Write here instead of stdout");
  sub->add_option("--resamples", o->report.bootstrap.resamples, "Bootstrap resamples (default 10000)")
      ->check(CLI::Range(100, 1000000));
  sub->add_option("--seed", o->report.bootstrap.seed, "Bootstrap seed (the interval is reproducible)");
  sub->add_flag("--force", o->force, "Combine files of different suites, GPUs or front ends");
  sub->add_flag("--check", o->check, "Exit 1 unless the overall verdict is PARITY");
  return [o] { return run_report(*o); };
}

}  // namespace portbench::cli
