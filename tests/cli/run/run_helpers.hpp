// SPDX-License-Identifier: Apache-2.0
// Shared by the run CLI tests: the cuTile Python -> cuTile Rust call on the smoke suite, and
// the misbehaving worker in place of the real one (PORTBENCH_WORKER_EXE).
#pragma once
#include <cstdlib>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "test_support.hpp"

namespace portbench::testing {

inline std::string smoke_suite() { return std::string(PORTBENCH_SOURCE_DIR) + "/configs/smoke.json"; }

inline std::vector<std::string> python_to_rust(const temp_dir& tmp, const std::string& out = "r.h5") {
  return {PORTBENCH_BIN, "run", "--ref", (bundle_root() / "cutile_python").string(), "--port",
          (bundle_root() / "cutile_rust").string(), "--suite", smoke_suite(), "--out", (tmp.path() / out).string()};
}

inline std::vector<std::string> with(std::vector<std::string> argv, const std::vector<std::string>& extra) {
  argv.insert(argv.end(), extra.begin(), extra.end());
  return argv;
}

/// The fake worker for the test's duration.
class FakeWorkerTest : public ::testing::Test {
 protected:
  void SetUp() override { ::setenv("PORTBENCH_WORKER_EXE", PORTBENCH_MISBEHAVING_WORKER, 1); }
  void TearDown() override {
    ::unsetenv("PORTBENCH_WORKER_EXE");
    ::unsetenv("PORTBENCH_FAKE_WORKER");
  }
};

}  // namespace portbench::testing
