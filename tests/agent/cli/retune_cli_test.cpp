// SPDX-License-Identifier: Apache-2.0
// translate's built-in retune in a pipeline: the failing configuration benchmark reports is
// re-exported alone once per tuning candidate by a real exporter, each candidate is timed, the
// fastest that passes is kept, and the whole port is exported with it. Timing needs a GPU, so
// the job's `portbench` is tests/agent/stages/fake_portbench.py, which answers `run` and
// `report` with ratios that depend on the tile in the candidate bundle's manifest; the
// exporters, manifests, tuning records and choices are real.
#include "agent_fixture.hpp"

namespace portbench::testing::agent {
namespace {

const fs::path k_source = PORTBENCH_SOURCE_DIR;

class agent_retune : public agent_test {
 protected:
  const std::string slow_id = "rms_norm/dtype=float16,m=256,n=1024";
  const std::string fine_id = "rms_norm/dtype=float16,m=512,n=1024";

  void SetUp() override {
    agent_test::SetUp();
    job["operator"] = "rms_norm";
    job["configs"] = {{{"params", {{"m", 256}, {"n", 1024}, {"dtype", "float16"}}}},
                      {{"params", {{"m", 512}, {"n", 1024}, {"dtype", "float16"}}}}};
    job["portbench"] = (k_tests / "stages" / "fake_portbench.py").string();
    job["env"] = {{"set", {{"PATH", "/usr/bin:/bin"}, {"CUDA_VISIBLE_DEVICES", ""},
                           {"PYTHONPATH", (k_source / "kernels" / "export").string()},
                           {"FAKE_PORTBENCH_LOG", (dir / "fake.jsonl").string()}}}};
    // benchmark 1: the first configuration at 0.5; after the retune everything is at the gate.
    plan = {{"analyze", {"PASS"}}, {"ir_diff", {"PASS", "PASS"}}, {"verify", {"ALL_PASS", "ALL_PASS"}},
            {"benchmark", {{{"verdict", "INVESTIGATE"}, {"ratios", {0.5, 1.0}}}, "DONE"}}, {"diagnose", {"FIXABLE"}}};
  }

  json translate_output(int attempt) const {
    int seen = 0;
    json s = state();
    for (const auto& h : s["history"]) {
      if (h["stage"] == "translate" && ++seen == attempt) return json::parse(read_file(workdir / h["output"].get<std::string>()));
    }
    return nullptr;
  }

  static json plan_of(const fs::path& bundle, const json& params) {
    json manifest = json::parse(read_file(bundle / "manifest.json"));
    for (const auto& c : manifest["configs"]) {
      if (c["params"] == params) return c;
    }
    return nullptr;
  }
};

TEST_F(agent_retune, JobOverridesWithTheCutilePythonExporter) {
  fs::path python = k_source / ".venv" / "bin" / "python";
  if (!fs::exists(python)) GTEST_SKIP() << "no .venv (scripts/setup.sh): the cuTile Python exporter cannot run";
  job["port"]["exporter"] = {python.string(), "-m", "portbench_export.cutile_python", "--suite", "{suite}", "--out", "{out}"};
  job["stages"]["translate"] = {{"builtin", "retune"}, {"timeout_s", 600},
                                {"overrides", {{"t256", {{"tile", 256}}}, {"t512", {{"tile", 512}}}}}};
  job["env"]["set"]["FAKE_RATIOS"] = R"({"256": 0.6, "512": 1.2, "default": 0.7})";
  auto r = run_job();
  EXPECT_EQ(r.rc, 0) << r.out << r.err;
  EXPECT_EQ(trail(), "analyze:PASS translate:COMPILED ir_diff:PASS verify:ALL_PASS benchmark:INVESTIGATE "
                     "diagnose:FIXABLE translate:COMPILED ir_diff:PASS verify:ALL_PASS benchmark:DONE");
  // First translate: nothing failed yet, the port exported as it is.
  json first = translate_output(1);
  EXPECT_TRUE(first["changed"].empty()) << first.dump();
  // Second: the failing configuration, re-exported alone per candidate, took the fastest.
  json second = translate_output(2);
  ASSERT_EQ(second["changed"].size(), 1u) << second.dump(1);
  EXPECT_EQ(second["changed"][0]["id"], slow_id);
  EXPECT_EQ(second["changed"][0]["variant"], "override t512");
  EXPECT_DOUBLE_EQ(second["changed"][0]["ratio_before"].get<double>(), 0.7);
  EXPECT_DOUBLE_EQ(second["changed"][0]["ratio_after"].get<double>(), 1.2);
  fs::path scratch = workdir / "translate" / std::to_string(second.value("seq", 0));
  for (const auto& e : fs::directory_iterator(workdir / "translate")) {
    if (!e.is_directory()) continue;
    if (fs::exists(e.path() / "override-t512")) scratch = e.path();
  }
  ASSERT_TRUE(fs::exists(scratch / "override-t512" / "rms_norm" / "manifest.json")) << scratch;
  json candidate = json::parse(read_file(scratch / "override-t512" / "rms_norm" / "manifest.json"));
  EXPECT_EQ(candidate["configs"].size(), 1u) << "a candidate re-exports only the failing configuration";
  // The port the later stages get: the chosen tile for the slow configuration, the
  // exporter's own for the other.
  fs::path port = state()["port_bundle"].get<std::string>();
  EXPECT_EQ(plan_of(port, {{"m", 256}, {"n", 1024}, {"dtype", "float16"}})["tuning"]["tile_n"], 512);
  EXPECT_EQ(plan_of(port, {{"m", 512}, {"n", 1024}, {"dtype", "float16"}})["tuning"]["tile_n"], 1024);
  json choices = json::parse(read_file(workdir / "translate" / "choices.json"));
  EXPECT_EQ(choices["configs"][slow_id]["name"], "t512");
  EXPECT_FALSE(choices["configs"].contains(fine_id));
  // Timing went through `portbench run` + `report --format json` per candidate and the current.
  int runs = 0;
  for (const auto& call : read_lines(dir / "fake.jsonl")) runs += call[0] == "run" ? 1 : 0;
  EXPECT_EQ(runs, 3);
}

TEST_F(agent_retune, ManifestVariantsSelectedThroughATuningRecord) {
  job["port"]["exporter"] = {PORTBENCH_PYTHON3, (k_tests / "stages" / "variant_exporter.py").string(), "--suite",
                             "{suite}", "--out", "{out}", "--tuning", "{tuning}"};
  job["stages"]["translate"] = {{"builtin", "retune"}, {"timeout_s", 600}};
  job["env"]["set"]["FAKE_RATIOS"] = R"({"256": 0.6, "512": 1.3, "1024": 0.7, "default": 0.1})";
  auto r = run_job();
  EXPECT_EQ(r.rc, 0) << r.out << r.err;
  json second = translate_output(2);
  ASSERT_EQ(second["changed"].size(), 1u) << second.dump(1);
  EXPECT_EQ(second["changed"][0]["variant"], "variant t512");
  fs::path port = state()["port_bundle"].get<std::string>();
  json chosen = plan_of(port, {{"m", 256}, {"n", 1024}, {"dtype", "float16"}});
  EXPECT_EQ(chosen["tuning"]["variant"], "t512");
  EXPECT_EQ(chosen["tuning"]["tuning_source"].get<std::string>().rfind("record ", 0), 0u) << chosen.dump();
  EXPECT_EQ(plan_of(port, {{"m", 512}, {"n", 1024}, {"dtype", "float16"}})["tuning"]["variant"], "t1024");
}

TEST_F(agent_retune, NoFasterCandidateIsBlocked) {
  job["port"]["exporter"] = {PORTBENCH_PYTHON3, (k_tests / "stages" / "variant_exporter.py").string(), "--suite",
                             "{suite}", "--out", "{out}", "--tuning", "{tuning}"};
  job["stages"]["translate"] = {{"builtin", "retune"}, {"timeout_s", 600}};
  job["env"]["set"]["FAKE_RATIOS"] = R"({"256": 0.6, "512": 0.65, "1024": 0.7, "default": 0.1})";
  auto r = run_job();
  EXPECT_EQ(r.rc, 1) << r.out << r.err;
  EXPECT_EQ(end(), "PIPELINE_STOPPED translate");
  EXPECT_NE(stop_reason().find("translate BLOCKED"), std::string::npos) << stop_reason();
  EXPECT_NE(translate_output(2)["reason"].get<std::string>().find("no candidate is faster"), std::string::npos);
}

TEST_F(agent_retune, ExporterFailureIsFailCompile) {
  job["port"]["exporter"] = {PORTBENCH_PYTHON3, (k_tests / "stages" / "variant_exporter.py").string(), "--no-such-flag"};
  job["stages"]["translate"] = {{"builtin", "retune"}, {"timeout_s", 600}};
  job["env"]["set"]["FAKE_RATIOS"] = R"({"default": 1.0})";
  auto r = run_job();
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(trail(), "analyze:PASS translate:FAIL_COMPILE translate:FAIL_COMPILE");
  EXPECT_EQ(end(), "PIPELINE_STOPPED translate");
}

}  // namespace
}  // namespace portbench::testing::agent

namespace portbench::testing::agent {
namespace {

// scripts/agent_translate.py around a coding agent's command line: the agent gets the failing
// configurations and findings in its prompt; the wrapper exports and writes the verdict.
TEST_F(agent_retune, CodingAgentWrapperGetsTheFailuresAndExports) {
  job["port"]["exporter"] = {PORTBENCH_PYTHON3, (k_tests / "stages" / "variant_exporter.py").string(), "--suite",
                             "{suite}", "--out", "{out}", "--tuning", "{tuning}"};
  job["stages"]["translate"] = {{"argv", {PORTBENCH_PYTHON3, (k_source / "scripts" / "agent_translate.py").string(),
                                          PORTBENCH_PYTHON3, "{root}/stages/fake_coding_agent.py", "{prompt_file}"}},
                                {"timeout_s", 120}};
  plan["verify"] = {{{"verdict", "FAIL"}, {"fail_class", "kernel"}}, "ALL_PASS"};
  plan["benchmark"] = {"DONE"};
  auto r = run_job();
  EXPECT_EQ(r.rc, 0) << r.out << r.err;
  EXPECT_EQ(trail(), "analyze:PASS translate:COMPILED ir_diff:PASS verify:FAIL/kernel diagnose:FIXABLE "
                     "translate:COMPILED ir_diff:PASS verify:ALL_PASS benchmark:DONE");
  std::string prompts = read_file(workdir / "agent-prompts.txt");
  auto second = prompts.find("----", prompts.find("----") + 4) == std::string::npos
                    ? std::string()
                    : prompts.substr(prompts.find("----") + 5);
  EXPECT_NE(prompts.find("No configuration has failed yet"), std::string::npos) << prompts;
  EXPECT_NE(second.find(slow_id + ": numerics FAIL"), std::string::npos) << second;
  EXPECT_NE(second.find("finding TILE_SHAPE_DIFFERS"), std::string::npos) << second;
  fs::path port = state()["port_bundle"].get<std::string>();
  EXPECT_EQ(port.filename(), "rms_norm");
  EXPECT_EQ(json::parse(read_file(port / "manifest.json"))["configs"].size(), 2u);
}

TEST_F(agent_retune, CodingAgentThatFailsIsFailFixable) {
  job["port"]["exporter"] = {PORTBENCH_PYTHON3, (k_tests / "stages" / "variant_exporter.py").string(), "--suite",
                             "{suite}", "--out", "{out}"};
  job["stages"]["translate"] = {{"argv", {PORTBENCH_PYTHON3, (k_source / "scripts" / "agent_translate.py").string(),
                                          PORTBENCH_PYTHON3, "{root}/stages/fake_coding_agent.py", "{prompt_file}"}}};
  job["env"]["set"]["FAKE_AGENT_EXIT"] = "4";
  auto r = run_job();
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(trail(), "analyze:PASS translate:FAIL_FIXABLE translate:FAIL_FIXABLE");
}

}  // namespace
}  // namespace portbench::testing::agent
