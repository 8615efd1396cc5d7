// SPDX-License-Identifier: Apache-2.0
#include "portbench/sweep/record.hpp"

#include <algorithm>
#include <fstream>
#include <iterator>
#include <set>
#include <span>

#include "portbench/build_info.hpp"
#include "portbench/bundle/sha256.hpp"
#include "portbench/store/reader.hpp"
#include "portbench/verdicts.hpp"

namespace portbench::sweep {
namespace {

using json = nlohmann::json;

std::string file_sha256(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return bundle::sha256_hex(std::as_bytes(std::span(text.data(), text.size())));
}

std::string short_hash(const std::string& h) { return h.substr(0, 12); }

constexpr const char* k_l2_flush_method = "read twice the L2 size (clean)";

json timing_json(const execute_options& e) {
  const auto& t = e.timing;
  return {{"warmup_launches", t.warmup_launches}, {"min_samples", t.min_samples},
          {"max_samples", t.max_samples},         {"target_rel_ci", t.target_rel_ci},
          {"time_cap_s", t.time_cap_s},           {"cold_l2", t.cold_l2},
          // How the L2 is made cold: files without this key flushed by overwriting a buffer
          // (dirty lines the timed kernel wrote back), not comparable (measure/l2_flush.hpp).
          {"l2_flush", t.cold_l2 ? k_l2_flush_method : "none"},
          {"throttle_fraction", t.throttle_fraction},
          {"vary_inputs", e.vary_inputs},         {"runs", e.runs}};
}

std::string extra(const store::provenance& p, const std::string& key) {
  auto it = p.extra.find(key);
  return it == p.extra.end() ? std::string() : it->second;
}

void compare_bundles(const store::provenance& file, const store::provenance& call, std::vector<std::string>& out) {
  for (const auto& b : call.bundles) {
    const std::string who = b.role + " " + b.frontend + "/" + b.op;
    const store::bundle_provenance* f = nullptr;
    for (const auto& fb : file.bundles) {
      if (fb.role == b.role && fb.op == b.op) f = &fb;
    }
    if (f == nullptr) {
      out.push_back("bundles: the file has no " + b.role + " bundle for operator '" + b.op + "'");
      continue;
    }
    if (f->frontend != b.frontend) {
      out.push_back("bundles: " + b.role + " front end of '" + b.op + "': the file has '" + f->frontend +
                    "', this call '" + b.frontend + "'");
      continue;
    }
    if (f->bundle_sha256 != b.bundle_sha256) {
      out.push_back("bundles: " + who + " manifest differs (file sha256 " + short_hash(f->bundle_sha256) +
                    ", this call " + short_hash(b.bundle_sha256) + ")");
    }
    for (const auto& [cubin, sha] : b.cubin_sha256) {
      auto it = f->cubin_sha256.find(cubin);
      if (it == f->cubin_sha256.end()) {
        out.push_back("cubin hashes: " + who + " " + cubin + " is not in the file");
      } else if (it->second != sha) {
        out.push_back("cubin hashes: " + who + " " + cubin + " differs (file " + short_hash(it->second) +
                      ", this call " + short_hash(sha) + ")");
      }
    }
  }
}

}  // namespace

std::string reference_identity() { return std::string(version()) + "@" + std::string(build_revision()); }

store::provenance make_provenance(const sweep_plan& plan, const execute_options& exec, const device_description* device,
                                  const std::string& command_line) {
  store::provenance p;
  p.portbench_version = version();
  p.git_revision = build_revision();
  p.command_line = command_line;
  p.suite = plan.suite_name;
  p.seeds = {static_cast<std::int64_t>(exec.seed)};
  if (device != nullptr) {
    const json& d = device->info;
    p.gpu_name = d.value("gpu_name", "");
    p.driver_version = d.value("driver_version", "");
    p.sm_clock_mhz = d.value("max_sm_clock_mhz", 0);
    p.memory_clock_mhz = d.value("memory_clock_mhz", 0);
    const int api = d.value("driver_api_version", 0);
    p.cuda_version = std::to_string(api / 1000) + "." + std::to_string(api % 1000 / 10);
    p.cupti_version = std::to_string(d.value("cupti_version", 0));
    p.extra["device"] = d.dump();
  } else {
    p.gpu_name = "unknown (no device could be described)";
  }
  for (const auto& b : plan.bundles) {
    if (!b.used) continue;
    store::bundle_provenance bp;
    bp.role = b.reference_side ? "reference" : "port";
    bp.frontend = b.loaded.plan.frontend;
    bp.op = b.loaded.plan.op;
    for (const auto& c : b.loaded.cubins) bp.cubin_sha256[c.ref.file] = c.ref.sha256;
    bp.bundle_sha256 = file_sha256(b.loaded.plan.path);
    p.bundles.push_back(std::move(bp));
    for (const auto& [tool, v] : b.loaded.plan.toolchain) p.extra["toolchain." + b.loaded.plan.frontend + "." + tool] = v;
  }
  if (!plan.items.empty()) {
    p.reference_frontend = plan.items.front().reference.frontend;
    p.port_frontend = plan.items.front().port.frontend;
  }
  p.extra["timing"] = timing_json(exec).dump();
  if (!plan.part.whole()) {
    // merge checks that the slices of one plan cover it exactly once (docs/results-layout.md).
    p.extra["shard"] = plan.part.text();
    p.extra["shard_plan_configs"] = std::to_string(plan.all_shards_items);
  }
  return p;
}

store::run_record to_record(const planned_item& item, int run, const measure::item_report& r, store::role side) {
  const bool ref = side == store::role::reference;
  const measure::side_report& s = ref ? r.ref : r.port;
  store::run_record rec;
  rec.config_id = item.id();
  rec.role = side;
  rec.frontend = ref ? item.reference.frontend : item.port.frontend;
  rec.run = run;
  // Per-kernel times only where every kept sample has them (the store wants whole rows).
  const bool per_kernel = !s.kernels.empty() && std::all_of(s.samples.begin(), s.samples.end(), [&](const auto& x) {
    return !(x.problem.empty() && x.device_ns > 0) || x.kernel_ns.size() == s.kernels.size();
  });
  if (per_kernel) rec.kernel_entries = s.kernels;
  for (const auto& x : s.samples) {
    if (x.problem.empty() && x.device_ns > 0) {
      rec.add_sample({x.device_ns, x.sm_mhz, x.event_ns, per_kernel ? x.kernel_ns : std::vector<std::int64_t>{}});
      continue;
    }
    ++rec.dropped_samples;
    rec.throttled_samples += x.problem == verdicts::sample_problem::clock_throttled;
  }
  rec.timing_detail = s.timing_detail;
  rec.cost = {r.inputs_s, s.check_s, s.verify_s, r.sampling_s, r.wall_s};
  rec.verdicts.numerics = s.numerics;
  rec.numerics_source = s.numerics_source;
  rec.output_digest = s.output_digest;
  rec.verdicts.proof = s.proof;
  rec.verdicts.timing = s.timing;
  // The store refuses VALID without samples; the worker's VALID counted samples it kept.
  if (verdicts::timing_valid(rec.verdicts.timing) && rec.time_ns.empty()) {
    rec.verdicts.timing = verdicts::timing::invalid_no_samples;
  }
  // A report the orchestrator made up (crash, hang, bad report) carries no verdict literals
  // that the store would refuse; keep whatever came, but never an empty one.
  for (auto* v : {&rec.verdicts.numerics, &rec.verdicts.proof}) {
    if (!verdicts::is_literal(*v)) *v = verdicts::numerics::not_checked;
  }
  if (!verdicts::is_literal(rec.verdicts.timing)) rec.verdicts.timing = verdicts::timing::not_measured;
  if (r.status != verdicts::status::ok) rec.error = r.status + ": " + r.error;
  else if (!s.proof_detail.empty()) rec.error = s.proof_detail;
  return rec;
}

std::vector<std::string> resume_conflicts(const store::provenance& file, const store::provenance& call) {
  std::vector<std::string> out;
  auto differ = [&](const char* what, const std::string& a, const std::string& b) {
    if (a != b) out.push_back(std::string(what) + ": the file has '" + a + "', this call '" + b + "'");
  };
  differ("suite", file.suite, call.suite);
  differ("GPU", file.gpu_name, call.gpu_name);
  differ("reference front end", file.reference_frontend, call.reference_frontend);
  differ("port front end", file.port_frontend, call.port_frontend);
  if (file.seeds != call.seeds) {
    auto text = [](const std::vector<std::int64_t>& v) {
      std::string s;
      for (auto x : v) s += (s.empty() ? "" : ",") + std::to_string(x);
      return s;
    };
    differ("seed", text(file.seeds), text(call.seeds));
  }
  compare_bundles(file, call, out);
  differ("shard", extra(file, "shard"), extra(call, "shard"));
  const json ft = json::parse(extra(file, "timing"), nullptr, false);
  const json ct = json::parse(extra(call, "timing"), nullptr, false);
  if (!ft.is_object()) {
    out.push_back("timing options: the file records none");
  } else if (ct.is_object()) {
    for (const auto& [key, value] : ct.items()) {
      if (key == "runs") continue;   // more runs is what resuming is for
      auto it = ft.find(key);
      if (it != ft.end() && *it != value) {
        out.push_back("timing option " + key + ": the file has " + it->dump() + ", this call " + value.dump());
      } else if (it == ft.end() && key == "l2_flush") {
        out.push_back("timing option l2_flush: the file records none (its L2 was flushed by overwriting), this call " +
                      value.dump());
      }
    }
  }
  return out;
}

// ---- results_recorder ---------------------------------------------------------------------------

struct results_recorder::state {
  std::filesystem::path path;
  store::results_writer writer;
  sweep_tally tally;
  std::size_t resumed = 0;
};

results_recorder::results_recorder(std::unique_ptr<state> s) : m(std::move(s)) {}
results_recorder::results_recorder(results_recorder&&) noexcept = default;
results_recorder& results_recorder::operator=(results_recorder&&) noexcept = default;
results_recorder::~results_recorder() = default;

results_recorder results_recorder::open(const std::filesystem::path& path, const record_options& opt,
                                        const sweep_plan& plan, const execute_options& exec,
                                        const std::vector<device_description>& devices,
                                        const std::string& command_line) {
  const store::provenance prov = make_provenance(plan, exec, devices.empty() ? nullptr : &devices.front(), command_line);
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path());
  const bool resume = opt.resume && std::filesystem::exists(path);
  if (resume) {
    // Compared before the writer opens it: resume() may rebuild a damaged file.
    const auto conflicts = resume_conflicts(store::read_provenance(path), prov);
    if (!conflicts.empty()) {
      std::string why;
      for (const auto& c : conflicts) why += (why.empty() ? "" : "; ") + c;
      throw sweep_error(path.string(), "", "cannot resume: " + why);
    }
  }
  auto writer = resume ? store::results_writer::resume(path)
                       : store::results_writer::create(path, prov, {.overwrite = opt.overwrite});
  auto s = std::make_unique<state>(state{path, std::move(writer), {}, 0});
  s->resumed = s->writer.existing_runs().size();
  if (resume) {
    // A resumed file keeps its provenance; note what this call changed that may differ.
    s->writer.annotate("resumed_by", json{{"git_revision", prov.git_revision}, {"command_line", command_line}}.dump());
  }
  for (const auto& item : plan.items) {
    s->writer.add_config({item.id(), item.config.op, item.params.dump()});
  }
  return results_recorder(std::move(s));
}

result_sink results_recorder::sink() {
  return [this](const planned_item& item, int run, const measure::item_report& r) {
    m->tally.add(item, run, r);
    // A run never started (the sweep's budget spent) is not stored: `--resume` runs it later.
    if (r.status == verdicts::status::not_run) return;
    try {
      m->writer.append(to_record(item, run, r, store::role::reference));
      m->writer.append(to_record(item, run, r, store::role::port));
    } catch (const std::exception& e) {
      m->tally.not_recorded(item, e.what());
      throw;
    }
  };
}

done_predicate results_recorder::done() const {
  return [this](const planned_item& item, int run) {
    return m->writer.contains({item.id(), store::role::reference, run}) &&
           m->writer.contains({item.id(), store::role::port, run});
  };
}

void results_recorder::finish(const sweep_summary& s) {
  m->writer.annotate("sweep_summary", json{{"wall_s", s.wall_s},
                                           {"timed_device_s", s.timed_device_s},
                                           {"workers_started", s.workers_started},
                                           {"items_run", s.items_run},
                                           {"items_failed", s.items_failed},
                                           {"not_recorded", s.not_recorded},
                                           {"stray_lines", s.stray_lines}}
                                          .dump());
  m->writer.close();
}

const sweep_tally& results_recorder::tally() const noexcept { return m->tally; }
const std::filesystem::path& results_recorder::path() const noexcept { return m->path; }
std::size_t results_recorder::resumed_runs() const noexcept { return m->resumed; }

}  // namespace portbench::sweep
