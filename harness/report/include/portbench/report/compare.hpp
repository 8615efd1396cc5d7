// SPDX-License-Identifier: Apache-2.0
// Baseline vs current: per configuration and front-end role, the regression test of
// portbench::stats on the two files' samples (valid runs only).
#pragma once
#include <cstddef>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "portbench/stats/regression.hpp"
#include "portbench/store/results.hpp"

namespace portbench::report {

struct compare_options {
  stats::regression_options test;  ///< threshold, alpha, bootstrap seed for one-run sides
};

struct compare_row {
  std::string config_id;
  std::string op;
  store::role role = store::role::reference;
  std::string baseline_frontend;
  std::string current_frontend;
  /// Geometric mean of the per-run medians of the valid runs (ns).
  double baseline_ns = std::numeric_limits<double>::quiet_NaN();
  double current_ns = std::numeric_limits<double>::quiet_NaN();
  stats::regression_result result;
};

struct compare_data {
  std::string baseline_file;
  std::string current_file;
  store::provenance baseline;
  store::provenance current;
  compare_options options;
  std::string test_description;
  std::vector<compare_row> rows;          ///< every (configuration, role) of the baseline
  std::map<std::string, std::size_t> counts;  ///< verdict -> rows
  std::size_t only_in_current = 0;        ///< (configuration, role) pairs new in current

  [[nodiscard]] bool regressed() const { return counts.count(std::string(stats::regression::regressed)) != 0; }
};

/// True when some (configuration, role) has fewer than 2 valid runs on a side, so that its test
/// falls back to the samples: then read both files with samples before build_compare.
[[nodiscard]] bool compare_needs_samples(const store::results_file& baseline,
                                         const store::results_file& current);

/// Compares every (configuration, role) of the baseline with the same pair in current (missing
/// in current: INCONCLUSIVE with a note). Pairs with >= 2 valid runs on both sides use the
/// stored run medians; others use the samples (read the files with samples, see above).
[[nodiscard]] compare_data build_compare(const store::results_file& baseline,
                                         const store::results_file& current,
                                         const compare_options& opts = {});

[[nodiscard]] std::string render_compare_markdown(const compare_data& data);
[[nodiscard]] std::string render_compare_json(const compare_data& data);

}  // namespace portbench::report
