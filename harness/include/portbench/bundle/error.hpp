// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <stdexcept>
#include <string>

namespace portbench::bundle {

/// Bad input in a bundle: the message is one line naming the file, the field and the problem,
/// e.g. "bundles/x/manifest.json: configs[0].launches[0].grid: expected 3 positive integers".
class bundle_error : public std::runtime_error {
 public:
  bundle_error(const std::string& file, const std::string& what)
      : std::runtime_error(file + ": " + what), m_file(file) {}
  [[nodiscard]] const std::string& file() const noexcept { return m_file; }

 private:
  std::string m_file;
};

}  // namespace portbench::bundle
