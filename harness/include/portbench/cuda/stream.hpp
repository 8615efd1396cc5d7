// SPDX-License-Identifier: Apache-2.0
// Streams and events as move-only handles that keep their context alive.
#pragma once
#include <cuda.h>

#include <chrono>
#include <cstdint>
#include <memory>

#include "portbench/cuda/context.hpp"

namespace portbench::cuda {

/// Device time has a type: CUPTI and event timestamps are nanoseconds.
using nanoseconds = std::chrono::duration<std::int64_t, std::nano>;

class stream {
 public:
  explicit stream(context_ptr ctx);
  ~stream();
  stream(const stream&) = delete;
  stream& operator=(const stream&) = delete;

  [[nodiscard]] CUstream native() const noexcept { return m_stream; }
  [[nodiscard]] const context& ctx() const noexcept { return *m_ctx; }
  void synchronize() const;

 private:
  context_ptr m_ctx;
  CUstream m_stream = nullptr;
};

class event {
 public:
  explicit event(context_ptr ctx);
  ~event();
  event(const event&) = delete;
  event& operator=(const event&) = delete;

  [[nodiscard]] CUevent native() const noexcept { return m_event; }
  void record(const stream& s) const;
  void synchronize() const;
  /// Elapsed time from `start` to this event (both recorded and complete).
  [[nodiscard]] nanoseconds since(const event& start) const;

 private:
  context_ptr m_ctx;
  CUevent m_event = nullptr;
};

}  // namespace portbench::cuda
