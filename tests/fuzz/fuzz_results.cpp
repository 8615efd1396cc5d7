// SPDX-License-Identifier: Apache-2.0
// libFuzzer: the results (HDF5) reader. The reader takes a path, so each input is written to a
// file first ($PORTBENCH_FUZZ_DIR, default /dev/shm, a memory file system). Any file either
// reads or throws a portbench::error (store_error naming the file); anything else is a bug,
// ours or HDF5's. Seed: a results file written by portbench's own writer
// (portbench_synth_results, scripts/fuzz.sh).
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>

#include "portbench/error.hpp"
#include "portbench/store/reader.hpp"

namespace {

const std::string& scratch_file() {
  static const std::string path = [] {
    const char* dir = std::getenv("PORTBENCH_FUZZ_DIR");
    return std::string(dir && *dir ? dir : "/dev/shm") + "/portbench-fuzz-results-" + std::to_string(::getpid()) + ".h5";
  }();
  return path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  {
    std::ofstream out(scratch_file(), std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    if (!out) std::abort();   // the fuzzer's own scratch file: nothing to learn from inputs
  }
  try {
    auto f = portbench::store::read_results(scratch_file());
    (void)f.run_count();
  } catch (const portbench::error&) {
  }
  return 0;
}
