// SPDX-License-Identifier: Apache-2.0
// `portbench tune` without a GPU: what it refuses before any worker starts.
#include <gtest/gtest.h>

#include "test_support.hpp"

namespace pt = portbench::testing;

TEST(TuneCli, BundlesWithoutVariantsSayEachConfigurationAndExitOne) {
  const auto dir = pt::bundle_root() / "cutile_python" / "rms_norm";
  const auto r = pt::run_process({PORTBENCH_BIN, "tune", dir.string(), "--out", "/nonexistent/record.json"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("no tuning variants"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("no configuration with tuning variants"), std::string::npos) << r.err;
}

TEST(TuneCli, MissingFolderIsOneLineAndExitTwo) {
  const auto r = pt::run_process({PORTBENCH_BIN, "tune", "/nonexistent/bundles"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "portbench: error: /nonexistent/bundles: no bundle (no manifest.json) below this folder\n");
}

TEST(TuneCli, SuiteThatIsMissingNamesTheFile) {
  const auto dir = pt::bundle_root() / "cutile_python" / "rms_norm";
  const auto r = pt::run_process({PORTBENCH_BIN, "tune", dir.string(), "--suite", "/nonexistent/suite.json"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("/nonexistent/suite.json"), std::string::npos) << r.err;
}
