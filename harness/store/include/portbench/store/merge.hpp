// SPDX-License-Identifier: Apache-2.0
// Combining results files: shards of one suite (disjoint configurations) and repeated runs of
// the same configurations (more independent runs for best of N). Used by `portbench merge` and
// by `portbench report FILE...`.
#pragma once
#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "portbench/store/results.hpp"
#include "portbench/store/writer.hpp"

namespace portbench::store {

struct merge_options {
  bool force = false;  ///< merge despite hard conflicts (different suite, GPU, front ends)
};

struct merge_summary {
  std::size_t configs_added = 0;
  std::size_t runs_added = 0;
  std::size_t duplicate_runs_skipped = 0;  ///< identical runs (the same file given twice)
  std::vector<std::string> notes;          ///< soft provenance differences, renumbered runs
};

/// Differences that make two files unmergeable unless forced: schema, suite, GPU name, the
/// reference or port front end. Empty when compatible.
[[nodiscard]] std::vector<std::string> hard_conflicts(const provenance& a, const provenance& b);
/// Differences worth a note: driver, clocks, CUDA/CUPTI versions, git revision.
[[nodiscard]] std::vector<std::string> soft_differences(const provenance& a, const provenance& b);

/// Merges `from` into `into`. New configurations are appended; runs of an existing
/// (configuration, role) take the next free run indices, so N + M runs give best of N + M; a
/// run identical to one already there is skipped. Throws store_error (naming from.path) on hard
/// conflicts unless forced, and always when a configuration's operator or parameters, or a
/// role's front end, differ (those cannot be represented in one file).
merge_summary merge_into(results_file& into, const results_file& from, const merge_options& opts);

/// The slices of one sharded plan (root attributes "shard" = "K/N" and "shard_plan_configs",
/// written by `portbench run --shard`): every K of 0..N-1 exactly once, one N and one plan
/// size, no configuration in two slices, and the slices adding up to the plan. Files without a
/// shard attribute (extra runs) are not part of the check. Throws store_error naming the file
/// and what is wrong; returns one line saying what was covered ("" when no file is a slice).
[[nodiscard]] std::string check_shard_coverage(const std::vector<const results_file*>& files);

/// Writes an in-memory results file to `path` through results_writer (statistics recomputed
/// from the samples, so read it with samples).
void write_results(const std::filesystem::path& path, const results_file& results,
                   const create_options& opts = {});

}  // namespace portbench::store
