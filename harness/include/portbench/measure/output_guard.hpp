// SPDX-License-Identifier: Apache-2.0
// Proof that a launch wrote every output element: outputs are poisoned with a pattern that
// changes per sample, and a small harness kernel (compiled here with NVRTC, so it needs no front
// end) counts the elements still holding the poison after the launch.
#pragma once
#include <cuda.h>

#include <cstdint>
#include <memory>
#include <optional>

#include "portbench/cuda/memory.hpp"
#include "portbench/cuda/module.hpp"
#include "portbench/cuda/stream.hpp"

namespace portbench::measure {

/// The 32-bit poison of sample `k`: NaN in fp32, in both fp16 and both bf16 halves, and in
/// fp8 bytes, so no correct float output can equal it; 256 distinct values.
[[nodiscard]] std::uint32_t poison_pattern(std::uint64_t k) noexcept;

class output_guard {
 public:
  explicit output_guard(cuda::context_ptr ctx);

  /// Enqueues a count of the elements of `buf` (element size 1, 2, 4 or 8 bytes) that still
  /// equal `pattern`'s bytes; returns a handle to read once the stream is synchronised.
  void enqueue_count(const cuda::stream& s, CUdeviceptr buf, std::size_t bytes, int element_size,
                     std::uint32_t pattern) const;
  /// Total of the counts enqueued since the last reset (stream must be synchronised).
  [[nodiscard]] std::uint64_t read_and_reset(const cuda::stream& s) const;

 private:
  cuda::context_ptr m_ctx;
  std::shared_ptr<const cuda::module> m_module;
  std::optional<cuda::kernel> m_count;
  cuda::device_buffer m_counter;
};

}  // namespace portbench::measure
