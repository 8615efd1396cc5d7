// SPDX-License-Identifier: Apache-2.0
#include "portbench/report/compare.hpp"

#include <cmath>

#include "portbench/stats/rng.hpp"

namespace portbench::report {
namespace {

std::vector<stats::run_samples> valid_runs(const store::role_results* rr) {
  std::vector<stats::run_samples> out;
  if (rr == nullptr) return out;
  for (const auto& run : rr->runs) {
    if (run.has_valid_timing() && !run.time_ns.empty()) out.push_back(run.time_ns);
  }
  return out;
}

std::vector<double> valid_medians(const store::role_results* rr) {
  std::vector<double> out;
  if (rr == nullptr) return out;
  for (const auto& run : rr->runs) {
    if (run.has_valid_timing()) out.push_back(run.stats.median_ns);
  }
  return out;
}

double geomean_of_medians(const store::role_results* rr) {
  if (rr == nullptr) return std::nan("");
  double sum = 0;
  int n = 0;
  for (const auto& run : rr->runs) {
    if (!run.has_valid_timing()) continue;
    sum += std::log(run.stats.median_ns);
    ++n;
  }
  return n == 0 ? std::nan("") : std::exp(sum / n);
}

}  // namespace

bool compare_needs_samples(const store::results_file& baseline, const store::results_file& current) {
  for (const auto& c : baseline.configs) {
    const store::config_results* cur = current.find(c.info.id);
    if (cur == nullptr) continue;
    for (const auto& rr : c.roles) {
      const store::role_results* crr = cur->find(rr.role);
      if (crr == nullptr) continue;
      if (valid_medians(&rr).size() < 2 || valid_medians(crr).size() < 2) return true;
    }
  }
  return false;
}

compare_data build_compare(const store::results_file& baseline, const store::results_file& current,
                           const compare_options& opts) {
  compare_data out;
  out.baseline_file = baseline.path.string();
  out.current_file = current.path.string();
  out.baseline = baseline.provenance;
  out.current = current.provenance;
  out.options = opts;
  out.test_description = stats::describe_regression_test(opts.test);
  for (const auto& c : baseline.configs) {
    const store::config_results* cur = current.find(c.info.id);
    for (const auto& rr : c.roles) {
      compare_row row;
      row.config_id = c.info.id;
      row.op = c.info.op;
      row.role = rr.role;
      row.baseline_frontend = rr.frontend;
      row.baseline_ns = geomean_of_medians(&rr);
      const store::role_results* crr = cur != nullptr ? cur->find(rr.role) : nullptr;
      if (crr == nullptr) {
        row.result.note = "not in current";
      } else {
        row.current_frontend = crr->frontend;
        row.current_ns = geomean_of_medians(crr);
        stats::regression_options test = opts.test;
        std::string key = c.info.id + "/" + std::string(store::to_string(rr.role));
        test.seed = stats::hash_seed(opts.test.seed, key.c_str());
        auto bm = valid_medians(&rr);
        auto km = valid_medians(crr);
        if (bm.size() >= 2 && km.size() >= 2) {
          row.result = stats::test_regression_from_medians(bm, km, test);
        } else {
          auto b = valid_runs(&rr);
          auto k = valid_runs(crr);
          if (b.size() != bm.size() || k.size() != km.size()) {
            row.result.note = "one run on a side and its samples were not read";
          } else {
            row.result = stats::test_regression(b, k, test);
          }
        }
      }
      ++out.counts[std::string(row.result.verdict)];
      out.rows.push_back(std::move(row));
    }
  }
  for (const auto& c : current.configs) {
    const store::config_results* base = baseline.find(c.info.id);
    for (const auto& rr : c.roles) {
      if (base == nullptr || base->find(rr.role) == nullptr) ++out.only_in_current;
    }
  }
  return out;
}

}  // namespace portbench::report
