// SPDX-License-Identifier: Apache-2.0
// A small work-sharing loop over std::thread. Work is cut into blocks that do not depend on the
// thread count, so per-block results merged in block order are the same on 2 or 16 cores.
#pragma once
#include <cstdint>
#include <functional>

namespace portbench::reference {

/// `requested`, or std::thread::hardware_concurrency() when 0 (at least 1).
[[nodiscard]] unsigned resolve_threads(unsigned requested) noexcept;

/// Calls fn(block, begin, end) for the blocks [k*grain, min((k+1)*grain, n)) on up to `threads`
/// threads. The first exception thrown by fn is rethrown here after all threads joined.
void parallel_blocks(std::int64_t n, std::int64_t grain, unsigned threads,
                     const std::function<void(std::int64_t block, std::int64_t begin,
                                              std::int64_t end)>& fn);

/// Number of blocks parallel_blocks makes.
[[nodiscard]] inline std::int64_t block_count(std::int64_t n, std::int64_t grain) noexcept {
  return grain <= 0 ? 0 : (n + grain - 1) / grain;
}

}  // namespace portbench::reference
