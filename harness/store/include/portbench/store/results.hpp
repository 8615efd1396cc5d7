// SPDX-License-Identifier: Apache-2.0
// The in-memory model of one results file: provenance, then per configuration, front-end role
// and run index the raw samples, their statistics and the verdicts. The HDF5 layout that holds
// it is documented in docs/results-layout.md.
#pragma once
#include <compare>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "portbench/verdicts.hpp"

namespace portbench::store {

/// Written to the root attribute `schema`; readers refuse other major versions.
inline constexpr std::string_view schema_version = "portbench.results/1";

/// Which side of the pair a front end plays.
enum class role { reference, port };

[[nodiscard]] std::string_view to_string(role r) noexcept;  ///< "reference" / "port"
[[nodiscard]] std::optional<role> role_from_string(std::string_view text) noexcept;

/// Hashes of one bundle (one front end, one operator) and of each cubin in it.
struct bundle_provenance {
  std::string role;           ///< "reference" or "port"
  std::string frontend;       ///< e.g. "cutile_python"
  std::string op;             ///< operator, e.g. "rms_norm"
  std::string bundle_sha256;  ///< of manifest.json
  std::map<std::string, std::string> cubin_sha256;  ///< cubin path in the bundle -> sha256

  friend bool operator==(const bundle_provenance&, const bundle_provenance&) = default;
};

/// Where and how the numbers were taken: root attributes of the file.
struct provenance {
  std::string schema{schema_version};
  std::string created_utc;        ///< ISO 8601; the writer fills it when empty
  std::string portbench_version;
  std::string gpu_name;           ///< e.g. "NVIDIA H200"
  std::string driver_version;     ///< e.g. "580.65.06"
  std::int64_t sm_clock_mhz = 0;      ///< SM clock the run was set up with (0: unknown)
  std::int64_t memory_clock_mhz = 0;  ///< memory clock (0: unknown)
  std::string cuda_version;       ///< e.g. "13.0"
  std::string cupti_version;      ///< e.g. "26"
  std::string git_revision;
  std::string command_line;
  std::string suite;              ///< e.g. "tilegym"
  std::vector<std::int64_t> seeds;
  std::string reference_frontend;
  std::string port_frontend;
  std::vector<bundle_provenance> bundles;
  /// Further string attributes (tool versions, host, shard, merge history), written as-is.
  std::map<std::string, std::string> extra;

  friend bool operator==(const provenance&, const provenance&) = default;
};

/// One configuration of an operator.
struct config_info {
  std::string id;           ///< "op/k1=v1,k2=v2" (reference::config::id())
  std::string op;           ///< operator name
  std::string params_json;  ///< parameters as a JSON object, e.g. {"m":4096,"dtype":"float16"}

  friend bool operator==(const config_info&, const config_info&) = default;
};

/// One timed launch plan as the measurement engine produces it.
struct sample {
  std::int64_t device_ns;     ///< sum of the plan's CUPTI kernel records
  std::int32_t sm_clock_mhz;  ///< SM clock read around the sample
  std::int64_t event_ns;      ///< CUDA-event time of the same sample (cross-check)
  /// Each kernel's record in the plan's order (run_record::kernel_entries); empty for a plan
  /// of one kernel.
  std::vector<std::int64_t> kernel_ns{};
};

/// Statistics of a run's `time_ns`, computed by the writer from the samples. NaN when the run
/// has no samples; the median's confidence interval is NaN below 6 samples.
struct run_stats {
  std::int64_t count = 0;
  double median_ns = 0;
  double min_ns = 0;
  double max_ns = 0;
  double mean_ns = 0;
  double median_ci_low_ns = 0;   ///< distribution-free 95% interval of the median
  double median_ci_high_ns = 0;
  double median_rel_ci = 0;      ///< (high - low) / (2 median)
  double median_sm_clock_mhz = 0;
  /// Median device time of each of the plan's kernels (run_record::kernel_entries), ns; empty
  /// for a plan of one kernel and in files from before per-kernel times.
  std::vector<std::int64_t> kernel_median_ns;
};

/// Where one (configuration, run)'s wall time went, in seconds, as the worker measured it; NaN
/// when not recorded (files from before these attributes). `inputs_s`, `sampling_s` and
/// `item_wall_s` belong to the configuration and are the same on both roles; `check_s` and
/// `verify_s` are this role's numerics passes and, within them, the CPU check against fp64.
struct run_cost {
  double inputs_s = std::numeric_limits<double>::quiet_NaN();
  double check_s = std::numeric_limits<double>::quiet_NaN();
  double verify_s = std::numeric_limits<double>::quiet_NaN();
  double sampling_s = std::numeric_limits<double>::quiet_NaN();
  double item_wall_s = std::numeric_limits<double>::quiet_NaN();
};

/// The verdicts of one run, as literal strings (portbench/verdicts.hpp). Defaults are "not checked".
struct run_verdicts {
  std::string numerics{verdicts::numerics::not_checked};
  std::string proof{verdicts::proof::not_checked};
  std::string timing{verdicts::timing::not_measured};

  friend bool operator==(const run_verdicts&, const run_verdicts&) = default;
};

/// Identifies one run in a file.
struct run_key {
  std::string config_id;
  store::role role = role::reference;
  int run = 0;

  friend auto operator<=>(const run_key&, const run_key&) = default;
  friend bool operator==(const run_key&, const run_key&) = default;
};

/// One (configuration, role, run): what the engine appends and what the reader returns.
struct run_record {
  std::string config_id;
  store::role role = role::reference;
  std::string frontend;
  int run = 0;  ///< index of the independent worker run (best of N), from 0

  std::vector<std::int64_t> time_ns;        ///< device time per sample
  std::vector<std::int32_t> sm_clock_mhz;   ///< per sample; empty when not read
  std::vector<std::int64_t> event_time_ns;  ///< per sample; empty when not measured
  /// The kernels of a multi-kernel plan in launch order (entry names, harness step kernels
  /// included), whose times add up to time_ns; empty for a plan of one kernel.
  std::vector<std::string> kernel_entries;
  /// Per sample, each kernel's device time: row-major [samples][kernel_entries]; empty when
  /// not read or not recorded.
  std::vector<std::int64_t> kernel_time_ns;
  std::int64_t dropped_samples = 0;         ///< samples the engine discarded as invalid
  std::int64_t throttled_samples = 0;       ///< of which taken at a throttled SM clock

  run_verdicts verdicts;
  std::string numerics_source;  ///< VERIFIED (checked against fp64 here), REUSED (same inputs and
                                ///< output digest as a verified launch), "" (never checked)
  std::string output_digest;    ///< 128-bit digest per output tensor, "name:hex;..."
  std::string error;  ///< empty unless the run failed, e.g. "CUDA_ERROR_ILLEGAL_ADDRESS ..."
  std::string timing_detail;  ///< why the timing is invalid, e.g. below the physical floor
  run_stats stats;    ///< filled by the reader (and by the writer on append)
  run_cost cost;

  void add_sample(const sample& s);
  [[nodiscard]] run_key key() const { return {config_id, role, run}; }
  /// True when the timing verdict is VALID and the run has samples (stats.count > 0).
  [[nodiscard]] bool has_valid_timing() const noexcept;
};

/// All runs of one front end in one configuration.
struct role_results {
  store::role role = role::reference;
  std::string frontend;
  std::vector<run_record> runs;  ///< complete runs, ordered by run index
};

struct config_results {
  config_info info;
  std::vector<role_results> roles;  ///< at most one per role, reference first

  [[nodiscard]] const role_results* find(role r) const noexcept;
  [[nodiscard]] role_results* find(role r) noexcept;
};

/// A whole results file in memory.
struct results_file {
  std::filesystem::path path;
  store::provenance provenance;
  std::vector<config_results> configs;  ///< in the order they were first written
  std::int64_t incomplete_runs = 0;     ///< run groups without the COMPLETE marker (skipped)
  /// Groups that could not be read, e.g. half-written by a killed writer ("path (cause)");
  /// skipped like incomplete runs.
  std::vector<std::string> unreadable_groups;

  [[nodiscard]] const config_results* find(std::string_view config_id) const noexcept;
  [[nodiscard]] config_results* find(std::string_view config_id) noexcept;
  [[nodiscard]] std::size_t run_count() const noexcept;
};

}  // namespace portbench::store
