// SPDX-License-Identifier: Apache-2.0
// The orchestrator never touches the GPU: it pairs the suite's configurations with the
// reference and port bundles, starts one worker process per device and run, watches each with
// a timeout, restarts a fresh worker after a fault, crash or hang, and hands every result to a
// sink as it arrives.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "portbench/bundle/bundle.hpp"
#include "portbench/measure/job.hpp"
#include "portbench/reference/config.hpp"

namespace portbench::measure {

struct sweep_options {
  std::vector<std::string> ref_dirs, port_dirs;
  std::string suite_file;
  int runs = 4;
  std::vector<int> devices{0};
  std::uint64_t seed = 1;
  bool vary_inputs = false;     ///< fresh inputs per run (each verified) instead of the same inputs
  /// Verified outputs shared by the sweep's workers; empty: a folder of the sweep's own, removed
  /// at its end. A folder kept between sweeps lets an unchanged output skip its check.
  std::string verified_dir;
  std::string reference_id;     ///< identity of the reference library in verified-output keys
  timing_options timing;
  double item_timeout_s = 60;   ///< a worker silent this long on one item is killed (HANG)
  bool progress = false;        ///< a progress line with the time left, on stderr
  std::string worker_exe;       ///< the portbench binary that runs `worker`
};

struct suite_entry {
  reference::config config;
  nlohmann::json params;
};

struct suite {
  std::string name;
  std::vector<suite_entry> entries;
};

/// Reads configs/<suite>.json; throws std::runtime_error("<file>: <field>: <problem>").
[[nodiscard]] suite load_suite(const std::string& file);

struct planned_pair {
  reference::config config;
  nlohmann::json params;
  std::string ref_bundle, port_bundle;   ///< bundle folders
  std::string ref_frontend, port_frontend;
  std::string ref_variant, port_variant; ///< tuning variants in place of the chosen plans ("": none)
};

struct sweep_plan {
  std::string suite_name;
  std::vector<planned_pair> pairs;
  std::vector<std::pair<std::string, std::string>> unpaired;   ///< config id, why
  std::vector<const bundle::bundle*> bundles_used;
  std::vector<bundle::bundle> bundles;                          ///< every bundle loaded
};

/// Loads and checks every bundle below the folders, pairs each suite configuration that both
/// sides support. Throws bundle_error for a bad bundle, runtime_error for two bundles of one
/// operator on one side.
[[nodiscard]] sweep_plan plan_sweep(const sweep_options& opt);

/// Called for each finished item of each run (from worker threads, serialised by the caller's
/// lock inside run_sweep).
using result_sink = std::function<void(const planned_pair&, int run, const item_report&)>;
/// Says whether (pair, run) is already stored (for --resume); such items are not run again.
using done_predicate = std::function<bool(const planned_pair&, int run)>;

struct sweep_summary {
  double wall_s = 0;
  double timed_device_s = 0;   ///< GPU time inside timed samples (CUPTI sums)
  int workers_started = 0;
  int items_run = 0, items_failed = 0;
};

sweep_summary run_sweep(const sweep_options& opt, const sweep_plan& plan, const result_sink& sink,
                        const done_predicate& done = {});

}  // namespace portbench::measure
