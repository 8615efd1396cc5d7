// SPDX-License-Identifier: Apache-2.0
#include "portbench/measure/cupti_tracer.hpp"

#include <cstdlib>
#include <stdexcept>

namespace portbench::measure {
namespace {

constexpr std::size_t k_buffer_bytes = 8u << 20;
constexpr std::size_t k_buffer_align = 8;

// CUPTI's buffer callbacks carry no user pointer, so the one tracer a process may have is
// reached through this pointer; the constructor refuses a second tracer.
cupti_tracer* g_active_tracer = nullptr;

void CUPTIAPI buffer_requested(std::uint8_t** buffer, std::size_t* size, std::size_t* max_records) {
  *buffer = static_cast<std::uint8_t*>(std::aligned_alloc(k_buffer_align, k_buffer_bytes));
  *size = *buffer ? k_buffer_bytes : 0;
  *max_records = 0;
}

void CUPTIAPI buffer_completed(CUcontext, std::uint32_t, std::uint8_t* buffer, std::size_t, std::size_t valid) {
  if (g_active_tracer && buffer && valid > 0) g_active_tracer->consume(buffer, valid);
  std::free(buffer);
}

// The fields portbench reads are common to the host- and device-launched kernel records.
template <typename Record>
kernel_record to_kernel_record(const Record& k, bool device_launched) {
  kernel_record r;
  r.correlation_id = k.correlationId;
  r.start_ns = k.start;
  r.end_ns = k.end;
  r.name = k.name ? k.name : "";
  r.grid[0] = k.gridX;
  r.grid[1] = k.gridY;
  r.grid[2] = k.gridZ;
  r.block[0] = k.blockX;
  r.block[1] = k.blockY;
  r.block[2] = k.blockZ;
  r.stream_id = k.streamId;
  r.device_launched = device_launched;
  return r;
}

}  // namespace

cupti_tracer::cupti_tracer(std::shared_ptr<const cuda::cupti_api> api) : m_api(std::move(api)) {
  if (g_active_tracer) throw std::logic_error("cupti_tracer: only one tracer per process");
  const auto& a = *m_api;
  PB_CUPTI(a, cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed));
  PB_CUPTI(a, cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
  PB_CUPTI(a, cuptiActivityEnable(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION));
  // External-correlation records are emitted per traced API call, so driver API activity must
  // be on for launches to carry the pushed sample ids.
  PB_CUPTI(a, cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DRIVER));
  // Kernels launched from the device (dynamic parallelism) may come as their own record kind;
  // not every platform offers it, and its absence only weakens one proof check.
  m_cdp_enabled = a.cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CDP_KERNEL) == CUPTI_SUCCESS;
  g_active_tracer = this;
}

cupti_tracer::~cupti_tracer() {
  m_api->cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  m_api->cuptiActivityDisable(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
  m_api->cuptiActivityDisable(CUPTI_ACTIVITY_KIND_DRIVER);
  if (m_cdp_enabled) m_api->cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CDP_KERNEL);
  m_api->cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  g_active_tracer = nullptr;
}

void cupti_tracer::push(std::uint64_t id) const {
  PB_CUPTI(*m_api, cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, id));
}

void cupti_tracer::pop() const {
  std::uint64_t id = 0;
  PB_CUPTI(*m_api, cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &id));
}

trace_batch cupti_tracer::flush_and_take() {
  PB_CUPTI(*m_api, cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
  std::size_t dropped = 0;
  PB_CUPTI(*m_api, cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped));
  std::lock_guard lock(m_mutex);
  trace_batch out = std::move(m_pending);
  m_pending = {};
  out.dropped += dropped;
  return out;
}

void cupti_tracer::consume(std::uint8_t* buffer, std::size_t valid_bytes) {
  std::lock_guard lock(m_mutex);
  CUpti_Activity* record = nullptr;
  while (m_api->cuptiActivityGetNextRecord(buffer, valid_bytes, &record) == CUPTI_SUCCESS) {
    if (record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL || record->kind == CUPTI_ACTIVITY_KIND_KERNEL) {
      const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
      m_pending.kernels.push_back(to_kernel_record(*k, k->isDeviceLaunched != 0));
    } else if (record->kind == CUPTI_ACTIVITY_KIND_CDP_KERNEL) {
      const auto* k = reinterpret_cast<const CUpti_ActivityCdpKernel*>(record);
      m_pending.kernels.push_back(to_kernel_record(*k, true));
    } else if (record->kind == CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION) {
      const auto* e = reinterpret_cast<const CUpti_ActivityExternalCorrelation*>(record);
      if (e->externalKind == CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0) m_pending.external_id[e->correlationId] = e->externalId;
    }
  }
}

}  // namespace portbench::measure
