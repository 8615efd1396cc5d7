// SPDX-License-Identifier: Apache-2.0
// `portbench run` as a process: bad input is one line and exit 2; a machine without a GPU says
// once why it cannot run and exits 2 without a results file; the documented defaults; --list
// and --dry-run need no GPU.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "portbench/store/reader.hpp"
#include "run_helpers.hpp"
#include "test_support.hpp"

namespace pt = portbench::testing;
namespace ps = portbench::store;

namespace {

std::string suite() { return pt::smoke_suite(); }
using pt::python_to_rust;
using pt::with;

int lines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

TEST(RunCli, MissingSuiteIsOneLineAndExitTwo) {
  pt::temp_dir tmp;
  auto r = pt::run_process({PORTBENCH_BIN, "run", "--ref", (pt::bundle_root() / "cuda_cpp").string(), "--aa",
                            "--suite", (tmp.path() / "nope.json").string(), "--out", (tmp.path() / "x.h5").string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "portbench: error: " + (tmp.path() / "nope.json").string() + ": cannot open suite (missing file?)\n");
}

TEST(RunCli, MissingBundleFolderIsOneLineAndExitTwo) {
  pt::temp_dir tmp;
  auto r = pt::run_process({PORTBENCH_BIN, "run", "--ref", (tmp.path() / "nothing").string(), "--aa", "--suite",
                            suite(), "--out", (tmp.path() / "x.h5").string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "portbench: error: " + (tmp.path() / "nothing").string() + ": no such folder\n");
}

TEST(RunCli, NoDeviceSaysOnceWhyAndExitsTwoWithoutAFile) {
  // This machine has no GPU (the gpu tests skip here); the real worker cannot describe device 0.
  pt::temp_dir tmp;
  auto r = pt::run_process(with(python_to_rust(tmp), {"--runs", "2"}));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(lines(r.err), 1) << r.err;
  EXPECT_EQ(r.err.rfind("portbench: error: device 0: cannot run here: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("libcuda"), std::string::npos) << "the reason, not just a code: " << r.err;
  EXPECT_FALSE(std::filesystem::exists(tmp.path() / "r.h5"));
  EXPECT_TRUE(r.out.empty()) << r.out;
}

TEST(RunCli, ListAndDryRunNeedNoDevice) {
  pt::temp_dir tmp;
  auto list = pt::run_process(with(python_to_rust(tmp), {"--list", "--op", "rms_norm", "--format", "json"}));
  ASSERT_EQ(list.exit_code, 0) << list.err;
  auto rows = nlohmann::json::parse(list.out);
  ASSERT_TRUE(rows.is_array());
  ASSERT_FALSE(rows.empty());
  for (const auto& row : rows) {
    EXPECT_EQ(row["operator"], "rms_norm");
    EXPECT_EQ(row["reference"], "cutile_python");
    EXPECT_EQ(row["port"], "cutile_rust");
  }
  auto csv = pt::run_process(with(python_to_rust(tmp), {"--list", "--format", "csv", "--op", "vector_add"}));
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_EQ(csv.out.rfind("configuration,operator,reference,port\n", 0), 0u) << csv.out;
  EXPECT_FALSE(std::filesystem::exists(tmp.path() / "r.h5")) << "--list writes nothing";
  // Without --out a dry run writes nothing; with it, the plan: configurations declared, no runs.
  auto quiet = pt::run_process({PORTBENCH_BIN, "run", "--ref", (pt::bundle_root() / "cutile_python").string(), "--port",
                                (pt::bundle_root() / "cutile_rust").string(), "--suite", suite(), "--dry-run"});
  ASSERT_EQ(quiet.exit_code, 0) << quiet.err;
  EXPECT_EQ(quiet.out.find("plan written"), std::string::npos) << quiet.out;
  auto dry = pt::run_process(with(python_to_rust(tmp), {"--dry-run", "--filter", "^vector_add/", "--runs", "3"}));
  ASSERT_EQ(dry.exit_code, 0) << dry.err;
  EXPECT_NE(dry.out.find("estimated_s"), std::string::npos) << dry.out;
  EXPECT_NE(dry.out.find("x 3 run(s) on 1 device(s), 3 worker processes; estimated wall ~"), std::string::npos) << dry.out;
  EXPECT_EQ(dry.out.find("rms_norm"), std::string::npos) << "the filter keeps vector_add only";
  const auto plan = ps::read_results(tmp.path() / "r.h5");
  ASSERT_FALSE(plan.configs.empty());
  EXPECT_EQ(plan.run_count(), 0u);
  for (const auto& c : plan.configs) EXPECT_EQ(c.info.op, "vector_add") << c.info.id;
  EXPECT_NE(dry.out.find("plan written: " + (tmp.path() / "r.h5").string() + " (" + std::to_string(plan.configs.size()) +
                         " configurations)"),
            std::string::npos)
      << dry.out;
}

// `--shard K/N` slices of a --dry-run plan, as the Slurm array writes them: `merge` proves they
// cover the plan exactly once and refuses a set with a slice missing or given twice.
TEST(RunCli, ShardedDryRunsMergeIntoThePlanExactlyOnce) {
  pt::temp_dir tmp;
  const int n = 3;
  std::vector<std::string> files;
  std::map<std::string, int> owner;
  for (int k = 0; k < n; ++k) {
    const std::string name = "shard-" + std::to_string(k) + ".h5";
    auto r = pt::run_process(with(python_to_rust(tmp, name), {"--dry-run", "--runs", "4", "--shard", std::to_string(k) + "/" + std::to_string(n)}));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("(shard " + std::to_string(k) + "/3: "), std::string::npos) << r.out;
    files.push_back((tmp.path() / name).string());
    for (const auto& c : ps::read_results(files.back()).configs) EXPECT_TRUE(owner.emplace(c.info.id, k).second) << c.info.id;
  }
  auto whole = pt::run_process(with(python_to_rust(tmp, "whole.h5"), {"--dry-run"}));
  ASSERT_EQ(whole.exit_code, 0) << whole.err;
  const auto all = ps::read_results(tmp.path() / "whole.h5");
  EXPECT_EQ(owner.size(), all.configs.size());

  const auto merged = (tmp.path() / "merged.h5").string();
  auto m = pt::run_process({PORTBENCH_BIN, "merge", merged, files[2], files[0], files[1]});
  ASSERT_EQ(m.exit_code, 0) << m.err;
  EXPECT_NE(m.err.find("shards 0..2 of 3 cover the plan's " + std::to_string(all.configs.size()) +
                       " configurations exactly once"),
            std::string::npos)
      << m.err;
  const auto back = ps::read_results(merged);
  EXPECT_EQ(back.configs.size(), all.configs.size());
  EXPECT_EQ(back.provenance.extra.count("shard"), 0u);
  EXPECT_EQ(back.provenance.extra.at("merged_shards"), "3");

  auto gap = pt::run_process({PORTBENCH_BIN, "merge", (tmp.path() / "gap.h5").string(), files[0], files[2]});
  EXPECT_NE(gap.exit_code, 0);
  EXPECT_NE(gap.err.find("shards of 3 without shard(s) 1"), std::string::npos) << gap.err;
  EXPECT_FALSE(std::filesystem::exists(tmp.path() / "gap.h5"));
  auto twice = pt::run_process({PORTBENCH_BIN, "merge", (tmp.path() / "twice.h5").string(), files[0], files[1], files[1], files[2]});
  EXPECT_NE(twice.exit_code, 0);
  EXPECT_NE(twice.err.find("shard 1/3 is also"), std::string::npos) << twice.err;
  auto bad = pt::run_process(with(python_to_rust(tmp, "bad.h5"), {"--dry-run", "--shard", "3/3"}));
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.err, "portbench: error: --shard: '3/3': K must be below N (expected K/N with 0 <= K < N, e.g. 0/4)\n");
}

TEST(RunCli, NothingSelectedIsOneLineAndExitTwo) {
  pt::temp_dir tmp;
  auto r = pt::run_process(with(python_to_rust(tmp), {"--op", "no_such_operator", "--list"}));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("no configuration is supported by both sides (20 left out by --op/--filter)"), std::string::npos)
      << r.err;
  auto bad = pt::run_process(with(python_to_rust(tmp), {"--filter", "[", "--list"}));
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.err.rfind("portbench: error: --filter: invalid regular expression '['", 0), 0u) << bad.err;
}

TEST(RunCli, DefaultsAreTheTilegymReferenceAndTheCutileRustPortOnSmoke) {
  // From a folder holding bundles/ and configs/ as the README's one command expects.
  pt::temp_dir tmp;
  std::filesystem::create_directories(tmp.path() / "bundles");
  std::filesystem::create_directories(tmp.path() / "configs");
  std::filesystem::copy(suite(), tmp.path() / "configs" / "smoke.json");
  auto missing = pt::run_process({"/bin/sh", "-c", "cd '" + tmp.path().string() + "' && exec '" PORTBENCH_BIN "' run --list"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_EQ(missing.err.rfind("portbench: error: bundles/tilegym: the default reference bundle folder is missing", 0), 0u)
      << missing.err;
  // A stand-in for the tilegym export (being written): the cuTile Python bundles, same kernels.
  std::filesystem::create_directory_symlink(pt::bundle_root() / "cutile_python", tmp.path() / "bundles" / "tilegym");
  auto no_port = pt::run_process({"/bin/sh", "-c", "cd '" + tmp.path().string() + "' && exec '" PORTBENCH_BIN "' run --list"});
  EXPECT_EQ(no_port.exit_code, 2);
  EXPECT_EQ(no_port.err.rfind("portbench: error: bundles/cutile_rust: the default port bundle folder is missing", 0), 0u)
      << no_port.err;
  std::filesystem::create_directory_symlink(pt::bundle_root() / "cutile_rust", tmp.path() / "bundles" / "cutile_rust");
  auto ok = pt::run_process({"/bin/sh", "-c", "cd '" + tmp.path().string() + "' && exec '" PORTBENCH_BIN "' run --list --format json"});
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  auto rows = nlohmann::json::parse(ok.out);
  EXPECT_GE(rows.size(), 7u);
  EXPECT_EQ(rows.front()["port"], "cutile_rust");
}

}  // namespace

namespace {

// `portbench run` with a worker that misbehaves per configuration (PORTBENCH_WORKER_EXE, the
// documented hook): every misbehaviour is that configuration's recorded outcome, the file holds
// every configuration, and the exit code is the documented 1. Prints the record.
using RunCliMisbehaving = pt::FakeWorkerTest;

TEST_F(RunCliMisbehaving, EachMisbehaviourIsRecordedAndTheRunExitsOne) {
  const std::vector<std::pair<std::string, std::string>> plan = {
      {"vector_add/dtype=float32,n=1048576", "crash"},       {"vector_add/dtype=float32,n=67108864", "hang"},
      {"vector_add/dtype=float32,n=1000003", "bad_report"},  {"rms_norm/dtype=float16,m=4096,n=1024", "half_line"},
      {"rms_norm/dtype=float16,m=333,n=768", "exit_mid"},    {"mode=static_persistent", "segv"},
      {"rms_norm/dtype=bfloat16,m=4096,n=4096", "noise"},    {"rms_norm/dtype=float32,m=2048", "exit_early"}};
  std::string spec;
  for (const auto& [id, b] : plan) spec += id + "=" + b + ";";
  ::setenv("PORTBENCH_FAKE_WORKER", spec.c_str(), 1);
  pt::temp_dir tmp;
  auto r = pt::run_process(with(python_to_rust(tmp), {"--op", "vector_add", "--op", "rms_norm", "--runs", "2", "--timeout", "1"}));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const auto file = ps::read_results(tmp.path() / "r.h5");
  ASSERT_EQ(file.configs.size(), 8u);
  EXPECT_EQ(file.provenance.gpu_name, "Fake GPU 0");
  const std::map<std::string, std::string> expected = {{"crash", "CRASH: worker died (signal 6"},
      {"hang", "HANG: no word from the worker for 1 s"}, {"bad_report", "BAD_REPORT: malformed worker report"},
      {"half_line", "CRASH: worker died (exit 1) in the middle of its report line"},
      {"exit_mid", "CRASH: worker died (exit 0)"}, {"segv", "CRASH: worker died (signal 11"}, {"noise", ""},
      {"exit_early", "ERROR: the worker ended before starting it (exit 0)"}};
  std::printf("%-52s %-11s %s\n", "configuration", "fake", "recorded error (both runs, both roles)");
  for (const auto& c : file.configs) {
    std::string b;
    for (const auto& [id, behaviour] : plan) {
      if (c.info.id.find(id) != std::string::npos) b = behaviour;
    }
    ASSERT_FALSE(b.empty()) << c.info.id;
    for (const auto& side : c.roles) {
      ASSERT_EQ(side.runs.size(), 2u) << c.info.id;
      for (const auto& run : side.runs) {
        EXPECT_EQ(run.error.rfind(expected.at(b), 0), 0u) << c.info.id << ": " << run.error;
        if (b == "noise") {
          EXPECT_EQ(run.verdicts.timing, "VALID");
          EXPECT_EQ(run.stats.count, 8);
        } else {
          EXPECT_EQ(run.verdicts.numerics, "NOT_CHECKED") << "nothing checked is never a pass";
        }
      }
    }
    std::printf("%-52s %-11s %.80s\n", c.info.id.c_str(), b.c_str(), c.roles.front().runs.front().error.c_str());
  }
  std::printf("portbench run exit code: %d\n", r.exit_code);
  EXPECT_NE(r.out.find("geomean (port/ref speed, 1 configurations): "), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("worker output lines were not protocol lines"), std::string::npos) << r.err;
}

TEST_F(RunCliMisbehaving, AHealthyRunExitsZeroWithEveryRunOnFile) {
  pt::temp_dir tmp;
  auto r = pt::run_process(with(python_to_rust(tmp), {"--runs", "3", "--format", "json"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["exit_code"], 0);
  EXPECT_EQ(doc["configuration_runs"], 3 * static_cast<int>(doc["configurations"].size()));
  const auto file = ps::read_results(tmp.path() / "r.h5");
  EXPECT_EQ(file.run_count(), 2 * 3 * file.configs.size());
  for (const auto& row : doc["configurations"]) {
    EXPECT_EQ(row["status"], "OK");
    EXPECT_NEAR(row["ratio"].get<double>(), 1035.0 / 1040.0, 1e-12);   // the fake's medians
  }
}

}  // namespace
