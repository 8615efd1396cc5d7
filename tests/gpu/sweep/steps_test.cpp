// SPDX-License-Identifier: Apache-2.0
// Proof of execution for plans with fill and copy steps, through `portbench run` as a user runs
// it. The harness's copy and fill kernels are part of the plan: a plan whose kernels and step
// kernels all ran is EXECUTED (and computes the right result), one with a kernel the plan does
// not account for is FOREIGN_KERNEL. The plans are edited copies of real exported manifests.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "portbench/cuda/driver.hpp"
#include "portbench/store/reader.hpp"
#include "test_support.hpp"

namespace pt = portbench::testing;
namespace ps = portbench::store;
using json = nlohmann::json;

namespace {

json view(const std::string& key, const std::string& name, json shape, json strides, const std::string& type) {
  return {{key, name}, {"offset", 0}, {"shape", std::move(shape)}, {"strides", std::move(strides)}, {"type", type}};
}

// Copies bundle `from` to `to` and gives configuration `n`'s plan steps around its kernel: out
// prefilled (a fill kernel), x through a transposed fp32 scratch layout and an fp64 round trip into
// the buffer the kernel reads as x (three copy kernels, two with conversion), and a strided
// fill of a scratch buffer (the fill kernel). The function is unchanged: out = x + y.
void add_steps(const std::filesystem::path& from, const std::filesystem::path& to, std::int64_t n) {
  std::filesystem::copy(from, to, std::filesystem::copy_options::recursive);
  json m = json::parse(pt::read_text(to / "manifest.json"));
  bool found = false;
  for (auto& c : m["configs"]) {
    if (c["params"]["n"] != n) continue;
    found = true;
    const std::int64_t r = n / 256, k = 256;
    ASSERT_EQ(r * k, n);
    json kernel = c["launches"][0];
    for (auto& p : kernel["params"]) {
      if (p["kind"] == "ptr" && p["tensor"] == "x") p = {{"kind", "scratch"}, {"name", "xb"}};
    }
    c["scratch"] = json::array({{{"name", "xt"}, {"bytes", 4 * n}},
                                {{"name", "xd"}, {"bytes", 8 * n}},
                                {{"name", "xb"}, {"bytes", 4 * n}},
                                {{"name", "pad"}, {"bytes", 8 * n}}});
    c["launches"] = json::array(
        {{{"step", "fill"}, {"target", view("tensor", "out", {n}, {1}, "f32")}, {"value", 3.0}},
         {{"step", "copy"}, {"src", view("tensor", "x", {r, k}, {k, 1}, "f32")}, {"dst", view("scratch", "xt", {r, k}, {1, r}, "f32")}},
         {{"step", "copy"}, {"src", view("scratch", "xt", {r, k}, {1, r}, "f32")}, {"dst", view("scratch", "xd", {r, k}, {k, 1}, "f64")}},
         {{"step", "copy"}, {"src", view("scratch", "xd", {n}, {1}, "f64")}, {"dst", view("scratch", "xb", {n}, {1}, "f32")}},
         {{"step", "fill"}, {"target", view("scratch", "pad", {r, 4}, {k, 3}, "f64")}, {"value", -1.5}},
         kernel});
  }
  ASSERT_TRUE(found) << "no configuration n=" << n << " in " << from;
  pt::write_text(to / "manifest.json", m.dump(1));
}

std::filesystem::path one_config_suite(const pt::temp_dir& tmp, std::int64_t n) {
  const auto p = tmp.path() / "suite.json";
  pt::write_text(p, json{{"suite", "steps"}, {"configs", json::array({{{"op", "vector_add"},
                                                                      {"params", {{"n", n}, {"dtype", "float32"}}}}})}}
                        .dump());
  return p;
}

ps::results_file run(const pt::temp_dir& tmp, const std::vector<std::string>& bundles_and_flags,
                     const std::filesystem::path& suite, int expect_exit) {
  const auto out = tmp.path() / "steps.h5";
  std::vector<std::string> argv{PORTBENCH_BIN, "run"};
  argv.insert(argv.end(), bundles_and_flags.begin(), bundles_and_flags.end());
  for (const std::string& a : std::vector<std::string>{"--suite", suite.string(), "--runs", "1", "--time-cap", "0.3",
                                                       "--out", out.string()}) {
    argv.push_back(a);
  }
  const auto r = pt::run_process(argv);
  std::printf("%s\n%s\n", r.out.c_str(), r.err.c_str());
  EXPECT_EQ(r.exit_code, expect_exit);
  return ps::read_results(out);
}

class StepsSweep : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (!portbench::cuda::device_available(&why)) GTEST_SKIP() << "no CUDA device: " << why;
  }
  pt::temp_dir tmp;
};

TEST_F(StepsSweep, APlanWithFillAndCopyStepsIsExecutedAndCorrect) {
  // configs/faults.json's first configuration: the faults_reference bundle is cuda_cpp's
  // vector_add for those sizes.
  constexpr std::int64_t n = 1048832;
  const auto port = tmp.path() / "with_steps";
  add_steps(pt::bundle_root() / "faults_reference" / "vector_add", port, n);
  const auto file = run(tmp, {"--ref", (pt::bundle_root() / "faults_reference" / "vector_add").string(), "--port", port.string()},
                        one_config_suite(tmp, n), 0);
  ASSERT_EQ(file.configs.size(), 1u);
  for (auto role : {ps::role::reference, ps::role::port}) {
    const auto* rr = file.configs[0].find(role);
    ASSERT_NE(rr, nullptr);
    ASSERT_EQ(rr->runs.size(), 1u);
    const auto& r = rr->runs.front();
    SCOPED_TRACE(rr->frontend);
    EXPECT_EQ(r.verdicts.numerics, "PASS");
    EXPECT_EQ(r.verdicts.proof, "EXECUTED") << r.error;
    EXPECT_EQ(r.verdicts.timing, "VALID");
    EXPECT_GT(r.stats.count, 0);
  }
  // The port's device time holds the step kernels: three copies of 4 MB and more.
  const auto& ref = file.configs[0].find(ps::role::reference)->runs.front();
  const auto& steps = file.configs[0].find(ps::role::port)->runs.front();
  EXPECT_GT(steps.stats.median_ns, ref.stats.median_ns);
  // Per-kernel times: none for the one-kernel reference; for the port each of its six kernels
  // (five steps, then vector_add) in plan order, a row per kept sample adding up to its time.
  EXPECT_TRUE(ref.kernel_entries.empty());
  ASSERT_EQ(steps.kernel_entries.size(), 6u);
  const std::size_t samples = steps.time_ns.size();
  ASSERT_GT(samples, 0u);
  ASSERT_EQ(steps.kernel_time_ns.size(), 6 * samples);
  ASSERT_EQ(steps.stats.kernel_median_ns.size(), 6u);
  for (std::size_t i = 0; i < samples; ++i) {
    std::int64_t sum = 0;
    for (std::size_t j = 0; j < 6; ++j) {
      EXPECT_GT(steps.kernel_time_ns[i * 6 + j], 0) << "sample " << i << " kernel " << steps.kernel_entries[j];
      sum += steps.kernel_time_ns[i * 6 + j];
    }
    EXPECT_EQ(sum, steps.time_ns[i]) << "sample " << i;
  }
  // The last kernel is the plan's own (the bundle's vector_add entry), the first the fill step.
  EXPECT_EQ(steps.kernel_entries.back(), "vector_add_f32");
  EXPECT_NE(steps.kernel_entries.front().find("fill"), std::string::npos) << steps.kernel_entries.front();
}

TEST_F(StepsSweep, AKernelThePlanDoesNotAccountForIsForeignBesideDeclaredSteps) {
  // The faults bundle's extra_stream_work kernel starts a child kernel from the device: with
  // copy and fill steps declared, the sample holds one kernel more than the plan's kernels and
  // step kernels, and the proof must say so.
  constexpr std::int64_t n = 1050624;
  const auto port = tmp.path() / "foreign";
  add_steps(pt::bundle_root() / "faults" / "vector_add", port, n);
  const auto file = run(tmp, {"--ref", (pt::bundle_root() / "faults_reference" / "vector_add").string(), "--port", port.string()},
                        one_config_suite(tmp, n), 1);
  ASSERT_EQ(file.configs.size(), 1u);
  const auto* ref = file.configs[0].find(ps::role::reference);
  const auto* port_side = file.configs[0].find(ps::role::port);
  ASSERT_TRUE(ref && port_side && !ref->runs.empty() && !port_side->runs.empty());
  EXPECT_EQ(ref->runs.front().verdicts.proof, "EXECUTED");
  EXPECT_EQ(port_side->runs.front().verdicts.proof, "FOREIGN_KERNEL");
}

TEST_F(StepsSweep, TilegymPlansWithStepsAreExecuted) {
  // The tilegym smoke export's operators whose wrappers copy through torch (attention_sink,
  // attention_sink_decode, chunk_gated_delta_rule), as reference on both sides (A/A).
  std::vector<std::string> args{"--ref"};
  for (const char* op : {"attention_sink", "attention_sink_decode", "chunk_gated_delta_rule"}) {
    const auto dir = pt::bundle_root() / "tilegym" / op;
    if (!std::filesystem::exists(dir / "manifest.json")) GTEST_SKIP() << dir << " not exported";
    args.push_back(dir.string());
  }
  args.push_back("--aa");
  const auto file = run(tmp, args, std::filesystem::path(PORTBENCH_SOURCE_DIR) / "configs" / "tilegym-smoke.json", 0);
  ASSERT_EQ(file.configs.size(), 3u);
  for (const auto& c : file.configs) {
    for (const auto& rr : c.roles) {
      ASSERT_FALSE(rr.runs.empty()) << c.info.id;
      const auto& r = rr.runs.front();
      EXPECT_EQ(r.verdicts.numerics, "PASS") << c.info.id;
      EXPECT_EQ(r.verdicts.proof, "EXECUTED") << c.info.id << " " << r.error;
      EXPECT_EQ(r.verdicts.timing, "VALID") << c.info.id;
    }
  }
}

}  // namespace
