// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "fixtures.hpp"
#include "portbench/report/compare.hpp"

namespace portbench::report {
namespace {

using testing::config;
using testing::file;

TEST(ReportCompare, PlantedRegressionOnThePortOnly) {
  auto base = file({config("a", 0, 1.0, 4, 0.002), config("a", 1, 1.0, 4, 0.002)});
  auto cur = file({config("a", 0, 1.0 / 1.05, 4, 0.002), config("a", 1, 1.0, 4, 0.002)});
  compare_data d = build_compare(base, cur);
  ASSERT_EQ(d.rows.size(), 4u);
  EXPECT_EQ(d.rows[0].result.verdict, "UNCHANGED");  // a/i=0 reference
  EXPECT_EQ(d.rows[1].result.verdict, "REGRESSED");  // a/i=0 port, 5% slower
  EXPECT_NEAR(d.rows[1].result.ratio, 1.05, 1e-3);
  EXPECT_EQ(d.rows[3].result.verdict, "UNCHANGED");
  EXPECT_TRUE(d.regressed());
  EXPECT_EQ(d.counts.at("REGRESSED"), 1u);
  std::string md = render_compare_markdown(d);
  EXPECT_NE(md.find("Test: Welch t interval"), std::string::npos);
  EXPECT_LT(md.find("REGRESSED** |"), md.find("UNCHANGED** |"));  // regressions listed first
  auto j = nlohmann::json::parse(render_compare_json(d));
  EXPECT_EQ(j["regressed"], true);
  EXPECT_EQ(j["test"]["threshold"], 0.02);
}

TEST(ReportCompare, LargeBetweenRunSpreadIsInconclusiveNotUnchanged) {
  // Runs 0-3% apart: equal files cannot be declared UNCHANGED within 2% at 95%.
  auto base = file({config("a", 0, 1.0, 4, 0.01)});
  compare_data d = build_compare(base, base);
  EXPECT_EQ(d.rows[0].result.verdict, "INCONCLUSIVE");
  EXPECT_NEAR(d.rows[0].result.ratio, 1.0, 1e-12);
}

TEST(ReportCompare, MissingInCurrentIsInconclusive) {
  auto base = file({config("a", 0, 1.0), config("a", 1, 1.0)});
  auto cur = file({config("a", 0, 1.0), config("b", 7, 1.0)});
  compare_data d = build_compare(base, cur);
  EXPECT_EQ(d.rows[2].result.verdict, "INCONCLUSIVE");
  EXPECT_EQ(d.rows[2].result.note, "not in current");
  EXPECT_EQ(d.only_in_current, 2u);
  EXPECT_FALSE(d.regressed());
}

}  // namespace
}  // namespace portbench::report
