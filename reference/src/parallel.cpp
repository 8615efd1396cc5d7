// SPDX-License-Identifier: Apache-2.0
// Block-parallel loop on std::thread; blocks are handed out through an atomic counter.
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "portbench/reference/parallel.hpp"

namespace portbench::reference {

unsigned resolve_threads(unsigned requested) noexcept {
  if (requested != 0) return requested;
  const unsigned hw = std::thread::hardware_concurrency();
  return hw == 0 ? 1 : hw;
}

void parallel_blocks(std::int64_t n, std::int64_t grain, unsigned threads,
                     const std::function<void(std::int64_t, std::int64_t, std::int64_t)>& fn) {
  if (n <= 0) return;
  if (grain <= 0) grain = 1;
  const std::int64_t blocks = block_count(n, grain);
  const auto workers = static_cast<std::int64_t>(resolve_threads(threads)) < blocks
                           ? static_cast<std::int64_t>(resolve_threads(threads))
                           : blocks;
  std::atomic<std::int64_t> next{0};
  std::exception_ptr error;
  std::mutex error_mutex;
  auto work = [&] {
    for (;;) {
      const std::int64_t b = next.fetch_add(1);
      if (b >= blocks) return;
      try {
        const std::int64_t begin = b * grain;
        fn(b, begin, begin + grain < n ? begin + grain : n);
      } catch (...) {
        const std::lock_guard<std::mutex> lock(error_mutex);
        if (!error) error = std::current_exception();
        next.store(blocks);  // stop handing out work
      }
    }
  };
  if (workers <= 1) {
    work();
  } else {
    std::vector<std::thread> pool;
    pool.reserve(static_cast<std::size_t>(workers - 1));
    for (std::int64_t t = 1; t < workers; ++t) pool.emplace_back(work);
    work();
    for (auto& th : pool) th.join();
  }
  if (error) std::rethrow_exception(error);
}

}  // namespace portbench::reference
