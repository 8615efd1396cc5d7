// SPDX-License-Identifier: Apache-2.0
// Export to Google Benchmark's JSON format, so that google/benchmark's tools/compare.py (and
// anything else that reads that format) can consume portbench results. One benchmark per
// (configuration, role) named "<config id>/<role>"; each valid run is one repetition
// (run_type "iteration", real_time = cpu_time = the run's median device time in ns, iterations
// = its sample count), followed by a "<name>_min" aggregate holding the best of N. CPU time is
// not measured; cpu_time repeats the device time so that tools that require it work.
#pragma once
#include <string>

#include "portbench/store/results.hpp"

namespace portbench::report {

struct gbench_options {
  bool aggregates = true;  ///< emit the "_min" (best of N) aggregate per benchmark
};

[[nodiscard]] std::string render_gbench_json(const store::results_file& results,
                                             const gbench_options& opts = {});

}  // namespace portbench::report
