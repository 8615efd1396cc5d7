// SPDX-License-Identifier: Apache-2.0
// libFuzzer: the cubin (CUDA ELF) reader. Any image either inspects or throws a
// portbench::error; reads outside the image, other exceptions and UB are bugs. Seeds: the
// exported bundles' cubins (scripts/fuzz.sh).
#include <cstddef>
#include <cstdint>
#include <span>

#include "portbench/bundle/cubin.hpp"
#include "portbench/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    (void)portbench::bundle::inspect_cubin(std::as_bytes(std::span(data, size)), "fuzz.cubin");
  } catch (const portbench::error&) {
  }
  return 0;
}
