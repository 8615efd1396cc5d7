// SPDX-License-Identifier: Apache-2.0
// What the orchestrator asks a worker to do, and what the worker reports back, one JSON line
// per event on its stdout. The worker is a child process: a fault, a crash or a hang costs the
// configuration in progress and nothing else.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "portbench/measure/sampler.hpp"

namespace portbench::measure {

struct job_item {
  std::size_t index = 0;        ///< the orchestrator's number for it, echoed in begin/result
  std::string op;
  nlohmann::json params;        ///< the configuration's parameters, as in the suite
  std::string ref_bundle, port_bundle;   ///< port_bundle is empty in a check job
  /// Tuning variants to run instead of each bundle's chosen plan ("": the chosen plan).
  std::string ref_variant, port_variant;
};

/// measure: numerics, proof and paired timing of reference and port (`portbench run`);
/// check: one launch of one bundle's plan against the fp64 reference (`portbench check`), whose
/// outcome is reported on the reference side.
enum class job_mode { measure, check };

struct job {
  job_mode mode = job_mode::measure;
  int device = 0;
  int run = 0;                  ///< which of the N independent runs
  std::uint64_t seed = 1;       ///< base seed; each configuration derives its own from it
  /// false: every run of a configuration gets the same inputs, so later runs (and a port whose
  /// output equals the reference front end's) reuse the first verification; true: fresh inputs
  /// per run, each verified.
  bool vary_inputs = false;
  /// false: the inputs an operator declares as uniform fills are generated on the device (the
  /// same bytes), and the host makes its copy only when it verifies; true: generated on the host
  /// and uploaded, the slower path kept for comparison.
  bool host_inputs = false;
  std::string verified_dir;     ///< folder of verified outputs shared by the sweep's workers ("" = none)
  std::string reference_id;     ///< identity of the reference library in verified-output keys
  timing_options timing;
  std::vector<job_item> items;
};

/// One side's outcome in one configuration.
struct side_report {
  std::string frontend;
  std::string numerics{verdicts::numerics::not_checked};
  std::string numerics_detail;
  std::string proof{verdicts::proof::not_checked};
  std::string proof_detail;
  std::string timing{verdicts::timing::not_measured};
  std::string timing_detail;     ///< why the timing is invalid (below the physical floor, ...)
  std::vector<sample> samples;
  std::vector<std::string> kernels;   ///< what samples[].kernel_ns is of (side_result::kernels)
  double median_ns = 0, rel_ci = 0;
  double check_s = 0;    ///< wall time of the numerics passes (launches, downloads, verification)
  double verify_s = 0;   ///< of which the CPU comparison with the fp64 reference
  std::string numerics_source;   ///< VERIFIED or REUSED (verify/verified_outputs.hpp); "" if never checked
  std::string output_digest;     ///< digest of the first numerics pass's outputs
};

struct item_report {
  std::size_t index = 0;
  std::string status{verdicts::status::ok};   ///< verdicts::status
  std::string error;
  side_report ref, port;
  double wall_s = 0;
  double timed_device_s = 0;
  double inputs_s = 0;     ///< generating the seeded inputs and uploading them
  double sampling_s = 0;   ///< wall time of the timed, interleaved sampling of both sides
};

nlohmann::json to_json(const job& j);
job job_from_json(const nlohmann::json& j);
nlohmann::json to_json(const item_report& r);
item_report item_report_from_json(const nlohmann::json& j);

/// Seed of one configuration in one run: the same for reference and port.
[[nodiscard]] std::uint64_t item_seed(std::uint64_t base, const std::string& config_id, int run) noexcept;
/// The inputs' seed a job's worker uses for a configuration: run 0's unless the job varies
/// inputs per run.
[[nodiscard]] std::uint64_t inputs_seed(const job& j, const std::string& config_id) noexcept;

}  // namespace portbench::measure
