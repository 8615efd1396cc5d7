// SPDX-License-Identifier: Apache-2.0
// `portbench compare BASELINE CURRENT`: per configuration and front-end role REGRESSED /
// IMPROVED / UNCHANGED / INCONCLUSIVE from the samples, with the test stated in the output.
// Exit 0 when nothing regressed, 1 when something did, 2 on bad input.
#include <cstdio>
#include <stdexcept>
#include <string>

#include "commands.hpp"
#include "portbench/report/compare.hpp"
#include "portbench/report/output.hpp"
#include "portbench/store/merge.hpp"
#include "portbench/store/reader.hpp"

namespace portbench::cli {
namespace {

struct compare_cli_options {
  std::string baseline;
  std::string current;
  std::string format = "md";
  std::string out;
  report::compare_options compare;
};

int run_compare(const compare_cli_options& o) {
  // Run medians suffice unless a side has a single run; then the samples are read too.
  store::results_file baseline = store::read_results(o.baseline, {.samples = false});
  store::results_file current = store::read_results(o.current, {.samples = false});
  if (report::compare_needs_samples(baseline, current)) {
    baseline = store::read_results(o.baseline);
    current = store::read_results(o.current);
  }
  for (const auto& c : store::hard_conflicts(baseline.provenance, current.provenance)) {
    std::fprintf(stderr, "portbench: warning: baseline and current have %s\n", c.c_str());
  }
  report::compare_data data = report::build_compare(baseline, current, o.compare);
  if (data.rows.empty()) throw std::runtime_error(o.baseline + ": no runs to compare");
  bool overlap = false;
  for (const auto& r : data.rows) overlap = overlap || !r.current_frontend.empty();
  if (!overlap) {
    throw std::runtime_error(o.current + ": no configuration in common with " + o.baseline);
  }
  report::emit(o.out, o.format == "json" ? report::render_compare_json(data)
                                         : report::render_compare_markdown(data));
  return data.regressed() ? 1 : 0;
}

}  // namespace

command_action add_compare_command(CLI::App& app) {
  auto o = std::make_shared<compare_cli_options>();
  auto* sub = app.add_subcommand("compare", "Regression verdicts of CURRENT against BASELINE (exit 1 if any REGRESSED)");
  sub->add_option("baseline", o->baseline, "Baseline results file")->required();
  sub->add_option("current", o->current, "Current results file")->required();
  sub->add_option("--threshold", o->compare.test.threshold,
                  "Smallest relative change that counts (default 0.02 = 2%)")
      ->check(CLI::Range(0.0, 1.0));
  sub->add_option("--alpha", o->compare.test.alpha, "Two-sided significance level (default 0.05)")
      ->check(CLI::Range(1e-6, 0.5));
  sub->add_option("--format", o->format, "md (default) or json")->check(CLI::IsMember({"md", "json"}));
  sub->add_option("--out", o->out, "Write here instead of stdout");
  sub->add_option("--seed", o->compare.test.seed, "Seed of the one-run bootstrap fallback");
  return [o] { return run_compare(*o); };
}

}  // namespace portbench::cli
