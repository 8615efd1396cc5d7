// SPDX-License-Identifier: Apache-2.0
#include "portbench/store/error.hpp"

namespace portbench::store {

store_error::store_error(const std::filesystem::path& file, const std::string& cause, code_location where)
    : portbench::error(file.string() + ": " + cause, {.file = file.string(), .where = where}), m_path(file) {}

}  // namespace portbench::store
