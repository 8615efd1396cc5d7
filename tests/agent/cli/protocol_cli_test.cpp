// SPDX-License-Identifier: Apache-2.0
// Stages that misbehave: hang, exit nonzero, write prose or no output or a verdict that is
// not first, name a path outside the work directory; the stage environment; bad job files.
#include <cstdlib>

#include "agent_fixture.hpp"
#include "portbench/agent/job.hpp"

namespace portbench::testing::agent {
namespace {

const json k_to_verify = {{"analyze", {"PASS"}}, {"translate", {"COMPILED"}}, {"ir_diff", {"PASS"}}};

TEST_F(agent_test, HangingStageIsKilledWithItsGroupAtTheTimeout) {
  plan = k_to_verify;
  plan["verify"] = {{{"verdict", "ALL_PASS"}, {"behaviour", "hang"}}};
  job["stages"]["verify"]["timeout_s"] = 5;   // room for python to start on a loaded machine
  auto t0 = std::chrono::steady_clock::now();
  auto r = run_job();
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(r.rc, 1) << r.out << r.err;
  EXPECT_LT(seconds, 30) << "the 300 s sleep was not cut short";
  EXPECT_EQ(end(), "PIPELINE_STOPPED verify");
  EXPECT_NE(stop_reason().find("timeout after"), std::string::npos) << stop_reason();
  // The stage's own child (same process group) is gone too.
  ASSERT_TRUE(fs::exists(workdir / "hang-child.pid")) << "the stage did not start its child within the timeout";
  pid_t grandchild = std::stoi(read_file(workdir / "hang-child.pid"));
  for (int i = 0; i < 50 && alive(grandchild); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(alive(grandchild)) << "pid " << grandchild;
  EXPECT_EQ(state()["history"].back()["verdict"], "BLOCKED");
}

TEST_F(agent_test, NonzeroExitStops) {
  plan = k_to_verify;
  plan["verify"] = {{{"verdict", "ALL_PASS"}, {"exit", 3}}};
  auto r = run_job();
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(end(), "PIPELINE_STOPPED verify");
  EXPECT_NE(stop_reason().find("exit 3"), std::string::npos) << stop_reason();
}

// Prose instead of the schema: one repair run (told the problem), which writes the schema.
TEST_F(agent_test, ProseGetsOneRepair) {
  plan = k_to_verify;
  plan["verify"] = {{{"verdict", "ALL_PASS"}, {"behaviour", "prose"}, {"repair", "ALL_PASS"}}};
  plan["benchmark"] = {"DONE"};
  auto r = run_job();
  EXPECT_EQ(r.rc, 0) << r.out << r.err;
  EXPECT_EQ(trail(), "analyze:PASS translate:COMPILED ir_diff:PASS verify:- verify(repair):ALL_PASS benchmark:DONE");
  auto calls = stage_calls();
  ASSERT_EQ(calls[4]["stage"], "verify");
  EXPECT_NE(calls[4]["repair"].get<std::string>().find("not JSON"), std::string::npos) << calls[4].dump();
  // The repair run does not count against verify's cap.
  EXPECT_EQ(state()["runs"]["verify"], 1);
}

TEST_F(agent_test, ProseTwiceIsBlocked) {
  plan = k_to_verify;
  plan["verify"] = {{{"verdict", "ALL_PASS"}, {"behaviour", "prose"}}};
  auto r = run_job();
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(trail(), "analyze:PASS translate:COMPILED ir_diff:PASS verify:- verify(repair):BLOCKED");
  EXPECT_EQ(end(), "PIPELINE_STOPPED verify");
  EXPECT_NE(stop_reason().find("output invalid after its one repair"), std::string::npos) << stop_reason();
  EXPECT_NE(stop_reason().find("not JSON"), std::string::npos) << stop_reason();
}

TEST_F(agent_test, MissingOutputIsRepairedOnce) {
  plan = {{"analyze", {{{"verdict", "PASS"}, {"behaviour", "missing"}}}}};
  auto r = run_job();
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(trail(), "analyze:- analyze(repair):BLOCKED");
  EXPECT_NE(stop_reason().find("no output file"), std::string::npos) << stop_reason();
}

TEST_F(agent_test, VerdictMustBeTheFirstField) {
  plan = {{"analyze", {{{"verdict", "PASS"}, {"behaviour", "not_first"}}}}};
  auto r = run_job();
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(stop_reason().find("first field is 'stage', not 'verdict'"), std::string::npos) << stop_reason();
}

TEST_F(agent_test, PathOutsideTheWorkDirectoryIsRefused) {
  plan = {{"analyze", {{{"verdict", "PASS"}, {"behaviour", "outside"}}}}};
  auto r = run_job();
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(trail(), "analyze:- analyze(repair):BLOCKED");
  EXPECT_NE(stop_reason().find("files[0]: '../outside.txt' leaves the work directory"), std::string::npos)
      << stop_reason();
}

TEST_F(agent_test, SymlinkOutOfTheWorkDirectoryIsRefused) {
  plan = {{"analyze", {{{"verdict", "PASS"}, {"behaviour", "symlink_out"}}}}};
  auto r = run_job();
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(stop_reason().find("'escape/passwd' leaves the work directory"), std::string::npos) << stop_reason();
}

// Stages get the whitelisted names, the job's fixed values and PORTBENCH_AGENT_*, nothing else;
// they run in the work directory, their argv with placeholders expanded.
TEST_F(agent_test, StageEnvironmentIsTheWhitelist) {
  ::setenv("PORTBENCH_TEST_SECRET", "must-not-leak", 1);
  ::setenv("PORTBENCH_TEST_PASSED", "yes", 1);
  job["env"] = {{"pass", {"PORTBENCH_TEST_PASSED"}}, {"set", {{"FIXED_VALUE", "1"}}}};
  job["stages"]["analyze"]["argv"].push_back("--out={output}");
  plan = {{"analyze", {"BLOCKED"}}};
  auto r = run_job();
  ::unsetenv("PORTBENCH_TEST_SECRET");
  ::unsetenv("PORTBENCH_TEST_PASSED");
  auto calls = stage_calls();
  ASSERT_EQ(calls.size(), 1u) << r.out << r.err;
  auto names = calls[0]["env"].get<std::vector<std::string>>();
  auto has = [&](const std::string& n) { return std::find(names.begin(), names.end(), n) != names.end(); };
  EXPECT_FALSE(has("PORTBENCH_TEST_SECRET"));
  EXPECT_TRUE(has("PORTBENCH_TEST_PASSED"));
  EXPECT_TRUE(has("FIXED_VALUE"));
  EXPECT_TRUE(has("PATH"));
  for (const char* n : {"PORTBENCH_AGENT_OUTPUT", "PORTBENCH_AGENT_FAILING", "PORTBENCH_AGENT_FAILING_SUITE",
                        "PORTBENCH_AGENT_CONTEXT", "PORTBENCH_AGENT_WORKDIR", "PORTBENCH_AGENT_PORT_BUNDLE"}) {
    EXPECT_TRUE(has(n)) << n;
  }
  for (const auto& n : names) {
    const auto& defaults = portbench::agent::default_env_pass();
    bool allowed = n.rfind("PORTBENCH_AGENT_", 0) == 0 || n == "PORTBENCH_TEST_PASSED" || n == "FIXED_VALUE" ||
                   std::find(defaults.begin(), defaults.end(), n) != defaults.end() ||
                   n == "PWD" || n == "SHLVL" || n == "_" || n == "LC_CTYPE";   // what python and sh add
    EXPECT_TRUE(allowed) << n << " reached the stage";
  }
  EXPECT_EQ(fs::path(calls[0]["cwd"].get<std::string>()), workdir);
  EXPECT_EQ(calls[0]["argv"].back(), "--out=" + (workdir / "stages" / "001-analyze.json").string());
}

TEST_F(agent_test, ExistingWorkDirectoryIsNotOverwritten) {
  plan = {{"analyze", {"BLOCKED"}}};
  ASSERT_EQ(run_job().rc, 1);
  auto again = portbench({"agent", "run", job_file.string()});
  EXPECT_EQ(again.rc, 2);
  EXPECT_NE(again.err.find("holds a pipeline already"), std::string::npos) << again.err;
  auto overwritten = portbench({"agent", "run", job_file.string(), "--overwrite"});
  EXPECT_EQ(overwritten.rc, 1) << overwritten.err;
  EXPECT_EQ(state()["history"].size(), 1u);
}

TEST_F(agent_test, StatusShowsRunsAndWhereItStopped) {
  plan = {{"analyze", {"PASS"}}, {"translate", {"BLOCKED"}}};
  ASSERT_EQ(run_job().rc, 1);
  auto r = portbench({"agent", "status", workdir.string()});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("analyze"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("PIPELINE_STOPPED at translate"), std::string::npos) << r.out;
  auto j = portbench({"agent", "status", workdir.string(), "--format", "json"});
  EXPECT_EQ(json::parse(j.out)["status"], "PIPELINE_STOPPED");
  auto missing = portbench({"agent", "status", (dir / "nowhere").string()});
  EXPECT_EQ(missing.rc, 2);
  EXPECT_NE(missing.err.find("no pipeline state here"), std::string::npos) << missing.err;
}

TEST_F(agent_test, BadJobFilesAreOneLineErrors) {
  struct bad {
    std::function<void(json&)> change;
    std::string message;
  };
  std::vector<bad> cases = {
      {[](json& j) { j["stages"].erase("translate"); }, "stages.translate: missing"},
      {[](json& j) { j["stages"]["verify"] = {{"argv", "python3 verify.py"}}; }, "stages.verify.argv: must be a non-empty array"},
      {[](json& j) { j["stages"]["verify"]["timeout"] = 5; }, "stages.verify.timeout: unknown field"},
      {[](json& j) { j["schema"] = "portbench.agent-job/2"; }, "schema: 'portbench.agent-job/2' is not portbench.agent-job/1"},
      {[](json& j) { j["stages"]["verify"] = {{"builtin", "retune"}}; }, "stages.verify.builtin: 'retune' is not a built-in"},
      {[](json& j) { j["stages"]["translate"] = {{"builtin", "retune"}}; }, "port.exporter: missing"},
      {[](json& j) { j["reference"]["bundle"] = "/nonexistent/ref"; }, "reference.bundle: /nonexistent/ref: no such folder"},
  };
  for (const auto& c : cases) {
    json saved = job;
    c.change(job);
    write_inputs();
    auto r = portbench({"agent", "run", job_file.string()});
    EXPECT_EQ(r.rc, 2) << c.message;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find(job_file.string() + ": " + c.message), std::string::npos) << r.err;
    job = saved;
  }
}

}  // namespace
}  // namespace portbench::testing::agent
