// SPDX-License-Identifier: Apache-2.0
#include "portbench/cuda/error.hpp"

namespace portbench::cuda {
namespace {

std::string format_message(CUresult code, const std::string& call, const std::string& detail,
                           const code_location& where) {
  std::string msg = call + ": " + result_name(code) + " (" + std::to_string(static_cast<int>(code)) + ")";
  if (!detail.empty()) msg += ": " + detail;
  msg += " [" + where.str() + "]";
  return msg;
}

}  // namespace

cuda_error::cuda_error(CUresult code, const std::string& call, const std::string& detail, code_location where)
    : portbench::error(format_message(code, call, detail, where),
                       {.code = static_cast<long long>(code), .code_name = result_name(code), .call = call,
                        .where = where}) {}

bool cuda_error::is_sticky() const noexcept { return is_sticky_error(result()); }

bool is_sticky_error(CUresult code) noexcept {
  switch (code) {
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_ECC_UNCORRECTABLE:
    case CUDA_ERROR_CONTEXT_IS_DESTROYED:
      return true;
    default:
      return false;
  }
}

void check(CUresult code, const char* call, code_location where) {
  if (code != CUDA_SUCCESS) throw cuda_error(code, call, "", where);
}

}  // namespace portbench::cuda
