// SPDX-License-Identifier: Apache-2.0
// libFuzzer: the bundle manifest parser. Any input either parses or throws a portbench::error
// (a one-line bad-input message); anything else (another exception, a crash, UB, a leak) is a
// bug. Seeds: the exported bundles' manifest.json files (scripts/fuzz.sh).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "portbench/bundle/manifest.hpp"
#include "portbench/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    (void)portbench::bundle::parse_manifest_text(
        std::string_view(reinterpret_cast<const char*>(data), size), "fuzz/manifest.json");
  } catch (const portbench::error&) {
  }
  return 0;
}
