// SPDX-License-Identifier: Apache-2.0
// Reading results files. Every failure is a store_error whose one-line message names the file
// and the cause: missing file, not HDF5 or truncated, a foreign HDF5 file, another schema.
#pragma once
#include <filesystem>

#include "portbench/store/results.hpp"

namespace portbench::store {

struct read_options {
  /// Read the per-sample datasets. Without them runs carry statistics and verdicts only,
  /// which is all a report needs and much faster.
  bool samples = true;
};

[[nodiscard]] results_file read_results(const std::filesystem::path& path,
                                        const read_options& opts = {});
[[nodiscard]] provenance read_provenance(const std::filesystem::path& path);

}  // namespace portbench::store
