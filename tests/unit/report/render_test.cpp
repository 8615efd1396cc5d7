// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "fixtures.hpp"
#include "portbench/report/gbench.hpp"
#include "portbench/report/render.hpp"

namespace portbench::report {
namespace {

using testing::config;
using testing::file;

report_data sample_report() {
  return build_report(file({config("softmax", 0, 1.05), config("softmax", 1, 0.99),
                            config("rms|norm", 2, 0.90)}),
                      {.bootstrap = {.resamples = 500}});
}

TEST(ReportRender, MarkdownForJobSummaries) {
  std::string md = render_markdown(sample_report());
  EXPECT_EQ(md.rfind("# portbench report: unit\n", 0), 0u);
  EXPECT_NE(md.find("**Verdict: "), std::string::npos);
  EXPECT_NE(md.find("| softmax | 2 | 2 | 1.0196 |"), std::string::npos) << md;
  EXPECT_NE(md.find("rms\\|norm"), std::string::npos);  // pipes escaped inside cells
  EXPECT_NE(md.find("<details><summary>Configurations (3)</summary>"), std::string::npos);
  EXPECT_NE(md.find("portbench_overall_geomean="), std::string::npos);
}

TEST(ReportRender, JsonCarriesEveryNumber) {
  auto j = nlohmann::json::parse(render_json(sample_report()));
  EXPECT_EQ(j["schema"], "portbench.report/1");
  EXPECT_EQ(j["operators"].size(), 2u);
  EXPECT_NEAR(j["operators"][0]["geomean"]["estimate"].get<double>(), std::sqrt(1.05 * 0.99), 1e-4);
  EXPECT_EQ(j["configs"][0]["reference"]["run_medians_ns"].size(), 3u);
  EXPECT_EQ(j["method"]["gate"], 0.95);
}

TEST(ReportRender, HtmlEmbedsImagesAndEscapes) {
  std::string html = render_html(sample_report(), {{"plot <1>", std::string("\x89PNG\r\n", 6)}});
  EXPECT_NE(html.find("src=\"data:image/png;base64,iVBORw0K\""), std::string::npos) << html;
  EXPECT_NE(html.find("plot &lt;1&gt;"), std::string::npos);
  std::string bare = render_html(sample_report(), {}, "matplotlib missing");
  EXPECT_NE(bare.find("No plots: matplotlib missing"), std::string::npos);
}

TEST(ReportRender, GoogleBenchmarkJson) {
  auto j = nlohmann::json::parse(render_gbench_json(file({config("softmax", 0, 1.0, 2)})));
  ASSERT_EQ(j["benchmarks"].size(), 6u);  // 2 roles x (2 runs + 1 aggregate)
  const auto& first = j["benchmarks"][0];
  EXPECT_EQ(first["name"], "softmax/i=0/reference");
  EXPECT_EQ(first["run_type"], "iteration");
  EXPECT_EQ(first["repetitions"], 2);
  EXPECT_EQ(first["repetition_index"], 0);
  EXPECT_EQ(first["time_unit"], "ns");
  EXPECT_DOUBLE_EQ(first["real_time"].get<double>(), 100000.0);
  const auto& agg = j["benchmarks"][2];
  EXPECT_EQ(agg["name"], "softmax/i=0/reference_min");
  EXPECT_EQ(agg["aggregate_name"], "min");
  EXPECT_DOUBLE_EQ(agg["real_time"].get<double>(), 100000.0);
  EXPECT_EQ(j["context"]["date"], "2026-08-01 12:00:00");
}

}  // namespace
}  // namespace portbench::report
