// SPDX-License-Identifier: Apache-2.0
// Small synthetic results for the store tests: positive, varied samples with known medians.
#pragma once
#include <filesystem>
#include <string>
#include <unistd.h>

#include "portbench/store/results.hpp"

namespace portbench::store::testing {

inline provenance test_provenance(std::string suite = "smoke", std::string gpu = "NVIDIA H200") {
  provenance p;
  p.portbench_version = "0.1.0";
  p.gpu_name = std::move(gpu);
  p.driver_version = "580.65.06";
  p.sm_clock_mhz = 1980;
  p.memory_clock_mhz = 3201;
  p.cuda_version = "13.0";
  p.cupti_version = "26";
  p.git_revision = "a667629";
  p.command_line = "portbench run --suite smoke --runs 4";
  p.suite = std::move(suite);
  p.seeds = {1234, 5678};
  p.reference_frontend = "cutile_python";
  p.port_frontend = "cutile_rust";
  p.bundles = {{"reference", "cutile_python", "rms_norm", "ab12", {{"rms_norm.cubin", "cd34"}}},
               {"port", "cutile_rust", "rms_norm", "ef56", {{"kernels/rms.cubin", "0789"}}}};
  p.extra["tileiras_version"] = "13.4";
  return p;
}

inline config_info test_config(int i, std::string op = "rms_norm") {
  std::string params = "{\"dtype\":\"float16\",\"m\":" + std::to_string(1024 * (i + 1)) + ",\"n\":1024}";
  return {op + "/dtype=float16,m=" + std::to_string(1024 * (i + 1)) + ",n=1024", op, params};
}

/// A run whose device times are base, base+1, ..., base+n-1 (median base + (n-1)/2).
inline run_record test_run(const config_info& c, role r, int run, std::int64_t base, int n = 21) {
  run_record rec;
  rec.config_id = c.id;
  rec.role = r;
  rec.frontend = r == role::reference ? "cutile_python" : "cutile_rust";
  rec.run = run;
  for (int i = 0; i < n; ++i) {
    rec.add_sample({base + i, 1980 - (i % 3), base + i + 4000});
  }
  rec.verdicts = {"PASS", "EXECUTED", "VALID"};
  rec.numerics_source = run == 0 ? "VERIFIED" : "REUSED";
  rec.output_digest = "y:00112233445566778899aabbccddee" + std::to_string(10 + run);
  return rec;
}

/// A fresh path under the test temp dir (removed first).
inline std::filesystem::path temp_file(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() /
             ("portbench_store_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  auto p = dir / name;
  std::filesystem::remove(p);
  return p;
}

}  // namespace portbench::store::testing
