// SPDX-License-Identifier: Apache-2.0
// portbench_synth_results: writes a synthetic results file (see synth.hpp). Used by the cli
// tests, scripts/bench_results.sh, scripts/compare_false_alarm.py and the pytest layout check.
#include <cstdio>
#include <exception>

#include <CLI/CLI.hpp>

#include "synth.hpp"

int main(int argc, char** argv) try {
  portbench::testing::synth_options o;
  std::string out;
  CLI::App app{"Write a synthetic portbench results file"};
  app.add_option("out", out, "Results file to write")->required();
  app.add_option("--configs", o.configs);
  app.add_option("--operators", o.operators);
  app.add_option("--runs", o.runs);
  app.add_option("--min-samples", o.min_samples);
  app.add_option("--max-samples", o.max_samples);
  app.add_option("--truth-seed", o.truth_seed);
  app.add_option("--noise-seed", o.noise_seed);
  app.add_option("--port-speed", o.port_speed);
  app.add_option("--port-speed-sd", o.port_speed_sd);
  app.add_option("--scale-port", o.scale_port);
  app.add_option("--scale-reference", o.scale_reference);
  app.add_option("--run-sd", o.run_sd);
  app.add_option("--bimodal-prob", o.bimodal_prob);
  app.add_option("--bimodal-shift", o.bimodal_shift);
  app.add_option("--sample-sd", o.sample_sd);
  app.add_option("--outlier-prob", o.outlier_prob);
  app.add_flag("--exact", o.exact);
  app.add_option("--suite", o.suite);
  app.add_option("--gpu", o.gpu);
  app.add_option("--numerics", o.numerics);
  app.add_option("--proof", o.proof);
  app.add_option("--fail-config", o.fail_config);
  app.add_option("--exit-after", o.exit_after, "Die (_exit) after this many appended runs");
  app.add_flag("--resume", o.resume);
  app.add_flag("--overwrite", o.overwrite);
  app.add_option("--bundles", o.bundles, "Configurations and provenance from these real bundles (e.g. bundles/)");
  app.add_option("--reference-frontend", o.reference_frontend);
  app.add_option("--port-frontend", o.port_frontend);
  app.add_option("--slow", o.slow_regex, "Configurations matching this regex run at --slow-speed");
  app.add_option("--slow-speed", o.slow_speed);
  CLI11_PARSE(app, argc, argv);
  auto r = portbench::testing::write_synthetic(out, o);
  std::printf("wrote %zu runs, skipped %zu existing, to %s\n", r.appended, r.skipped, out.c_str());
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "portbench_synth_results: error: %s\n", e.what());
  return 2;
}
