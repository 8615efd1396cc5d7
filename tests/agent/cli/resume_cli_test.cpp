// SPDX-License-Identifier: Apache-2.0
// A resume after kill -9: the real `portbench agent run` is killed while benchmark runs; the
// stage it left behind is ended by `portbench agent resume`, which re-runs benchmark and
// finishes the pipeline without counting the interrupted run against the cap.
#include "agent_fixture.hpp"

namespace portbench::testing::agent {
namespace {

bool wait_for(const fs::path& file, double seconds) {
  auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < until) {
    if (fs::exists(file)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

TEST_F(agent_test, ResumeAfterKillMinus9) {
  // Benchmark attempt 1 waits to be killed; its re-run (attempt 1 again, after resume) is DONE.
  plan = {{"analyze", {"PASS"}}, {"translate", {"COMPILED"}}, {"ir_diff", {"PASS"}}, {"verify", {"ALL_PASS"}},
          {"benchmark", {{{"verdict", "DONE"}, {"behaviour", "wait_for_kill"}}}}};
  write_inputs();
  pid_t router = spawn({PORTBENCH_BIN, "agent", "run", job_file.string()}, dir, "router");
  ASSERT_GT(router, 0);
  fs::path marker = workdir / "started-benchmark.pid";
  ASSERT_TRUE(wait_for(marker, 60)) << read_file(dir / "router.out") << read_file(dir / "router.err");
  pid_t stage_pid = std::stoi(read_file(marker));
  ASSERT_EQ(::kill(router, SIGKILL), 0);
  EXPECT_EQ(wait_exit(router), 128 + SIGKILL);

  // The state on disk names the run in flight and its process group.
  json s = state();
  EXPECT_EQ(s["status"], "RUNNING");
  ASSERT_FALSE(s["current"].is_null());
  EXPECT_EQ(s["current"]["stage"], "benchmark");
  EXPECT_EQ(s["current"]["pgid"], stage_pid);
  EXPECT_TRUE(alive(stage_pid)) << "the orphaned stage should still run";
  EXPECT_EQ(trail(), "analyze:PASS translate:COMPILED ir_diff:PASS verify:ALL_PASS");

  // The plan now lets benchmark finish.
  plan["benchmark"] = {"DONE"};
  write_inputs();
  auto r = portbench({"agent", "resume", workdir.string()});
  EXPECT_EQ(r.rc, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("was interrupted (its process group, still running, was killed)"), std::string::npos) << r.out;
  for (int i = 0; i < 50 && alive(stage_pid); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(alive(stage_pid));
  EXPECT_EQ(end(), "PIPELINE_COMPLETE");
  EXPECT_EQ(trail(), "analyze:PASS translate:COMPILED ir_diff:PASS verify:ALL_PASS benchmark:DONE");
  EXPECT_EQ(state()["runs"]["benchmark"], 1);
  // Earlier stages were not run again.
  int analyze_calls = 0;
  for (const auto& c : stage_calls()) analyze_calls += c["stage"] == "analyze" ? 1 : 0;
  EXPECT_EQ(analyze_calls, 1);
  bool interrupted = false, resumed = false;
  for (const auto& e : events()) {
    interrupted = interrupted || (e["event"] == "interrupted" && e["stage"] == "benchmark" && e["killed"] == true);
    resumed = resumed || e["event"] == "resume";
  }
  EXPECT_TRUE(interrupted);
  EXPECT_TRUE(resumed);
  // A finished pipeline resumes to its end state and runs nothing.
  auto again = portbench({"agent", "resume", workdir.string()});
  EXPECT_EQ(again.rc, 0);
  EXPECT_NE(again.out.find("nothing to resume"), std::string::npos) << again.out;
}

// A second router on the same work directory is refused while the first holds it.
TEST_F(agent_test, ConcurrentResumeIsRefused) {
  plan = {{"analyze", {{{"verdict", "PASS"}, {"behaviour", "wait_for_kill"}}}}};
  write_inputs();
  pid_t router = spawn({PORTBENCH_BIN, "agent", "run", job_file.string()}, dir, "router");
  ASSERT_TRUE(wait_for(workdir / "started-analyze.pid", 60));
  pid_t stage_pid = std::stoi(read_file(workdir / "started-analyze.pid"));
  auto r = portbench({"agent", "resume", workdir.string()});
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("another `portbench agent` works in this directory now"), std::string::npos) << r.err;
  // SIGTERM ends the router cleanly: the stage's group is killed, the state stays resumable.
  ASSERT_EQ(::kill(router, SIGTERM), 0);
  EXPECT_EQ(wait_exit(router), 130);
  for (int i = 0; i < 100 && alive(stage_pid); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(alive(stage_pid));
  json s = state();
  EXPECT_EQ(s["status"], "RUNNING");
  EXPECT_TRUE(s["current"].is_null());
  EXPECT_EQ(s["next"]["stage"], "analyze");
}

}  // namespace
}  // namespace portbench::testing::agent
