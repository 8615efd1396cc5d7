// SPDX-License-Identifier: Apache-2.0
// The routing table itself: every row routes where it says, every cap refuses the run past it
// (also the caps no route of the table can reach: ir_diff and benchmark run at most once per
// translate), and docs/agent.md draws exactly this table.
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "portbench/agent/routing.hpp"
#include "portbench/agent/schema.hpp"
#include "portbench/agent/verdicts.hpp"

namespace portbench::agent {
namespace {

TEST(AgentRouting, EveryRowRoutesAsItSays) {
  for (const auto& r : routes()) {
    std::map<std::string, int> runs = {{std::string(r.stage), 1}};
    decision d = decide(r.stage, r.verdict, r.fail_class, runs);
    if (r.next == pipeline::complete || r.next == pipeline::stopped) {
      EXPECT_EQ(d.end, r.next) << r.stage << " " << r.verdict;
      EXPECT_EQ(d.stage, r.stage);
      EXPECT_TRUE(d.next.empty());
    } else if (r.next == r.stage && cap_of(r.stage) <= 1) {
      EXPECT_EQ(d.end, pipeline::stopped) << "a retry of a stage with cap 1";
    } else {
      EXPECT_EQ(d.next, r.next) << r.stage << " " << r.verdict << " " << r.fail_class;
      EXPECT_TRUE(d.end.empty());
    }
  }
}

TEST(AgentRouting, EveryVerdictOfEverySchemaHasARoute) {
  for (const auto& s : schemas()) {
    for (auto v : s.verdicts) {
      if (s.stage == stage::verify && v == verdict::fail) {
        for (auto c : fail_class::all) {
          EXPECT_EQ(decide(s.stage, v, c, {}).reason.find("no route"), std::string::npos) << v << " " << c;
        }
        continue;
      }
      EXPECT_EQ(decide(s.stage, v, "", {}).reason.find("no route"), std::string::npos) << s.stage << " " << v;
    }
  }
  EXPECT_NE(decide(stage::verify, verdict::fail, "", {}).reason.find("no route"), std::string::npos);
}

TEST(AgentRouting, EveryCapRefusesTheRunPastIt) {
  // For each capped stage, a route into it, taken when the stage has run cap times.
  std::map<std::string_view, std::pair<std::string_view, std::string_view>> into = {
      {stage::analyze, {stage::analyze, verdict::fail_fixable}},
      {stage::translate, {stage::diagnose, verdict::fixable}},
      {stage::ir_diff, {stage::translate, verdict::compiled}},
      {stage::verify, {stage::ir_diff, verdict::pass}},
      {stage::benchmark, {stage::verify, verdict::all_pass}},
      {stage::diagnose, {stage::benchmark, verdict::investigate}},
  };
  ASSERT_EQ(into.size(), caps().size());
  for (const auto& c : caps()) {
    auto [from, v] = into.at(c.stage);
    decision below = decide(from, v, "", {{std::string(c.stage), c.max_runs - 1}});
    EXPECT_EQ(below.next, c.stage) << c.stage;
    decision at = decide(from, v, "", {{std::string(c.stage), c.max_runs}});
    EXPECT_EQ(at.end, pipeline::stopped) << c.stage;
    EXPECT_EQ(at.stage, c.stage);
    EXPECT_NE(at.reason.find("cap: " + std::string(c.stage) + " has run " + std::to_string(c.max_runs) + " of " +
                             std::to_string(c.max_runs)),
              std::string::npos)
        << at.reason;
  }
}

TEST(AgentRouting, CapsAreTheIssues) {
  EXPECT_EQ(cap_of(stage::translate), 2);
  EXPECT_EQ(cap_of(stage::verify), 2);
  EXPECT_EQ(cap_of(stage::benchmark), 2);
  EXPECT_EQ(cap_of(stage::diagnose), 1);
  EXPECT_EQ(cap_of(stage::analyze), 1);
}

std::string docs() {
  std::ifstream in(std::string(PORTBENCH_SOURCE_DIR) + "/docs/agent.md");
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(AgentRouting, DocsDrawTheTable) {
  std::string text = docs();
  ASSERT_FALSE(text.empty()) << "docs/agent.md missing";
  EXPECT_NE(text.find("```mermaid\n" + routes_mermaid() + "```"), std::string::npos)
      << "docs/agent.md: update the diagram with `portbench agent routes`";
  EXPECT_NE(text.find(routes_markdown()), std::string::npos)
      << "docs/agent.md: update the table with `portbench agent routes --format md`";
  EXPECT_NE(text.find(schemas_markdown()), std::string::npos)
      << "docs/agent.md: update the schemas with `portbench agent schemas`";
}

}  // namespace
}  // namespace portbench::agent
