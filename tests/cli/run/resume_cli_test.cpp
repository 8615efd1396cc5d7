// SPDX-License-Identifier: Apache-2.0
// `portbench run --resume`: appends to a file measured the same way, and refuses, in one line
// naming the difference, a file whose suite, bundles, GPU, seed or timing options differ. The
// revision on file is the binary's, wherever it runs. The fake worker stands in for the GPU.
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>

#include "portbench/store/reader.hpp"
#include "run_helpers.hpp"

namespace pt = portbench::testing;
namespace ps = portbench::store;
namespace fs = std::filesystem;

namespace {

using ResumeCli = pt::FakeWorkerTest;

TEST_F(ResumeCli, MoreRunsAreAppendedToAFileMeasuredTheSameWay) {
  pt::temp_dir tmp;
  auto first = pt::run_process(pt::with(pt::python_to_rust(tmp), {"--op", "rms_norm", "--runs", "1"}));
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const auto before = ps::read_results(tmp.path() / "r.h5").run_count();
  auto second = pt::run_process(pt::with(pt::python_to_rust(tmp), {"--op", "rms_norm", "--runs", "3", "--resume"}));
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_NE(second.err.find("resumed: " + std::to_string(before) + " runs were already on file"), std::string::npos)
      << second.err;
  const auto file = ps::read_results(tmp.path() / "r.h5");
  EXPECT_EQ(file.run_count(), 3 * before);
  for (const auto& c : file.configs) {
    for (const auto& side : c.roles) ASSERT_EQ(side.runs.size(), 3u) << c.info.id;
  }
  // Fewer operators than the file holds is fine too: nothing is left to run for them.
  auto subset = pt::run_process(pt::with(pt::python_to_rust(tmp), {"--op", "rms_norm", "--filter", "m=4096", "--runs", "3", "--resume"}));
  EXPECT_EQ(subset.exit_code, 0) << subset.err;
  EXPECT_EQ(ps::read_results(tmp.path() / "r.h5").run_count(), 3 * before);
}

TEST_F(ResumeCli, ADifferentlyMeasuredFileIsRefusedNamingTheDifference) {
  pt::temp_dir tmp;
  auto first = pt::run_process(pt::with(pt::python_to_rust(tmp), {"--op", "vector_add", "--runs", "1"}));
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const auto original = pt::read_bytes(tmp.path() / "r.h5");
  auto refused = [&](const std::vector<std::string>& argv, const std::string& difference) {
    auto r = pt::run_process(argv);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_EQ(r.err.rfind("portbench: error: " + (tmp.path() / "r.h5").string() + ": cannot resume: ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find(difference), std::string::npos) << r.err;
    EXPECT_EQ(pt::read_bytes(tmp.path() / "r.h5"), original) << "a refused resume leaves the file alone";
  };
  const auto base = pt::with(pt::python_to_rust(tmp), {"--op", "vector_add", "--runs", "2", "--resume"});
  refused(pt::with(base, {"--max-samples", "50"}), "timing option max_samples: the file has 200, this call 50");
  refused(pt::with(base, {"--warm-l2"}), "timing option cold_l2: the file has true, this call false");
  refused(pt::with(base, {"--vary-inputs"}), "timing option vary_inputs: the file has false, this call true");
  refused(pt::with(base, {"--seed", "7"}), "seed: the file has '1', this call '7'");
  refused(pt::with(base, {"--devices", "1"}), "GPU: the file has 'Fake GPU 0', this call 'Fake GPU 1'");
  // Another suite (same configurations, another name).
  auto other = tmp.path() / "other.json";
  auto text = pt::read_text(pt::smoke_suite());
  text.replace(text.find("\"smoke\""), 7, "\"other\"");
  pt::write_text(other, text);
  auto with_other = base;
  with_other[7] = other.string();
  refused(with_other, "suite: the file has 'smoke', this call 'other'");
  // Another port bundle: the same kernels under an edited manifest.
  const auto port = tmp.path() / "port";
  fs::create_directories(port);
  fs::copy(pt::bundle_root() / "cutile_rust" / "vector_add", port / "vector_add", fs::copy_options::recursive);
  pt::write_text(port / "vector_add" / "manifest.json", pt::read_text(port / "vector_add" / "manifest.json") + "\n");
  auto with_port = base;
  with_port[5] = port.string();
  refused(with_port, "bundles: port cutile_rust/vector_add manifest differs (file sha256 ");
  // Several differences: all of them, on the one line.
  refused(pt::with(base, {"--seed", "7", "--max-samples", "50"}), "seed: the file has '1', this call '7'; timing option");
}

TEST_F(ResumeCli, TheRevisionOnFileIsTheBinarysWhereverItRuns) {
  pt::temp_dir tmp;
  auto version = pt::run_process({PORTBENCH_BIN, "--version"});
  ASSERT_EQ(version.exit_code, 0);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(version.out, m, std::regex(R"(\(revision ([^)]+)\))"))) << version.out;
  const std::string revision = m[1];
  EXPECT_TRUE(std::regex_match(revision, std::regex("[0-9a-f]{40}(-dirty-[0-9a-f]{12})?|unknown"))) << revision;
  // From a folder that is no git checkout: the old code asked `git rev-parse` there.
  std::string cmd = "cd '" + tmp.path().string() + "' && exec";
  for (const auto& a : pt::with(pt::python_to_rust(tmp), {"--op", "vector_add", "--runs", "1"})) cmd += " '" + a + "'";
  auto r = pt::run_process({"/bin/sh", "-c", cmd});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto prov = ps::read_provenance(tmp.path() / "r.h5");
  EXPECT_EQ(prov.git_revision, revision);
  EXPECT_EQ(prov.portbench_version, "0.1.0");
  EXPECT_NE(prov.extra.at("timing").find("\"max_samples\":200"), std::string::npos) << prov.extra.at("timing");
}

}  // namespace
