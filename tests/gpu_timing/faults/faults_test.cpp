// SPDX-License-Identifier: Apache-2.0
// The fault suite through `portbench run` as a user runs it: one sweep holds eight broken ports
// (docs/faults.md) between healthy configurations. Each fault must get its verdict, and the
// healthy configurations of the same run must be unaffected.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>

#include "portbench/cuda/driver.hpp"
#include "portbench/store/reader.hpp"
#include "test_support.hpp"

namespace pt = portbench::testing;
namespace ps = portbench::store;
using json = nlohmann::json;

namespace {

// config id -> the fault its port kernel carries, from the faults bundle's own manifest.
std::map<std::string, std::string> faults_by_config() {
  auto m = json::parse(pt::read_text(pt::bundle_root() / "faults" / "vector_add" / "manifest.json"));
  std::map<std::string, std::string> out;
  for (const auto& c : m["configs"]) {
    std::string id = "vector_add/dtype=" + c["params"]["dtype"].get<std::string>() +
                     ",n=" + std::to_string(c["params"]["n"].get<long long>());
    out[id] = c["tuning"]["fault"].get<std::string>();
  }
  return out;
}

TEST(FaultSuite, EveryFaultCaughtAndHealthyConfigurationsUnaffected) {
  std::string why;
  if (!portbench::cuda::device_available(&why)) GTEST_SKIP() << "no CUDA device: " << why;
  pt::temp_dir tmp;
  auto out = tmp.path() / "faults.h5";
  auto r = pt::run_process({PORTBENCH_BIN, "run", "--ref", (pt::bundle_root() / "faults_reference").string(),
                            "--port", (pt::bundle_root() / "faults").string(), "--suite",
                            std::string(PORTBENCH_SOURCE_DIR) + "/configs/faults.json", "--runs", "1",
                            "--timeout", "20", "--time-cap", "0.3", "--out", out.string()});
  std::printf("%s\n%s\n", r.out.c_str(), r.err.c_str());
  EXPECT_EQ(r.exit_code, 1) << "a run with failing ports must exit 1";
  auto file = ps::read_results(out);
  auto faults = faults_by_config();
  ASSERT_EQ(faults.size(), 11u);
  int caught = 0;
  for (const auto& [id, fault] : faults) {
    SCOPED_TRACE(id + " (" + fault + ")");
    const auto* cfg = file.find(id);
    ASSERT_NE(cfg, nullptr) << "configuration missing from the results file";
    const auto* port = cfg->find(ps::role::port);
    const auto* ref = cfg->find(ps::role::reference);
    ASSERT_TRUE(port && ref && !port->runs.empty() && !ref->runs.empty());
    const auto& p = port->runs.front();
    const auto& q = ref->runs.front();
    if (fault == "none") {
      EXPECT_EQ(p.verdicts.numerics, "PASS");
      EXPECT_EQ(p.verdicts.proof, "EXECUTED");
      EXPECT_EQ(p.verdicts.timing, "VALID");
      EXPECT_GT(p.stats.count, 0);
      EXPECT_TRUE(p.error.empty()) << p.error;
      continue;
    }
    // The reference side of a faulty configuration is healthy whenever it ran before the fault.
    bool ok = false;
    if (fault == "illegal_address") ok = p.error.find("CUDA_ERROR_ILLEGAL_ADDRESS") != std::string::npos;
    else if (fault == "trap") ok = p.error.rfind("ERROR: ", 0) == 0 && p.error.find("CUDA_ERROR_") != std::string::npos;
    else if (fault == "endless_loop") ok = p.error.rfind("HANG: ", 0) == 0;
    else if (fault == "writes_nothing" || fault == "writes_part" || fault == "stale_result") ok = p.verdicts.proof == "OUTPUT_NOT_WRITTEN";
    else if (fault == "extra_stream_work") ok = p.verdicts.proof == "FOREIGN_KERNEL";
    else if (fault == "writes_nan") ok = p.verdicts.numerics == "FAIL";
    EXPECT_TRUE(ok) << "numerics " << p.verdicts.numerics << ", proof " << p.verdicts.proof << ", timing "
                    << p.verdicts.timing << ", error: " << p.error;
    caught += ok;
    std::printf("fault %-18s port: numerics %-11s proof %-19s error %.90s\n", fault.c_str(), p.verdicts.numerics.c_str(),
                p.verdicts.proof.c_str(), p.error.c_str());
    (void)q;
  }
  std::printf("faults caught: %d of 8\n", caught);
  EXPECT_EQ(caught, 8);
}

}  // namespace
