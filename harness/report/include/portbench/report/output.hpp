// SPDX-License-Identifier: Apache-2.0
// Writing a rendered report: to a file, or to stdout when no path is given.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "portbench/store/results.hpp"

namespace portbench::report {

/// Writes `content` to `path` (throws std::runtime_error "<path>: cannot write: <cause>"), or
/// to stdout when `path` is empty.
void emit(const std::filesystem::path& path, const std::string& content);

struct load_options {
  bool samples = true;
  bool force = false;  ///< merge files of different suites/GPUs/front ends
};

/// Reads one or more results files; several are merged in memory (shards and extra runs),
/// refusing incompatible files unless forced. Notes about merged differences go to `notes`.
[[nodiscard]] store::results_file load_results(const std::vector<std::filesystem::path>& files,
                                               const load_options& opts,
                                               std::vector<std::string>* notes = nullptr);

}  // namespace portbench::report
