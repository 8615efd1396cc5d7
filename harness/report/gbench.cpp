// SPDX-License-Identifier: Apache-2.0
#include "portbench/report/gbench.hpp"

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

namespace portbench::report {
namespace {

using nlohmann::json;

/// "2026-08-01T12:00:00Z" -> "2026-08-01 12:00:00", the shape Google Benchmark writes.
std::string gbench_date(std::string iso) {
  std::replace(iso.begin(), iso.end(), 'T', ' ');
  if (!iso.empty() && iso.back() == 'Z') iso.pop_back();
  return iso;
}

}  // namespace

std::string render_gbench_json(const store::results_file& results, const gbench_options& opts) {
  const auto& p = results.provenance;
  json context = {{"date", gbench_date(p.created_utc)},
                  {"host_name", ""},
                  {"executable", "portbench"},
                  {"num_cpus", 0},
                  {"mhz_per_cpu", 0},
                  {"cpu_scaling_enabled", false},
                  {"caches", json::array()},
                  {"load_avg", json::array()},
                  {"library_build_type", "release"},
                  {"json_schema_version", 1},
                  {"portbench_schema", p.schema},
                  {"portbench_file", results.path.string()},
                  {"suite", p.suite},
                  {"gpu_name", p.gpu_name},
                  {"driver_version", p.driver_version},
                  {"sm_clock_mhz", std::to_string(p.sm_clock_mhz)},
                  {"cuda_version", p.cuda_version},
                  {"cupti_version", p.cupti_version},
                  {"git_revision", p.git_revision},
                  {"reference_frontend", p.reference_frontend},
                  {"port_frontend", p.port_frontend},
                  {"time_measured", "CUPTI device time per launch plan; cpu_time repeats it"}};
  json benchmarks = json::array();
  std::size_t family = 0;
  for (const auto& c : results.configs) {
    std::size_t instance = 0;
    for (const auto& rr : c.roles) {
      std::string name = c.info.id + "/" + std::string(store::to_string(rr.role));
      std::vector<const store::run_record*> valid;
      for (const auto& run : rr.runs) {
        if (run.has_valid_timing()) valid.push_back(&run);
      }
      if (valid.empty()) continue;
      double best = valid.front()->stats.median_ns;
      for (std::size_t i = 0; i < valid.size(); ++i) {
        const auto& run = *valid[i];
        best = std::min(best, run.stats.median_ns);
        json b = {{"name", name},
                  {"family_index", family},
                  {"per_family_instance_index", instance},
                  {"run_name", name},
                  {"run_type", "iteration"},
                  {"repetitions", valid.size()},
                  {"repetition_index", i},
                  {"threads", 1},
                  {"iterations", run.stats.count},
                  {"real_time", run.stats.median_ns},
                  {"cpu_time", run.stats.median_ns},
                  {"time_unit", "ns"},
                  {"frontend", rr.frontend},
                  {"portbench_run", run.run}};
        if (std::isfinite(run.stats.median_sm_clock_mhz)) b["sm_clock_mhz"] = run.stats.median_sm_clock_mhz;
        benchmarks.push_back(std::move(b));
      }
      if (opts.aggregates) {
        benchmarks.push_back({{"name", name + "_min"},
                              {"family_index", family},
                              {"per_family_instance_index", instance},
                              {"run_name", name},
                              {"run_type", "aggregate"},
                              {"repetitions", valid.size()},
                              {"threads", 1},
                              {"aggregate_name", "min"},
                              {"aggregate_unit", "time"},
                              {"iterations", valid.size()},
                              {"real_time", best},
                              {"cpu_time", best},
                              {"time_unit", "ns"}});
      }
      ++instance;
    }
    ++family;
  }
  return json{{"context", context}, {"benchmarks", benchmarks}}.dump(2) + "\n";
}

}  // namespace portbench::report
