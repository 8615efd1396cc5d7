// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <cmath>

#include "fixtures.hpp"
#include "portbench/report/model.hpp"

namespace portbench::report {
namespace {

using testing::config;
using testing::file;

TEST(ReportBuild, KnownGeomeanWorstConfigAndParity) {
  auto f = file({config("softmax", 0, 1.10), config("softmax", 1, 0.98), config("softmax", 2, 1.02),
                 config("rope", 3, 1.00), config("rope", 4, 1.00)});
  report_data r = build_report(f, {.gate = 0.95, .bootstrap = {.resamples = 2000}});
  ASSERT_EQ(r.operators.size(), 2u);
  const operator_summary& softmax = r.operators[0];
  EXPECT_EQ(softmax.op, "softmax");
  EXPECT_EQ(softmax.configs, 3u);
  EXPECT_EQ(softmax.paired, 3u);
  EXPECT_NEAR(softmax.geomean.estimate, std::cbrt(1.10 * 0.98 * 1.02), 1e-4);
  EXPECT_EQ(softmax.worst_config, "softmax/i=1");
  EXPECT_NEAR(softmax.worst_ratio, 0.98, 1e-4);
  EXPECT_NEAR(softmax.max_spread, 0.02, 1e-3);  // run medians 1.00, 1.01, 1.02
  EXPECT_EQ(softmax.numerics.at("PASS"), 18u);
  EXPECT_EQ(softmax.verdict, "PARITY") << softmax.reason;
  EXPECT_EQ(r.operators[1].verdict, "PARITY");
  EXPECT_NEAR(r.overall.estimate, std::pow(1.10 * 0.98 * 1.02, 0.2), 1e-4);
  EXPECT_EQ(r.overall_verdict, "PARITY");
  EXPECT_EQ(r.paired, 5u);
}

TEST(ReportBuild, BelowGateAndInconclusive) {
  auto slow = file({config("a", 0, 0.80), config("a", 1, 0.82), config("a", 2, 0.81)});
  EXPECT_EQ(build_report(slow).operators[0].verdict, "BELOW_GATE");
  auto mixed = file({config("a", 0, 0.80), config("a", 1, 1.15), config("a", 2, 0.95)});
  EXPECT_EQ(build_report(mixed).operators[0].verdict, "INCONCLUSIVE");
}

TEST(ReportBuild, NothingCheckedNeverPasses) {
  auto f = file({config("a", 0, 1.2), config("a", 1, 1.2)});
  f.configs[1].roles[1].runs[0].verdicts.proof = "NOT_CHECKED";
  report_data r = build_report(f);
  EXPECT_EQ(r.operators[0].verdict, "UNVERIFIED");
  EXPECT_EQ(r.overall_verdict, "UNVERIFIED");
}

TEST(ReportBuild, FailuresAndErrorsBeatSpeed) {
  auto f = file({config("a", 0, 1.2), config("a", 1, 1.2)});
  auto& bad = f.configs[0].roles[1].runs[2];
  bad.verdicts = {"NOT_CHECKED", "NOT_EXECUTED", "INVALID_NO_SAMPLES"};
  bad.error = "CUDA_ERROR_ILLEGAL_ADDRESS";
  bad.stats.count = 0;
  bad.time_ns.clear();
  report_data r = build_report(f);
  EXPECT_EQ(r.operators[0].verdict, "CHECKS_FAILED");
  EXPECT_NE(r.operators[0].reason.find("CUDA_ERROR_ILLEGAL_ADDRESS"), std::string::npos);
  EXPECT_EQ(r.operators[0].errors, 1u);
  EXPECT_EQ(r.configs[0].port.timed_runs, 2u);  // the failed run is not timed
  auto g = file({config("a", 0, 1.2)});
  g.configs[0].roles[1].runs[0].verdicts.numerics = "FAIL";
  EXPECT_EQ(build_report(g).operators[0].verdict, "CHECKS_FAILED");
  EXPECT_EQ(build_report(g).configs[0].port.numerics, "FAIL");
}

TEST(ReportBuild, APortThatErrorsEverywhereIsChecksFailedNotNoData) {
  auto f = file({config("a", 0, 1.0), config("a", 1, 1.0)});
  for (auto& c : f.configs) {
    for (auto& run : c.roles[1].runs) {
      run.verdicts = {"NOT_CHECKED", "NOT_CHECKED", "NOT_MEASURED"};
      run.error = "ERROR: port cutile: cuModuleLoadData: CUDA_ERROR_INVALID_IMAGE (200)";
      run.stats.count = 0;
      run.time_ns.clear();
    }
  }
  report_data r = build_report(f);
  EXPECT_EQ(r.operators[0].paired, 0u);
  EXPECT_EQ(r.operators[0].verdict, "CHECKS_FAILED") << r.operators[0].reason;
  EXPECT_NE(r.operators[0].reason.find("6 run(s) failed a check or errored, first: a/i=0 port run 0: ERROR: port cutile"),
            std::string::npos) << r.operators[0].reason;
  EXPECT_EQ(r.overall_verdict, "CHECKS_FAILED");
}

TEST(ReportBuild, UnpairedAndEmpty) {
  auto f = file({config("a", 0, 1.2), config("a", 1, 1.2)});
  f.configs[1].roles.pop_back();  // no port at all
  report_data r = build_report(f);
  EXPECT_EQ(r.operators[0].verdict, "INCOMPLETE");
  EXPECT_EQ(r.operators[0].paired, 1u);
  auto empty = file({});
  EXPECT_EQ(build_report(empty).overall_verdict, "NO_DATA");
  auto none = file({config("a", 0, 1.0)});
  none.configs[0].roles[0].runs.clear();
  none.configs[0].roles[1].runs.clear();
  EXPECT_EQ(build_report(none).operators[0].verdict, "NO_DATA");
}

TEST(ReportBuild, OverallTakesTheWorstOperator) {
  auto f = file({config("fast", 0, 1.1), config("fast", 1, 1.1), config("slow", 2, 0.7),
                 config("slow", 3, 0.71)});
  report_data r = build_report(f);
  EXPECT_EQ(r.overall_verdict, "BELOW_GATE");
  EXPECT_NE(r.overall_reason.find("slow"), std::string::npos);
}

TEST(ReportBuild, IntervalsAreReproducible) {
  auto f = file({config("a", 0, 1.0), config("a", 1, 0.97), config("a", 2, 1.04)});
  report_data a = build_report(f);
  report_data b = build_report(f);
  EXPECT_EQ(a.operators[0].geomean.low, b.operators[0].geomean.low);
  EXPECT_EQ(a.overall.high, b.overall.high);
}

}  // namespace
}  // namespace portbench::report
