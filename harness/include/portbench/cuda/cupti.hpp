// SPDX-License-Identifier: Apache-2.0
// CUPTI, loaded at run time like the driver (libcupti.so.13 must match the r580 driver, so the
// harness takes the GPU host's own). One error type keeps the CUptiResult and names the call.
#pragma once
#include <cupti.h>

#include <memory>
#include <source_location>
#include <stdexcept>
#include <string>

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

class cupti_error : public std::runtime_error {
 public:
  cupti_error(CUptiResult code, const std::string& call, const std::string& detail,
              std::source_location where = std::source_location::current());
  [[nodiscard]] CUptiResult code() const noexcept { return m_code; }

 private:
  CUptiResult m_code;
};

/// Loads libcupti.so.13 (from PORTBENCH_CUPTI_LIBRARY, the toolkit, or the loader's path).
[[nodiscard]] std::shared_ptr<const cupti_api> load_cupti();

void cupti_check(const cupti_api& api, CUptiResult code, const char* call,
                 std::source_location where = std::source_location::current());

}  // namespace portbench::cuda

#define PB_CUPTI(api, call) ::portbench::cuda::cupti_check((api), (api).call, #call)
