// SPDX-License-Identifier: Apache-2.0
// Private: a check of a results file's HDF5 global heap collections before HDF5 reads them.
// HDF5 1.10 trusts the size recorded for each heap object (it only asserts, in debug builds,
// that the object fits its collection) and copies that many bytes when it reads a
// variable-length string: a corrupt size is a read and write past the end of its buffers, and a
// free-space object of size 0 an endless loop in its decoder (both found by
// tests/fuzz/fuzz_results). Checking the collections first makes such a file a one-line
// store_error instead.
#pragma once
#include <filesystem>
#include <optional>
#include <string>

namespace portbench::store::detail {

/// The cause, e.g. "global heap collection at byte 2048 (4096 bytes): object at +16 (index 1)
/// claims 167503724553 bytes, past the collection's end", or nothing when every collection is
/// consistent.
[[nodiscard]] std::optional<std::string> check_global_heaps(const std::filesystem::path& file);

}  // namespace portbench::store::detail
