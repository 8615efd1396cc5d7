// SPDX-License-Identifier: Apache-2.0
// `portbench inspect` as a user runs it: a real process on real bundles; bad input gives exit
// code 2 and one line on stderr naming the file and the problem.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <regex>

#include "portbench/bundle/sha256.hpp"
#include "test_support.hpp"

namespace pt = portbench::testing;
using json = nlohmann::json;

namespace {

pt::process_result inspect(const std::filesystem::path& dir) { return pt::run_process({PORTBENCH_BIN, "inspect", dir.string()}); }

void expect_one_line_error(const pt::process_result& r, const std::string& must_contain) {
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  ASSERT_FALSE(r.err.empty());
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "more than one line: " << r.err;
  EXPECT_EQ(r.err.rfind("portbench: error: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find(must_contain), std::string::npos) << r.err;
}

TEST(InspectCli, PrintsEntriesLayoutAndArchitectureOfEveryBundle) {
  std::set<std::string> frontends;
  for (const auto& dir : pt::all_bundles()) {
    auto r = inspect(dir);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("check     OK"), std::string::npos) << r.out;
    EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(cubin\s+\S+\.cubin\s+sm_90a?\s)"))) << r.out;
    EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(registers \d+)"))) << r.out;
    EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(params \d+ \(\d+ B\): #0@0:)"))) << r.out;
    auto m = json::parse(pt::read_text(dir / "manifest.json"));
    frontends.insert(m["frontend"].get<std::string>());
  }
  for (const char* fe : {"cutile_python", "cutile_rust", "triton", "cuda_cpp"}) {
    EXPECT_TRUE(frontends.count(fe)) << "no bundle exported by " << fe;
  }
}

TEST(InspectCli, ABundleOfReasonsOnlyHasNothingToCheckAndSaysWhy) {
  // What an exporter writes for an operator it cannot express (none of tilegym's since
  // group_gemm's array tables and moe's sum step):
  // built here from a real bundle, since which operators those are depends on the exporters.
  pt::temp_dir tmp;
  const auto dir = tmp.path() / "bundle";
  std::filesystem::copy(pt::all_bundles().front(), dir, std::filesystem::copy_options::recursive);
  auto m = json::parse(pt::read_text(dir / "manifest.json"));
  json reasons = json::array();
  for (const auto& c : m["configs"]) reasons.push_back({{"params", c["params"]}, {"reason", "no parameter kind for it"}});
  ASSERT_FALSE(reasons.empty());
  m["unsupported"] = reasons;
  m["configs"] = json::array();
  m["cubins"] = json::array();
  pt::write_text(dir / "manifest.json", m.dump(1));
  auto r = inspect(dir);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find("check     OK"), std::string::npos) << "nothing checked is not OK: " << r.out;
  EXPECT_NE(r.out.find("check     nothing to check: no plans, " + std::to_string(reasons.size()) + " configurations unsupported"),
            std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  reason  " + std::to_string(reasons.size()) + " x no parameter kind for it"), std::string::npos) << r.out;
  // The exporters' own reason bundles, where this export has any, print the same way.
  for (const auto& d : pt::reasons_only_bundles()) {
    auto own = inspect(d);
    EXPECT_EQ(own.exit_code, 0) << own.err;
    EXPECT_NE(own.out.find("check     nothing to check: no plans"), std::string::npos) << d << ": " << own.out;
  }
}

TEST(InspectCli, JsonAndCsvHaveOneRowPerEntry) {
  const auto dir = pt::bundle_root() / "triton" / "rms_norm";
  auto r = pt::run_process({PORTBENCH_BIN, "inspect", dir.string(), "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto rows = json::parse(r.out);
  const auto m = json::parse(pt::read_text(dir / "manifest.json"));
  ASSERT_EQ(rows.size(), m["cubins"].size()) << "one entry per Triton cubin";
  for (const auto& row : rows) {
    EXPECT_EQ(row["frontend"], "triton");
    EXPECT_EQ(row["operator"], "rms_norm");
    EXPECT_TRUE(row["registers"].is_number_integer());
    EXPECT_GT(row["registers"].get<int>(), 0);
    EXPECT_EQ(row["params"].get<std::string>().rfind("#0@0:8", 0), 0u) << row;
    bool listed = false;
    for (const auto& c : m["cubins"]) listed = listed || (c["file"] == row["cubin"] && c["sha256"] == row["sha256"]);
    EXPECT_TRUE(listed) << row;
  }
  auto csv = pt::run_process({PORTBENCH_BIN, "inspect", dir.string(), "--format", "csv"});
  ASSERT_EQ(csv.exit_code, 0);
  EXPECT_EQ(std::count(csv.out.begin(), csv.out.end(), '\n'), static_cast<long>(rows.size()) + 1);
  EXPECT_EQ(csv.out.rfind("bundle,frontend,operator,arch,cubin,sha256,", 0), 0u) << csv.out;
  auto bad = pt::run_process({PORTBENCH_BIN, "inspect", dir.string(), "--format", "xml"});
  EXPECT_EQ(bad.exit_code, 2);
}

class BadInput : public ::testing::Test {
 protected:
  void SetUp() override {
    // The CUDA C++ bundle keeps its PTX, from which a real sm_80 cubin can be assembled.
    for (const auto& d : pt::all_bundles()) {
      if (d.parent_path().filename() == "cuda_cpp" || source.empty()) source = d;
    }
    ASSERT_FALSE(source.empty());
    dir = tmp.path() / "b";
    std::filesystem::copy(source, dir, std::filesystem::copy_options::recursive);
    manifest = json::parse(pt::read_text(dir / "manifest.json"));
    cubin = dir / manifest["cubins"][0]["file"].get<std::string>();
  }
  void save() { pt::write_text(dir / "manifest.json", manifest.dump(1)); }
  void replace_cubin(const std::vector<std::byte>& image) {
    pt::write_bytes(cubin, image);
    manifest["cubins"][0]["sha256"] = portbench::bundle::sha256_hex(image);
    save();
  }
  pt::temp_dir tmp;
  std::filesystem::path source, dir, cubin;
  json manifest;
};

TEST_F(BadInput, TruncatedCubin) {
  auto image = pt::read_bytes(cubin);
  image.resize(image.size() * 2 / 3);
  replace_cubin(image);
  expect_one_line_error(inspect(dir), cubin.string() + ": truncated cubin");
}

TEST_F(BadInput, CubinForAnotherArchitecture) {
  std::filesystem::path ptx;
  for (const auto& ir : manifest["cubins"][0].value("ir", json::array())) {
    if (ir.get<std::string>().ends_with(".ptx") || ir.get<std::string>().ends_with(".ptx.txt")) ptx = dir / ir.get<std::string>();
  }
  if (ptx.empty() || !std::filesystem::exists(PORTBENCH_PTXAS)) {
    // Without PTX to assemble, rewrite the cubin's SM field instead.
    auto image = pt::read_bytes(cubin);
    image[std::to_integer<int>(image[8]) >= 8 ? 0x31 : 0x30] = std::byte{80};
    replace_cubin(image);
  } else {
    std::string text = pt::read_text(ptx);
    text = std::regex_replace(text, std::regex(R"(\.target\s+sm_90a?)"), ".target sm_80");
    pt::write_text(tmp.path() / "k.ptx", text);
    auto r = pt::run_process({PORTBENCH_PTXAS, "-arch=sm_80", (tmp.path() / "k.ptx").string(), "-o",
                              (tmp.path() / "k80.cubin").string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    replace_cubin(pt::read_bytes(tmp.path() / "k80.cubin"));
  }
  expect_one_line_error(inspect(dir), "cubin is for sm_80");
}

TEST_F(BadInput, ManifestMissingAField) {
  manifest["configs"][0]["launches"][0].erase("grid");
  save();
  expect_one_line_error(inspect(dir), "manifest.json: configs[0].launches[0].grid: missing field");
}

TEST_F(BadInput, ManifestParametersDisagreeWithCubin) {
  auto& params = manifest["configs"][0]["launches"][0]["params"];
  params.push_back(json{{"kind", "literal"}, {"type", "i32"}, {"value", 3}});
  save();
  expect_one_line_error(inspect(dir), "configs[0].launches[0].params: ");
}

TEST_F(BadInput, MissingBundle) {
  expect_one_line_error(inspect(tmp.path() / "nowhere"), "nowhere");
}

TEST(InspectCli, UsageErrorExitsTwo) {
  auto r = pt::run_process({PORTBENCH_BIN, "inspect"});
  EXPECT_EQ(r.exit_code, 2);
}

}  // namespace
