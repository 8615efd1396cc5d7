// SPDX-License-Identifier: Apache-2.0
// NVRTC, loaded at run time, for the harness's own helper kernels (poison checks). Every call's
// nvrtcResult is checked; a failed compile reports the program log.
#pragma once
#include <nvrtc.h>

#include <cstddef>
#include <string>
#include <vector>

#include "portbench/error.hpp"

namespace portbench::cuda {

class nvrtc_error : public portbench::error {
 public:
  nvrtc_error(nvrtcResult code, const std::string& call, const std::string& detail,
              code_location where = code_location::current());
  [[nodiscard]] nvrtcResult result() const noexcept { return static_cast<nvrtcResult>(code()); }
};

struct nvrtc_version {
  int major = 0, minor = 0;
};

/// Compiles CUDA C++ `source` to a cubin for `arch` (e.g. "sm_90").
[[nodiscard]] std::vector<std::byte> compile_to_cubin(const std::string& source, const std::string& name,
                                                      const std::string& arch);
[[nodiscard]] nvrtc_version nvrtc_library_version();

}  // namespace portbench::cuda
