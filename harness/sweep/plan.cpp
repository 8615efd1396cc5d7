// SPDX-License-Identifier: Apache-2.0
#include "portbench/sweep/plan.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <regex>

#include "portbench/bundle/error.hpp"
#include "portbench/reference/config_json.hpp"
#include "portbench/reference/spec.hpp"
#include "portbench/sweep/suite.hpp"

namespace portbench::sweep {
namespace {

// A compiled selection: the regular expression is parsed once per plan.
class matcher {
 public:
  explicit matcher(const selection& s) : m_ops(s.ops) {
    if (s.filter.empty()) return;
    try {
      m_filter.emplace(s.filter, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      throw sweep_error("--filter", "", "invalid regular expression '" + s.filter + "': " + e.what());
    }
  }
  [[nodiscard]] bool operator()(const reference::config& c) const {
    if (!m_ops.empty() && std::find(m_ops.begin(), m_ops.end(), c.op) == m_ops.end()) return false;
    return !m_filter || std::regex_search(c.id(), *m_filter);
  }

 private:
  std::vector<std::string> m_ops;
  std::optional<std::regex> m_filter;
};

std::vector<std::filesystem::path> bundles_below(const std::string& dir) {
  auto found = bundle::find_bundles(dir);
  if (found.empty()) {
    if (!std::filesystem::exists(dir)) throw bundle::bundle_error(dir, "no such folder");
    throw bundle::bundle_error(dir, "no bundle (no manifest.json) below this folder");
  }
  return found;
}

}  // namespace

bool selected(const selection& s, const reference::config& c) { return matcher(s)(c); }

sweep_plan plan_sweep(const plan_options& opt) {
  sweep_plan plan;
  plan.kind = plan_kind::sweep;
  const suite s = load_suite(opt.suite_file);
  plan.suite_name = s.name;
  plan.suite_file = opt.suite_file;
  const matcher keep(opt.select);
  // Load every bundle first (stable addresses), then index them by operator per side.
  for (const auto* dirs : {&opt.ref_dirs, &opt.port_dirs}) {
    for (const auto& d : *dirs) {
      for (const auto& f : bundles_below(d)) plan.bundles.push_back({bundle::load_bundle(f), dirs == &opt.ref_dirs});
    }
  }
  std::map<std::string, std::size_t> by_op[2];
  for (std::size_t i = 0; i < plan.bundles.size(); ++i) {
    const auto& b = plan.bundles[i];
    const int side = b.reference_side ? 0 : 1;
    auto [slot, fresh] = by_op[side].emplace(b.loaded.plan.op, i);
    if (!fresh) {
      throw sweep_error(side == 0 ? "--ref" : "--port", "",
                        "two bundles for operator '" + b.loaded.plan.op + "': " +
                            plan.bundles[slot->second].loaded.dir.string() + " and " + b.loaded.dir.string());
    }
  }
  for (const auto& e : s.entries) {
    if (!keep(e.config)) {
      ++plan.deselected;
      continue;
    }
    const std::string id = e.config.id();
    auto r = by_op[0].find(e.config.op);
    auto p = by_op[1].find(e.config.op);
    if (r == by_op[0].end() || p == by_op[1].end()) {
      plan.unpaired.emplace_back(id, r == by_op[0].end() ? "no reference bundle for the operator"
                                                          : "no port bundle for the operator");
      continue;
    }
    auto& rb = plan.bundles[r->second];
    auto& pb = plan.bundles[p->second];
    if (!rb.loaded.plan.find(e.config) || !pb.loaded.plan.find(e.config)) {
      const bool ref_lacks = !rb.loaded.plan.find(e.config);
      const auto& lacking = ref_lacks ? rb.loaded.plan : pb.loaded.plan;
      std::string why = ref_lacks ? "the reference bundle has no plan for it" : "the port bundle has no plan for it";
      // The exporter's own reason, where its manifest gives one (unsupported[]).
      if (const std::string* reason = lacking.unsupported_reason(e.config)) why += " (" + lacking.frontend + ": " + *reason + ")";
      plan.unpaired.emplace_back(id, why);
      continue;
    }
    plan.items.push_back({e.config, e.params, {rb.loaded.dir.string(), rb.loaded.plan.frontend},
                          {pb.loaded.dir.string(), pb.loaded.plan.frontend}});
    rb.used = pb.used = true;
  }
  plan.all_shards_items = plan.items.size();
  return plan;
}

sweep_plan plan_check(const std::vector<std::string>& dirs, const selection& select) {
  sweep_plan plan;
  plan.kind = plan_kind::check;
  const matcher keep(select);
  for (const auto& d : dirs) {
    auto found = bundle::find_bundles(d);
    if (found.empty()) found.push_back(d);   // let load_bundle name what is missing
    for (const auto& f : found) plan.bundles.push_back({bundle::load_bundle(f), true});
  }
  for (auto& b : plan.bundles) {
    for (const auto& c : b.loaded.plan.configs) {
      if (!keep(c.config)) {
        ++plan.deselected;
        continue;
      }
      plan.items.push_back({c.config, reference::params_to_json(c.config),
                            {b.loaded.dir.string(), b.loaded.plan.frontend}, {}});
      b.used = true;
    }
  }
  plan.all_shards_items = plan.items.size();
  return plan;
}

plan_estimate estimate(sweep_plan& plan, const estimate_options& opt) {
  // Rates of the H200 host the project measures on (docs/measurement.md); the estimate only has
  // to be of the right size for planning and shard balancing.
  constexpr double k_host_bytes_per_s = 1.0e9;     // seeded input generation and upload
  constexpr double k_verify_bytes_per_s = 2.0e9;   // one fp64 comparison of the outputs
  constexpr double k_device_bytes_per_s = 3.0e12;  // a kernel's bytes at copy bandwidth
  constexpr double k_device_flops = 5.0e14;
  constexpr double k_sample_overhead_s = 30e-6;    // poison, events, the poison counter
  constexpr double k_l2_flush_s = 100e-6;          // reading twice the L2 (measure/l2_flush.hpp)
  constexpr double k_item_overhead_s = 0.05;       // module load, bookkeeping, report
  constexpr double k_worker_startup_s = 1.5;       // context, CUPTI, NVRTC helpers
  const auto& t = opt.timing;
  plan_estimate out;
  for (auto& item : plan.items) {
    double bytes = 0, flops = 0;
    try {
      const auto c = reference::find_operator(item.config.op).cost(item.config);
      bytes = c.bytes_moved;
      flops = c.flops;
    } catch (const std::exception&) {
      // unknown operator or parameters: the worker will report it; count the overheads only
    }
    double s = k_item_overhead_s + bytes / k_host_bytes_per_s + bytes / k_verify_bytes_per_s;
    if (plan.kind == plan_kind::sweep) {
      const double kernel = std::max(bytes / k_device_bytes_per_s, flops / k_device_flops);
      const double per_sample = kernel + k_sample_overhead_s + (t.cold_l2 ? k_l2_flush_s : 0.0);
      // Both sides, twice the minimum (the interval is rarely tight at the minimum), capped.
      const double samples = std::min<double>(std::max(2 * t.min_samples, 4), std::max(t.max_samples, 1));
      s += bytes / k_verify_bytes_per_s + 2 * t.warmup_launches * kernel +
           std::min(t.time_cap_s + 4 * per_sample, 2 * samples * per_sample);
    }
    item.estimated_s = s;
    out.item_seconds += s;
  }
  const std::size_t devices = std::max<std::size_t>(opt.devices, 1);
  const int runs = plan.kind == plan_kind::check ? 1 : std::max(opt.runs, 1);
  out.workers = plan.items.empty() ? 0 : static_cast<std::size_t>(runs) * std::min(devices, plan.items.size());
  out.startup_seconds = static_cast<double>(out.workers) * k_worker_startup_s;
  out.wall_seconds = (runs * out.item_seconds + out.startup_seconds) / static_cast<double>(devices);
  return out;
}

shard parse_shard(const std::string& text, const std::string& option) {
  const auto bad = [&](const std::string& why) {
    return sweep_error("", option, "'" + text + "': " + why + " (expected K/N with 0 <= K < N, e.g. 0/4)");
  };
  const auto slash = text.find('/');
  if (slash == std::string::npos) throw bad("no '/'");
  auto number = [&](const std::string& part) {
    if (part.empty() || part.size() > 6 || part.find_first_not_of("0123456789") != std::string::npos) {
      throw bad("'" + part + "' is not a non-negative integer");
    }
    return std::stoi(part);
  };
  shard s{number(text.substr(0, slash)), number(text.substr(slash + 1))};
  if (s.count < 1) throw bad("N must be at least 1");
  if (s.index >= s.count) throw bad("K must be below N");
  return s;
}

void keep_shard(sweep_plan& plan, const shard& s) {
  if (s.count < 1 || s.index < 0 || s.index >= s.count) throw sweep_error("", "--shard", "invalid slice " + s.text());
  plan.part = s;
  plan.all_shards_items = plan.items.size();
  if (s.whole()) return;
  std::vector<std::size_t> order(plan.items.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return plan.items[a].estimated_s > plan.items[b].estimated_s;
  });
  std::vector<double> load(static_cast<std::size_t>(s.count), 0.0);
  std::vector<bool> keep(plan.items.size(), false);
  for (std::size_t i : order) {
    const auto lightest = static_cast<std::size_t>(std::min_element(load.begin(), load.end()) - load.begin());
    load[lightest] += plan.items[i].estimated_s;
    keep[i] = lightest == static_cast<std::size_t>(s.index);
  }
  std::vector<planned_item> kept;
  for (std::size_t i = 0; i < plan.items.size(); ++i) {
    if (keep[i]) kept.push_back(std::move(plan.items[i]));
  }
  plan.items = std::move(kept);
  // A bundle none of this slice's items runs is not used by this host.
  for (auto& b : plan.bundles) b.used = false;
  for (const auto& item : plan.items) {
    for (auto& b : plan.bundles) {
      const std::string& dir = b.reference_side ? item.reference.bundle : item.port.bundle;
      if (b.loaded.dir.string() == dir) b.used = true;
    }
  }
}

}  // namespace portbench::sweep
