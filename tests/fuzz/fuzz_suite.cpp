// SPDX-License-Identifier: Apache-2.0
// libFuzzer: the suite parser. Any text either parses or throws a portbench::error naming the
// file and field. Seeds: configs/*.json (scripts/fuzz.sh).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "portbench/error.hpp"
#include "portbench/sweep/suite.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    auto s = portbench::sweep::parse_suite(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.json");
    for (const auto& e : s.entries) (void)e.config.id();   // ids of whatever parameters parsed
  } catch (const portbench::error&) {
  }
  return 0;
}
