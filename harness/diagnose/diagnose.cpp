// SPDX-License-Identifier: Apache-2.0
// The diagnose pipeline: select configurations, find their bundles, read resources, disassemble
// every cubin involved at once (in parallel, cached), compare the Tile IR, place both sides on
// the roofline, and rank findings. A side that cannot be read is diagnosed as far as it goes,
// with the cause recorded; it never stops the other configurations.
#include "portbench/diagnose/diagnose.hpp"

#include <algorithm>
#include <cmath>
#include <regex>
#include <stdexcept>

#include <fmt/format.h>

#include "portbench/bundle/error.hpp"
#include "portbench/diagnose/bundle_locator.hpp"
#include "portbench/diagnose/verdicts.hpp"

namespace portbench::diagnose {
namespace {

namespace fs = std::filesystem;

struct selected {
  const store::config_results* config;
  double ref_ns, port_ns, ratio;
};

/// Per side: the plan of this configuration in its bundle, and where to find it.
struct side_source {
  const located_bundle* where = nullptr;
  const bundle::bundle* loaded = nullptr;
  const bundle::config_plan* plan = nullptr;
};

side_source read_side(bundle_locator& loc, const std::string& role, const std::string& frontend,
                      const store::config_results& c, side_diagnosis& out, const device_spec& dev) {
  side_source src;
  out.role = role;
  out.frontend = frontend;
  std::string why;
  src.where = loc.find(role, frontend, c.info.op, &why);
  if (src.where == nullptr) {
    out.problem = why;
    return src;
  }
  out.bundle = src.where->dir;
  out.bundle_note = src.where->note;
  try {
    src.loaded = &loc.load(*src.where);
  } catch (const bundle::bundle_error& e) {
    out.problem = e.what();
    return src;
  }
  src.plan = src.loaded->plan.find(config_of(c.info));
  if (src.plan == nullptr) {
    out.problem = src.where->dir.string() + " has no plan for " + c.info.id;
    return src;
  }
  for (const auto& l : src.plan->launches) {
    launch_diagnosis ld;
    ld.entry = l.entry;
    ld.cubin = l.cubin;
    ld.grid = l.grid;
    ld.block = l.block;
    ld.cluster = l.cluster;
    const auto& cubin = src.loaded->cubin(l.cubin);
    if (const auto* e = cubin.info.find(l.entry)) ld.resources = resources_of(*e, l, dev);
    out.launches.push_back(std::move(ld));
  }
  return src;
}

void attach_sass(const bundle::bundle& b, side_diagnosis& side, const sass_reader* reader, const std::string& absent,
                 const std::string& beyond) {
  for (auto& l : side.launches) {
    if (reader == nullptr) {
      l.sass_note = absent;
      continue;
    }
    std::string why;
    if (const auto* m = reader->mix(b.cubin(l.cubin).ref.sha256, l.entry, &why)) {
      l.sass = *m;
      side.tensor = side.tensor || m->count(sass_class::tensor) > 0;
    } else {
      l.sass_note = why == "cubin not disassembled" && !beyond.empty() ? beyond : why;
    }
  }
}

/// The best run's per-kernel medians (what a multi-kernel plan's time is made of).
std::vector<std::pair<std::string, std::int64_t>> kernel_medians(const store::role_results& r) {
  std::vector<std::pair<std::string, std::int64_t>> out;
  const store::run_record* best = best_run(r);
  if (best == nullptr || best->kernel_entries.size() != best->stats.kernel_median_ns.size()) return out;
  for (std::size_t i = 0; i < best->kernel_entries.size(); ++i) out.emplace_back(best->kernel_entries[i], best->stats.kernel_median_ns[i]);
  return out;
}

}  // namespace

diagnosis diagnose_results(const store::results_file& results, const diagnose_options& opts) {
  diagnosis d;
  d.file = results.path;
  const auto& p = results.provenance;
  d.suite = p.suite;
  d.gpu_name = p.gpu_name;
  d.reference_frontend = p.reference_frontend;
  d.port_frontend = p.port_frontend;
  d.revision = p.git_revision;
  d.device = device_of(p, opts.copy_gbps);
  d.configs_in_file = results.configs.size();

  std::regex filter;
  if (!opts.config_regex.empty()) {
    try {
      filter = std::regex(opts.config_regex);
    } catch (const std::regex_error& e) {
      throw std::runtime_error("--config: not a regular expression: " + opts.config_regex + " (" + e.what() + ")");
    }
    d.selection = "configurations matching --config " + opts.config_regex;
  } else {
    d.selection = fmt::format("configurations below the gate {:.2f}", opts.gate);
  }

  std::vector<selected> chosen;
  for (const auto& c : results.configs) {
    const auto* ref = c.find(store::role::reference);
    const auto* port = c.find(store::role::port);
    double r = ref ? best_of_n_ns(*ref) : std::nan("");
    double q = port ? best_of_n_ns(*port) : std::nan("");
    bool paired = std::isfinite(r) && std::isfinite(q) && q > 0;
    d.paired += paired ? 1 : 0;
    bool named = !opts.config_regex.empty() && std::regex_search(c.info.id, filter);
    if (!opts.config_regex.empty() && !named) continue;
    if (!paired) {
      if (named) d.notes.push_back(c.info.id + ": no valid timing on both sides; not diagnosed");
      continue;
    }
    double ratio = r / q;
    if (opts.config_regex.empty() && !(ratio < opts.gate)) continue;
    chosen.push_back({&c, r, q, ratio});
  }
  std::sort(chosen.begin(), chosen.end(), [](const selected& a, const selected& b) { return a.ratio < b.ratio; });

  bundle_locator locator(p, opts.bundles);
  d.notes.insert(d.notes.end(), locator.notes().begin(), locator.notes().end());
  d.notes.insert(d.notes.end(), d.device.notes.begin(), d.device.notes.end());

  std::vector<std::pair<side_source, side_source>> sources;
  for (const auto& s : chosen) {
    config_diagnosis cd;
    cd.id = s.config->info.id;
    cd.op = s.config->info.op;
    cd.ratio = s.ratio;
    const auto* ref = s.config->find(store::role::reference);
    const auto* port = s.config->find(store::role::port);
    auto rs = read_side(locator, "reference", ref->frontend, *s.config, cd.reference, d.device.spec);
    auto ps = read_side(locator, "port", port->frontend, *s.config, cd.port, d.device.spec);
    cd.reference.best_ns = s.ref_ns;
    cd.port.best_ns = s.port_ns;
    cd.reference.kernel_median_ns = kernel_medians(*ref);
    cd.port.kernel_median_ns = kernel_medians(*port);
    d.configs.push_back(std::move(cd));
    sources.emplace_back(rs, ps);
  }

  // Every cubin of every selected side in one batch: nvdisasm's start-up dominates.
  std::optional<sass_reader> reader;
  std::string absent = "SASS mix not computed (--no-sass)";
  std::string beyond;
  if (opts.sass && !d.configs.empty()) {
    std::string searched;
    if (auto tool = find_sass_tool(opts.nvdisasm, &searched)) {
      reader.emplace(*tool, opts.sass_opts);
      std::vector<std::pair<std::string, fs::path>> first, rest;
      for (std::size_t i = 0; i < sources.size(); ++i) {
        bool within = opts.sass_limit == 0 || i < opts.sass_limit;
        for (const auto* src : {&sources[i].first, &sources[i].second}) {
          if (src->plan == nullptr) continue;
          for (const auto& l : src->plan->launches) {
            const auto& c = src->loaded->cubin(l.cubin);
            (within ? first : rest).emplace_back(c.ref.sha256, c.path);
          }
        }
      }
      reader->load(first);
      reader->load(rest, false);
      d.sass_tool = fmt::format("{} ({}); {} cubin(s) disassembled, {} from the cache", tool->path.string(),
                                tool->version, reader->disassembled(), reader->cached());
      if (!rest.empty()) {
        d.sass_tool += fmt::format("; beyond the {} slowest configurations only cached mixes (--sass-limit)", opts.sass_limit);
        beyond = fmt::format("SASS mix left out: beyond the {} slowest configurations (--sass-limit 0 takes all)",
                             opts.sass_limit);
      }
    } else {
      absent = "SASS mix unavailable: no nvdisasm found (looked in " + searched + ")";
      d.sass_tool = absent;
    }
  } else if (!opts.sass) {
    d.sass_tool = absent;
  }

  ir_cache ir;
  for (std::size_t i = 0; i < d.configs.size(); ++i) {
    auto& cd = d.configs[i];
    const auto& [rs, ps] = sources[i];
    if (rs.plan != nullptr) attach_sass(*rs.loaded, cd.reference, reader ? &*reader : nullptr, absent, beyond);
    if (ps.plan != nullptr) attach_sass(*ps.loaded, cd.port, reader ? &*reader : nullptr, absent, beyond);
    for (auto [src, side] : {std::pair{&rs, &cd.reference}, std::pair{&ps, &cd.port}}) {
      if (src->plan == nullptr) continue;
      try {
        auto fns = plan_entries(src->loaded->plan, *src->plan, ir);
        side->tile_ir = !fns.empty();
        for (const auto* f : fns) {
          if (f == nullptr) {
            side->tile_ir = false;
            continue;
          }
          auto r = reread_tensors(normalise(*f));
          side->rereads.insert(side->rereads.end(), r.begin(), r.end());
        }
      } catch (const std::exception& e) {
        cd.notes.push_back(side->role + " Tile IR unreadable: " + e.what());
      }
    }
    if (rs.plan != nullptr && ps.plan != nullptr) {
      try {
        cd.ir = diff_config(rs.loaded->plan, *rs.plan, ps.loaded->plan, *ps.plan, ir);
      } catch (const std::exception& e) {
        cd.ir_note = std::string("ir-diff failed: ") + e.what();
      }
    } else {
      cd.ir_note = "ir-diff needs both bundles";
    }
    std::string why;
    if (auto w = work_of(chosen[i].config->info, &why)) {
      cd.reference.roof = roofline(*w, cd.reference.best_ns, d.device.spec, cd.reference.tensor);
      cd.port.roof = roofline(*w, cd.port.best_ns, d.device.spec, cd.port.tensor);
    } else {
      cd.notes.push_back("no roofline: " + why);
    }
    for (const auto* side : {&cd.reference, &cd.port}) {
      if (!side->problem.empty()) cd.notes.push_back(side->role + " not diagnosed: " + side->problem);
    }
    cd.findings = find_findings(cd, d.device.spec, opts);
  }

  bool any_diagnosed = false, any_finding = false;
  for (const auto& c : d.configs) {
    any_diagnosed = any_diagnosed || (c.reference.problem.empty() && c.port.problem.empty());
    any_finding = any_finding || !c.findings.empty();
  }
  if (d.configs.empty()) d.verdict = diagnose_verdict::nothing_selected;
  else if (any_finding) d.verdict = diagnose_verdict::findings;
  else if (!any_diagnosed) d.verdict = diagnose_verdict::not_diagnosed;
  else d.verdict = diagnose_verdict::no_findings;
  return d;
}

}  // namespace portbench::diagnose
