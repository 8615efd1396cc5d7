// SPDX-License-Identifier: Apache-2.0
// Stage output validation: what passes and every way an output is refused.
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "portbench/agent/paths.hpp"
#include "portbench/agent/schema.hpp"

namespace portbench::agent {
namespace {

namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

class AgentSchema : public ::testing::Test {
 protected:
  fs::path work;
  void SetUp() override {
    work = fs::temp_directory_path() / ("portbench_agent_schema_" + std::to_string(::getpid()));
    fs::create_directories(work / "bundle");
    std::ofstream(work / "bundle" / "manifest.json") << "{}";
    std::ofstream(work / "notes.txt") << "x";
  }
  void TearDown() override { fs::remove_all(work); }
  std::string check(const char* stage_name, const char* text) { return validate(stage_name, ojson::parse(text), work); }
};

TEST_F(AgentSchema, ValidOutputsOfEveryStage) {
  EXPECT_EQ(check("analyze", R"({"verdict":"PASS","stage":"analyze","configs":[{"id":"a","reference_ns":12.5,"numerics":"PASS","proof":"EXECUTED"}]})"), "");
  EXPECT_EQ(check("translate", R"({"verdict":"COMPILED","stage":"translate","bundle":"bundle","files":["notes.txt"]})"), "");
  EXPECT_EQ(check("translate", R"({"verdict":"FAIL_COMPILE","stage":"translate","reason":"error[E0308]"})"), "");
  EXPECT_EQ(check("ir_diff", R"({"verdict":"PASS_WITH_NOTES","stage":"ir_diff","configs":[{"id":"a","verdict":"PASS_WITH_NOTES","differences":[{"kind":"HINT"}]}]})"), "");
  EXPECT_EQ(check("verify", R"({"verdict":"ALL_PASS","stage":"verify","configs":[{"id":"a","numerics":"PASS","proof":"EXECUTED","max_abs_err":null}]})"), "");
  EXPECT_EQ(check("verify", R"({"verdict":"FAIL","stage":"verify","fail_class":"kernel","configs":[{"id":"a","numerics":"FAIL","proof":"EXECUTED"}]})"), "");
  EXPECT_EQ(check("verify", R"({"verdict":"FAIL","stage":"verify","fail_class":"env","configs":[],"reason":"no GPU"})"), "");
  EXPECT_EQ(check("benchmark", R"({"verdict":"INVESTIGATE","stage":"benchmark","gate":0.95,"geomean":0.4,"configs":[{"id":"a","ratio":null}]})"), "");
  EXPECT_EQ(check("diagnose", R"({"verdict":"FIXABLE","stage":"diagnose","findings":[{"config":"a","tag":"FEWER_WAVES","evidence":"1.9 waves"}]})"), "");
  EXPECT_EQ(check("diagnose", R"({"verdict":"ALIGNED","stage":"diagnose","findings":[]})"), "");
}

TEST_F(AgentSchema, RefusedOutputs) {
  EXPECT_EQ(check("verify", R"({"stage":"verify","verdict":"ALL_PASS","configs":[]})"), "first field is 'stage', not 'verdict'");
  EXPECT_EQ(check("verify", R"({"verdict":"PASSED","stage":"verify","configs":[]})"), "verdict: 'PASSED' is not one of ALL_PASS|FAIL|BLOCKED");
  EXPECT_EQ(check("verify", R"({"verdict":true,"stage":"verify"})"), "verdict: must be a string");
  EXPECT_EQ(check("verify", R"({"verdict":"ALL_PASS","stage":"benchmark","configs":[]})"), "stage: must be \"verify\"");
  EXPECT_EQ(check("verify", R"({"verdict":"FAIL","stage":"verify","configs":[{"id":"a","numerics":"FAIL","proof":"EXECUTED"}]})"),
            "fail_class: missing (required with FAIL)");
  EXPECT_EQ(check("verify", R"({"verdict":"FAIL","stage":"verify","fail_class":"gpu","configs":[]})"),
            "fail_class: 'gpu' is not one of host|kernel|env");
  EXPECT_EQ(check("verify", R"({"verdict":"ALL_PASS","stage":"verify","configs":[]})"),
            "configs: ALL_PASS with no configuration checked (nothing checked is never a pass)");
  EXPECT_EQ(check("verify", R"({"verdict":"ALL_PASS","stage":"verify","configs":[{"id":"a","numerics":"FAIL","proof":"EXECUTED"}]})"),
            "configs: ALL_PASS but a has numerics FAIL, proof EXECUTED");
  EXPECT_EQ(check("verify", R"({"verdict":"FAIL","stage":"verify","fail_class":"kernel","configs":[{"id":"a","numerics":"PASS","proof":"EXECUTED"}]})"),
            "configs: FAIL (kernel) but no configuration fails");
  EXPECT_EQ(check("verify", R"({"verdict":"ALL_PASS","stage":"verify","configs":[{"id":"a","numerics":"PASS"}]})"),
            "configs[0].proof: missing");
  EXPECT_EQ(check("translate", R"({"verdict":"COMPILED","stage":"translate"})"), "bundle: missing (required with COMPILED)");
  EXPECT_EQ(check("translate", R"({"verdict":"COMPILED","stage":"translate","bundle":"notes.txt"})"),
            "bundle: 'notes.txt' holds no manifest.json");
  EXPECT_EQ(check("translate", R"({"verdict":"BLOCKED","stage":"translate"})"), "reason: missing (required with BLOCKED)");
  EXPECT_EQ(check("benchmark", R"({"verdict":"DONE","stage":"benchmark","gate":0.95,"geomean":"fast","configs":[]})"),
            "geomean: must be a number");
  EXPECT_EQ(check("diagnose", R"({"verdict":"FIXABLE","stage":"diagnose","findings":[]})"), "findings: FIXABLE names no finding");
  EXPECT_EQ(check("analyze", R"(["PASS"])"), "not a JSON object");
}

TEST_F(AgentSchema, PathsMayNotLeaveTheWorkDirectory) {
  EXPECT_EQ(check("translate", R"({"verdict":"FAIL_FIXABLE","stage":"translate","files":["notes.txt","./bundle/../notes.txt"]})"), "");
  std::string abs_inside = (work / "notes.txt").string();
  EXPECT_EQ(validate("translate", ojson{{"verdict", "FAIL_FIXABLE"}, {"stage", "translate"}, {"files", {abs_inside}}}, work), "");
  EXPECT_NE(check("translate", R"({"verdict":"FAIL_FIXABLE","stage":"translate","files":["../x"]})").find("leaves the work directory"), std::string::npos);
  EXPECT_NE(check("translate", R"({"verdict":"FAIL_FIXABLE","stage":"translate","files":["/etc/passwd"]})").find("leaves the work directory"), std::string::npos);
  EXPECT_NE(check("translate", R"({"verdict":"FAIL_FIXABLE","stage":"translate","files":["bundle/../../x"]})").find("leaves the work directory"), std::string::npos);
  fs::create_directory_symlink("/etc", work / "link");
  EXPECT_NE(check("translate", R"({"verdict":"FAIL_FIXABLE","stage":"translate","files":["link/passwd"]})").find("leaves the work directory"), std::string::npos);
  EXPECT_EQ(check("translate", R"({"verdict":"FAIL_FIXABLE","stage":"translate","files":["gone.txt"]})"),
            "files[0]: 'gone.txt' does not exist");
  // A sibling whose name starts like the work directory is outside it.
  fs::path sibling = work.string() + "-other";
  fs::create_directories(sibling);
  EXPECT_FALSE(resolve_inside(work, sibling.string()).has_value());
  fs::remove_all(sibling);
  EXPECT_TRUE(resolve_inside(work, ".").has_value());
}

}  // namespace
}  // namespace portbench::agent
