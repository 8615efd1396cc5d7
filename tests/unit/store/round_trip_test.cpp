// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <cmath>
#include <type_traits>

#include "portbench/store/error.hpp"
#include "portbench/store/reader.hpp"
#include "portbench/store/writer.hpp"
#include "test_data.hpp"

namespace portbench::store {
namespace {

using testing::temp_file;
using testing::test_config;
using testing::test_provenance;
using testing::test_run;

static_assert(!std::is_copy_constructible_v<results_writer>);
static_assert(std::is_nothrow_move_constructible_v<results_writer>);

TEST(StoreRoundTrip, ProvenanceConfigsRunsAndStatistics) {
  auto path = temp_file("round_trip.h5");
  provenance prov = test_provenance();
  {
    auto w = results_writer::create(path, prov);
    for (int c = 0; c < 2; ++c) {
      w.add_config(test_config(c));
      for (int run = 0; run < 3; ++run) {
        w.append(test_run(test_config(c), role::reference, run, 10000 + 100 * run));
        w.append(test_run(test_config(c), role::port, run, 9000 + 100 * run));
      }
    }
    w.close();
  }
  results_file f = read_results(path);
  EXPECT_EQ(f.provenance.schema, "portbench.results/1");
  EXPECT_FALSE(f.provenance.created_utc.empty());
  prov.created_utc = f.provenance.created_utc;
  EXPECT_EQ(f.provenance, prov);
  ASSERT_EQ(f.configs.size(), 2u);
  EXPECT_EQ(f.configs[0].info, test_config(0));
  EXPECT_EQ(f.configs[1].info, test_config(1));
  EXPECT_EQ(f.incomplete_runs, 0);
  const role_results* port = f.configs[1].find(role::port);
  ASSERT_NE(port, nullptr);
  EXPECT_EQ(port->frontend, "cutile_rust");
  ASSERT_EQ(port->runs.size(), 3u);
  const run_record& r = port->runs[2];
  EXPECT_EQ(r.run, 2);
  EXPECT_EQ(r.time_ns.size(), 21u);
  EXPECT_EQ(r.time_ns.front(), 9200);
  EXPECT_EQ(r.sm_clock_mhz.size(), 21u);
  EXPECT_EQ(r.event_time_ns.front(), 13200);
  EXPECT_EQ(r.stats.count, 21);
  EXPECT_DOUBLE_EQ(r.stats.median_ns, 9210.0);
  EXPECT_DOUBLE_EQ(r.stats.min_ns, 9200.0);
  EXPECT_DOUBLE_EQ(r.stats.max_ns, 9220.0);
  EXPECT_GT(r.stats.median_rel_ci, 0.0);
  EXPECT_LT(r.stats.median_rel_ci, 0.01);
  EXPECT_EQ(r.verdicts.numerics, "PASS");
  EXPECT_EQ(r.verdicts.proof, "EXECUTED");
  EXPECT_EQ(r.verdicts.timing, "VALID");
  EXPECT_EQ(r.numerics_source, r.run == 0 ? "VERIFIED" : "REUSED");
  EXPECT_EQ(r.output_digest, "y:00112233445566778899aabbccddee" + std::to_string(10 + r.run));
  EXPECT_TRUE(r.has_valid_timing());
}

TEST(StoreRoundTrip, WithoutSamplesKeepsStatistics) {
  auto path = temp_file("no_samples.h5");
  {
    auto w = results_writer::create(path, test_provenance());
    w.add_config(test_config(0));
    w.append(test_run(test_config(0), role::reference, 0, 5000));
  }
  results_file f = read_results(path, {.samples = false});
  const run_record& r = f.configs.at(0).roles.at(0).runs.at(0);
  EXPECT_TRUE(r.time_ns.empty());
  EXPECT_EQ(r.stats.count, 21);
  EXPECT_DOUBLE_EQ(r.stats.median_ns, 5010.0);
}

TEST(StoreRoundTrip, FailedRunKeepsErrorAndVerdicts) {
  auto path = temp_file("failed.h5");
  {
    auto w = results_writer::create(path, test_provenance());
    w.add_config(test_config(0));
    run_record r = test_run(test_config(0), role::port, 0, 1000, 0);
    r.verdicts = {"NOT_CHECKED", "NOT_EXECUTED", "INVALID_NO_SAMPLES"};
    r.error = "CUDA_ERROR_ILLEGAL_ADDRESS (700): an illegal memory access was encountered";
    run_stats st = w.append(r);
    EXPECT_EQ(st.count, 0);
    EXPECT_TRUE(std::isnan(st.median_ns));
  }
  results_file f = read_results(path);
  const run_record& r = f.configs.at(0).roles.at(0).runs.at(0);
  EXPECT_EQ(r.error, "CUDA_ERROR_ILLEGAL_ADDRESS (700): an illegal memory access was encountered");
  EXPECT_EQ(r.verdicts.timing, "INVALID_NO_SAMPLES");
  EXPECT_TRUE(r.time_ns.empty());
  EXPECT_FALSE(r.has_valid_timing());
}

TEST(StoreRoundTrip, InvalidTimingKeepsItsSamplesReasonAndThrottledCount) {
  auto path = temp_file("floor.h5");
  {
    auto w = results_writer::create(path, test_provenance());
    w.add_config(test_config(0));
    run_record r = test_run(test_config(0), role::port, 0, 1000);
    r.verdicts.timing = "INVALID_BELOW_FLOOR";
    r.timing_detail = "median 1000 ns is below the physical floor of 9000 ns: 43.2 MB at 4.80 TB/s";
    r.dropped_samples = 5;
    r.throttled_samples = 3;
    w.append(r);
  }
  const results_file f = read_results(path);
  const run_record& r = f.configs.at(0).roles.at(0).runs.at(0);
  EXPECT_EQ(r.verdicts.timing, "INVALID_BELOW_FLOOR");
  EXPECT_EQ(r.timing_detail, "median 1000 ns is below the physical floor of 9000 ns: 43.2 MB at 4.80 TB/s");
  EXPECT_EQ(r.dropped_samples, 5);
  EXPECT_EQ(r.throttled_samples, 3);
  EXPECT_GT(r.stats.count, 0) << "the samples stay on file";
  EXPECT_FALSE(r.has_valid_timing()) << "but do not count";
}

TEST(StoreRoundTrip, OddConfigIdsAreEscapedButKept) {
  auto path = temp_file("escape.h5");
  config_info c{"gemm/layout=a/b,pct=5%", "gemm", "{\"layout\":\"a/b\",\"pct\":\"5%\"}"};
  {
    auto w = results_writer::create(path, test_provenance());
    w.add_config(c);
    w.append(test_run(c, role::reference, 0, 7000));
  }
  results_file f = read_results(path);
  ASSERT_EQ(f.configs.size(), 1u);
  EXPECT_EQ(f.configs[0].info.id, c.id);
  EXPECT_EQ(f.configs[0].info.params_json, c.params_json);
}

/// A two-kernel run (a pass and its reduce): pass 3000 + 7i ns, reduce 900 + (i % 5) ns.
run_record two_kernel_run(const config_info& c, int n = 11) {
  run_record rec = test_run(c, role::port, 0, 1, 0);
  rec.kernel_entries = {"mla_split_entry", "splitk_reduce_entry"};
  for (int i = 0; i < n; ++i) {
    const std::int64_t pass = 3000 + 7 * i, reduce = 900 + i % 5;
    rec.add_sample({pass + reduce, 1980, pass + reduce + 4000, {pass, reduce}});
  }
  return rec;
}

TEST(StoreRoundTrip, PerKernelTimesOfAMultiKernelPlan) {
  auto path = temp_file("per_kernel.h5");
  {
    auto w = results_writer::create(path, test_provenance());
    w.add_config(test_config(0));
    w.append(two_kernel_run(test_config(0)));
    w.append(test_run(test_config(0), role::reference, 0, 5000));   // one kernel: none
  }
  results_file f = read_results(path);
  const auto& c = f.configs.at(0);
  const run_record& port = c.find(role::port)->runs.at(0);
  EXPECT_EQ(port.kernel_entries, (std::vector<std::string>{"mla_split_entry", "splitk_reduce_entry"}));
  ASSERT_EQ(port.kernel_time_ns.size(), 22u);
  EXPECT_EQ(port.kernel_time_ns[2 * 10], 3070);       // sample 10's pass
  EXPECT_EQ(port.kernel_time_ns[2 * 10 + 1], 900);    // and its reduce (10 % 5)
  // Medians: pass 3000 + 7 * 5; reduce over 900..904 twice and 900 once more.
  EXPECT_EQ(port.stats.kernel_median_ns, (std::vector<std::int64_t>{3035, 902}));
  const run_record& ref = c.find(role::reference)->runs.at(0);
  EXPECT_TRUE(ref.kernel_entries.empty());
  EXPECT_TRUE(ref.kernel_time_ns.empty());
  EXPECT_TRUE(ref.stats.kernel_median_ns.empty());
  // Without the samples the entries and medians stay, the matrix is not read.
  results_file light = read_results(path, {.samples = false});
  const run_record& lp = light.configs.at(0).find(role::port)->runs.at(0);
  EXPECT_EQ(lp.kernel_entries.size(), 2u);
  EXPECT_TRUE(lp.kernel_time_ns.empty());
  EXPECT_EQ(lp.stats.kernel_median_ns, (std::vector<std::int64_t>{3035, 902}));
}

TEST(StoreWriter, RefusesPerKernelTimesThatDoNotAddUp) {
  auto path = temp_file("per_kernel_bad.h5");
  auto w = results_writer::create(path, test_provenance());
  config_info c = test_config(0);
  w.add_config(c);
  run_record off = two_kernel_run(c);
  off.kernel_time_ns[5] += 1;   // sample 2's reduce: its row no longer adds up to time_ns
  try {
    w.append(off);
    ADD_FAILURE() << "appended";
  } catch (const store_error& e) {
    EXPECT_NE(std::string(e.what()).find("sample 2's kernel times add up to"), std::string::npos) << e.what();
  }
  run_record short_rows = two_kernel_run(c);
  short_rows.kernel_time_ns.pop_back();
  EXPECT_THROW(w.append(short_rows), store_error);   // not [samples][kernels]
  run_record unnamed = two_kernel_run(c);
  unnamed.kernel_entries.clear();
  EXPECT_THROW(w.append(unnamed), store_error);      // times without their kernels
  EXPECT_NO_THROW(w.append(two_kernel_run(c)));
}

TEST(StoreWriter, RefusesBadInput) {
  auto path = temp_file("bad_input.h5");
  auto w = results_writer::create(path, test_provenance());
  config_info c = test_config(0);
  EXPECT_THROW(w.append(test_run(c, role::reference, 0, 100)), store_error);  // config not added
  w.add_config(c);
  w.append(test_run(c, role::reference, 0, 100));
  EXPECT_THROW(w.append(test_run(c, role::reference, 0, 100)), store_error);  // duplicate
  run_record other = test_run(c, role::reference, 1, 100);
  other.frontend = "triton";
  EXPECT_THROW(w.append(other), store_error);  // front end differs for the role
  run_record bad = test_run(c, role::port, 0, 100);
  bad.verdicts.numerics = "passed";
  EXPECT_THROW(w.append(bad), store_error);  // not a literal
  run_record zero = test_run(c, role::port, 0, 0);
  EXPECT_THROW(w.append(zero), store_error);  // VALID with a 0 ns sample
  run_record empty = test_run(c, role::port, 0, 100, 0);
  EXPECT_THROW(w.append(empty), store_error);  // VALID without samples
  config_info changed = c;
  changed.params_json = "{\"m\":1}";
  EXPECT_THROW(w.add_config(changed), store_error);
  EXPECT_NO_THROW(w.add_config(c));  // idempotent
  EXPECT_THROW(static_cast<void>(results_writer::create(path, test_provenance())), store_error);
}

}  // namespace
}  // namespace portbench::store
