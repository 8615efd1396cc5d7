// SPDX-License-Identifier: Apache-2.0
#include "portbench/cuda/stream.hpp"

#include <cmath>
#include <cstdio>

#include "portbench/cuda/error.hpp"

namespace portbench::cuda {

stream::stream(context_ptr ctx) : m_ctx(std::move(ctx)) {
  PB_CU(m_ctx->api().cuStreamCreate(&m_stream, CU_STREAM_NON_BLOCKING));
}

stream::~stream() {
  CUresult rc = m_ctx->api().cuStreamDestroy(m_stream);
  if (rc != CUDA_SUCCESS && !is_sticky_error(rc)) {
    std::fprintf(stderr, "portbench: warning: cuStreamDestroy: %s\n", result_name(rc));
  }
}

void stream::synchronize() const { PB_CU(m_ctx->api().cuStreamSynchronize(m_stream)); }

event::event(context_ptr ctx) : m_ctx(std::move(ctx)) {
  PB_CU(m_ctx->api().cuEventCreate(&m_event, CU_EVENT_DEFAULT));
}

event::~event() {
  CUresult rc = m_ctx->api().cuEventDestroy(m_event);
  if (rc != CUDA_SUCCESS && !is_sticky_error(rc)) {
    std::fprintf(stderr, "portbench: warning: cuEventDestroy: %s\n", result_name(rc));
  }
}

void event::record(const stream& s) const { PB_CU(m_ctx->api().cuEventRecord(m_event, s.native())); }
void event::synchronize() const { PB_CU(m_ctx->api().cuEventSynchronize(m_event)); }

nanoseconds event::since(const event& start) const {
  float ms = 0;
  PB_CU(m_ctx->api().cuEventElapsedTime(&ms, start.m_event, m_event));
  return nanoseconds(static_cast<std::int64_t>(std::llround(static_cast<double>(ms) * 1e6)));
}

}  // namespace portbench::cuda
