// SPDX-License-Identifier: Apache-2.0
#include "portbench/store/verdicts.hpp"

namespace portbench::store {

bool is_verdict_literal(std::string_view text) noexcept {
  if (text.empty() || text.front() < 'A' || text.front() > 'Z') return false;
  for (char c : text) {
    bool ok = (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    if (!ok) return false;
  }
  return true;
}

bool numerics_passed(std::string_view v) noexcept { return v == numerics::pass; }
bool numerics_failed(std::string_view v) noexcept {
  return v != numerics::pass && v != numerics::not_checked;
}
bool proof_passed(std::string_view v) noexcept { return v == proof::executed; }
bool proof_failed(std::string_view v) noexcept {
  return v != proof::executed && v != proof::not_checked;
}
bool timing_valid(std::string_view v) noexcept { return v == timing::valid; }

}  // namespace portbench::store
