// SPDX-License-Identifier: Apache-2.0
#include "portbench/agent/paths.hpp"

#include <system_error>

namespace portbench::agent {

std::optional<std::filesystem::path> resolve_inside(const std::filesystem::path& root, const std::string& p) {
  namespace fs = std::filesystem;
  if (p.empty()) return std::nullopt;
  std::error_code ec;
  fs::path base = fs::weakly_canonical(root, ec);
  if (ec) return std::nullopt;
  fs::path candidate = fs::path(p).is_absolute() ? fs::path(p) : base / p;
  // weakly_canonical follows every symlink of the part that exists, so a link inside the work
  // directory that points outside it resolves outside.
  fs::path resolved = fs::weakly_canonical(candidate, ec);
  if (ec) return std::nullopt;
  auto b = base.begin(), r = resolved.begin();
  for (; b != base.end(); ++b, ++r) {
    if (r == resolved.end() || *b != *r) return std::nullopt;
  }
  return resolved;
}

}  // namespace portbench::agent
