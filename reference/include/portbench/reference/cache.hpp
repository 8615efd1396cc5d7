// SPDX-License-Identifier: Apache-2.0
// Cache of expected values for the sampled checks (attention rows, GEMM tiles and Freivalds
// vectors, ...), keyed by operator, configuration id and input seed, so the port and the
// reference front end, and later runs, do not recompute the fp64 reference. In memory, plus an
// optional folder of one binary file per key. Entries carry a fingerprint of the inputs so a
// stale file (other inputs under the same seed) is recomputed, not trusted.
#pragma once
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "portbench/reference/spec.hpp"

namespace portbench::reference {

/// One named array of integers and/or reals.
struct cache_block {
  std::string name;
  std::vector<std::int64_t> ints;
  std::vector<double> reals;
};

struct cache_entry {
  std::uint64_t fingerprint = 0;
  std::vector<cache_block> blocks;

  [[nodiscard]] const cache_block* find(const std::string& name) const;
  [[nodiscard]] std::size_t bytes() const;
};

class reference_cache {
 public:
  /// `folder` empty: memory only. The folder is created on first store.
  explicit reference_cache(std::filesystem::path folder = {});

  /// The entry for `key` if its fingerprint matches (memory first, then the folder).
  [[nodiscard]] std::shared_ptr<const cache_entry> find(const std::string& key, std::uint64_t fingerprint);
  void store(const std::string& key, std::shared_ptr<const cache_entry> entry);
  void clear();   ///< memory only; files stay

  [[nodiscard]] std::int64_t hits() const noexcept { return m_hits.load(); }
  [[nodiscard]] std::int64_t misses() const noexcept { return m_misses.load(); }
  [[nodiscard]] const std::filesystem::path& folder() const noexcept { return m_folder; }

 private:
  [[nodiscard]] std::filesystem::path file_for(const std::string& key) const;

  std::filesystem::path m_folder;
  std::mutex m_mutex;
  std::unordered_map<std::string, std::shared_ptr<const cache_entry>> m_entries;
  std::atomic<std::int64_t> m_hits{0};
  std::atomic<std::int64_t> m_misses{0};
};

/// "op|config id|seed", the key verify() uses.
[[nodiscard]] std::string cache_key(const std::string& op, const config& c, std::uint64_t seed);
/// A cheap fingerprint of the inputs (sizes plus up to 4096 sampled bytes per input tensor).
[[nodiscard]] std::uint64_t input_fingerprint(const std::vector<host_tensor>& ts);

}  // namespace portbench::reference
