// SPDX-License-Identifier: Apache-2.0
// The failing-configurations file: what verify, benchmark and diagnose put in it.
#include <gtest/gtest.h>

#include "portbench/agent/failing.hpp"

namespace portbench::agent {
namespace {

using json = nlohmann::json;
using ojson = nlohmann::ordered_json;

const config_index k_index = {
    {"op/n=1", "op", {{"n", 1}}, {{"op", "op"}, {"params", {{"n", 1}}}}},
    {"op/n=2", "op", {{"n", 2}}, {{"op", "op"}, {"params", {{"n", 2}}}, {"tuning", {{"tile", 64}}}}},
};

TEST(AgentFailing, VerifyFailuresWithTheirErrors) {
  auto out = ojson::parse(R"({"verdict":"FAIL","stage":"verify","fail_class":"kernel","configs":[
      {"id":"op/n=1","numerics":"PASS","proof":"EXECUTED"},
      {"id":"op/n=2","numerics":"FAIL","proof":"EXECUTED","max_abs_err":0.5,"max_rel_err":0.25,"error":"3 bad"}]})");
  json f = failing_from_verify(out, 4, k_index);
  ASSERT_EQ(f["configs"].size(), 1u);
  const json& e = f["configs"][0];
  EXPECT_EQ(e["id"], "op/n=2");
  EXPECT_EQ(e["params"]["n"], 2);
  EXPECT_EQ(e["numerics"], "FAIL");
  EXPECT_DOUBLE_EQ(e["numerics_error"]["max_abs_err"].get<double>(), 0.5);
  EXPECT_EQ(e["numerics_error"]["error"], "3 bad");
  EXPECT_EQ(e["proof"], "EXECUTED");
  EXPECT_TRUE(e["ratio"].is_null());
  EXPECT_EQ(f["updated_by"]["seq"], 4);
  EXPECT_EQ(f["fail_class"], "kernel");
  // The suite of just those keeps the suite entry as written (its tuning too).
  json suite = failing_suite(f, k_index, "x");
  ASSERT_EQ(suite["configs"].size(), 1u);
  EXPECT_EQ(suite["configs"][0]["tuning"]["tile"], 64);
}

TEST(AgentFailing, BenchmarkBelowTheGateOrWithoutARatio) {
  auto out = ojson::parse(R"({"verdict":"INVESTIGATE","stage":"benchmark","gate":0.95,"geomean":0.6,"results":"benchmark/5/results.h5","configs":[
      {"id":"op/n=1","ratio":0.96,"numerics":"PASS","proof":"EXECUTED"},
      {"id":"op/n=2","ratio":0.40,"reference_ns":100.0,"port_ns":250.0,"numerics":"PASS","proof":"EXECUTED"},
      {"id":"op/n=3","ratio":null,"numerics":"NOT_RUN","proof":"NOT_CHECKED"}]})");
  json f = failing_from_benchmark(out, 7, 0.95, k_index);
  ASSERT_EQ(f["configs"].size(), 2u);
  EXPECT_EQ(f["configs"][0]["id"], "op/n=2");
  EXPECT_DOUBLE_EQ(f["configs"][0]["ratio"].get<double>(), 0.40);
  EXPECT_DOUBLE_EQ(f["configs"][0]["port_ns"].get<double>(), 250.0);
  EXPECT_EQ(f["configs"][1]["id"], "op/n=3");
  EXPECT_FALSE(f["configs"][1].contains("params")) << "not a configuration of the job";
  EXPECT_EQ(f["results"], "benchmark/5/results.h5");
  // A passing configuration below the gate at 0.96 under a stricter gate.
  EXPECT_EQ(failing_from_benchmark(out, 7, 0.97, k_index)["configs"].size(), 3u);
}

TEST(AgentFailing, DiagnoseFindingsGoToTheEntriesTheyName) {
  auto bench = ojson::parse(R"({"verdict":"INVESTIGATE","stage":"benchmark","gate":0.95,"geomean":0.6,"configs":[
      {"id":"op/n=1","ratio":0.5,"numerics":"PASS","proof":"EXECUTED"},
      {"id":"op/n=2","ratio":0.4,"numerics":"PASS","proof":"EXECUTED"}]})");
  json f = failing_from_benchmark(bench, 1, 0.95, k_index);
  add_findings(f, ojson::parse(R"({"verdict":"FIXABLE","stage":"diagnose","findings":[
      {"config":"op/n=2","tag":"FEWER_WAVES","evidence":"1.9 waves"},{"tag":"BELOW_ROOFLINE","evidence":"41%"}]})"), 2);
  EXPECT_EQ(f["configs"][0]["findings"].size(), 1u);
  EXPECT_EQ(f["configs"][0]["findings"][0]["tag"], "BELOW_ROOFLINE");
  ASSERT_EQ(f["configs"][1]["findings"].size(), 2u);
  EXPECT_EQ(f["configs"][1]["findings"][0]["tag"], "FEWER_WAVES");
  EXPECT_EQ(f["configs"][1]["findings"][0]["evidence"], "1.9 waves");
}

}  // namespace
}  // namespace portbench::agent
