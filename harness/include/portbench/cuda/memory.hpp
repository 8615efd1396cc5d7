// SPDX-License-Identifier: Apache-2.0
// Device memory owned by a move-only handle; it keeps its context alive.
#pragma once
#include <cuda.h>

#include <cstddef>
#include <span>

#include "portbench/cuda/context.hpp"

namespace portbench::cuda {

class device_buffer {
 public:
  device_buffer() = default;
  device_buffer(context_ptr ctx, std::size_t bytes);
  ~device_buffer();
  device_buffer(device_buffer&& other) noexcept;
  device_buffer& operator=(device_buffer&& other) noexcept;
  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;

  [[nodiscard]] CUdeviceptr address() const noexcept { return m_ptr; }
  [[nodiscard]] std::size_t size() const noexcept { return m_bytes; }

  // All of these are complete, with respect to every stream of the context, when they return.
  void upload(std::span<const std::byte> host) const;     ///< host -> device, whole buffer
  void download(std::span<std::byte> host) const;         ///< device -> host, whole buffer
  /// device -> host, `host.size()` bytes from byte `offset` of the buffer.
  void download_range(std::size_t offset, std::span<std::byte> host) const;
  void fill_u32(std::uint32_t pattern) const;             ///< memset with a 32-bit pattern
  /// device -> device: the whole of `source`, which must be this buffer's size.
  void copy_from(const device_buffer& source) const;

 private:
  void reset() noexcept;
  context_ptr m_ctx;
  CUdeviceptr m_ptr = 0;
  std::size_t m_bytes = 0;
};

}  // namespace portbench::cuda
