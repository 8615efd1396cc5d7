// SPDX-License-Identifier: Apache-2.0
// Synthetic results files for tests, benchmarks and the false-alarm study: realistic timing
// noise (per-run offsets, occasional bimodal runs, within-run lognormal noise with a positive
// outlier tail, a throttled clock now and then), or an exact mode with analytic answers.
// Written through results_writer exactly as the measurement engine will, one run at a time.
#pragma once
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>

namespace portbench::testing {

struct synth_options {
  std::size_t configs = 347;
  std::size_t operators = 24;
  int runs = 4;
  int min_samples = 50;
  int max_samples = 200;
  std::uint64_t truth_seed = 1;  ///< true times and per-configuration speeds
  std::uint64_t noise_seed = 2;  ///< measurement noise; A/A pairs differ only here
  double port_speed = 0.995;     ///< centre of port/reference speed over configurations
  double port_speed_sd = 0.03;   ///< log-sd of the per-configuration speed around it
  double scale_port = 1.0;       ///< multiplies port times (1.05: a planted 5% regression)
  double scale_reference = 1.0;
  double run_sd = 0.004;         ///< log-sd of a run's offset
  double bimodal_prob = 0.03;    ///< chance that a run lands in a slower mode
  double bimodal_shift = 0.02;   ///< how much slower that mode is
  double sample_sd = 0.01;       ///< log-sd of within-run noise
  double outlier_prob = 0.02;    ///< chance of a sample delayed by 5-50%
  /// No noise: ratios are exactly port_speed x exp(+-port_speed_sd), alternating within each
  /// operator (an even count per operator gives geomean port_speed).
  bool exact = false;
  std::string suite = "synthetic";
  std::string gpu = "NVIDIA H200";
  std::string numerics = "PASS";
  std::string proof = "EXECUTED";
  long fail_config = -1;  ///< this configuration's port run 0 faults (error, no samples)
  long exit_after = -1;   ///< _exit(0) after this many appended runs, as if killed
  bool resume = false;    ///< reopen the file and write only the missing runs
  bool overwrite = false;
  /// Real bundles (a folder holding <frontend>/<operator>/ bundles, e.g. bundles/): the
  /// configurations are those both <bundles>/<reference_frontend> and <bundles>/<port_frontend>
  /// support (the first `configs`, in manifest order), the provenance names those bundles as a
  /// run would (manifest and cubin hashes, --ref/--port folders, a device description), and true
  /// times follow the operator's bytes at 75% of a 4150 GB/s copy plus 2 us.
  std::string bundles;
  std::string reference_frontend = "cutile_python";
  std::string port_frontend = "cutile_rust";
  std::string slow_regex;    ///< configurations whose id matches run at port speed `slow_speed`
  double slow_speed = 0.5;
};

struct synth_result {
  std::size_t appended = 0;
  std::size_t skipped = 0;  ///< runs already in the file (resume)
};

synth_result write_synthetic(const std::filesystem::path& path, const synth_options& opts);

}  // namespace portbench::testing
