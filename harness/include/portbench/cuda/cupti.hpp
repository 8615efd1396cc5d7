// SPDX-License-Identifier: Apache-2.0
// CUPTI, loaded at run time like the driver (libcupti.so.13 must match the r580 driver, so the
// harness takes the GPU host's own). One error type keeps the CUptiResult and names the call.
#pragma once
#include <cupti.h>

#include <memory>
#include <string>

#include "portbench/error.hpp"

namespace portbench::cuda {

#define PORTBENCH_CUPTI_FUNCTIONS(X)                                                       \
  X(cuptiGetVersion) X(cuptiGetResultString) X(cuptiActivityRegisterCallbacks)             \
  X(cuptiActivityEnable) X(cuptiActivityDisable) X(cuptiActivityFlushAll)                  \
  X(cuptiActivityGetNextRecord) X(cuptiActivityGetNumDroppedRecords)                       \
  X(cuptiActivityPushExternalCorrelationId) X(cuptiActivityPopExternalCorrelationId)       \
  X(cuptiGetTimestamp) X(cuptiFinalize)

struct cupti_api {
#define PORTBENCH_CUPTI_MEMBER(name) decltype(&::name) name = nullptr;
  PORTBENCH_CUPTI_FUNCTIONS(PORTBENCH_CUPTI_MEMBER)
#undef PORTBENCH_CUPTI_MEMBER
  std::uint32_t version = 0;
  std::string path;                   ///< the libcupti that was loaded
  std::shared_ptr<void> library;
};

class cupti_error : public portbench::error {
 public:
  cupti_error(CUptiResult code, const std::string& call, const std::string& detail,
              code_location where = code_location::current());
  [[nodiscard]] CUptiResult result() const noexcept { return static_cast<CUptiResult>(code()); }
};

/// Loads libcupti.so.13 (from PORTBENCH_CUPTI_LIBRARY, the toolkit, or the loader's path).
[[nodiscard]] std::shared_ptr<const cupti_api> load_cupti();

void cupti_check(const cupti_api& api, CUptiResult code, const char* call,
                 code_location where = code_location::current());

}  // namespace portbench::cuda

#define PB_CUPTI(api, call) ::portbench::cuda::cupti_check((api), (api).call, #call)
