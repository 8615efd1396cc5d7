// SPDX-License-Identifier: Apache-2.0
// One error type for every CUDA driver failure: it keeps the CUresult and names the call.
#pragma once
#include <cuda.h>

#include <string>

#include "portbench/error.hpp"

namespace portbench::cuda {

class cuda_error : public portbench::error {
 public:
  /// `call` is the failing expression as written, `detail` extra context (may be empty).
  cuda_error(CUresult code, const std::string& call, const std::string& detail,
             code_location where = code_location::current());

  [[nodiscard]] CUresult result() const noexcept { return static_cast<CUresult>(code()); }
  /// True for errors that poison the context (700, 716-719 and kin): the process must restart.
  [[nodiscard]] bool is_sticky() const noexcept;
};

/// Name of a CUresult without calling into the driver (the driver may be absent).
[[nodiscard]] const char* result_name(CUresult code) noexcept;
[[nodiscard]] bool is_sticky_error(CUresult code) noexcept;

/// Throws cuda_error unless `code` is CUDA_SUCCESS.
void check(CUresult code, const char* call, code_location where = code_location::current());

}  // namespace portbench::cuda

/// Checks a driver call: PB_CU(api.cuMemAlloc(&p, n)) throws cuda_error naming the call.
#define PB_CU(call) ::portbench::cuda::check((call), #call)
