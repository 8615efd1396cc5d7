// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include "portbench/store/error.hpp"
#include "portbench/store/merge.hpp"
#include "portbench/store/reader.hpp"
#include "portbench/store/writer.hpp"
#include "test_data.hpp"

namespace portbench::store {
namespace {

using testing::temp_file;
using testing::test_config;
using testing::test_provenance;
using testing::test_run;

std::filesystem::path write_shard(const std::string& name, std::vector<int> cfgs, int runs,
                                  std::int64_t base, provenance prov = test_provenance()) {
  auto path = temp_file(name);
  auto w = results_writer::create(path, prov);
  for (int c : cfgs) {
    w.add_config(test_config(c));
    for (int run = 0; run < runs; ++run) {
      w.append(test_run(test_config(c), role::reference, run, base + run));
      w.append(test_run(test_config(c), role::port, run, base + 50 + run));
    }
  }
  return path;
}

TEST(StoreMerge, ShardsAndRepeatedRunsCombine) {
  auto a = read_results(write_shard("shard_a.h5", {0, 1}, 2, 1000));
  auto b = read_results(write_shard("shard_b.h5", {2}, 2, 2000));
  auto c = read_results(write_shard("more_runs.h5", {0}, 2, 3000));
  merge_summary s1 = merge_into(a, b, {});
  EXPECT_EQ(s1.configs_added, 1u);
  EXPECT_EQ(s1.runs_added, 4u);
  merge_summary s2 = merge_into(a, c, {});
  EXPECT_EQ(s2.configs_added, 0u);
  EXPECT_EQ(s2.runs_added, 4u);
  ASSERT_EQ(a.configs.size(), 3u);
  const role_results* ref = a.find(test_config(0).id)->find(role::reference);
  ASSERT_EQ(ref->runs.size(), 4u);
  EXPECT_EQ(ref->runs[2].run, 2);
  EXPECT_EQ(ref->runs[3].run, 3);
  EXPECT_EQ(ref->runs[3].time_ns.front(), 3001);

  merge_summary dup = merge_into(a, b, {});  // the same shard again
  EXPECT_EQ(dup.duplicate_runs_skipped, 4u);
  EXPECT_EQ(dup.runs_added, 0u);

  auto out = temp_file("merged.h5");
  write_results(out, a);
  results_file back = read_results(out);
  EXPECT_EQ(back.run_count(), 16u);
  EXPECT_NE(back.provenance.extra.at("merged_from").find("shard_b.h5"), std::string::npos);
}

TEST(StoreMerge, RefusesOtherSuiteOrGpuUnlessForced) {
  auto a = read_results(write_shard("suite_a.h5", {0}, 1, 1000));
  auto b = read_results(write_shard("suite_b.h5", {1}, 1, 1000, test_provenance("nightly", "NVIDIA B200")));
  try {
    merge_into(a, b, {});
    FAIL() << "merge should refuse";
  } catch (const store_error& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("different suite ('smoke' vs 'nightly')"), std::string::npos) << msg;
    EXPECT_NE(msg.find("different GPU"), std::string::npos) << msg;
  }
  merge_summary s = merge_into(a, b, {.force = true});
  EXPECT_EQ(s.configs_added, 1u);
  EXPECT_FALSE(s.notes.empty());
}

TEST(StoreMerge, RefusesFilesFlushedDifferentlyUnlessForced) {
  // Timing options as `portbench run` records them (sweep/record.cpp): before 2026-12-04 without
  // `l2_flush` (the overwriting flush), since then with it; --warm-l2 files flush nothing.
  auto with_timing = [](const std::string& timing) {
    provenance p = test_provenance();
    p.extra["timing"] = timing;
    return p;
  };
  const auto clean = with_timing(R"j({"cold_l2": true, "l2_flush": "read twice the L2 size (clean)", "runs": 4})j");
  const auto old = with_timing(R"({"cold_l2": true, "runs": 4})");
  const auto warm_new = with_timing(R"({"cold_l2": false, "l2_flush": "none"})");
  const auto warm_old = with_timing(R"({"cold_l2": false})");
  const auto hard = hard_conflicts(old, clean);
  ASSERT_EQ(hard.size(), 1u);
  EXPECT_EQ(hard[0], "different L2 flush ('overwrite twice the L2 size (before 2026-12-04)' vs 'read twice the L2 size "
                     "(clean)')");
  EXPECT_TRUE(hard_conflicts(clean, clean).empty());
  EXPECT_TRUE(hard_conflicts(warm_old, warm_new).empty()) << "no flush either way";
  EXPECT_EQ(hard_conflicts(warm_new, clean).size(), 1u);
  EXPECT_TRUE(hard_conflicts(test_provenance(), clean).empty()) << "a file without timing options has nothing to compare";
  auto a = read_results(write_shard("flush_old.h5", {0}, 1, 1000, old));
  auto b = read_results(write_shard("flush_clean.h5", {1}, 1, 1000, clean));
  try {
    merge_into(a, b, {});
    FAIL() << "merge should refuse";
  } catch (const store_error& e) {
    EXPECT_NE(std::string(e.what()).find("different L2 flush"), std::string::npos) << e.what();
  }
  EXPECT_EQ(merge_into(a, b, {.force = true}).configs_added, 1u);
}

}  // namespace
provenance shard_provenance(const std::string& slice, std::size_t plan_configs) {
  provenance p = test_provenance();
  p.extra["shard"] = slice;
  p.extra["shard_plan_configs"] = std::to_string(plan_configs);
  return p;
}

std::string coverage_error(const std::vector<const results_file*>& files) {
  try {
    (void)check_shard_coverage(files);
  } catch (const store_error& e) {
    return e.what();
  }
  return "(no error)";
}

// Real files as `run --shard` writes them: three slices of a 5-configuration plan.
TEST(StoreMerge, ShardCoverageAcceptsEachSliceOnceAndNamesEveryGap) {
  auto s0 = read_results(write_shard("cov0.h5", {0, 3}, 1, 1000, shard_provenance("0/3", 5)));
  auto s1 = read_results(write_shard("cov1.h5", {1}, 1, 2000, shard_provenance("1/3", 5)));
  auto s2 = read_results(write_shard("cov2.h5", {2, 4}, 1, 3000, shard_provenance("2/3", 5)));
  auto extra_runs = read_results(write_shard("cov_more.h5", {1}, 1, 4000));
  EXPECT_EQ(check_shard_coverage({&s0, &s1, &s2}), "shards 0..2 of 3 cover the plan's 5 configurations exactly once");
  EXPECT_EQ(check_shard_coverage({&s2, &extra_runs, &s0, &s1}),
            "shards 0..2 of 3 cover the plan's 5 configurations exactly once");
  EXPECT_EQ(check_shard_coverage({&extra_runs}), "");

  EXPECT_EQ(coverage_error({&s0, &s2}), s0.path.string() + ": shards of 3 without shard(s) 1");
  EXPECT_EQ(coverage_error({&s0, &s1, &s1, &s2}), s1.path.string() + ": shard 1/3 is also " + s1.path.string());
  auto overlap = read_results(write_shard("cov_overlap.h5", {1, 3}, 1, 5000, shard_provenance("1/3", 5)));
  EXPECT_EQ(coverage_error({&s0, &overlap, &s2}),
            overlap.path.string() + ": configuration '" + test_config(3).id + "' is in shard 1 and in shard 0 (" +
                s0.path.string() + ")");
  auto other_plan = read_results(write_shard("cov_other.h5", {1}, 1, 6000, shard_provenance("1/4", 5)));
  EXPECT_EQ(coverage_error({&s0, &other_plan}), other_plan.path.string() +
                                                   ": shard 1/4 of a 5-configuration plan does not belong with " +
                                                   s0.path.string() + " (shard 0/3 of 5)");
  auto short_slice = read_results(write_shard("cov_short.h5", {2}, 1, 7000, shard_provenance("2/3", 5)));
  EXPECT_EQ(coverage_error({&s0, &s1, &short_slice}),
            s0.path.string() + ": the 3 shards hold 4 configurations, their plan had 5");
  auto bad = read_results(write_shard("cov_bad.h5", {0}, 1, 8000, shard_provenance("3/3", 5)));
  EXPECT_EQ(coverage_error({&bad}), bad.path.string() + ": attribute shard: '3/3' is not K/N with 0 <= K < N");
}

}  // namespace portbench::store
