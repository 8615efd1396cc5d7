// SPDX-License-Identifier: Apache-2.0
// Comparison reports of outputs already verified, keyed by what determines them: operator,
// configuration, input seed, the reference library's identity and the output digest. A later
// launch (the other front end, a later run of the sweep) whose output has the same digest gets
// the same reports without a second CPU check. In memory, plus an optional folder shared by the
// sweep's workers (one JSON file per key, written atomically).
#pragma once
#include <cstdint>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "portbench/reference/spec.hpp"
#include "portbench/verdicts.hpp"

namespace portbench::verify {

struct verified_key {
  std::string op;
  std::string config_id;
  std::uint64_t seed = 0;
  std::string reference_id;   ///< what computed the expectations (the portbench revision)
  std::string digest;         ///< output_digest::of
  [[nodiscard]] std::string text() const;
};

class verified_outputs {
 public:
  /// `folder` empty: memory only. The folder is created on first store.
  explicit verified_outputs(std::filesystem::path folder = {});

  /// The reports stored under `key`, from memory or the folder; a file that does not parse or
  /// holds another key is ignored (it is rewritten by the next store).
  [[nodiscard]] std::optional<std::vector<reference::compare_report>> find(const verified_key& key);
  void store(const verified_key& key, const std::vector<reference::compare_report>& reports);

 private:
  [[nodiscard]] std::filesystem::path file_for(const std::string& key) const;

  std::filesystem::path m_folder;
  std::mutex m_mutex;
  std::map<std::string, std::vector<reference::compare_report>> m_entries;
};

/// Lossless JSON of a report (non-finite reals as the strings "inf", "-inf", "nan").
[[nodiscard]] nlohmann::json to_json(const reference::compare_report& r);
/// Throws nlohmann::json::exception or std::runtime_error on a malformed object.
[[nodiscard]] reference::compare_report report_from_json(const nlohmann::json& j);

}  // namespace portbench::verify
