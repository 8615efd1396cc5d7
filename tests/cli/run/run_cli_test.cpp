// SPDX-License-Identifier: Apache-2.0
// `portbench run` as a process. Without a GPU every configuration is recorded with the reason
// and the file stays readable; bad input is one line and exit 2.
#include <gtest/gtest.h>

#include "portbench/store/reader.hpp"
#include "test_support.hpp"

namespace pt = portbench::testing;
namespace ps = portbench::store;

namespace {

std::string suite() { return std::string(PORTBENCH_SOURCE_DIR) + "/configs/smoke.json"; }

TEST(RunCli, MissingSuiteIsOneLineAndExitTwo) {
  pt::temp_dir tmp;
  auto r = pt::run_process({PORTBENCH_BIN, "run", "--ref", (pt::bundle_root() / "cuda_cpp").string(), "--aa",
                            "--suite", (tmp.path() / "nope.json").string(), "--out", (tmp.path() / "x.h5").string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("portbench: error: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("nope.json: cannot open suite"), std::string::npos) << r.err;
}

TEST(RunCli, MissingBundleFolderIsOneLineAndExitTwo) {
  pt::temp_dir tmp;
  auto r = pt::run_process({PORTBENCH_BIN, "run", "--ref", (tmp.path() / "nothing").string(), "--aa", "--suite",
                            suite(), "--out", (tmp.path() / "x.h5").string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("nothing: no bundle"), std::string::npos) << r.err;
}

TEST(RunCli, EveryConfigurationIsRecordedEvenWhenNoWorkerCanRun) {
  pt::temp_dir tmp;
  auto out = tmp.path() / "r.h5";
  auto r = pt::run_process({PORTBENCH_BIN, "run", "--ref", (pt::bundle_root() / "cutile_python").string(), "--port",
                            (pt::bundle_root() / "cutile_rust").string(), "--suite", suite(), "--runs", "2",
                            "--time-cap", "0.2", "--out", out.string()});
  auto file = ps::read_results(out);
  EXPECT_GE(file.configs.size(), 7u);
  for (const auto& c : file.configs) {
    for (const auto& side : c.roles) {
      EXPECT_EQ(side.runs.size(), 2u) << c.info.id;
      for (const auto& run : side.runs) {
        // Either it ran (on a GPU host) or the reason it did not is on file; never a silent pass.
        if (run.verdicts.numerics == "NOT_CHECKED") {
          EXPECT_FALSE(run.error.empty()) << c.info.id;
        }
      }
    }
  }
  EXPECT_EQ(file.provenance.suite, "smoke");
  EXPECT_NE(r.exit_code, 2) << r.err;
}

}  // namespace
