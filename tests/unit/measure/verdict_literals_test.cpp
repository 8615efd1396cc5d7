// SPDX-License-Identifier: Apache-2.0
// The worker writes measure's verdict literals; the store, reports and readers test store's.
// They are declared twice (measure does not depend on store); this keeps them the same strings.
#include <gtest/gtest.h>

#include <string_view>

#include "portbench/measure/verdicts.hpp"
#include "portbench/store/verdicts.hpp"

namespace pm = portbench::measure;
namespace ps = portbench::store;

TEST(VerdictLiterals, MeasureWritesWhatTheStoreReads) {
  EXPECT_EQ(std::string_view(pm::k_proof_executed), ps::proof::executed);
  EXPECT_EQ(std::string_view(pm::k_proof_not_executed), ps::proof::not_executed);
  EXPECT_EQ(std::string_view(pm::k_proof_foreign_kernel), ps::proof::foreign_kernel);
  EXPECT_EQ(std::string_view(pm::k_proof_output_not_written), ps::proof::output_not_written);
  EXPECT_EQ(std::string_view(pm::k_proof_nondeterministic), ps::proof::nondeterministic);
  EXPECT_EQ(std::string_view(pm::k_proof_not_checked), ps::proof::not_checked);
  EXPECT_EQ(std::string_view(pm::k_timing_valid), ps::timing::valid);
  EXPECT_EQ(std::string_view(pm::k_timing_no_samples), ps::timing::invalid_no_samples);
  EXPECT_EQ(std::string_view(pm::k_timing_missing_records), ps::timing::invalid_missing_records);
  EXPECT_EQ(std::string_view(pm::k_timing_zero_timestamp), ps::timing::invalid_zero_timestamp);
  EXPECT_EQ(std::string_view(pm::k_timing_below_floor), ps::timing::invalid_below_floor);
  for (const char* v : {pm::k_proof_executed, pm::k_proof_not_executed, pm::k_proof_foreign_kernel,
                        pm::k_proof_output_not_written, pm::k_proof_nondeterministic, pm::k_timing_valid,
                        pm::k_timing_no_samples, pm::k_status_ok, pm::k_status_error, pm::k_status_crash,
                        pm::k_status_hang, pm::k_status_not_run}) {
    EXPECT_TRUE(ps::is_verdict_literal(v)) << v;
  }
}
