// SPDX-License-Identifier: Apache-2.0
// A 128-bit digest of output tensors, computed on the device by a harness kernel (NVRTC, no
// front end). Two launches reproduce each other when their digests agree, and an output whose
// digest was verified before needs no second CPU check: the digest replaces a download and a
// host comparison of gigabytes with one pass over device memory.
#pragma once
#include <cuda.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "portbench/cuda/memory.hpp"
#include "portbench/cuda/module.hpp"
#include "portbench/cuda/stream.hpp"
#include "portbench/verify/device_tensors.hpp"

namespace portbench::verify {

/// The same digest of host bytes ("name:32 hex digits"), computed on the CPU: what the device's
/// digest of a tensor must equal when the device holds the same bytes.
[[nodiscard]] std::string host_digest(const std::string& name, std::span<const std::byte> bytes);

class output_digest {
 public:
  explicit output_digest(cuda::context_ptr ctx);

  /// Digest of the bytes of `tensors` (each salted by its name), as hex: "name:32 hex digits"
  /// joined by ';'. Synchronises `s`.
  [[nodiscard]] std::string of(const cuda::stream& s, const std::vector<device_tensors::output_view>& tensors) const;

 private:
  cuda::context_ptr m_ctx;
  std::shared_ptr<const cuda::module> m_module;
  std::optional<cuda::kernel> m_kernel;
  cuda::device_buffer m_sums;   ///< two 64-bit sums
};

}  // namespace portbench::verify
