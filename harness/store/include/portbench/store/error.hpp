// SPDX-License-Identifier: Apache-2.0
// The one error type of the results store. Its message is a single line that names the file
// and the cause, e.g. "run.h5: cannot open: truncated file: eof = 800, stored_eof = 4096".
#pragma once
#include <filesystem>
#include <stdexcept>
#include <string>

namespace portbench::store {

class store_error : public std::runtime_error {
 public:
  store_error(const std::filesystem::path& file, const std::string& cause);

  [[nodiscard]] const std::filesystem::path& file() const noexcept { return m_file; }

 private:
  std::filesystem::path m_file;
};

}  // namespace portbench::store
