// SPDX-License-Identifier: Apache-2.0
// Running a plan: one worker process (`portbench worker`) per device and run, watched with a
// timeout; every result handed to a sink as it arrives. Nothing one configuration or worker
// does ends the sweep: a fault, a crash, a hang, a malformed report, a worker that exits early
// or cannot be started, and a sink that throws each become that configuration's outcome
// (verdicts::status), and the sweep goes on with a fresh worker. The orchestrator itself never
// touches the GPU.
//
//   auto summary = sweep::run_sweep(exec, plan,
//       [&](const sweep::planned_item& item, int run, const measure::item_report& r) { ... },
//       [&](const sweep::planned_item& item, int run) { return already_on_file(item, run); });
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "portbench/measure/job.hpp"
#include "portbench/measure/timing_options.hpp"
#include "portbench/sweep/plan.hpp"

namespace portbench::sweep {

struct execute_options {
  int runs = 4;                        ///< independent worker runs per configuration (best of N)
  std::vector<int> devices{0};         ///< one worker per device at a time
  std::uint64_t seed = 1;              ///< base seed of the inputs
  bool vary_inputs = false;            ///< fresh inputs per run (each verified)
  bool host_inputs = false;            ///< inputs generated on the host and uploaded (job.hpp)
  /// Verified outputs shared by the sweep's workers; empty: a folder of the sweep's own,
  /// removed at its end. A folder kept between sweeps lets an unchanged output skip its check.
  std::string verified_dir;
  std::string reference_id;            ///< identity of the reference library in verified-output keys
  measure::timing_options timing;
  double item_timeout_s = 60;          ///< a worker silent this long on one item is killed (HANG)
  bool progress = false;               ///< a progress line with the time left, on stderr
  /// Seconds of wall time after which no further configuration run starts (0: no limit). A
  /// worker is stopped after the report it is writing; what did not run is delivered NOT_RUN
  /// with the reason, so a sweep in a fixed time slot (a device call, a nightly window) ends on
  /// time with everything it measured kept.
  double budget_s = 0;
  std::string worker_exe;              ///< runs as `<worker_exe> worker --job FILE`
};

/// Called once per finished (item, run), serialised (never two at once). May throw: the
/// failure is counted in sweep_summary::not_recorded and the sweep goes on.
using result_sink = std::function<void(const planned_item&, int run, const measure::item_report&)>;
/// Says whether (item, run) is already stored (--resume); such runs are not started again.
using done_predicate = std::function<bool(const planned_item&, int run)>;

struct sweep_summary {
  double wall_s = 0;
  double timed_device_s = 0;           ///< GPU time inside timed samples (CUPTI sums)
  int workers_started = 0;
  int items_run = 0, items_failed = 0; ///< configuration runs delivered; of which not OK
  int not_recorded = 0;                ///< deliveries whose sink threw
  int not_run_budget = 0;              ///< deliveries NOT_RUN because budget_s was spent
  std::string first_not_recorded;      ///< "<config id> run <k>: <what the sink threw>"
  int stray_lines = 0;                 ///< worker stdout lines that were not protocol lines
  std::string first_stray_line;        ///< the first of them, cut to 200 characters
};

/// Runs every (item, run) of the plan not already done: runs outermost, so the N runs of a
/// configuration spread over the sweep. A check plan runs once, in check mode.
sweep_summary run_sweep(const execute_options& opt, const sweep_plan& plan, const result_sink& sink,
                        const done_predicate& done = {});

/// The worker executable: $PORTBENCH_WORKER_EXE when set (tests, wrappers), else this process's
/// own binary (/proc/self/exe).
[[nodiscard]] std::string default_worker_exe();

/// What `portbench worker --describe-device N` says about a device (gpu name, clocks, driver,
/// CUPTI), for provenance and the physical floor. The orchestrator asks a worker: it never
/// opens the GPU itself.
struct device_description {
  int device = 0;
  nlohmann::json info;   ///< the worker's JSON line
  [[nodiscard]] std::string gpu_name() const { return info.value("gpu_name", ""); }
};

/// Asks a worker to describe each device; throws sweep_error("device N", "cannot run here: <the
/// worker's reason>") when one cannot be described (no driver, no device, no CUPTI), so a
/// machine without a GPU says once why nothing can run.
[[nodiscard]] std::vector<device_description> describe_devices(const std::string& worker_exe,
                                                              const std::vector<int>& devices,
                                                              double timeout_s = 60);

}  // namespace portbench::sweep
