// SPDX-License-Identifier: Apache-2.0
#include "portbench/store/error.hpp"

namespace portbench::store {
namespace {

std::string one_line(std::string text) {
  for (char& c : text) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return text;
}

}  // namespace

store_error::store_error(const std::filesystem::path& file, const std::string& cause)
    : std::runtime_error(one_line(file.string() + ": " + cause)), m_file(file) {}

}  // namespace portbench::store
