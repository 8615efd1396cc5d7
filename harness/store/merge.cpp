// SPDX-License-Identifier: Apache-2.0
#include "portbench/store/merge.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>

#include "portbench/store/error.hpp"

namespace portbench::store {
namespace {

void differ(std::vector<std::string>& out, const char* what, const std::string& a,
            const std::string& b) {
  if (a != b) out.push_back(std::string("different ") + what + " ('" + a + "' vs '" + b + "')");
}

bool same_run(const run_record& a, const run_record& b) {
  return a.time_ns == b.time_ns && a.verdicts == b.verdicts && a.error == b.error &&
         a.stats.count == b.stats.count &&
         (a.stats.median_ns == b.stats.median_ns || (a.stats.count == 0 && b.stats.count == 0));
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

void merge_provenance(provenance& into, const results_file& from) {
  for (auto seed : from.provenance.seeds) {
    if (std::find(into.seeds.begin(), into.seeds.end(), seed) == into.seeds.end()) {
      into.seeds.push_back(seed);
    }
  }
  for (const auto& b : from.provenance.bundles) {
    if (std::find(into.bundles.begin(), into.bundles.end(), b) == into.bundles.end()) {
      into.bundles.push_back(b);
    }
  }
  auto history = nlohmann::json::parse(into.extra["merged_from"].empty() ? "[]" : into.extra["merged_from"],
                                       nullptr, false);
  if (!history.is_array()) history = nlohmann::json::array();
  history.push_back({{"file", from.path.string()},
                     {"created_utc", from.provenance.created_utc},
                     {"git_revision", from.provenance.git_revision},
                     {"command_line", from.provenance.command_line}});
  into.extra["merged_from"] = history.dump();
}

// How a file's samples found the L2 (harness/measure/l2_flush.hpp), from its timing options;
// empty where the file records no timing options (nothing to compare). Files written before
// 2026-12-04 have no `l2_flush`: their flush overwrote a buffer and its dirty lines were
// written back inside the timed kernels.
std::string l2_flush_of(const provenance& p) {
  auto it = p.extra.find("timing");
  if (it == p.extra.end()) return "";
  const auto t = nlohmann::json::parse(it->second, nullptr, false);
  if (!t.is_object()) return "";
  if (auto cold = t.find("cold_l2"); cold != t.end() && *cold == false) return "none";
  auto f = t.find("l2_flush");
  return f != t.end() && f->is_string() ? f->get<std::string>() : "overwrite twice the L2 size (before 2026-12-04)";
}

}  // namespace

std::vector<std::string> hard_conflicts(const provenance& a, const provenance& b) {
  std::vector<std::string> out;
  differ(out, "schema", a.schema, b.schema);
  differ(out, "suite", a.suite, b.suite);
  differ(out, "GPU", a.gpu_name, b.gpu_name);
  differ(out, "reference front end", a.reference_frontend, b.reference_frontend);
  differ(out, "port front end", a.port_frontend, b.port_frontend);
  // Another L2 flush moves every memory-bound time: such files are not one measurement.
  if (const auto fa = l2_flush_of(a), fb = l2_flush_of(b); !fa.empty() && !fb.empty()) differ(out, "L2 flush", fa, fb);
  return out;
}

std::vector<std::string> soft_differences(const provenance& a, const provenance& b) {
  std::vector<std::string> out;
  differ(out, "driver", a.driver_version, b.driver_version);
  differ(out, "SM clock", std::to_string(a.sm_clock_mhz), std::to_string(b.sm_clock_mhz));
  differ(out, "memory clock", std::to_string(a.memory_clock_mhz), std::to_string(b.memory_clock_mhz));
  differ(out, "CUDA", a.cuda_version, b.cuda_version);
  differ(out, "CUPTI", a.cupti_version, b.cupti_version);
  differ(out, "git revision", a.git_revision, b.git_revision);
  return out;
}

merge_summary merge_into(results_file& into, const results_file& from, const merge_options& opts) {
  merge_summary summary;
  if (auto hard = hard_conflicts(into.provenance, from.provenance); !hard.empty()) {
    if (!opts.force) {
      throw store_error(from.path, "cannot merge with " + into.path.string() + ": " + join(hard));
    }
    summary.notes.push_back("merged despite " + join(hard) + " (forced)");
  }
  if (auto soft = soft_differences(into.provenance, from.provenance); !soft.empty()) {
    summary.notes.push_back(from.path.string() + ": " + join(soft));
  }
  for (const auto& c : from.configs) {
    config_results* target = into.find(c.info.id);
    if (target == nullptr) {
      into.configs.push_back(c);
      ++summary.configs_added;
      for (const auto& rr : c.roles) summary.runs_added += rr.runs.size();
      continue;
    }
    if (target->info.op != c.info.op ||
        nlohmann::json::parse(target->info.params_json, nullptr, false) !=
            nlohmann::json::parse(c.info.params_json, nullptr, false)) {
      throw store_error(from.path, "configuration '" + c.info.id +
                                       "' has other operator or parameters than in " +
                                       into.path.string());
    }
    for (const auto& rr : c.roles) {
      role_results* trr = target->find(rr.role);
      if (trr == nullptr) {
        target->roles.push_back(rr);
        summary.runs_added += rr.runs.size();
        continue;
      }
      if (trr->frontend != rr.frontend) {
        throw store_error(from.path, "configuration '" + c.info.id + "': " +
                                         std::string(to_string(rr.role)) + " front end '" +
                                         rr.frontend + "' differs from '" + trr->frontend + "' in " +
                                         into.path.string());
      }
      for (const auto& run : rr.runs) {
        bool duplicate = std::any_of(trr->runs.begin(), trr->runs.end(),
                                     [&](const run_record& r) { return same_run(r, run); });
        if (duplicate) {
          ++summary.duplicate_runs_skipped;
          continue;
        }
        run_record copy = run;
        int next = 0;
        for (const auto& r : trr->runs) next = std::max(next, r.run + 1);
        copy.run = next;
        trr->runs.push_back(std::move(copy));
        ++summary.runs_added;
      }
    }
  }
  merge_provenance(into.provenance, from);
  into.incomplete_runs += from.incomplete_runs;
  into.unreadable_groups.insert(into.unreadable_groups.end(), from.unreadable_groups.begin(),
                                from.unreadable_groups.end());
  return summary;
}

std::string check_shard_coverage(const std::vector<const results_file*>& files) {
  struct slice {
    const results_file* file;
    int index, count;
    std::string plan_configs;
  };
  std::vector<slice> slices;
  for (const auto* f : files) {
    auto it = f->provenance.extra.find("shard");
    if (it == f->provenance.extra.end()) continue;
    int k = -1, n = 0;
    char tail = 0;
    if (std::sscanf(it->second.c_str(), "%d/%d%c", &k, &n, &tail) != 2 || n < 1 || k < 0 || k >= n) {
      throw store_error(f->path, "attribute shard: '" + it->second + "' is not K/N with 0 <= K < N");
    }
    auto pc = f->provenance.extra.find("shard_plan_configs");
    slices.push_back({f, k, n, pc == f->provenance.extra.end() ? "" : pc->second});
  }
  if (slices.empty()) return "";
  const slice& first = slices.front();
  std::map<int, const results_file*> by_index;
  std::map<std::string, std::pair<int, const results_file*>> owner;   // config id -> slice
  std::size_t configs = 0;
  for (const auto& s : slices) {
    if (s.count != first.count || s.plan_configs != first.plan_configs) {
      throw store_error(s.file->path, "shard " + std::to_string(s.index) + "/" + std::to_string(s.count) + " of a " +
                                          s.plan_configs + "-configuration plan does not belong with " +
                                          first.file->path.string() + " (shard " + std::to_string(first.index) + "/" +
                                          std::to_string(first.count) + " of " + first.plan_configs + ")");
    }
    if (auto [it, fresh] = by_index.emplace(s.index, s.file); !fresh) {
      throw store_error(s.file->path, "shard " + std::to_string(s.index) + "/" + std::to_string(s.count) +
                                          " is also " + it->second->path.string());
    }
    for (const auto& c : s.file->configs) {
      auto [it, fresh] = owner.emplace(c.info.id, std::make_pair(s.index, s.file));
      if (!fresh) {
        throw store_error(s.file->path, "configuration '" + c.info.id + "' is in shard " + std::to_string(s.index) +
                                            " and in shard " + std::to_string(it->second.first) + " (" +
                                            it->second.second->path.string() + ")");
      }
      ++configs;
    }
  }
  std::string missing;
  for (int k = 0; k < first.count; ++k) {
    if (!by_index.count(k)) missing += (missing.empty() ? "" : ", ") + std::to_string(k);
  }
  if (!missing.empty()) {
    throw store_error(first.file->path, "shards of " + std::to_string(first.count) + " without shard(s) " + missing);
  }
  if (!first.plan_configs.empty() && std::to_string(configs) != first.plan_configs) {
    throw store_error(first.file->path, "the " + std::to_string(first.count) + " shards hold " + std::to_string(configs) +
                                            " configurations, their plan had " + first.plan_configs);
  }
  return "shards 0.." + std::to_string(first.count - 1) + " of " + std::to_string(first.count) + " cover the plan's " +
         std::to_string(configs) + " configurations exactly once";
}

void write_results(const std::filesystem::path& path, const results_file& results,
                   const create_options& opts) {
  results_writer w = results_writer::create(path, results.provenance, opts);
  for (const auto& c : results.configs) {
    w.add_config(c.info);
    for (const auto& rr : c.roles) {
      for (const auto& run : rr.runs) {
        if (run.stats.count > 0 && run.time_ns.empty()) {
          throw store_error(path, "cannot write run (" + run.config_id + ") without its samples");
        }
        w.append(run);
      }
    }
  }
  w.close();
}

}  // namespace portbench::store
