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
      EXPECT_EQ(q.verdicts.numerics, "PASS");
      EXPECT_EQ(q.verdicts.proof, "EXECUTED");
      EXPECT_EQ(q.verdicts.timing, "VALID");
      continue;
    }
    // The reference side of a faulty configuration (sweep/record.cpp, measure/worker.cpp): a
    // failed item's status and error are the configuration's, recorded on both sides. When the
    // worker died (HANG, CRASH) no report came, so the reference has no verdicts; when the port
    // raised an error (ERROR) the reference had already passed its checks but nothing was
    // timed; otherwise the reference passed its checks and was timed beside the faulty port.
    // A device-launched child of extra_stream_work may overlap a reference sample, so there the
    // reference's proof may be FOREIGN_KERNEL and its timing is not asserted.
    const auto starts = [](const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; };
    const bool worker_died = starts(p.error, "HANG: ") || starts(p.error, "CRASH: ");
    const bool item_error = starts(p.error, "ERROR: ");
    if (worker_died || item_error) {
      EXPECT_EQ(q.error, p.error) << "the reference side records the configuration's failure";
    } else if (fault != "extra_stream_work") {
      EXPECT_TRUE(q.error.empty()) << q.error;
    }
    if (worker_died) {
      EXPECT_EQ(q.verdicts.numerics, "NOT_CHECKED");
      EXPECT_EQ(q.verdicts.timing, "NOT_MEASURED");
    } else {
      EXPECT_EQ(q.verdicts.numerics, "PASS") << q.error;
      if (fault == "extra_stream_work") {
        EXPECT_TRUE(q.verdicts.proof == "EXECUTED" || q.verdicts.proof == "FOREIGN_KERNEL") << q.verdicts.proof;
      } else {
        EXPECT_EQ(q.verdicts.proof, "EXECUTED") << q.error;
      }
      if (item_error) {
        EXPECT_EQ(q.verdicts.timing, "NOT_MEASURED") << "the port failed before sampling";
      } else if (fault != "extra_stream_work") {
        EXPECT_EQ(q.verdicts.timing, "VALID") << "sampled beside the faulty port";
        EXPECT_GT(q.stats.count, 0);
      }
    }
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
    std::printf("fault %-18s port: numerics %-11s proof %-19s error %.90s | reference: %s %s %s\n", fault.c_str(),
                p.verdicts.numerics.c_str(), p.verdicts.proof.c_str(), p.error.c_str(), q.verdicts.numerics.c_str(),
                q.verdicts.proof.c_str(), q.verdicts.timing.c_str());
  }
  std::printf("faults caught: %d of 8\n", caught);
  EXPECT_EQ(caught, 8);
}

}  // namespace
