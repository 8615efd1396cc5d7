// SPDX-License-Identifier: Apache-2.0
// Containment of paths named by stage outputs: resolved (symlinks followed, `..` folded)
// against the work directory, and refused when the result lies outside it.
#pragma once
#include <filesystem>
#include <optional>
#include <string>

namespace portbench::agent {

/// The resolved path when `p` (relative to `root`, or absolute) lies inside `root`; nullopt
/// when it leaves it. `root` itself counts as inside.
[[nodiscard]] std::optional<std::filesystem::path> resolve_inside(const std::filesystem::path& root,
                                                                  const std::string& p);

}  // namespace portbench::agent
