// SPDX-License-Identifier: Apache-2.0
// One long-lived CUPTI activity session per worker process: CONCURRENT_KERNEL records (which do
// not serialise kernels, unlike KIND_KERNEL) plus EXTERNAL_CORRELATION records, so every kernel
// record is attributed to the sample that launched it by correlation id, never by name.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "portbench/cuda/cupti.hpp"

namespace portbench::measure {

struct kernel_record {
  std::uint32_t correlation_id = 0;
  std::uint64_t start_ns = 0, end_ns = 0;   ///< both 0: CUPTI could not time it
  std::string name;
  std::int32_t grid[3]{}, block[3]{};
  std::uint32_t stream_id = 0;
  bool device_launched = false;   ///< launched by another kernel (dynamic parallelism)
};

/// What CUPTI delivered since the last take().
struct trace_batch {
  std::vector<kernel_record> kernels;
  std::map<std::uint32_t, std::uint64_t> external_id;   ///< correlation id -> sample id
  std::uint64_t dropped = 0;                             ///< records CUPTI reported dropped
};

class cupti_tracer {
 public:
  /// Registers the buffer callbacks and enables tracing. Create it before loading any module
  /// or launching anything: records of earlier launches are lost. At most one per process
  /// (CUPTI before r610 allows a single subscriber).
  explicit cupti_tracer(std::shared_ptr<const cuda::cupti_api> api);
  ~cupti_tracer();
  cupti_tracer(const cupti_tracer&) = delete;
  cupti_tracer& operator=(const cupti_tracer&) = delete;

  /// Every launch between push(id) and pop() is attributed to `id` (0 is reserved for the
  /// harness's own kernels).
  void push(std::uint64_t id) const;
  void pop() const;
  /// Forces CUPTI to hand over every buffer, complete or not, and returns what it delivered.
  [[nodiscard]] trace_batch flush_and_take();
  [[nodiscard]] const cuda::cupti_api& api() const noexcept { return *m_api; }
  [[nodiscard]] bool traces_device_launches() const noexcept { return m_cdp_enabled; }

  // Called from CUPTI's buffer-completed callback.
  void consume(std::uint8_t* buffer, std::size_t valid_bytes);

 private:
  std::shared_ptr<const cuda::cupti_api> m_api;
  bool m_cdp_enabled = false;
  std::mutex m_mutex;
  trace_batch m_pending;
};

}  // namespace portbench::measure
