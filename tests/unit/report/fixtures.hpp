// SPDX-License-Identifier: Apache-2.0
// In-memory results (no HDF5) with known answers for the report tests.
#pragma once
#include <cmath>
#include <string>
#include <vector>

#include "portbench/stats/summary.hpp"
#include "portbench/store/results.hpp"

namespace portbench::report::testing {

/// A VALID run whose samples are `median_ns` x (1 + k/1000), k = -5..5 (median exactly median_ns).
inline store::run_record run(const std::string& id, store::role r, int index, double median_ns) {
  store::run_record rec;
  rec.config_id = id;
  rec.role = r;
  rec.frontend = r == store::role::reference ? "triton" : "cutile";
  rec.run = index;
  for (int k = -5; k <= 5; ++k) {
    rec.add_sample({std::llround(median_ns * (1.0 + k / 1000.0)), 1980, std::llround(median_ns) + 4000});
  }
  rec.verdicts = {"PASS", "EXECUTED", "VALID"};
  auto s = stats::summarize(rec.time_ns);
  rec.stats.count = static_cast<std::int64_t>(s.count);
  rec.stats.median_ns = s.median;
  rec.stats.min_ns = s.min;
  return rec;
}

/// A configuration whose port is `speed` x the reference's speed in every run; run r of each
/// side is (1 + run_step r) x slower than run 0.
inline store::config_results config(const std::string& op, int i, double speed, int runs = 3,
                                    double run_step = 0.01) {
  store::config_results c;
  c.info = {op + "/i=" + std::to_string(i), op, "{\"i\":" + std::to_string(i) + "}"};
  store::role_results ref{store::role::reference, "triton", {}};
  store::role_results port{store::role::port, "cutile", {}};
  for (int r = 0; r < runs; ++r) {
    double t = 100000.0 * (i + 1) * (1.0 + run_step * r);
    ref.runs.push_back(run(c.info.id, store::role::reference, r, t));
    port.runs.push_back(run(c.info.id, store::role::port, r, t / speed));
  }
  c.roles = {ref, port};
  return c;
}

inline store::results_file file(std::vector<store::config_results> configs) {
  store::results_file f;
  f.path = "memory.h5";
  f.provenance.suite = "unit";
  f.provenance.gpu_name = "NVIDIA H200";
  f.provenance.reference_frontend = "triton";
  f.provenance.port_frontend = "cutile";
  f.provenance.created_utc = "2026-08-01T12:00:00Z";
  f.configs = std::move(configs);
  return f;
}

}  // namespace portbench::report::testing
