// SPDX-License-Identifier: Apache-2.0
// The job files the repo ships (configs/agent/) and the docs' examples are valid jobs.
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "portbench/agent/job.hpp"

namespace portbench::agent {
namespace {

namespace fs = std::filesystem;
const fs::path k_source = PORTBENCH_SOURCE_DIR;

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(AgentJob, ShippedJobsParse) {
  int n = 0;
  for (const auto& e : fs::directory_iterator(k_source / "configs" / "agent")) {
    if (e.path().extension() != ".json") continue;
    ++n;
    job j = job_from_json(nlohmann::json::parse(read(e.path())), e.path());
    EXPECT_EQ(j.root, k_source.lexically_normal()) << e.path();
    EXPECT_FALSE(j.stages.at("translate").builtin.empty() && j.stages.at("translate").argv.empty());
    EXPECT_EQ(j.stages.size(), 6u);
    // Round trip through the work directory's copy.
    job again = job_from_json(to_json(j), e.path());
    EXPECT_EQ(again.workdir, j.workdir);
    EXPECT_EQ(again.stages.at("translate").options, j.stages.at("translate").options);
  }
  EXPECT_GE(n, 3);
}

TEST(AgentJob, DocsShowTheShippedCodingAgentJobAndAValidExample) {
  std::string docs = read(k_source / "docs" / "agent.md");
  EXPECT_NE(docs.find(read(k_source / "configs" / "agent" / "example-coding-agent.json")), std::string::npos);
  auto start = docs.find("```json\n");
  ASSERT_NE(start, std::string::npos);
  start += 8;
  std::string example = docs.substr(start, docs.find("```", start) - start);
  job j = job_from_json(nlohmann::json::parse(example), k_source / "configs" / "agent" / "example.json");
  EXPECT_EQ(j.op, "rope");
  EXPECT_EQ(j.stages.at("translate").builtin, "retune");
  EXPECT_EQ(j.stages.at("verify").builtin, "verify");
}

}  // namespace
}  // namespace portbench::agent
