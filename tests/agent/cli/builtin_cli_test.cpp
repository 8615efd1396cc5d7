// SPDX-License-Identifier: Apache-2.0
// The built-in stages as the router runs them (`portbench agent stage NAME`), over the real
// portbench binary on this machine (no GPU), and the benchmark adapter over the real output
// of `portbench report --format json`.
#include "agent_fixture.hpp"
#include "portbench/agent/adapters.hpp"
#include "portbench/agent/schema.hpp"

namespace portbench::testing::agent {
namespace {

namespace ad = portbench::agent::adapters;

json stage_output(const fs::path& workdir, const std::string& name) {
  for (const auto& e : fs::directory_iterator(workdir / "stages")) {
    std::string f = e.path().filename().string();
    if (f.find(name) != std::string::npos && f.find(".context.") == std::string::npos) return json::parse(read_file(e.path()));
  }
  return nullptr;
}

// Without a GPU the built-in verify cannot describe a device: FAIL with class env, and the
// pipeline stops there (an env failure is nothing a stage can fix).
TEST_F(agent_test, BuiltinVerifyWithoutDeviceIsAnEnvFailure) {
  plan = {{"analyze", {"PASS"}}, {"translate", {"COMPILED"}}, {"ir_diff", {"PASS"}}};
  job["stages"]["verify"] = {{"builtin", "verify"}, {"timeout_s", 120}};
  auto r = run_job();
  json out = stage_output(workdir, "004-verify");
  ASSERT_TRUE(out.is_object()) << r.out << r.err;
  if (out.value("fail_class", "") != "env") GTEST_SKIP() << "a CUDA device is present here: " << out.dump();
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(out["verdict"], "FAIL");
  EXPECT_EQ(end(), "PIPELINE_STOPPED verify");
  EXPECT_NE(stop_reason().find("verify FAIL (env)"), std::string::npos) << stop_reason();
  ASSERT_FALSE(out["commands"].empty());
  EXPECT_EQ(out["commands"][0]["argv"][1], "worker");
  EXPECT_EQ(out["commands"][0]["argv"][2], "--describe-device");
}

// The built-in analyze on a real reference bundle: it stops at analyze with BLOCKED and the
// command's one-line reason here (no GPU for the baseline run), in a valid stage output.
TEST_F(agent_test, BuiltinAnalyzeOnARealBundleSaysWhyItIsBlocked) {
  fs::path bundle = fs::path(PORTBENCH_BUNDLE_DIR) / "cutile_python" / "vector_add";
  if (!fs::exists(bundle / "manifest.json")) GTEST_SKIP() << "no exported bundles (scripts/export_bundles.sh)";
  job["reference"]["bundle"] = bundle.string();
  job["stages"]["analyze"] = {{"builtin", "analyze"}, {"timeout_s", 120}};
  auto r = run_job();
  json out = stage_output(workdir, "001-analyze");
  ASSERT_TRUE(out.is_object()) << r.out << r.err;
  if (out["verdict"] != "BLOCKED") GTEST_SKIP() << "a CUDA device is present here: " << out.dump();
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(end(), "PIPELINE_STOPPED analyze");
  EXPECT_FALSE(out["reason"].get<std::string>().empty());
  EXPECT_EQ(out["commands"][0]["argv"][1], "inspect");
  EXPECT_EQ(out["commands"][0]["argv"][2], bundle.string());
  EXPECT_EQ(portbench::agent::validate("analyze", nlohmann::ordered_json::parse(read_file(workdir / "stages" / "001-analyze.json")),
                                       workdir),
            "");
}

ad::benchmark_inputs bench_in(const ad::report_summary& r, std::vector<std::string> ids, const std::string& rule) {
  ad::benchmark_inputs in;
  in.report = r;
  in.job_ids = std::move(ids);
  in.gate = 0.95;
  in.rule = rule;
  return in;
}

// The benchmark adapter on what `portbench report --format json` prints for a results file.
class agent_report_adapter : public agent_test {
 protected:
  ad::report_summary report_of(const std::vector<std::string>& synth_args) {
    fs::path h5 = dir / "results.h5";
    std::vector<std::string> argv = {PORTBENCH_SYNTH_BIN, h5.string(), "--overwrite"};
    argv.insert(argv.end(), synth_args.begin(), synth_args.end());
    pid_t pid = spawn(argv, dir, "synth");
    EXPECT_EQ(wait_exit(pid), 0) << read_file(dir / "synth.err");
    auto r = portbench({"report", h5.string(), "--format", "json"});
    EXPECT_EQ(r.rc, 0) << r.err;
    std::ofstream(dir / "report.json") << r.out;
    return ad::read_report(json::parse(r.out));
  }
  static std::vector<std::string> ids(const ad::report_summary& r) {
    std::vector<std::string> out;
    for (const auto& c : r.configs) out.push_back(c.id);
    return out;
  }
};

TEST_F(agent_report_adapter, SlowPortIsInvestigateWithEveryConfigurationBelowTheGate) {
  auto r = report_of({"--configs", "6", "--operators", "1", "--runs", "2", "--exact", "--port-speed", "0.8",
                      "--port-speed-sd", "0.05"});
  ASSERT_EQ(r.configs.size(), 6u);
  EXPECT_EQ(r.verdict, "BELOW_GATE");
  auto out = ad::benchmark_output(bench_in(r, ids(r), "parity"));
  EXPECT_EQ(portbench::agent::validate("benchmark", out, dir), "") << out.dump();
  EXPECT_EQ(out["verdict"], "INVESTIGATE");
  EXPECT_NEAR(out["geomean"].get<double>(), 0.8, 1e-4);
  for (const auto& c : out["configs"]) {
    EXPECT_LT(c["ratio"].get<double>(), 0.95);
    EXPECT_EQ(c["numerics"], "PASS");
    EXPECT_EQ(c["proof"], "EXECUTED");
  }
}

TEST_F(agent_report_adapter, FastPortIsDone) {
  auto r = report_of({"--configs", "6", "--operators", "1", "--runs", "4", "--exact", "--port-speed", "1.2",
                      "--port-speed-sd", "0.02"});
  auto out = ad::benchmark_output(bench_in(r, ids(r), "parity"));
  EXPECT_EQ(r.verdict, "PARITY");
  EXPECT_EQ(out["verdict"], "DONE") << out.dump();
  // A configuration of the job that the results lack is a failure, not a pass.
  auto job_ids = ids(r);
  job_ids.push_back("vector_add/dtype=float32,n=7");
  auto missing = ad::benchmark_output(bench_in(r, job_ids, "parity"));
  EXPECT_EQ(missing["verdict"], "INVESTIGATE");
  EXPECT_TRUE(missing["configs"].back()["ratio"].is_null());
}

TEST_F(agent_report_adapter, FailedNumericsAreNotDoneUnderEitherRule) {
  auto r = report_of({"--configs", "4", "--operators", "1", "--runs", "2", "--exact", "--port-speed", "1.2",
                      "--numerics", "FAIL"});
  for (const char* rule : {"parity", "geomean"}) {
    auto out = ad::benchmark_output(bench_in(r, ids(r), rule));
    EXPECT_EQ(out["verdict"], "INVESTIGATE") << rule << " " << out.dump();
    EXPECT_EQ(out["configs"][0]["numerics"], "FAIL");
  }
}

}  // namespace
}  // namespace portbench::testing::agent
