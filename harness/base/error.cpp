// SPDX-License-Identifier: Apache-2.0
#include "portbench/error.hpp"

#include <string_view>

namespace portbench {
namespace {

std::string one_line(std::string text) {
  for (char& c : text) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return text;
}

}  // namespace

std::string code_location::str() const {
  if (file == nullptr || *file == '\0') return "";
  std::string_view f(file);
  if (auto slash = f.find_last_of('/'); slash != std::string_view::npos) f.remove_prefix(slash + 1);
  return std::string(f) + ":" + std::to_string(line);
}

error::error(const std::string& message, error_info info)
    : std::runtime_error(one_line(message)), m_info(std::move(info)) {}

std::string input_message(const std::string& file, const std::string& field, const std::string& cause) {
  std::string out = file;
  for (const std::string* part : {&field, &cause}) {
    if (part->empty()) continue;
    if (!out.empty()) out += ": ";
    out += *part;
  }
  return out;
}

input_error::input_error(const std::string& file, const std::string& field, const std::string& cause,
                         code_location where)
    : error(input_message(file, field, cause), {.file = file, .field = field, .where = where}) {}

}  // namespace portbench
