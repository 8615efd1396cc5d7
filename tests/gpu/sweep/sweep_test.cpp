// SPDX-License-Identifier: Apache-2.0
// `portbench run` over several runs, as the nightly sweep runs it: the runs of a configuration
// share their inputs, so only new outputs are compared with the fp64 reference and the rest
// reuse that verification through the output digest; --vary-inputs verifies every run.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "portbench/cuda/driver.hpp"
#include "portbench/store/reader.hpp"
#include "test_support.hpp"

namespace pt = portbench::testing;
namespace ps = portbench::store;

namespace {

ps::results_file sweep(const pt::temp_dir& tmp, const std::string& name, const std::vector<std::string>& extra) {
  const auto out = tmp.path() / (name + ".h5");
  std::vector<std::string> argv{PORTBENCH_BIN, "run", "--ref", (pt::bundle_root() / "cutile_python" / "rms_norm").string(),
                                "--port", (pt::bundle_root() / "cutile_rust" / "rms_norm").string(), "--suite",
                                std::string(PORTBENCH_SOURCE_DIR) + "/configs/smoke.json", "--runs", "3",
                                "--time-cap", "0.2", "--out", out.string()};
  argv.insert(argv.end(), extra.begin(), extra.end());
  const auto r = pt::run_process(argv);
  std::printf("%s\n%s\n", r.out.c_str(), r.err.c_str());
  EXPECT_EQ(r.exit_code, 0);
  return ps::read_results(out);
}

TEST(Sweep, LaterRunsReuseTheFirstVerification) {
  std::string why;
  if (!portbench::cuda::device_available(&why)) GTEST_SKIP() << "no CUDA device: " << why;
  pt::temp_dir tmp;
  const auto file = sweep(tmp, "same", {});
  ASSERT_FALSE(file.configs.empty());
  for (const auto& c : file.configs) {
    SCOPED_TRACE(c.info.id);
    for (auto role : {ps::role::reference, ps::role::port}) {
      const auto* rr = c.find(role);
      ASSERT_NE(rr, nullptr);
      ASSERT_EQ(rr->runs.size(), 3u);
      for (const auto& run : rr->runs) {
        EXPECT_EQ(run.verdicts.numerics, "PASS");
        EXPECT_EQ(run.verdicts.proof, "EXECUTED");
        EXPECT_FALSE(run.output_digest.empty());
        EXPECT_EQ(run.output_digest, rr->runs.front().output_digest) << "same inputs, deterministic kernel";
        if (run.run > 0) {
          EXPECT_EQ(run.numerics_source, "REUSED") << "run " << run.run;
        }
      }
    }
    // Run 0: the reference front end is always compared; the port only if its output differs.
    const auto& ref0 = c.find(ps::role::reference)->runs.front();
    const auto& port0 = c.find(ps::role::port)->runs.front();
    EXPECT_EQ(ref0.numerics_source, "VERIFIED");
    EXPECT_GT(ref0.cost.verify_s, 0.0);
    EXPECT_EQ(port0.numerics_source, port0.output_digest == ref0.output_digest ? "REUSED" : "VERIFIED");
  }
}

TEST(Sweep, VaryInputsVerifiesEveryRun) {
  std::string why;
  if (!portbench::cuda::device_available(&why)) GTEST_SKIP() << "no CUDA device: " << why;
  pt::temp_dir tmp;
  const auto file = sweep(tmp, "vary", {"--vary-inputs"});
  ASSERT_FALSE(file.configs.empty());
  for (const auto& c : file.configs) {
    SCOPED_TRACE(c.info.id);
    const auto* rr = c.find(ps::role::reference);
    ASSERT_NE(rr, nullptr);
    ASSERT_EQ(rr->runs.size(), 3u);
    for (const auto& run : rr->runs) {
      EXPECT_EQ(run.verdicts.numerics, "PASS");
      EXPECT_EQ(run.numerics_source, "VERIFIED") << "run " << run.run;
      if (run.run > 0) {
        EXPECT_NE(run.output_digest, rr->runs.front().output_digest) << "fresh inputs";
      }
    }
  }
}

// Inputs generated on the device (the default) and on the host (--host-inputs) are the same
// bytes: every run of every configuration gives the same output digests and verdicts, and only
// the host path spends its inputs time generating on every run.
TEST(Sweep, DeviceGeneratedInputsGiveTheHostsOutputs) {
  std::string why;
  if (!portbench::cuda::device_available(&why)) GTEST_SKIP() << "no CUDA device: " << why;
  pt::temp_dir tmp;
  const auto device = sweep(tmp, "device", {});
  const auto host = sweep(tmp, "host", {"--host-inputs"});
  ASSERT_EQ(device.configs.size(), host.configs.size());
  double device_inputs_s = 0, host_inputs_s = 0;
  for (std::size_t i = 0; i < device.configs.size(); ++i) {
    SCOPED_TRACE(device.configs[i].info.id);
    ASSERT_EQ(device.configs[i].info.id, host.configs[i].info.id);
    for (auto role : {ps::role::reference, ps::role::port}) {
      const auto* d = device.configs[i].find(role);
      const auto* h = host.configs[i].find(role);
      ASSERT_TRUE(d && h);
      ASSERT_EQ(d->runs.size(), h->runs.size());
      for (std::size_t k = 0; k < d->runs.size(); ++k) {
        EXPECT_EQ(d->runs[k].output_digest, h->runs[k].output_digest) << "run " << k;
        EXPECT_EQ(d->runs[k].verdicts.numerics, h->runs[k].verdicts.numerics) << "run " << k;
        if (role == ps::role::reference) {
          device_inputs_s += d->runs[k].cost.inputs_s;
          host_inputs_s += h->runs[k].cost.inputs_s;
        }
      }
    }
  }
  std::printf("inputs_s over the reference runs: device %.3f s, host %.3f s\n", device_inputs_s, host_inputs_s);
}

}  // namespace
