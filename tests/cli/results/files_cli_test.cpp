// SPDX-License-Identifier: Apache-2.0
// Bad files give one-line errors and exit 2; a killed writer leaves a readable file that resume
// completes; merge refuses other suites unless forced; export-gbench writes Google Benchmark JSON.
#include <gtest/gtest.h>
#include <hdf5.h>

#include <nlohmann/json.hpp>

#include "process.hpp"
#include "synth.hpp"

namespace portbench::testing {
namespace {

synth_options tiny(const std::string& suite = "synthetic") {
  synth_options o;
  o.configs = 9;
  o.operators = 3;
  o.runs = 2;
  o.min_samples = 20;
  o.max_samples = 40;
  o.suite = suite;
  o.overwrite = true;
  return o;
}

void expect_file_error(const process_result& r, const std::filesystem::path& path, const std::string& cause) {
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(line_count(r.err), 1) << r.err;
  EXPECT_EQ(r.err.rfind("portbench: error: " + path.string() + ": ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find(cause), std::string::npos) << r.err;
}

TEST(FilesCli, TruncatedFile) {
  auto path = scratch_dir() / "truncated.h5";
  write_synthetic(path, tiny());
  std::filesystem::resize_file(path, std::filesystem::file_size(path) / 3);
  for (const char* cmd : {"report", "export-gbench"}) {
    expect_file_error(portbench({cmd, path.string()}), path, "truncated");
  }
}

TEST(FilesCli, ForeignHdf5File) {
  auto path = scratch_dir() / "foreign.h5";
  hid_t f = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  ASSERT_GE(f, 0);
  hsize_t dims[1] = {4};
  hid_t space = H5Screate_simple(1, dims, nullptr);
  hid_t ds = H5Dcreate2(f, "x", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  double data[4] = {1.5, 2.5, 3.5, 4.5};
  H5Dwrite(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, data);
  H5Dclose(ds);
  H5Sclose(space);
  H5Fclose(f);
  expect_file_error(portbench({"report", path.string()}), path, "not a portbench results file");
  auto good = scratch_dir() / "good_for_compare.h5";
  write_synthetic(good, tiny());
  expect_file_error(portbench({"compare", good.string(), path.string()}), path,
                    "not a portbench results file");
}

TEST(FilesCli, MissingFile) {
  auto path = scratch_dir() / "missing.h5";
  std::filesystem::remove(path);
  expect_file_error(portbench({"report", path.string()}), path, "no such file");
  auto out = scratch_dir() / "merged_missing.h5";
  std::filesystem::remove(out);
  expect_file_error(portbench({"merge", out.string(), path.string()}), path, "no such file");
}

TEST(FilesCli, KilledWriterLeavesReadableFileAndResumeCompletesIt) {
  auto path = scratch_dir() / "killed.h5";
  std::filesystem::remove(path);
  process_result killed = run_process({PORTBENCH_SYNTH_BIN, path.string(), "--configs", "9", "--operators", "3",
                                       "--runs", "2", "--min-samples", "20", "--max-samples", "40",
                                       "--exit-after", "13"});
  ASSERT_EQ(killed.rc, 0) << killed.err;
  EXPECT_EQ(killed.out, "") << "the writer must die before printing";

  process_result partial = portbench({"report", path.string(), "--format", "json"});
  ASSERT_EQ(partial.rc, 0) << partial.err;
  auto pj = nlohmann::json::parse(partial.out);
  EXPECT_EQ(pj["overall"]["configs"], 4);  // 13 runs = 3 whole configurations + 1 of the 4th

  process_result resumed = run_process({PORTBENCH_SYNTH_BIN, path.string(), "--configs", "9", "--operators", "3",
                                        "--runs", "2", "--min-samples", "20", "--max-samples", "40",
                                        "--resume"});
  ASSERT_EQ(resumed.rc, 0) << resumed.err;
  EXPECT_NE(resumed.out.find("wrote 23 runs, skipped 13 existing"), std::string::npos) << resumed.out;

  auto fresh = scratch_dir() / "unkilled.h5";
  write_synthetic(fresh, tiny());
  process_result a = portbench({"report", path.string(), "--format", "json"});
  process_result b = portbench({"report", fresh.string(), "--format", "json"});
  ASSERT_EQ(a.rc, 0);
  auto ja = nlohmann::json::parse(a.out);
  auto jb = nlohmann::json::parse(b.out);
  EXPECT_EQ(ja["overall"]["paired"], 9);
  EXPECT_EQ(ja["overall"], jb["overall"]);  // same seeds: the resumed file equals an unkilled one
}

TEST(FilesCli, MergeShardsAndRefuseOtherSuites) {
  auto a = scratch_dir() / "shard_a.h5";
  auto b = scratch_dir() / "shard_b.h5";
  auto other = scratch_dir() / "other_suite.h5";
  auto out = scratch_dir() / "merged.h5";
  synth_options oa = tiny();
  write_synthetic(a, oa);
  synth_options ob = tiny();
  ob.noise_seed = 77;  // more runs of the same configurations
  write_synthetic(b, ob);
  write_synthetic(other, tiny("nightly"));
  std::filesystem::remove(out);

  process_result m = portbench({"merge", out.string(), a.string(), b.string()});
  ASSERT_EQ(m.rc, 0) << m.err;
  EXPECT_NE(m.out.find("9 configurations, 72 runs"), std::string::npos) << m.out;

  process_result refused = portbench({"merge", "--overwrite", out.string(), a.string(), other.string()});
  EXPECT_EQ(refused.rc, 2);
  EXPECT_EQ(line_count(refused.err), 1) << refused.err;
  EXPECT_NE(refused.err.find("different suite ('synthetic' vs 'nightly')"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("--force"), std::string::npos) << refused.err;

  process_result forced = portbench({"merge", "--overwrite", "--force", out.string(), a.string(), other.string()});
  EXPECT_EQ(forced.rc, 0) << forced.err;

  process_result report = portbench({"report", a.string(), b.string(), "--format", "json"});
  ASSERT_EQ(report.rc, 0) << report.err;
  auto j = nlohmann::json::parse(report.out);
  EXPECT_EQ(j["configs"][0]["reference"]["timed_runs"], 4);
}

TEST(FilesCli, ExportGbenchHasCompareFields) {
  auto path = scratch_dir() / "gbench.h5";
  auto out = scratch_dir() / "gbench.json";
  write_synthetic(path, tiny());
  process_result r = portbench({"export-gbench", path.string(), "--out", out.string()});
  ASSERT_EQ(r.rc, 0) << r.err;
  auto j = nlohmann::json::parse(read_file(out));
  ASSERT_TRUE(j.contains("context"));
  EXPECT_EQ(j["context"]["gpu_name"], "NVIDIA H200");
  auto& benches = j["benchmarks"];
  EXPECT_EQ(benches.size(), 9u * 2u * 3u);  // 2 runs + 1 "_min" aggregate per (config, role)
  for (const auto& b : benches) {
    for (const char* key : {"name", "run_name", "run_type", "real_time", "cpu_time", "time_unit",
                            "iterations", "repetitions", "family_index", "per_family_instance_index"}) {
      EXPECT_TRUE(b.contains(key)) << key << " in " << b.dump();
    }
    EXPECT_EQ(b["time_unit"], "ns");
    EXPECT_GT(b["real_time"].get<double>(), 0.0);
  }
  EXPECT_EQ(benches[0]["run_type"], "iteration");
  EXPECT_EQ(benches[2]["run_type"], "aggregate");
  EXPECT_EQ(benches[2]["aggregate_name"], "min");
}

}  // namespace
}  // namespace portbench::testing
