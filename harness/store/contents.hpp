// SPDX-License-Identifier: Apache-2.0
// Private: opening a results file with its checks, and walking its groups (shared by the
// reader and by the writer's resume).
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "hdf5.hpp"
#include "portbench/store/results.hpp"

namespace portbench::store::detail {

/// File access list: 1.8 file format (no 1.10 superblock status flags, so a crashed writer
/// leaves a file that opens without h5clear).
[[nodiscard]] plist_handle file_access_plist();

/// Opens and checks a results file: it exists, is HDF5 and not truncated, carries the
/// portbench schema and the configs group. Throws store_error naming the file and the cause.
[[nodiscard]] file_handle open_results_file(const std::filesystem::path& path, bool writable);

/// Reads every configuration, role and complete run below /configs. Paths of run groups
/// without the COMPLETE marker go to `incomplete` when it is not null.
[[nodiscard]] results_file read_contents(hid_t file, const std::filesystem::path& path,
                                         bool samples, std::vector<std::string>* incomplete);

}  // namespace portbench::store::detail
