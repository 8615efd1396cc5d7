// SPDX-License-Identifier: Apache-2.0
// The one error type of the results store. Its message is a single line that names the file
// and the cause, e.g. "run.h5: cannot open: truncated file: eof = 800, stored_eof = 4096".
#pragma once
#include <filesystem>
#include <string>

#include "portbench/error.hpp"

namespace portbench::store {

class store_error : public portbench::error {
 public:
  store_error(const std::filesystem::path& file, const std::string& cause,
              code_location where = code_location::current());

  [[nodiscard]] const std::filesystem::path& path() const noexcept { return m_path; }

 private:
  std::filesystem::path m_path;
};

}  // namespace portbench::store
