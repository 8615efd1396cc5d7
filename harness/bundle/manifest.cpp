// SPDX-License-Identifier: Apache-2.0
#include "portbench/bundle/manifest.hpp"

#include <bit>
#include <fstream>
#include <iterator>
#include <limits>
#include <set>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "portbench/bundle/error.hpp"
#include "portbench/reference/config_json.hpp"
#include "portbench/reference/half.hpp"
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
      {"ptr_table", param_kind::ptr_table}, {"array_table", param_kind::array_table}};
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
    case param_kind::ptr_table:
    case param_kind::array_table: {
      // A device array of the named tensors' addresses (ptr_table) or of their descriptors
      // (array_table: address, extents, strides), which the harness builds.
      field names = f.at("tensors");
      if (names.array_size() == 0) names.fail("lists no tensors");
      for (std::size_t i = 0; i < names.array_size(); ++i) {
        p.tensors.push_back(names.at(i).text());
        if (p.tensors.back().empty()) names.at(i).fail("must name a tensor");
      }
      if (p.kind == param_kind::ptr_table) break;
      field rank = f.at("rank");
      const std::int64_t r = rank.integer();
      if (r < 0 || r > static_cast<std::int64_t>(k_max_table_rank)) {
        rank.fail("must be 0.." + std::to_string(k_max_table_rank) + " (every listed tensor's rank)");
      }
      p.rank = static_cast<int>(r);
      field index = f.at("index_type");
      p.index_type = parse_scalar(index);
      if (p.index_type != scalar_type::i32 && p.index_type != scalar_type::i64) index.fail("must be i32 or i64");
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

// Step objects are new in this schema: unknown fields are refused, so a misspelt optional field
// ("ofset") cannot silently mean its default.
void only_fields(const field& f, std::initializer_list<const char*> allowed) {
  if (!f.raw().is_object()) f.fail("expected an object");
  for (const auto& [key, value] : f.raw().items()) {
    bool known = false;
    for (const char* a : allowed) known = known || key == a;
    if (!known) f.at(key).fail("unknown field");
    (void)value;
  }
}

element_type parse_element(const field& f) {
  auto t = parse_element_type(f.text());
  if (!t) f.fail("unknown element type '" + f.text() + "' (expected f64, f32, f16, bf16, i64, i32, i16, i8, u64, u32, u16, u8)");
  return *t;
}

std::vector<std::int64_t> integers(const field& f, std::int64_t minimum, const char* what) {
  std::vector<std::int64_t> out;
  const std::size_t n = f.array_size();
  if (n == 0 || n > k_max_view_rank) f.fail("expected 1 to " + std::to_string(k_max_view_rank) + " " + what);
  for (std::size_t i = 0; i < n; ++i) {
    const std::int64_t v = f.at(i).integer();
    if (v < minimum) f.at(i).fail("must be >= " + std::to_string(minimum));
    out.push_back(v);
  }
  return out;
}

view_spec parse_view(const field& f, const std::set<std::string>& scratch_names) {
  only_fields(f, {"tensor", "scratch", "offset", "shape", "strides", "type"});
  view_spec v;
  if (f.has("tensor") == f.has("scratch")) f.fail("expected exactly one of \"tensor\" and \"scratch\"");
  if (f.has("tensor")) {
    v.tensor = f.at("tensor").text();
    if (v.tensor.empty()) f.at("tensor").fail("must name a tensor");
  } else {
    v.scratch = f.at("scratch").text();
    if (scratch_names.count(v.scratch) == 0) {
      f.at("scratch").fail("scratch buffer '" + v.scratch + "' is not declared in scratch");
    }
  }
  v.type = parse_element(f.at("type"));
  if (f.has("offset")) {
    v.offset = f.at("offset").integer();
    if (v.offset < 0) f.at("offset").fail("must be >= 0 (elements into the " + std::string(v.tensor.empty() ? "buffer" : "tensor") + ")");
  }
  v.shape = integers(f.at("shape"), 1, "extents");
  v.strides = integers(f.at("strides"), 0, "strides");
  if (v.strides.size() != v.shape.size()) {
    f.at("strides").fail(std::to_string(v.strides.size()) + " strides for " + std::to_string(v.shape.size()) + " extents");
  }
  return v;
}

fill_value parse_fill_value(const field& value, element_type t) {
  std::variant<std::int64_t, double> v;
  if (is_floating(t)) v = value.real();
  else v = value.integer();
  try {
    return make_fill_value(t, v);
  } catch (const std::invalid_argument& e) {
    value.fail(e.what());
  }
}

std::string shape_text(const std::vector<std::int64_t>& s) {
  std::string out = "[";
  for (std::size_t i = 0; i < s.size(); ++i) out += (i ? "," : "") + std::to_string(s[i]);
  return out + "]";
}

plan_step parse_step(const field& l, const std::string& kind, const std::set<std::string>& scratch_names) {
  plan_step st;
  if (kind == "fill") {
    only_fields(l, {"step", "target", "value"});
    st.kind = step_kind::fill;
    st.fill.target = parse_view(l.at("target"), scratch_names);
    st.fill.value = parse_fill_value(l.at("value"), st.fill.target.type);
  } else if (kind == "copy") {
    only_fields(l, {"step", "src", "dst"});
    st.kind = step_kind::copy;
    st.copy.src = parse_view(l.at("src"), scratch_names);
    st.copy.dst = parse_view(l.at("dst"), scratch_names);
    if (st.copy.src.shape != st.copy.dst.shape) {
      l.at("dst").at("shape").fail(shape_text(st.copy.dst.shape) + " differs from src.shape " + shape_text(st.copy.src.shape));
    }
  } else if (kind == "sum") {
    only_fields(l, {"step", "src", "dst", "axis"});
    st.kind = step_kind::sum;
    st.sum.src = parse_view(l.at("src"), scratch_names);
    st.sum.dst = parse_view(l.at("dst"), scratch_names);
    const field axis = l.at("axis");
    const std::int64_t a = axis.integer();
    const auto rank = static_cast<std::int64_t>(st.sum.src.shape.size());
    if (a < 0 || a >= rank) axis.fail(std::to_string(a) + " is not an axis of src (rank " + std::to_string(rank) + ")");
    st.sum.axis = static_cast<std::size_t>(a);
    const auto want = sum_result_shape(st.sum.src.shape, st.sum.axis);
    if (st.sum.dst.shape != want) {
      l.at("dst").at("shape").fail(shape_text(st.sum.dst.shape) + " is not src.shape " + shape_text(st.sum.src.shape) +
                                   " without axis " + std::to_string(a) + " (" + shape_text(want) + ")");
    }
    if (is_floating(st.sum.src.type) != is_floating(st.sum.dst.type)) {
      l.at("dst").at("type").fail(std::string("a sum of ") + to_string(st.sum.src.type) + " into " +
                                  to_string(st.sum.dst.type) + ": src and dst are both floating or both integer");
    }
  } else {
    l.at("step").fail("unknown step '" + kind + "' (expected \"fill\", \"copy\" or \"sum\"; a kernel launch has no \"step\")");
  }
  return st;
}

scratch_spec parse_scratch(const field& s) {
  scratch_spec spec{s.at("name").text(), 0, false, std::nullopt};
  std::int64_t bytes = s.at("bytes").integer();
  if (bytes < 0) s.at("bytes").fail("must be >= 0");
  spec.bytes = static_cast<std::uint64_t>(bytes);
  if (!s.has("init")) return spec;
  field init = s.at("init");
  if (init.raw().is_object()) {
    only_fields(init, {"fill", "type"});
    const element_type t = parse_element(init.at("type"));
    spec.fill_init = parse_fill_value(init.at("fill"), t);
    if (spec.bytes % size_of(t) != 0) {
      init.at("type").fail(std::to_string(spec.bytes) + " bytes are not a whole number of " + to_string(t) + " elements");
    }
    return spec;
  }
  if (!init.raw().is_string()) init.fail("expected \"zero\", \"none\" or {\"fill\": V, \"type\": T}");
  const std::string text = init.text();
  if (text != "zero" && text != "none") init.fail("expected \"zero\" or \"none\", got '" + text + "'");
  spec.zero_init = text == "zero";
  return spec;
}

void parse_plan_body(const field& c, const std::set<std::string>& cubin_files, std::vector<scratch_spec>& scratch_out,
                     std::vector<launch_spec>& launches_out, std::vector<plan_step>& steps_out) {
  std::set<std::string> scratch_names;
  if (c.has("scratch")) {
    field scratch = c.at("scratch");
    for (std::size_t k = 0; k < scratch.array_size(); ++k) {
      field s = scratch.at(k);
      scratch_spec spec = parse_scratch(s);
      if (!scratch_names.insert(spec.name).second) s.at("name").fail("scratch buffer '" + spec.name + "' is declared twice");
      scratch_out.push_back(spec);
    }
  }
  field launches = c.at("launches");
  if (launches.array_size() == 0) launches.fail("the launch plan is empty");
  for (std::size_t k = 0; k < launches.array_size(); ++k) {
    field l = launches.at(k);
    if (l.has("step")) {
      plan_step st = parse_step(l, l.at("step").text(), scratch_names);
      st.index = k;
      steps_out.push_back(std::move(st));
      continue;
    }
    plan_step kernel_step;
    kernel_step.kind = step_kind::kernel;
    kernel_step.index = k;
    kernel_step.launch = launches_out.size();
    steps_out.push_back(std::move(kernel_step));
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
  // Steps are the harness's own work: a plan must run something of the bundle.
  if (launches_out.empty()) launches.fail("the plan launches no kernel (harness steps alone run nothing of the bundle)");
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
    case param_kind::array_table: return "array_table";
  }
  return "?";
}

namespace {

struct element_info {
  element_type type;
  const char* name;
  std::size_t size;
  bool floating;
};
constexpr element_info k_elements[] = {
    {element_type::f64, "f64", 8, true},  {element_type::f32, "f32", 4, true},  {element_type::f16, "f16", 2, true},
    {element_type::bf16, "bf16", 2, true}, {element_type::i64, "i64", 8, false}, {element_type::i32, "i32", 4, false},
    {element_type::i16, "i16", 2, false}, {element_type::i8, "i8", 1, false},   {element_type::u64, "u64", 8, false},
    {element_type::u32, "u32", 4, false}, {element_type::u16, "u16", 2, false}, {element_type::u8, "u8", 1, false}};

const element_info& info(element_type t) noexcept {
  for (const auto& e : k_elements) {
    if (e.type == t) return e;
  }
  return k_elements[0];
}

}  // namespace

std::size_t size_of(element_type t) noexcept { return info(t).size; }
const char* to_string(element_type t) noexcept { return info(t).name; }
bool is_floating(element_type t) noexcept { return info(t).floating; }

std::optional<element_type> parse_element_type(const std::string& name) noexcept {
  for (const auto& e : k_elements) {
    if (name == e.name) return e.type;
  }
  return std::nullopt;
}

std::int64_t view_spec::elements() const noexcept {
  std::int64_t n = 1;
  for (auto e : shape) n *= e;
  return n;
}

std::vector<std::int64_t> sum_result_shape(const std::vector<std::int64_t>& shape, std::size_t axis) {
  std::vector<std::int64_t> out;
  for (std::size_t k = 0; k < shape.size(); ++k) {
    if (k != axis) out.push_back(shape[k]);
  }
  if (out.empty()) out.push_back(1);   // a view has at least one extent
  return out;
}

std::string view_spec::describe() const {
  return tensor.empty() ? "scratch '" + scratch + "'" : "tensor '" + tensor + "'";
}

fill_value make_fill_value(element_type t, std::variant<std::int64_t, double> v) {
  fill_value f{t, v, 0};
  const double real = std::holds_alternative<double>(v) ? std::get<double>(v) : static_cast<double>(std::get<std::int64_t>(v));
  if (!is_floating(t)) {
    if (!std::holds_alternative<std::int64_t>(v)) throw std::invalid_argument(std::string("expected an integer for ") + to_string(t));
    const std::int64_t x = std::get<std::int64_t>(v);
    const std::size_t bits = 8 * size_of(t);
    const bool is_unsigned = t == element_type::u8 || t == element_type::u16 || t == element_type::u32 || t == element_type::u64;
    const std::int64_t lo = is_unsigned ? 0 : (bits == 64 ? std::numeric_limits<std::int64_t>::min() : -(std::int64_t{1} << (bits - 1)));
    const std::int64_t hi = bits == 64 ? std::numeric_limits<std::int64_t>::max()
                                       : (is_unsigned ? (std::int64_t{1} << bits) - 1 : (std::int64_t{1} << (bits - 1)) - 1);
    if (x < lo || x > hi) throw std::invalid_argument("value " + std::to_string(x) + " does not fit " + to_string(t));
    const std::uint64_t mask = bits == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << bits) - 1;
    f.bits = static_cast<std::uint64_t>(x) & mask;
    return f;
  }
  switch (t) {
    case element_type::f64: f.bits = std::bit_cast<std::uint64_t>(real); break;
    case element_type::f32: f.bits = std::bit_cast<std::uint32_t>(static_cast<float>(real)); break;
    case element_type::f16: f.bits = reference::fp16_from_double(real); break;
    case element_type::bf16: f.bits = reference::bf16_from_double(real); break;
    default: break;
  }
  return f;
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
  p.steps = v->steps;
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
    parse_plan_body(c, cubin_files, plan.scratch, plan.launches, plan.steps);
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
        parse_plan_body(v, cubin_files, pv.scratch, pv.launches, pv.steps);
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
  // A bundle without plans still says why (an exporter whose every configuration of the
  // operator is unsupported): its unsupported[] reasons reach `portbench run`'s unpaired list.
  if (m.cubins.empty() && (!m.configs.empty() || m.unsupported.empty())) cubins.fail("lists no cubins");
  return m;
}

}  // namespace portbench::bundle
