// SPDX-License-Identifier: Apache-2.0
// One error type for every CUDA driver failure: it keeps the CUresult and names the call.
#pragma once
#include <cuda.h>

#include <source_location>
#include <stdexcept>
#include <string>

namespace portbench::cuda {

class cuda_error : public std::runtime_error {
 public:
  /// `call` is the failing expression as written, `detail` extra context (may be empty).
  cuda_error(CUresult code, std::string call, std::string detail,
             std::source_location where = std::source_location::current());

  [[nodiscard]] CUresult code() const noexcept { return m_code; }
  [[nodiscard]] const std::string& call() const noexcept { return m_call; }
  /// CUresult name, e.g. "CUDA_ERROR_ILLEGAL_ADDRESS"; works without a loaded driver.
  [[nodiscard]] std::string code_name() const;
  /// True for errors that poison the context (700, 716-719 and kin): the process must restart.
  [[nodiscard]] bool is_sticky() const noexcept;

 private:
  CUresult m_code;
  std::string m_call;
};

/// Name of a CUresult without calling into the driver (the driver may be absent).
[[nodiscard]] const char* result_name(CUresult code) noexcept;
[[nodiscard]] bool is_sticky_error(CUresult code) noexcept;

/// Throws cuda_error unless `code` is CUDA_SUCCESS.
void check(CUresult code, const char* call,
           std::source_location where = std::source_location::current());

}  // namespace portbench::cuda

/// Checks a driver call: PB_CU(api.cuMemAlloc(&p, n)) throws cuda_error naming the call.
#define PB_CU(call) ::portbench::cuda::check((call), #call)
