// SPDX-License-Identifier: Apache-2.0
#include "layout.hpp"

#include <cstdio>

namespace portbench::store::detail {

std::string escape_link_name(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '%' || c == '/' || (i == 0 && c == '.')) {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", static_cast<unsigned char>(c));
      out += buf;
    } else {
      out += c;
    }
  }
  if (out.empty()) out = "%00";
  return out;
}

std::string config_group_path(std::string_view config_id, std::string_view op) {
  std::string_view rest = config_id;
  if (rest.size() > op.size() && rest.substr(0, op.size()) == op && rest[op.size()] == '/') {
    rest.remove_prefix(op.size() + 1);
  }
  return std::string(configs_group) + "/" + escape_link_name(op) + "/" + escape_link_name(rest);
}

std::string run_group_name(int run) { return "run_" + std::to_string(run); }

}  // namespace portbench::store::detail
