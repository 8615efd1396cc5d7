// SPDX-License-Identifier: Apache-2.0
#include "portbench/diagnose/bundle_ir.hpp"

#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <stdexcept>

#include "portbench/bundle/bundle.hpp"
#include "portbench/bundle/error.hpp"
#include "portbench/diagnose/verdicts.hpp"

namespace portbench::diagnose {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view k_tile_ir_suffix = ".tileir.txt";

bool is_tile_ir(const std::string& file) {
  return file.size() > k_tile_ir_suffix.size() &&
         file.compare(file.size() - k_tile_ir_suffix.size(), k_tile_ir_suffix.size(), k_tile_ir_suffix) == 0;
}

/// The entry `l` launches, looked up in its cubin's Tile IR texts; nullptr with `why` if none.
const tile_ir::function* find_entry(const bundle::manifest& m, const bundle::launch_spec& l, ir_cache& cache,
                                    launch_ir& info, std::string& why) {
  info.entry = l.entry;
  const bundle::cubin_ref* cubin = nullptr;
  for (const auto& c : m.cubins) {
    if (c.file == l.cubin) cubin = &c;
  }
  if (cubin == nullptr) {
    throw bundle::bundle_error(m.path.string(), "launch of '" + l.entry + "' names cubin '" + l.cubin +
                                                    "', which cubins[] does not list");
  }
  std::string others;
  std::string symbols;
  for (const auto& ir : cubin->ir) {
    if (!is_tile_ir(ir)) {
      others += (others.empty() ? "" : ", ") + ir;
      continue;
    }
    const auto& mod = cache.get(m.path.parent_path() / ir);
    if (const auto* f = mod.find(l.entry)) {
      info.ir_file = ir;
      return f;
    }
    for (const auto& f : mod.functions) symbols += (symbols.empty() ? "" : ", ") + f.symbol;
  }
  if (!symbols.empty()) {
    why = "the Tile IR of " + l.cubin + " has no entry @" + l.entry + " (it has " + symbols + ")";
  } else {
    why = l.cubin + " has no Tile IR text" + (others.empty() ? std::string() : " (only " + others + ")");
  }
  return nullptr;
}

std::string summary(const std::vector<ir_difference>& diffs) {
  int structural = 0, notes = 0;
  for (const auto& d : diffs) (d.severity == severity::structural ? structural : notes) += 1;
  return std::to_string(structural) + " structural difference(s), " + std::to_string(notes) + " note(s)";
}

std::vector<fs::path> bundles_in(const fs::path& dir) {
  if (fs::exists(dir / "manifest.json")) return {dir};
  if (!fs::is_directory(dir)) throw bundle::bundle_error(dir.string(), "no such bundle folder");
  auto found = bundle::find_bundles(dir);
  if (found.empty()) throw bundle::bundle_error(dir.string(), "no bundle (no manifest.json) below this folder");
  return found;
}

std::string worst(const std::string& a, const std::string& b) {
  if (a.empty()) return b;
  return ir_verdict_rank(b) < ir_verdict_rank(a) ? b : a;
}

}  // namespace

const tile_ir::module& ir_cache::get(const fs::path& file) {
  auto key = file.lexically_normal().string();
  auto it = m_modules.find(key);
  if (it != m_modules.end()) return *it->second;
  std::ifstream in(file, std::ios::binary);
  if (!in) throw bundle::bundle_error(file.string(), "cannot read Tile IR text");
  std::ostringstream ss;
  ss << in.rdbuf();
  auto mod = std::make_unique<tile_ir::module>(tile_ir::parse(ss.str(), file.string()));
  if (mod->functions.empty()) throw tile_ir::parse_error(file.string() + ": no entry in the Tile IR text");
  return *m_modules.emplace(key, std::move(mod)).first->second;
}

config_ir_diff diff_config(const bundle::manifest& ref, const bundle::config_plan& ref_plan,
                           const bundle::manifest& port, const bundle::config_plan& port_plan, ir_cache& cache) {
  config_ir_diff out;
  out.config_id = ref_plan.config.id();
  std::vector<const tile_ir::function*> ref_fns, port_fns;
  std::string why;
  for (const auto& l : ref_plan.launches) {
    out.reference.emplace_back();
    std::string w;
    ref_fns.push_back(find_entry(ref, l, cache, out.reference.back(), w));
    if (!ref_fns.back() && why.empty()) why = "reference: " + w;
  }
  for (const auto& l : port_plan.launches) {
    out.port.emplace_back();
    std::string w;
    port_fns.push_back(find_entry(port, l, cache, out.port.back(), w));
    if (!port_fns.back() && why.empty()) why = "port: " + w;
  }
  if (!why.empty()) {
    out.verdict = ir_verdict::not_comparable;
    out.reason = why;
    return out;
  }
  bool several = ref_fns.size() > 1 || port_fns.size() > 1;
  if (ref_fns.size() != port_fns.size()) {
    out.differences.push_back({std::string(difference_kind::launches), std::string(severity::structural), "plan",
                               std::to_string(ref_fns.size()) + " launches", std::to_string(port_fns.size()) + " launches"});
  }
  for (std::size_t i = 0; i < ref_fns.size() && i < port_fns.size(); ++i) {
    std::string where = several ? "launch " + std::to_string(i) : "";
    auto d = diff_functions(normalise(*ref_fns[i]), normalise(*port_fns[i]), where);
    out.differences.insert(out.differences.end(), d.begin(), d.end());
  }
  out.verdict = verdict_of(out.differences);
  out.reason = summary(out.differences);
  return out;
}

std::vector<const tile_ir::function*> plan_entries(const bundle::manifest& m, const bundle::config_plan& plan,
                                                 ir_cache& cache) {
  std::vector<const tile_ir::function*> out;
  for (const auto& l : plan.launches) {
    launch_ir info;
    std::string why;
    out.push_back(find_entry(m, l, cache, info, why));
  }
  return out;
}

std::vector<bundle_ir_diff> diff_bundles(const fs::path& ref, const fs::path& port, const ir_diff_options& opts) {
  std::regex filter;
  try {
    filter = std::regex(opts.config_regex.empty() ? std::string(".*") : opts.config_regex);
  } catch (const std::regex_error& e) {
    throw std::runtime_error("--config: not a regular expression: " + opts.config_regex + " (" + e.what() + ")");
  }
  std::map<std::string, bundle::manifest> ports;
  for (const auto& dir : bundles_in(port)) {
    auto m = bundle::parse_manifest(dir / "manifest.json");
    ports.emplace(m.op, std::move(m));
  }
  std::vector<bundle_ir_diff> out;
  ir_cache cache;
  for (const auto& dir : bundles_in(ref)) {
    auto r = bundle::parse_manifest(dir / "manifest.json");
    auto p = ports.find(r.op);
    if (p == ports.end()) continue;
    bundle_ir_diff b;
    b.op = r.op;
    b.reference_dir = dir;
    b.port_dir = p->second.path.parent_path();
    b.reference_frontend = r.frontend;
    b.port_frontend = p->second.frontend;
    for (const auto& plan : r.configs) {
      std::string id = plan.config.id();
      if (!std::regex_search(id, filter)) continue;
      const auto* other = p->second.find(plan.config);
      if (other == nullptr) {
        b.unpaired.push_back(id + ": the port bundle has no plan for it");
        continue;
      }
      b.configs.push_back(diff_config(r, plan, p->second, *other, cache));
      b.verdict = worst(b.verdict, b.configs.back().verdict);
    }
    if (!b.configs.empty()) out.push_back(std::move(b));
  }
  if (out.empty()) {
    throw std::runtime_error(ref.string() + " and " + port.string() + ": no configuration in common" +
                             (opts.config_regex.empty() ? "" : " matching --config " + opts.config_regex));
  }
  return out;
}

std::string overall_verdict(const std::vector<bundle_ir_diff>& diffs) {
  std::string v;
  for (const auto& b : diffs) v = worst(v, b.verdict);
  return v.empty() ? std::string(ir_verdict::not_comparable) : v;
}

}  // namespace portbench::diagnose
