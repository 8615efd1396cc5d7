// SPDX-License-Identifier: Apache-2.0
// A cold and clean L2 before each timed sample. A harness kernel (compiled here with NVRTC)
// reads a buffer of twice the L2's size: the reads evict whatever a previous sample left there,
// its dirty lines written back now, outside the timed window, and leave only clean lines, which
// the timed kernel evicts at no cost. Overwriting a buffer instead (a memset, as nvbench's and
// Triton's flushes do, and portbench's until 2026-12-04) leaves the L2 full of dirty lines that
// the timed kernel pays to write back: up to the L2's size of DRAM writes inside its window
// (docs/measurement.md, "Cold L2").
#pragma once
#include <cstddef>
#include <memory>
#include <optional>

#include "portbench/cuda/memory.hpp"
#include "portbench/cuda/module.hpp"
#include "portbench/cuda/stream.hpp"

namespace portbench::measure {

class l2_flush {
 public:
  explicit l2_flush(cuda::context_ptr ctx);

  /// Enqueues the read on `s`, then resets the persisting L2 lines.
  void enqueue(const cuda::stream& s) const;
  /// Bytes read per flush: twice the L2's size (at least 2 MiB).
  [[nodiscard]] std::size_t bytes() const noexcept { return m_buffer.size(); }

 private:
  cuda::context_ptr m_ctx;
  cuda::device_buffer m_buffer;
  cuda::device_buffer m_sink;
  std::shared_ptr<const cuda::module> m_module;
  std::optional<cuda::kernel> m_read;
};

}  // namespace portbench::measure
