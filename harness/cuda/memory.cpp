// SPDX-License-Identifier: Apache-2.0
#include "portbench/cuda/memory.hpp"

#include <cstdio>
#include <stdexcept>
#include <string>
#include <utility>

#include "portbench/cuda/error.hpp"

namespace portbench::cuda {

device_buffer::device_buffer(context_ptr ctx, std::size_t bytes) : m_ctx(std::move(ctx)), m_bytes(bytes) {
  // A zero-byte request still gets a real (1-byte) allocation, so the address is valid.
  PB_CU(m_ctx->api().cuMemAlloc(&m_ptr, bytes == 0 ? 1 : bytes));
}

device_buffer::~device_buffer() { reset(); }

device_buffer::device_buffer(device_buffer&& other) noexcept
    : m_ctx(std::move(other.m_ctx)),
      m_ptr(std::exchange(other.m_ptr, 0)),
      m_bytes(std::exchange(other.m_bytes, 0)) {}

device_buffer& device_buffer::operator=(device_buffer&& other) noexcept {
  if (this != &other) {
    reset();
    m_ctx = std::move(other.m_ctx);
    m_ptr = std::exchange(other.m_ptr, 0);
    m_bytes = std::exchange(other.m_bytes, 0);
  }
  return *this;
}

void device_buffer::reset() noexcept {
  if (m_ptr != 0 && m_ctx) {
    CUresult rc = m_ctx->api().cuMemFree(m_ptr);
    // A poisoned context cannot free; the process is about to be replaced anyway.
    if (rc != CUDA_SUCCESS && !is_sticky_error(rc)) {
      std::fprintf(stderr, "portbench: warning: cuMemFree: %s\n", result_name(rc));
    }
  }
  m_ptr = 0;
  m_bytes = 0;
}

void device_buffer::upload(std::span<const std::byte> host) const {
  if (host.size() != m_bytes) {
    throw std::invalid_argument("device_buffer::upload: " + std::to_string(host.size()) +
                                " bytes for a buffer of " + std::to_string(m_bytes));
  }
  if (m_bytes != 0) PB_CU(m_ctx->api().cuMemcpyHtoD(m_ptr, host.data(), m_bytes));
  // From pageable memory cuMemcpyHtoD may return before the DMA lands, and kernels run on a
  // non-blocking stream that does not wait for the legacy stream: finish here.
  m_ctx->synchronize();
}

void device_buffer::download(std::span<std::byte> host) const {
  if (host.size() != m_bytes) {
    throw std::invalid_argument("device_buffer::download: " + std::to_string(host.size()) +
                                " bytes for a buffer of " + std::to_string(m_bytes));
  }
  // The legacy stream does not wait for non-blocking streams: let their kernels finish first.
  m_ctx->synchronize();
  if (m_bytes != 0) PB_CU(m_ctx->api().cuMemcpyDtoH(host.data(), m_ptr, m_bytes));
}

void device_buffer::download_range(std::size_t offset, std::span<std::byte> host) const {
  if (offset > m_bytes || host.size() > m_bytes - offset) {
    throw std::invalid_argument("device_buffer::download_range: " + std::to_string(host.size()) + " bytes at " +
                                std::to_string(offset) + " of a buffer of " + std::to_string(m_bytes));
  }
  m_ctx->synchronize();
  if (!host.empty()) PB_CU(m_ctx->api().cuMemcpyDtoH(host.data(), m_ptr + offset, host.size()));
}

void device_buffer::fill_u32(std::uint32_t pattern) const {
  std::size_t words = m_bytes / 4;
  if (words != 0) PB_CU(m_ctx->api().cuMemsetD32(m_ptr, pattern, words));
  if (m_bytes % 4 != 0) {
    PB_CU(m_ctx->api().cuMemsetD8(m_ptr + words * 4, static_cast<unsigned char>(pattern & 0xff),
                                  m_bytes % 4));
  }
  // cuMemset* is asynchronous to the host; without this a kernel on a non-blocking stream raced
  // the poison of large outputs (seen on the H200 as OUTPUT_NOT_WRITTEN at 600 MB).
  m_ctx->synchronize();
}

void device_buffer::copy_from(const device_buffer& source) const {
  if (source.m_bytes != m_bytes) {
    throw std::invalid_argument("device_buffer::copy_from: " + std::to_string(source.m_bytes) +
                                " bytes for a buffer of " + std::to_string(m_bytes));
  }
  if (m_bytes != 0) PB_CU(m_ctx->api().cuMemcpyDtoD(m_ptr, source.m_ptr, m_bytes));
  // Device-to-device copies return before they finish: restoring a 4 GiB in-place input raced
  // the kernel launched after it on a non-blocking stream (rope at seq_len 65536 on the H200,
  // NONDETERMINISTIC on both sides).
  m_ctx->synchronize();
}

}  // namespace portbench::cuda
