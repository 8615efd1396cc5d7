// SPDX-License-Identifier: Apache-2.0
// Recording a sweep: the results file's provenance (built here from the plan, the options, the
// device description and this binary's revision), each worker report as two run records, and
// `--resume` that refuses a file measured differently.
//
//   auto rec = sweep::results_recorder::open(out, {.resume = true}, plan, exec, devices, argv);
//   exec.reference_id = rec.reference_id();
//   auto summary = sweep::run_sweep(exec, plan, rec.sink(), rec.done());
//   rec.finish(summary);                  // sweep_summary as a root attribute, file closed
//   for (const auto& row : rec.tally().rows()) ...
#pragma once
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "portbench/measure/job.hpp"
#include "portbench/store/results.hpp"
#include "portbench/store/writer.hpp"
#include "portbench/sweep/execute.hpp"
#include "portbench/sweep/plan.hpp"
#include "portbench/sweep/summary.hpp"

namespace portbench::sweep {

/// The results file's root attributes for a sweep. `device` may be null (unknown device).
[[nodiscard]] store::provenance make_provenance(const sweep_plan& plan, const execute_options& exec,
                                                const device_description* device,
                                                const std::string& command_line);

/// One side of a worker report as the run record the store keeps: valid samples only (the
/// others counted), verdicts, the cost figures, and the error when the run failed.
[[nodiscard]] store::run_record to_record(const planned_item& item, int run, const measure::item_report& r,
                                          store::role side);

/// What makes a results file unfit to be resumed by this call: its suite, bundles (front end,
/// manifest and cubin hashes), GPU, seed or timing options differ. One line each, naming the
/// difference; empty when the call may append to it. The number of runs may differ (resuming
/// with more runs adds runs), and the call may cover fewer operators than the file.
[[nodiscard]] std::vector<std::string> resume_conflicts(const store::provenance& file,
                                                        const store::provenance& call);

/// "<version>@<revision>" of this binary: the reference library's identity in verified-output
/// keys, so an output verified by another build is checked again.
[[nodiscard]] std::string reference_identity();

struct record_options {
  bool resume = false;      ///< append to an existing file, skipping the runs it holds
  bool overwrite = false;   ///< replace an existing file
};

/// Writes a sweep's results as they arrive, and tallies the closing table.
class results_recorder {
 public:
  /// Creates the file (or resumes it, after resume_conflicts() found nothing; else throws
  /// sweep_error naming the file and the differences) and declares every planned configuration.
  [[nodiscard]] static results_recorder open(const std::filesystem::path& path, const record_options& opt,
                                             const sweep_plan& plan, const execute_options& exec,
                                             const std::vector<device_description>& devices,
                                             const std::string& command_line);

  /// Appends both sides of a report; a failed append marks the configuration NOT_RECORDED in
  /// the tally and rethrows (run_sweep counts it and goes on).
  [[nodiscard]] result_sink sink();
  /// True when both sides of (item, run) are on file.
  [[nodiscard]] done_predicate done() const;
  /// Writes the summary as the root attribute `sweep_summary` and closes the file.
  void finish(const sweep_summary& s);

  [[nodiscard]] const sweep_tally& tally() const noexcept;
  [[nodiscard]] const std::filesystem::path& path() const noexcept;
  [[nodiscard]] std::string reference_id() const { return reference_identity(); }
  /// Runs resume() found already on file (0 for a new file).
  [[nodiscard]] std::size_t resumed_runs() const noexcept;

  results_recorder(results_recorder&&) noexcept;
  results_recorder& operator=(results_recorder&&) noexcept;
  ~results_recorder();

 private:
  struct state;
  explicit results_recorder(std::unique_ptr<state> s);
  std::unique_ptr<state> m;
};

}  // namespace portbench::sweep
