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
