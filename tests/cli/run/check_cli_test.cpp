// SPDX-License-Identifier: Apache-2.0
// `portbench check` runs in worker processes with the run's timeout: a crash or a hang costs
// one row, never the command; without a device it says once why and exits 2.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "run_helpers.hpp"

namespace pt = portbench::testing;
using json = nlohmann::json;

namespace {

std::string rms_norm() { return (pt::bundle_root() / "triton" / "rms_norm").string(); }

TEST(CheckCli, NoDeviceSaysOnceWhyAndExitsTwo) {
  auto r = pt::run_process({PORTBENCH_BIN, "check", rms_norm()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_EQ(r.err.rfind("portbench: error: device 0: cannot run here: ", 0), 0u) << r.err;
}

TEST(CheckCli, ListNeedsNoDevice) {
  auto r = pt::run_process({PORTBENCH_BIN, "check", rms_norm(), "--list", "--format", "csv", "--filter", "dtype=float16"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("configuration,operator,frontend\n", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("\"rms_norm/dtype=float16,m=4096,n=1024\",rms_norm,triton\n"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("bfloat16"), std::string::npos) << r.out;
}

using CheckCliWorkers = pt::FakeWorkerTest;

TEST_F(CheckCliWorkers, ACrashAndAHangCostOneRowEach) {
  ::setenv("PORTBENCH_FAKE_WORKER", "m=4096,n=1024=crash;m=333=hang", 1);
  auto r = pt::run_process({PORTBENCH_BIN, "check", rms_norm(), "--timeout", "1", "--format", "json"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const auto rows = json::parse(r.out);
  ASSERT_EQ(rows.size(), 5u);
  for (const auto& row : rows) {
    const std::string id = row["config"];
    if (id.find("m=4096,n=1024") != std::string::npos) {
      EXPECT_EQ(row["status"], "CRASH");
      EXPECT_NE(row["detail"].get<std::string>().find("signal 6"), std::string::npos);
    } else if (id.find("m=333") != std::string::npos) {
      EXPECT_EQ(row["status"], "HANG");
    } else {
      EXPECT_EQ(row["status"], "OK") << id;
      EXPECT_EQ(row["numerics"], "PASS") << id;
    }
    EXPECT_EQ(row["frontend"], "triton");
  }
  ::unsetenv("PORTBENCH_FAKE_WORKER");
  auto ok = pt::run_process({PORTBENCH_BIN, "check", rms_norm()});
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_NE(ok.out.find("device Fake GPU 0"), std::string::npos) << ok.out;
}

}  // namespace
