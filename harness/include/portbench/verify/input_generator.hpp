// SPDX-License-Identifier: Apache-2.0
// Seeded inputs generated on the device: an operator's declared uniform fills
// (reference::uniform_fill) computed by a harness kernel (NVRTC, no front end) with the host's
// integer mixing, the same two IEEE double roundings and the same round-to-nearest-even
// encodings as reference::fill_uniform, so the bytes are identical. A configuration's inputs then
// cost no host generation and no upload unless an output has to be verified on the host.
#pragma once
#include <cuda.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "portbench/cuda/module.hpp"
#include "portbench/cuda/stream.hpp"
#include "portbench/reference/dtype.hpp"

namespace portbench::verify {

/// One fill: `elements` storage elements of `type` at `address`, element i drawn from stream
/// `key` (reference::stream_key(seed, tensor name)) in [lo, hi).
struct device_fill {
  CUdeviceptr address = 0;
  reference::dtype type = reference::dtype::f32;
  std::int64_t elements = 0;
  std::uint64_t key = 0;
  double lo = 0, hi = 1;
};

/// The CUDA C++ source of the fill kernels: one entry per dtype, input_generator_entry(type).
[[nodiscard]] const char* input_generator_source() noexcept;
/// The entry that fills `type` ("portbench_fill_fp16", ...).
[[nodiscard]] std::string input_generator_entry(reference::dtype type);
/// Bytes of the one parameter each fill kernel takes (a struct, passed by value).
[[nodiscard]] std::size_t input_generator_param_bytes() noexcept;

class input_generator {
 public:
  /// Compiles the fill kernels (every dtype, one NVRTC program) for the context's device.
  explicit input_generator(cuda::context_ptr ctx);
  /// Enqueues `f` on `s`.
  void enqueue(const cuda::stream& s, const device_fill& f) const;

 private:
  cuda::context_ptr m_ctx;
  std::shared_ptr<const cuda::module> m_module;
  std::map<reference::dtype, cuda::kernel> m_kernels;
};

}  // namespace portbench::verify
