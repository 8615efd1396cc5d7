// SPDX-License-Identifier: Apache-2.0
// `portbench report` on synthetic files with known answers.
#include <gtest/gtest.h>

#include <cmath>

#include <nlohmann/json.hpp>

#include "process.hpp"
#include "synth.hpp"

namespace portbench::testing {
namespace {

std::filesystem::path exact_file(const std::string& name, double speed, std::size_t configs = 12) {
  auto path = scratch_dir() / name;
  synth_options o;
  o.configs = configs;
  o.operators = 2;
  o.runs = 3;
  o.min_samples = o.max_samples = 30;
  o.exact = true;
  o.port_speed = speed;
  o.port_speed_sd = 0.05;
  o.overwrite = true;
  write_synthetic(path, o);
  return path;
}

TEST(ReportCli, JsonHasTheKnownGeomean) {
  // Ratios alternate speed x e^(+-0.05) within each operator, so every geomean is `speed`.
  auto path = exact_file("known_geomean.h5", 0.9);
  process_result r = portbench({"report", path.string(), "--format", "json"});
  ASSERT_EQ(r.rc, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_NEAR(j["overall"]["geomean"]["estimate"].get<double>(), 0.9, 1e-4);
  EXPECT_EQ(j["overall"]["paired"], 12);
  ASSERT_EQ(j["operators"].size(), 2u);
  for (const auto& op : j["operators"]) {
    EXPECT_NEAR(op["geomean"]["estimate"].get<double>(), 0.9, 1e-4);
    EXPECT_NEAR(op["worst_ratio"].get<double>(), 0.9 * std::exp(-0.05), 1e-4);
    EXPECT_EQ(op["verdict"], "BELOW_GATE");
    EXPECT_EQ(op["numerics"]["PASS"], 36);  // 6 configurations x 2 roles x 3 runs
  }
  EXPECT_EQ(j["verdict"], "BELOW_GATE");
}

TEST(ReportCli, MarkdownStatesVerdictAndMethod) {
  auto path = exact_file("parity.h5", 1.0);
  auto out = scratch_dir() / "report.md";
  process_result r = portbench({"report", path.string(), "--out", out.string(), "--check"});
  ASSERT_EQ(r.rc, 0) << r.err;
  std::string md = read_file(out);
  EXPECT_NE(md.find("**Verdict: PARITY**"), std::string::npos) << md;
  EXPECT_NE(md.find("| operator | configs | paired | geomean | 95% interval |"), std::string::npos);
  EXPECT_NE(md.find("portbench_overall_geomean=1.0000"), std::string::npos);
  EXPECT_NE(md.find("best of N"), std::string::npos);
}

TEST(ReportCli, NothingCheckedNeverPasses) {
  auto path = scratch_dir() / "unchecked.h5";
  synth_options o;
  o.configs = 6;
  o.operators = 1;
  o.runs = 2;
  o.min_samples = o.max_samples = 20;
  o.exact = true;
  o.port_speed = 1.2;
  o.numerics = "NOT_CHECKED";
  o.overwrite = true;
  write_synthetic(path, o);
  process_result r = portbench({"report", path.string(), "--format", "json", "--check"});
  EXPECT_EQ(r.rc, 1);
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["verdict"], "UNVERIFIED");
}

TEST(ReportCli, FaultingKernelIsReported) {
  auto path = scratch_dir() / "fault.h5";
  synth_options o;
  o.configs = 4;
  o.operators = 1;
  o.runs = 2;
  o.min_samples = o.max_samples = 20;
  o.fail_config = 2;
  o.overwrite = true;
  write_synthetic(path, o);
  process_result r = portbench({"report", path.string()});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("CHECKS_FAILED"), std::string::npos);
  EXPECT_NE(r.out.find("CUDA_ERROR_ILLEGAL_ADDRESS"), std::string::npos);
}

TEST(ReportCli, HtmlEmbedsPlots) {
  auto path = exact_file("html.h5", 0.97, 8);
  auto out = scratch_dir() / "report.html";
  process_result r = portbench({"report", path.string(), "--format", "html", "--out", out.string()});
  ASSERT_EQ(r.rc, 0) << r.err;
  std::string html = read_file(out);
  EXPECT_NE(html.find("<h2>Operators</h2>"), std::string::npos);
  // Only a missing interpreter or module is an excuse; any other plot failure is a bug.
  if (r.err.find("No module named") != std::string::npos || r.err.find("cannot start") != std::string::npos) {
    GTEST_SKIP() << "plotting unavailable here: " << r.err;
  }
  EXPECT_EQ(r.err.find("no plots"), std::string::npos) << r.err;
  EXPECT_NE(html.find("data:image/png;base64,iVBOR"), std::string::npos);
}

}  // namespace
}  // namespace portbench::testing
