// SPDX-License-Identifier: Apache-2.0
#include "portbench/bundle/manifest.hpp"

#include <fstream>
#include <iterator>
#include <set>

#include <nlohmann/json.hpp>

#include "portbench/bundle/error.hpp"
#include "portbench/reference/config_json.hpp"
#include "portbench/reference/spec.hpp"

namespace portbench::bundle {
namespace {

using json = nlohmann::json;

// Walks the JSON with the path of each field, so every error can name it.
class field {
 public:
  field(const json& j, std::string path, const std::string& file) : m_j(j), m_path(std::move(path)), m_file(file) {}

  [[noreturn]] void fail(const std::string& problem) const {
    throw bundle_error(m_file, (m_path.empty() ? std::string("(top level)") : m_path) + ": " + problem);
  }
  [[nodiscard]] field at(const std::string& key) const {
    if (!m_j.is_object()) fail("expected an object");
    auto it = m_j.find(key);
    std::string p = m_path.empty() ? key : m_path + "." + key;
    if (it == m_j.end()) throw bundle_error(m_file, p + ": missing field");
    return field(*it, p, m_file);
  }
  [[nodiscard]] bool has(const std::string& key) const { return m_j.is_object() && m_j.contains(key); }
  [[nodiscard]] field at(std::size_t i) const { return field(m_j.at(i), m_path + "[" + std::to_string(i) + "]", m_file); }
  [[nodiscard]] std::size_t array_size() const {
    if (!m_j.is_array()) fail("expected an array");
    return m_j.size();
  }
  [[nodiscard]] std::string text() const {
    if (!m_j.is_string()) fail("expected a string");
    return m_j.get<std::string>();
  }
  [[nodiscard]] std::int64_t integer() const {
    if (!m_j.is_number_integer()) fail("expected an integer");
    return m_j.get<std::int64_t>();
  }
  [[nodiscard]] double real() const {
    if (!m_j.is_number()) fail("expected a number");
    return m_j.get<double>();
  }
  [[nodiscard]] dim3 triple(bool allow_zero = false) const {
    if (!m_j.is_array() || m_j.size() != 3) fail("expected 3 positive integers");
    dim3 d{};
    for (std::size_t i = 0; i < 3; ++i) {
      const json& v = m_j[i];
      if (!v.is_number_integer() || v.get<std::int64_t>() < (allow_zero ? 0 : 1) ||
          v.get<std::int64_t>() > 0x7fffffff) {
        fail("expected 3 positive integers");
      }
      d[i] = static_cast<unsigned>(v.get<std::int64_t>());
    }
    return d;
  }
  [[nodiscard]] const json& raw() const noexcept { return m_j; }
  [[nodiscard]] const std::string& path() const noexcept { return m_path; }

 private:
  const json& m_j;
  std::string m_path;
  const std::string& m_file;
};

scalar_type parse_scalar(const field& f) {
  static const std::map<std::string, scalar_type> names = {
      {"i32", scalar_type::i32}, {"i64", scalar_type::i64}, {"u32", scalar_type::u32},
      {"u64", scalar_type::u64}, {"f32", scalar_type::f32}, {"f64", scalar_type::f64}};
  auto it = names.find(f.text());
  if (it == names.end()) f.fail("unknown type '" + f.text() + "' (expected i32, i64, u32, u64, f32, f64)");
  return it->second;
}

param_binding parse_param(const field& f) {
  static const std::map<std::string, param_kind> kinds = {
      {"ptr", param_kind::ptr},         {"extent", param_kind::extent}, {"stride", param_kind::stride},
      {"literal", param_kind::literal}, {"scratch", param_kind::scratch}, {"null", param_kind::null},
      {"ptr_table", param_kind::ptr_table}};
  field kind = f.at("kind");
  auto it = kinds.find(kind.text());
  if (it == kinds.end()) kind.fail("unknown kind '" + kind.text() + "'");
  param_binding p;
  p.kind = it->second;
  switch (p.kind) {
    case param_kind::ptr:
      p.tensor = f.at("tensor").text();
      if (f.has("offset")) {
        field off = f.at("offset");
        p.offset = off.integer();
        if (p.offset < 0) off.fail("must be >= 0 (elements into the tensor)");
      }
      break;
    case param_kind::extent:
    case param_kind::stride: {
      p.tensor = f.at("tensor").text();
      field dim = f.at("dim");
      p.dim = static_cast<int>(dim.integer());
      if (p.dim < 0) dim.fail("must be >= 0");
      p.type = parse_scalar(f.at("type"));
      if (p.type == scalar_type::f32 || p.type == scalar_type::f64) f.at("type").fail("must be an integer type");
      break;
    }
    case param_kind::literal: {
      p.type = parse_scalar(f.at("type"));
      field value = f.at("value");
      if (p.type == scalar_type::f32 || p.type == scalar_type::f64) p.value = value.real();
      else p.value = value.integer();
      break;
    }
    case param_kind::scratch:
      p.scratch = f.at("name").text();
      break;
    case param_kind::null:
      break;
    case param_kind::ptr_table: {
      // A device array of the named tensors' addresses, which the harness builds.
      field names = f.at("tensors");
      if (names.array_size() == 0) names.fail("lists no tensors");
      for (std::size_t i = 0; i < names.array_size(); ++i) {
        p.tensors.push_back(names.at(i).text());
        if (p.tensors.back().empty()) names.at(i).fail("must name a tensor");
      }
      break;
    }
  }
  return p;
}

reference::param_value to_param_value(const field& f) {
  try {
    return reference::param_from_json(f.raw());
  } catch (const reference::spec_error& e) {
    f.fail(e.what());
  }
}

std::string relative_inside(const field& f) {
  std::string rel = f.text();
  std::filesystem::path p(rel);
  if (rel.empty() || p.is_absolute()) f.fail("must be a relative path inside the bundle");
  for (const auto& part : p) {
    if (part == "..") f.fail("path '" + rel + "' leaves the bundle");
  }
  return rel;
}

void parse_plan_body(const field& c, const std::set<std::string>& cubin_files, std::vector<scratch_spec>& scratch_out,
                     std::vector<launch_spec>& launches_out) {
  std::set<std::string> scratch_names;
  if (c.has("scratch")) {
    field scratch = c.at("scratch");
    for (std::size_t k = 0; k < scratch.array_size(); ++k) {
      field s = scratch.at(k);
      scratch_spec spec{s.at("name").text(), 0, false};
      std::int64_t bytes = s.at("bytes").integer();
      if (bytes < 0) s.at("bytes").fail("must be >= 0");
      spec.bytes = static_cast<std::uint64_t>(bytes);
      if (s.has("init")) {
        const std::string init = s.at("init").text();
        if (init != "zero" && init != "none") s.at("init").fail("expected \"zero\" or \"none\", got '" + init + "'");
        spec.zero_init = init == "zero";
      }
      if (!scratch_names.insert(spec.name).second) s.at("name").fail("scratch buffer '" + spec.name + "' is declared twice");
      scratch_out.push_back(spec);
    }
  }
  field launches = c.at("launches");
  if (launches.array_size() == 0) launches.fail("the launch plan is empty");
  for (std::size_t k = 0; k < launches.array_size(); ++k) {
    field l = launches.at(k);
    launch_spec spec;
    field cubin = l.at("cubin");
    spec.cubin = cubin.text();
    if (cubin_files.count(spec.cubin) == 0) cubin.fail("'" + spec.cubin + "' is not listed in cubins");
    spec.entry = l.at("entry").text();
    spec.grid = l.at("grid").triple();
    spec.block = l.at("block").triple();
    spec.cluster = l.has("cluster") ? l.at("cluster").triple() : dim3{1, 1, 1};
    std::int64_t shared = l.at("shared_bytes").integer();
    if (shared < 0) l.at("shared_bytes").fail("must be >= 0");
    spec.shared_bytes = static_cast<unsigned>(shared);
    field ps = l.at("params");
    for (std::size_t p = 0; p < ps.array_size(); ++p) {
      param_binding b = parse_param(ps.at(p));
      if (b.kind == param_kind::scratch && scratch_names.count(b.scratch) == 0) {
        ps.at(p).at("name").fail("scratch buffer '" + b.scratch + "' is not declared in scratch");
      }
      spec.params.push_back(std::move(b));
    }
    launches_out.push_back(std::move(spec));
  }
}

}  // namespace

std::size_t size_of(scalar_type t) noexcept {
  switch (t) {
    case scalar_type::i32: case scalar_type::u32: case scalar_type::f32: return 4;
    default: return 8;
  }
}

const char* to_string(scalar_type t) noexcept {
  switch (t) {
    case scalar_type::i32: return "i32";
    case scalar_type::i64: return "i64";
    case scalar_type::u32: return "u32";
    case scalar_type::u64: return "u64";
    case scalar_type::f32: return "f32";
    case scalar_type::f64: return "f64";
  }
  return "?";
}

const char* to_string(param_kind k) noexcept {
  switch (k) {
    case param_kind::ptr: return "ptr";
    case param_kind::extent: return "extent";
    case param_kind::stride: return "stride";
    case param_kind::literal: return "literal";
    case param_kind::scratch: return "scratch";
    case param_kind::null: return "null";
    case param_kind::ptr_table: return "ptr_table";
  }
  return "?";
}

std::vector<std::size_t> param_offsets(const launch_spec& l) {
  std::vector<std::size_t> offsets;
  std::size_t at = 0;
  for (const auto& p : l.params) {
    std::size_t align = p.size();
    at = (at + align - 1) / align * align;
    offsets.push_back(at);
    at += p.size();
  }
  return offsets;
}

dim3 launch_spec::cta_grid() const noexcept {
  if (!grid_counts_clusters) return grid;
  return {grid[0] * cluster[0], grid[1] * cluster[1], grid[2] * cluster[2]};
}

const plan_variant* config_plan::find_variant(const std::string& name) const noexcept {
  for (const auto& v : variants) {
    if (v.name == name) return &v;
  }
  return nullptr;
}

config_plan config_plan::with_variant(const std::string& name, const std::string& manifest_file) const {
  if (name.empty() || name == variant) return *this;
  const plan_variant* v = find_variant(name);
  if (v == nullptr) {
    throw bundle_error(manifest_file, config.id() + ": no variant '" + name + "' (" + std::to_string(variants.size()) +
                                          " variants)");
  }
  config_plan p;
  p.config = config;
  p.tuning_json = v->tuning_json;
  p.scratch = v->scratch;
  p.launches = v->launches;
  p.variant = v->name;
  return p;
}

const config_plan* manifest::find(const reference::config& c) const noexcept {
  for (const auto& plan : configs) {
    if (plan.config.op == c.op && plan.config.params == c.params) return &plan;
  }
  return nullptr;
}

const std::string* manifest::unsupported_reason(const reference::config& c) const noexcept {
  for (const auto& u : unsupported) {
    if (u.config.op == c.op && u.config.params == c.params) return &u.reason;
  }
  return nullptr;
}

manifest parse_manifest(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw bundle_error(file.string(), "cannot open manifest (missing file?)");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return parse_manifest_text(text, file);
}

manifest parse_manifest_text(std::string_view text, const std::filesystem::path& file) {
  const std::string name = file.string();
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::exception& e) {   // parse_error, and out_of_range for a number too large
    throw bundle_error(name, std::string("not valid JSON: ") + e.what());
  }
  field root(doc, "", name);
  manifest m;
  m.path = file;
  m.schema = root.at("schema").text();
  if (m.schema != k_manifest_schema) {
    root.at("schema").fail("unsupported schema '" + m.schema + "' (expected " + k_manifest_schema + ")");
  }
  m.frontend = root.at("frontend").text();
  m.op = root.at("operator").text();
  m.arch = root.at("arch").text();
  if (m.arch.rfind("sm_", 0) != 0) root.at("arch").fail("expected sm_<number>[a], got '" + m.arch + "'");
  field tools = root.at("toolchain");
  if (!tools.raw().is_object()) tools.fail("expected an object of tool -> version");
  for (const auto& [tool, version] : tools.raw().items()) {
    m.toolchain[tool] = version.is_string() ? version.get<std::string>() : version.dump();
  }

  field cubins = root.at("cubins");
  std::set<std::string> cubin_files;
  for (std::size_t i = 0; i < cubins.array_size(); ++i) {
    field c = cubins.at(i);
    cubin_ref ref;
    ref.file = relative_inside(c.at("file"));
    ref.sha256 = c.at("sha256").text();
    if (c.has("ir")) {
      field ir = c.at("ir");
      for (std::size_t k = 0; k < ir.array_size(); ++k) ref.ir.push_back(relative_inside(ir.at(k)));
    }
    cubin_files.insert(ref.file);
    m.cubins.push_back(std::move(ref));
  }
  if (m.cubins.empty()) cubins.fail("lists no cubins");

  if (root.has("target")) m.target_json = root.at("target").raw().dump();
  if (root.has("sources")) m.sources_json = root.at("sources").raw().dump();

  field configs = root.at("configs");
  for (std::size_t i = 0; i < configs.array_size(); ++i) {
    field c = configs.at(i);
    config_plan plan;
    plan.config.op = m.op;
    field params = c.at("params");
    if (!params.raw().is_object()) params.fail("expected an object");
    for (const auto& [key, value] : params.raw().items()) {
      plan.config.params[key] = to_param_value(params.at(key));
      (void)value;
    }
    if (c.has("tuning")) plan.tuning_json = c.at("tuning").raw().dump();
    parse_plan_body(c, cubin_files, plan.scratch, plan.launches);
    if (c.has("variants")) {
      field vs = c.at("variants");
      std::set<std::string> names;
      for (std::size_t k = 0; k < vs.array_size(); ++k) {
        field v = vs.at(k);
        plan_variant pv;
        pv.name = v.at("name").text();
        if (pv.name.empty()) v.at("name").fail("must not be empty");
        if (!names.insert(pv.name).second) v.at("name").fail("variant '" + pv.name + "' is named twice");
        if (v.has("tuning")) pv.tuning_json = v.at("tuning").raw().dump();
        parse_plan_body(v, cubin_files, pv.scratch, pv.launches);
        plan.variants.push_back(std::move(pv));
      }
    }
    if (c.has("tuning") && c.at("tuning").raw().is_object() && c.at("tuning").has("variant")) {
      plan.variant = c.at("tuning").at("variant").text();
    }
    m.configs.push_back(std::move(plan));
  }

  if (root.has("unsupported")) {
    // The exporter's reasons for the configurations it has no plan for; one with a plan too
    // would contradict itself.
    field us = root.at("unsupported");
    for (std::size_t i = 0; i < us.array_size(); ++i) {
      field u = us.at(i);
      unsupported_config entry;
      entry.config.op = m.op;
      field params = u.at("params");
      if (!params.raw().is_object()) params.fail("expected an object");
      for (const auto& [key, value] : params.raw().items()) {
        entry.config.params[key] = to_param_value(params.at(key));
        (void)value;
      }
      entry.reason = u.at("reason").text();
      if (entry.reason.empty()) u.at("reason").fail("must not be empty");
      if (m.find(entry.config) != nullptr) params.fail("also has a plan in configs[]");
      m.unsupported.push_back(std::move(entry));
    }
  }
  return m;
}

}  // namespace portbench::bundle
