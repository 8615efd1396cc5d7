// SPDX-License-Identifier: Apache-2.0
// A bundle loaded from disk and checked before anything touches a GPU: the manifest parses,
// every cubin exists inside the bundle, matches its sha256, is a CUDA ELF for the manifest's
// architecture, has every entry the plans launch, and takes exactly the parameters (count,
// offsets, sizes) the plans pass.
#pragma once
#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "portbench/bundle/cubin.hpp"
#include "portbench/bundle/manifest.hpp"

namespace portbench::bundle {

struct loaded_cubin {
  cubin_ref ref;
  std::filesystem::path path;
  std::vector<std::byte> image;
  cubin_info info;
};

struct bundle {
  std::filesystem::path dir;
  manifest plan;
  std::vector<loaded_cubin> cubins;

  [[nodiscard]] const loaded_cubin& cubin(const std::string& file) const;
};

/// Loads `dir` (a folder with manifest.json) and runs every check; throws bundle_error naming
/// the offending file and field.
[[nodiscard]] bundle load_bundle(const std::filesystem::path& dir);

/// Compares one launch's parameters with its entry's table in the cubin; throws bundle_error
/// naming `where` (e.g. "configs[2].launches[0]") and the first disagreement.
void check_launch_against_cubin(const manifest& m, const std::string& where, const launch_spec& l,
                                const loaded_cubin& c);

/// All bundles below `root` (each folder holding a manifest.json), sorted by path.
[[nodiscard]] std::vector<std::filesystem::path> find_bundles(const std::filesystem::path& root);

}  // namespace portbench::bundle
