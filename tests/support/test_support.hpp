// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the test suites: real processes, real files, the exported bundles.
#pragma once
#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

namespace portbench::testing {

struct process_result {
  int exit_code = -1;
  std::string out;   ///< stdout
  std::string err;   ///< stderr
};

/// Runs `argv` as a child process (no shell) and waits for it.
process_result run_process(const std::vector<std::string>& argv);

/// The bundles scripts/export_bundles.sh wrote (PORTBENCH_BUNDLE_DIR).
std::filesystem::path bundle_root();
/// Every bundle folder below bundle_root() with plans; fails the calling test if there are none.
std::vector<std::filesystem::path> all_bundles();
/// The bundle folders below bundle_root() with no plans, only the exporter's reasons.
std::vector<std::filesystem::path> reasons_only_bundles();

/// A fresh temporary folder removed when the object dies.
class temp_dir {
 public:
  temp_dir();
  ~temp_dir();
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;
  [[nodiscard]] const std::filesystem::path& path() const noexcept { return m_path; }

 private:
  std::filesystem::path m_path;
};

std::vector<std::byte> read_bytes(const std::filesystem::path& p);
void write_bytes(const std::filesystem::path& p, const std::vector<std::byte>& bytes);
std::string read_text(const std::filesystem::path& p);
void write_text(const std::filesystem::path& p, const std::string& text);

}  // namespace portbench::testing
