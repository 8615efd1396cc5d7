// SPDX-License-Identifier: Apache-2.0
// Ahead-of-time autotuning: a bundle may carry, per configuration, the candidate launch plans an
// autotuner would try (`configs[].variants`). `tune` times every candidate against the chosen
// (default) plan with the harness's own paired measurement, keeps the fastest candidate that
// passes numerics and proof, and writes a tuning record the exporter reads to choose.
#pragma once
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "portbench/measure/job.hpp"
#include "portbench/sweep/execute.hpp"
#include "portbench/sweep/plan.hpp"

namespace portbench::tune {

inline constexpr const char* k_record_schema = "portbench.tuning-record/1";

struct tune_options {
  std::vector<std::string> bundle_dirs;   ///< folders searched for bundles with variants
  std::string suite_file;                 ///< optional: only these configurations ("" = every one)
  /// The GPU the record is for (a target description's `gpu`, e.g. "NVIDIA H200"): a device
  /// whose name is not this one is refused before anything is timed ("" = any device).
  std::string expect_gpu;
  sweep::execute_options sweep;           ///< runs, devices, timing, timeout, worker executable
};

/// One candidate's outcome against the baseline, best of the runs.
struct candidate_result {
  std::string variant;
  double speedup = 0;     ///< baseline best median / candidate best median (> 1: faster)
  double best_ns = 0;
  std::string numerics, proof, status, error;
  [[nodiscard]] bool eligible() const;   ///< numerics PASS, proof EXECUTED, status OK, timed
};

struct config_choice {
  std::string bundle_dir, frontend, op, config_id;
  nlohmann::json params;
  std::string baseline;              ///< the plan the bundle had chosen (its untuned default)
  std::string baseline_source;       ///< the bundle's tuning_source for it
  double baseline_ns = 0;
  std::string chosen;                ///< the fastest eligible candidate, or the baseline
  double speedup_over_default = 1;   ///< of the chosen candidate
  std::vector<candidate_result> candidates;
};

/// The runs of one configuration as the sweep reports its pairs: the baseline is the reference
/// side of every pair, each candidate the port side of its own.
class config_runs {
 public:
  /// One pair's report. A pair the sweep never started (NOT_RUN: its budget spent) counts for
  /// its candidate only: the baseline keeps the verdicts of the runs it had.
  void add(const std::string& variant, const measure::item_report& r);
  /// Fills `ch`'s baseline_ns, candidates, chosen and speedup_over_default: the fastest eligible
  /// candidate that beats a passing baseline; if the baseline itself fails, the fastest
  /// eligible candidate whatever its speed; otherwise the baseline.
  void choose(config_choice& ch) const;

 private:
  struct side_runs {
    std::vector<double> medians;
    std::string numerics, proof, status, error;
  };
  static void take(side_runs& s, const measure::side_report& side, const measure::item_report& r);
  side_runs m_baseline;
  std::map<std::string, side_runs> m_candidates;
};

struct tune_result {
  std::string gpu_name;   ///< the device the candidates ran on, as its worker describes it
  std::vector<config_choice> choices;
  std::vector<std::pair<std::string, std::string>> skipped;   ///< config id, why (no variants, ...)
  sweep::sweep_summary summary;
};

/// The paired plan `tune` measures: per configuration with variants, every candidate other than
/// the chosen one as the port against the chosen plan as the reference (same bundle).
[[nodiscard]] sweep::sweep_plan plan_tune(const tune_options& opt, std::vector<std::pair<std::string, std::string>>& skipped);

/// Whether a device named `gpu_name` is the GPU `expected` names: the same name, or that name
/// and a further word ("NVIDIA H200" is "NVIDIA H200 NVL"'s family; "NVIDIA H20" is not it).
[[nodiscard]] bool is_gpu(const std::string& gpu_name, const std::string& expected);

/// Runs the plan and picks a winner per configuration. Throws sweep_error when the devices
/// are not opt.expect_gpu, or differ from one another: a record's choices hold for one GPU.
[[nodiscard]] tune_result run_tune(const tune_options& opt);

/// The tuning record (schema portbench.tuning-record/1) for the exporter of `frontend`; its
/// `gpu` is the device the candidates ran on (r.gpu_name).
[[nodiscard]] nlohmann::json to_record(const tune_result& r, const std::string& target, const std::string& made_by);

}  // namespace portbench::tune
