// SPDX-License-Identifier: Apache-2.0
// What this binary is: the version, and the source revision baked in at build time (never the
// revision of whatever directory it runs in). The revision keys verified outputs and goes into
// every results file's provenance.
#pragma once
#include <string_view>

namespace portbench {

/// "0.1.0" (the CMake project version).
[[nodiscard]] std::string_view version() noexcept;
/// Git commit of the sources, "<sha>-dirty" with local changes, or "unknown"
/// (cmake/PortbenchRevision.cmake).
[[nodiscard]] std::string_view build_revision() noexcept;

}  // namespace portbench
