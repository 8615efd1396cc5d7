// SPDX-License-Identifier: Apache-2.0
// The adapters of portbench's commands on the samples in tests/agent/samples, and the
// conversions' verdict rules.
#include <array>
#include <fstream>

#include <gtest/gtest.h>

#include "portbench/agent/adapters.hpp"
#include "portbench/agent/error.hpp"
#include "portbench/agent/schema.hpp"

namespace portbench::agent::adapters {
namespace {

using json = nlohmann::json;

json sample(const std::string& name) {
  std::ifstream in(std::string(PORTBENCH_SOURCE_DIR) + "/tests/agent/samples/" + name);
  return json::parse(in);
}

const std::string k_small = "rope/bsz=2,dtype=float16,head_dim=128,num_kv_heads=8,num_q_heads=32,partial_rotary_factor=0.5,seq_len=64";
const std::string k_long = "rope/bsz=1,dtype=bfloat16,head_dim=64,num_kv_heads=4,num_q_heads=16,partial_rotary_factor=1.0,seq_len=4096";

// Inputs built field by field (brace lists of these structs trip GCC 12's
// maybe-uninitialized warning).
verify_inputs verify_in(std::vector<check_row> rows, std::vector<std::string> ids, std::string device_error = "",
                        std::string check_error = "") {
  verify_inputs in;
  in.rows = std::move(rows);
  in.job_ids = std::move(ids);
  if (!device_error.empty()) in.device = {true, device_error};
  if (!check_error.empty()) in.check = {true, check_error};
  return in;
}

ir_diff_inputs ir_in(std::vector<ir_diff_config> configs) {
  ir_diff_inputs in;
  in.configs = std::move(configs);
  return in;
}

diagnose_inputs diag_in(std::vector<finding> findings, std::string error = "") {
  diagnose_inputs in;
  in.findings = std::move(findings);
  if (!error.empty()) in.failure = {true, error};
  return in;
}

std::string valid(const char* stage_name, const nlohmann::ordered_json& out) {
  return validate(stage_name, out, std::filesystem::temp_directory_path());
}

// A report's port sides as verify reads them: a paired run gives numerics and proof.
report_summary report_of(std::vector<std::array<std::string, 4>> rows) {
  report_summary r;
  for (const auto& [id, numerics, proof, error] : rows) {
    report_config c;
    c.id = id;
    c.paired = true;
    c.port_numerics = numerics;
    c.port_proof = proof;
    if (!error.empty()) c.errors.push_back(error);
    r.configs.push_back(c);
  }
  return r;
}

TEST(AgentAdapters, VerifyAllPass) {
  auto rows = verify_rows(report_of({{k_small, "PASS", "EXECUTED", ""}, {k_long, "PASS", "EXECUTED", ""}}));
  ASSERT_EQ(rows.size(), 2u);
  auto out = verify_output(verify_in(rows, {k_small, k_long}));
  EXPECT_EQ(out["verdict"], "ALL_PASS");
  EXPECT_EQ(valid("verify", out), "");
}

TEST(AgentAdapters, VerifyFailureIsAKernelFailureWithItsErrors) {
  auto out = verify_output(verify_in(
      verify_rows(report_of({{k_small, "PASS", "EXECUTED", ""},
                             {k_long, "FAIL", "EXECUTED", "port q: 4194304 checked, 2048 bad, max abs 1.5, max rel 0.75"}})),
      {k_small, k_long}));
  EXPECT_EQ(out["verdict"], "FAIL");
  EXPECT_EQ(out["fail_class"], "kernel");
  EXPECT_EQ(out["configs"][1]["error"], "port q: 4194304 checked, 2048 bad, max abs 1.5, max rel 0.75");
  EXPECT_EQ(valid("verify", out), "");
}

TEST(AgentAdapters, VerifyClasses) {
  auto rows = verify_rows(report_of({{k_small, "PASS", "EXECUTED", ""}, {k_long, "PASS", "EXECUTED", ""}}));
  // No device: env, whatever else.
  auto env = verify_output(verify_in(rows, {k_small}, "CUDA_ERROR_NO_DEVICE"));
  EXPECT_EQ(env["fail_class"], "env");
  // A configuration of the job the port bundle lacks: host.
  auto host = verify_output(verify_in(rows, {k_small, k_long, "rope/other"}));
  EXPECT_EQ(host["verdict"], "FAIL");
  EXPECT_EQ(host["fail_class"], "host");
  EXPECT_EQ(host["configs"][2]["numerics"], "NOT_RUN");
  // The run refused the bundles: host, every configuration not run.
  auto refused = verify_output(verify_in({}, {k_small}, "", "bundles/x: cubin parameter table differs"));
  EXPECT_EQ(refused["fail_class"], "host");
  EXPECT_EQ(valid("verify", refused), "");
  // A side the run left without a proof (an unpaired or failed worker): nothing unchecked
  // passes, and no stage can add it.
  auto no_proof = verify_rows(report_of({{k_small, "PASS", "", ""}, {k_long, "PASS", "EXECUTED", ""}}));
  EXPECT_EQ(no_proof[0].proof, "NOT_CHECKED");
  auto blocked = verify_output(verify_in(no_proof, {k_small, k_long}));
  EXPECT_EQ(blocked["verdict"], "BLOCKED");
  EXPECT_EQ(valid("verify", blocked), "");
  // A failing proof is the kernel's.
  auto foreign = rows;
  foreign[0].proof = "FOREIGN_KERNEL";
  EXPECT_EQ(verify_output(verify_in(foreign, {k_small, k_long}))["fail_class"], "kernel");
}

TEST(AgentAdapters, Inspect) {
  auto info = read_inspect(sample("inspect.json"));
  EXPECT_EQ(info.frontend, "tilegym");
  ASSERT_EQ(info.entries.size(), 2u);
  EXPECT_EQ(info.entries[1].name, "rope_kernel_bf16");
  EXPECT_EQ(info.entries[1].registers, 38);
  EXPECT_TRUE(info.entries[1].tile_ir);
}

TEST(AgentAdapters, AnalyzeVerdicts) {
  report_summary r;
  r.verdict = "PARITY";
  r.configs = {{k_small, true, 1.0, 1000, 1000, "PASS", "EXECUTED", "PASS", "EXECUTED", {}},
               {k_long, true, 1.0, 5000, 5000, "PASS", "EXECUTED", "PASS", "EXECUTED", {}}};
  analyze_inputs in;
  in.reference = read_inspect(sample("inspect.json"));
  in.report = r;
  in.job_ids = {k_small, k_long};
  auto pass = analyze_output(in);
  EXPECT_EQ(pass["verdict"], "PASS");
  EXPECT_EQ(pass["reference"]["entries"].size(), 2u);
  EXPECT_DOUBLE_EQ(pass["configs"][1]["reference_ns"].get<double>(), 5000);
  EXPECT_EQ(valid("analyze", pass), "");
  in.report.configs[1].ref_numerics = "FAIL";
  EXPECT_EQ(analyze_output(in)["verdict"], "FAIL_FIXABLE");
  in.inspect = {true, "bundles/x/manifest.json: configs[0].launches: missing"};
  auto blocked = analyze_output(in);
  EXPECT_EQ(blocked["verdict"], "BLOCKED");
  EXPECT_NE(blocked["reason"].get<std::string>().find("configs[0].launches"), std::string::npos);
}

TEST(AgentAdapters, IrDiffMapping) {
  // Real portbench ir-diff output (portbench.ir_diff/1: bundles[].configs[]).
  auto notes = read_ir_diff(sample("ir-diff-notes.json"), "unused");
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0].id, "rms_norm/dtype=float16,m=4096,n=1024");
  EXPECT_EQ(notes[0].verdict, "PASS_WITH_NOTES");
  auto structural = read_ir_diff(sample("ir-diff-structural.json"), "unused");
  ASSERT_EQ(structural.size(), 1u);
  EXPECT_EQ(structural[0].id, k_small);
  auto out = ir_diff_output(ir_in({notes[0], structural[0]}));
  EXPECT_EQ(out["verdict"], "FAIL_FIXABLE");
  EXPECT_EQ(out["configs"][0]["verdict"], "PASS_WITH_NOTES");
  EXPECT_EQ(out["configs"][1]["differences"][0]["kind"], "tile_shape");
  EXPECT_EQ(out["configs"][1]["differences"][0]["port"], "load view weak 1x4x32xf16 padding=zero");
  EXPECT_EQ(valid("ir_diff", out), "");
  EXPECT_EQ(ir_diff_output(ir_in({notes[0]}))["verdict"], "PASS_WITH_NOTES");
  // Advisory (a translate that cannot change the structure): the difference is a note.
  auto advisory_in = ir_in({notes[0], structural[0]});
  advisory_in.advisory = true;
  auto advisory = ir_diff_output(advisory_in);
  EXPECT_EQ(advisory["verdict"], "PASS_WITH_NOTES");
  EXPECT_EQ(advisory["configs"][1]["differences"][1]["kind"], "tile_shape");   // the differences stay
  ir_diff_config none{k_small, "NOT_COMPARABLE", {}};
  EXPECT_EQ(ir_diff_output(ir_in({none}))["verdict"], "PASS_WITH_NOTES");
  ir_diff_config same{k_small, "PASS", {}};
  EXPECT_EQ(ir_diff_output(ir_in({same}))["verdict"], "PASS");
  ir_diff_config odd{k_small, "MAYBE", {}};
  EXPECT_EQ(ir_diff_output(ir_in({odd}))["verdict"], "BLOCKED");
}

TEST(AgentAdapters, DiagnoseFindings) {
  // Real portbench diagnose output (portbench.diagnose/1): configs[].config and ranked findings.
  auto findings = read_diagnose(sample("diagnose.json"));
  ASSERT_EQ(findings.size(), 5u);
  EXPECT_EQ(findings[0].config, k_small);
  EXPECT_EQ(findings[0].tag, "FEWER_WAVES");
  EXPECT_EQ(findings[0].rank, 1);
  EXPECT_EQ(findings[1].tag, "REGISTER_SPILL");
  EXPECT_NE(findings[1].evidence.find("LDL/STL"), std::string::npos);
  auto out = diagnose_output(diag_in(findings));
  EXPECT_EQ(out["verdict"], "FIXABLE");
  EXPECT_EQ(valid("diagnose", out), "");
  EXPECT_EQ(diagnose_output(diag_in({}))["verdict"], "ALIGNED");
  EXPECT_EQ(diagnose_output(diag_in({}, "x.h5: no such file"))["verdict"], "BLOCKED");
}

TEST(AgentAdapters, UnknownShapesAreNamed) {
  EXPECT_THROW((void)read_report(json{{"schema", "portbench.report/2"}}), agent_error);
  try {
    (void)read_inspect(json{{"bundles", json::array()}});
    FAIL() << "an inspect output without bundles";
  } catch (const agent_error& e) {
    EXPECT_EQ(std::string(e.what()), "inspect output: bundles: empty");
  }
}

TEST(AgentAdapters, BlockedOutputsCarryTheirRequiredFields) {
  for (const char* s : {"analyze", "translate", "ir_diff", "verify", "benchmark", "diagnose"}) {
    EXPECT_EQ(valid(s, blocked_output(s, "why", 0.95)), "") << s;
  }
}

TEST(AgentAdapters, ManifestVariants) {
  json manifest = {{"configs", {{{"params", {{"n", 1}}}, {"tuning", {{"variant", "a"}}},
                                 {"variants", {{{"name", "a"}, {"tuning", {{"tile", 64}}}},
                                               {{"name", "b"}, {"tuning", {{"tile", 128}}}}}}},
                                {{"params", {{"n", 2}}}, {"tuning", {{"tile", 32}}}}}}};
  auto v = read_variants(manifest, {{"n", 1}});
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[1].name, "b");
  EXPECT_EQ(v[1].tuning["tile"], 128);
  EXPECT_TRUE(read_variants(manifest, {{"n", 2}}).empty());
  EXPECT_EQ(read_tuning(manifest, {{"n", 2}})["tile"], 32);
}

}  // namespace
}  // namespace portbench::agent::adapters
