// SPDX-License-Identifier: Apache-2.0
// Every row of the routing table and every reachable cap, through the real `portbench agent
// run` and real stage processes (tests/agent/stages/scripted.py). Each test names the rows it
// takes as "stage VERDICT -> next".
#include "agent_fixture.hpp"

namespace portbench::testing::agent {
namespace {

// analyze PASS -> translate, translate COMPILED -> ir_diff, ir_diff PASS -> verify,
// verify ALL_PASS -> benchmark, benchmark DONE -> PIPELINE_COMPLETE.
TEST_F(agent_test, HappyPathCompletes) {
  plan = {{"analyze", {"PASS"}}, {"translate", {"COMPILED"}}, {"ir_diff", {"PASS"}}, {"verify", {"ALL_PASS"}},
          {"benchmark", {"DONE"}}};
  auto r = run_job();
  EXPECT_EQ(r.rc, 0) << r.out << r.err;
  EXPECT_EQ(trail(), "analyze:PASS translate:COMPILED ir_diff:PASS verify:ALL_PASS benchmark:DONE");
  EXPECT_EQ(end(), "PIPELINE_COMPLETE");
  EXPECT_NE(r.out.find("PIPELINE_COMPLETE"), std::string::npos) << r.out;
  // The port bundle translate wrote is the one the later stages get.
  auto calls = stage_calls();
  ASSERT_EQ(calls.size(), 5u);
  EXPECT_EQ(state()["port_bundle"], (workdir / "port" / "attempt-1").string());
  // One event line per stage run, with verdict, duration and files.
  int stage_events = 0;
  for (const auto& e : events()) {
    if (e["event"] != "stage") continue;
    ++stage_events;
    EXPECT_TRUE(e["verdict"].is_string()) << e.dump();
    EXPECT_GE(e["duration_s"].get<double>(), 0.0);
    EXPECT_FALSE(e["files"].empty());
  }
  EXPECT_EQ(stage_events, 5);
}

// ir_diff PASS_WITH_NOTES -> verify.
TEST_F(agent_test, IrDiffNotesGoOnToVerify) {
  plan = {{"analyze", {"PASS"}}, {"translate", {"COMPILED"}}, {"ir_diff", {"PASS_WITH_NOTES"}},
          {"verify", {"ALL_PASS"}}, {"benchmark", {"DONE"}}};
  auto r = run_job();
  EXPECT_EQ(r.rc, 0) << r.out << r.err;
  EXPECT_EQ(trail(), "analyze:PASS translate:COMPILED ir_diff:PASS_WITH_NOTES verify:ALL_PASS benchmark:DONE");
}

// verify FAIL (kernel) -> diagnose, diagnose FIXABLE -> translate; the failing configuration
// and the diagnosis's findings reach the second translate.
TEST_F(agent_test, KernelFailureIsDiagnosedAndFedBackToTranslate) {
  plan = {{"analyze", {"PASS"}}, {"translate", {"COMPILED", "COMPILED"}}, {"ir_diff", {"PASS", "PASS"}},
          {"verify", {{{"verdict", "FAIL"}, {"fail_class", "kernel"}}, "ALL_PASS"}}, {"diagnose", {"FIXABLE"}},
          {"benchmark", {"DONE"}}};
  auto r = run_job();
  EXPECT_EQ(r.rc, 0) << r.out << r.err;
  EXPECT_EQ(trail(), "analyze:PASS translate:COMPILED ir_diff:PASS verify:FAIL/kernel diagnose:FIXABLE "
                     "translate:COMPILED ir_diff:PASS verify:ALL_PASS benchmark:DONE");
  auto calls = stage_calls();
  // diagnose (the 5th call) gets the failing configuration from verify.
  ASSERT_EQ(calls[4]["stage"], "diagnose");
  ASSERT_EQ(calls[4]["failing"].size(), 1u);
  EXPECT_EQ(calls[4]["failing"][0]["id"], "vector_add/dtype=float32,n=1024");
  EXPECT_EQ(calls[4]["failing"][0]["numerics"], "FAIL");
  // translate attempt 2 gets it with diagnose's finding.
  ASSERT_EQ(calls[5]["stage"], "translate");
  EXPECT_EQ(calls[5]["attempt"], 2);
  ASSERT_EQ(calls[5]["failing"].size(), 1u);
  EXPECT_EQ(calls[5]["failing"][0]["findings"], json::array({"TILE_SHAPE_DIFFERS"}));
  // ... and the suite of just that configuration, for a re-export of it alone.
  json failing_suite = json::parse(read_file(workdir / "failing-suite.json"));
  EXPECT_EQ(failing_suite["configs"].size(), 0u) << "the last verify passed: nothing fails any more";
}

// benchmark INVESTIGATE -> diagnose (once) -> translate; the second INVESTIGATE meets
// diagnose's cap (1): PIPELINE_STOPPED at diagnose. The ratio reaches translate.
TEST_F(agent_test, SecondInvestigateStopsAtDiagnoseCap) {
  plan = {{"analyze", {"PASS"}}, {"translate", {"COMPILED", "COMPILED"}}, {"ir_diff", {"PASS", "PASS"}},
          {"verify", {"ALL_PASS", "ALL_PASS"}}, {"benchmark", {"INVESTIGATE", "INVESTIGATE"}},
          {"diagnose", {"FIXABLE"}}};
  auto r = run_job();
  EXPECT_EQ(r.rc, 1) << r.out << r.err;
  EXPECT_EQ(trail(), "analyze:PASS translate:COMPILED ir_diff:PASS verify:ALL_PASS benchmark:INVESTIGATE "
                     "diagnose:FIXABLE translate:COMPILED ir_diff:PASS verify:ALL_PASS benchmark:INVESTIGATE");
  EXPECT_EQ(end(), "PIPELINE_STOPPED diagnose");
  EXPECT_NE(stop_reason().find("cap: diagnose has run 1 of 1"), std::string::npos) << stop_reason();
  auto calls = stage_calls();
  ASSERT_EQ(calls[6]["stage"], "translate");
  ASSERT_EQ(calls[6]["failing"].size(), 1u);
  EXPECT_DOUBLE_EQ(calls[6]["failing"][0]["ratio"].get<double>(), 0.5);
  json suite = json::parse(read_file(workdir / "failing-suite.json"));
  ASSERT_EQ(suite["configs"].size(), 1u);
  EXPECT_EQ(suite["configs"][0]["params"]["n"], 1024);
}

// verify FAIL (host) -> verify (a second verify).
TEST_F(agent_test, HostFailureVerifiesAgain) {
  plan = {{"analyze", {"PASS"}}, {"translate", {"COMPILED"}}, {"ir_diff", {"PASS"}},
          {"verify", {{{"verdict", "FAIL"}, {"fail_class", "host"}}, "ALL_PASS"}}, {"benchmark", {"DONE"}}};
  auto r = run_job();
  EXPECT_EQ(r.rc, 0) << r.out << r.err;
  EXPECT_EQ(trail(), "analyze:PASS translate:COMPILED ir_diff:PASS verify:FAIL/host verify:ALL_PASS benchmark:DONE");
}

// verify's cap (2): a third verify is refused.
TEST_F(agent_test, VerifyCapStops) {
  json host = {{"verdict", "FAIL"}, {"fail_class", "host"}};
  plan = {{"analyze", {"PASS"}}, {"translate", {"COMPILED"}}, {"ir_diff", {"PASS"}}, {"verify", {host, host, host}}};
  auto r = run_job();
  EXPECT_EQ(r.rc, 1) << r.out << r.err;
  EXPECT_EQ(trail(), "analyze:PASS translate:COMPILED ir_diff:PASS verify:FAIL/host verify:FAIL/host");
  EXPECT_EQ(end(), "PIPELINE_STOPPED verify");
  EXPECT_NE(stop_reason().find("cap: verify has run 2 of 2"), std::string::npos) << stop_reason();
}

// verify FAIL (env) -> PIPELINE_STOPPED.
TEST_F(agent_test, EnvFailureStops) {
  plan = {{"analyze", {"PASS"}}, {"translate", {"COMPILED"}}, {"ir_diff", {"PASS"}},
          {"verify", {{{"verdict", "FAIL"}, {"fail_class", "env"}}}}};
  auto r = run_job();
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(end(), "PIPELINE_STOPPED verify");
  EXPECT_NE(stop_reason().find("verify FAIL (env)"), std::string::npos) << stop_reason();
}

// verify BLOCKED -> PIPELINE_STOPPED.
TEST_F(agent_test, VerifyBlockedStops) {
  plan = {{"analyze", {"PASS"}}, {"translate", {"COMPILED"}}, {"ir_diff", {"PASS"}}, {"verify", {"BLOCKED"}}};
  auto r = run_job();
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(trail(), "analyze:PASS translate:COMPILED ir_diff:PASS verify:BLOCKED");
  EXPECT_EQ(end(), "PIPELINE_STOPPED verify");
}

// analyze FAIL_FIXABLE -> analyze, refused by analyze's cap (1).
TEST_F(agent_test, AnalyzeCapStops) {
  plan = {{"analyze", {"FAIL_FIXABLE", "PASS"}}};
  auto r = run_job();
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(trail(), "analyze:FAIL_FIXABLE");
  EXPECT_EQ(end(), "PIPELINE_STOPPED analyze");
  EXPECT_NE(stop_reason().find("cap: analyze has run 1 of 1"), std::string::npos) << stop_reason();
}

// analyze BLOCKED -> PIPELINE_STOPPED.
TEST_F(agent_test, AnalyzeBlockedStops) {
  plan = {{"analyze", {"BLOCKED"}}};
  auto r = run_job();
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(end(), "PIPELINE_STOPPED analyze");
}

// translate FAIL_COMPILE -> translate, translate FAIL_FIXABLE -> translate, refused by
// translate's cap (2).
TEST_F(agent_test, TranslateCapStops) {
  plan = {{"analyze", {"PASS"}}, {"translate", {"FAIL_COMPILE", "FAIL_FIXABLE", "COMPILED"}}};
  auto r = run_job();
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(trail(), "analyze:PASS translate:FAIL_COMPILE translate:FAIL_FIXABLE");
  EXPECT_EQ(end(), "PIPELINE_STOPPED translate");
  EXPECT_NE(stop_reason().find("cap: translate has run 2 of 2"), std::string::npos) << stop_reason();
}

// translate BLOCKED -> PIPELINE_STOPPED.
TEST_F(agent_test, TranslateBlockedStops) {
  plan = {{"analyze", {"PASS"}}, {"translate", {"BLOCKED"}}};
  auto r = run_job();
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(end(), "PIPELINE_STOPPED translate");
}

// ir_diff FAIL_FIXABLE -> translate.
TEST_F(agent_test, StructuralIrDifferenceGoesBackToTranslate) {
  plan = {{"analyze", {"PASS"}}, {"translate", {"COMPILED", "COMPILED"}}, {"ir_diff", {"FAIL_FIXABLE", "PASS"}},
          {"verify", {"ALL_PASS"}}, {"benchmark", {"DONE"}}};
  auto r = run_job();
  EXPECT_EQ(r.rc, 0) << r.out << r.err;
  EXPECT_EQ(trail(), "analyze:PASS translate:COMPILED ir_diff:FAIL_FIXABLE translate:COMPILED ir_diff:PASS "
                     "verify:ALL_PASS benchmark:DONE");
  EXPECT_EQ(state()["port_bundle"], (workdir / "port" / "attempt-2").string());
}

// ir_diff BLOCKED -> PIPELINE_STOPPED.
TEST_F(agent_test, IrDiffBlockedStops) {
  plan = {{"analyze", {"PASS"}}, {"translate", {"COMPILED"}}, {"ir_diff", {"BLOCKED"}}};
  auto r = run_job();
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(end(), "PIPELINE_STOPPED ir_diff");
}

// benchmark BLOCKED -> diagnose, diagnose ALIGNED -> PIPELINE_STOPPED.
TEST_F(agent_test, BlockedBenchmarkIsDiagnosedAlignedStops) {
  plan = {{"analyze", {"PASS"}}, {"translate", {"COMPILED"}}, {"ir_diff", {"PASS"}}, {"verify", {"ALL_PASS"}},
          {"benchmark", {"BLOCKED"}}, {"diagnose", {"ALIGNED"}}};
  auto r = run_job();
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(trail(), "analyze:PASS translate:COMPILED ir_diff:PASS verify:ALL_PASS benchmark:BLOCKED diagnose:ALIGNED");
  EXPECT_EQ(end(), "PIPELINE_STOPPED diagnose");
  EXPECT_NE(stop_reason().find("diagnose ALIGNED"), std::string::npos) << stop_reason();
}

// diagnose BLOCKED -> PIPELINE_STOPPED.
TEST_F(agent_test, DiagnoseBlockedStops) {
  plan = {{"analyze", {"PASS"}}, {"translate", {"COMPILED"}}, {"ir_diff", {"PASS"}}, {"verify", {"ALL_PASS"}},
          {"benchmark", {"INVESTIGATE"}}, {"diagnose", {"BLOCKED"}}};
  auto r = run_job();
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(end(), "PIPELINE_STOPPED diagnose");
}

}  // namespace
}  // namespace portbench::testing::agent
