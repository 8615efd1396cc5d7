// SPDX-License-Identifier: Apache-2.0
#include "portbench/bundle/bundle.hpp"

#include <algorithm>
#include <fstream>

#include "portbench/bundle/error.hpp"
#include "portbench/bundle/sha256.hpp"

namespace portbench::bundle {
namespace {

std::vector<std::byte> read_file(const std::filesystem::path& p, const std::string& manifest_file,
                                 const std::string& field) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw bundle_error(manifest_file, field + ": cannot open '" + p.string() + "' (missing file?)");
  in.seekg(0, std::ios::end);
  auto size = static_cast<std::size_t>(in.tellg());
  in.seekg(0);
  std::vector<std::byte> bytes(size);
  in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(size));
  if (!in) throw bundle_error(p.string(), "read failed");
  return bytes;
}

std::string describe(const param_binding& p) {
  std::string s = to_string(p.kind);
  if (!p.tensor.empty()) s += " " + p.tensor;
  if (p.kind == param_kind::extent || p.kind == param_kind::stride) s += "[" + std::to_string(p.dim) + "]";
  if (p.kind == param_kind::scratch) s += " " + p.scratch;
  if (p.kind == param_kind::ptr_table || p.kind == param_kind::array_table) {
    s += " [";
    for (std::size_t i = 0; i < p.tensors.size(); ++i) s += (i ? "," : "") + p.tensors[i];
    s += "]";
  }
  if (p.kind == param_kind::array_table) s += " rank " + std::to_string(p.rank) + " " + to_string(p.index_type);
  return s + " (" + to_string(p.type) + ")";
}

std::string triple(const std::array<int, 3>& d) {
  return "[" + std::to_string(d[0]) + "," + std::to_string(d[1]) + "," + std::to_string(d[2]) + "]";
}

// A cubin that fixes its cluster shape (EIATTR_CTA_PER_CLUSTER) must be declared with exactly
// that shape: the proof check multiplies the grid by it when the grid counts clusters, and a
// launch attribute with another shape would be refused by the driver.
void check_cluster(const std::string& file, const std::string& where, const launch_spec& l, const cubin_entry& e) {
  const std::array<int, 3> declared{static_cast<int>(l.cluster[0]), static_cast<int>(l.cluster[1]),
                                    static_cast<int>(l.cluster[2])};
  const bool fixed = e.cluster[0] != 0;
  if (fixed && declared != e.cluster) {
    throw bundle_error(file, where + ".cluster: " + triple(declared) + ", but entry '" + l.entry +
                                 "' is compiled for clusters of " + triple(e.cluster) + " (EIATTR_CTA_PER_CLUSTER)");
  }
  if (!fixed && e.tile_ir && declared != std::array<int, 3>{1, 1, 1}) {
    throw bundle_error(file, where + ".cluster: " + triple(declared) + ", but Tile IR entry '" + l.entry +
                                 "' has no compiled cluster shape (its num_ctas is 1)");
  }
  if (e.blocks_are_clusters && !fixed) {
    throw bundle_error(file, where + ": entry '" + l.entry + "' counts its grid in clusters but states no cluster shape");
  }
}

}  // namespace

const loaded_cubin& bundle::cubin(const std::string& file) const {
  for (const auto& c : cubins) {
    if (c.ref.file == file) return c;
  }
  throw bundle_error(plan.path.string(), "no cubin '" + file + "'");
}

void check_launch_against_cubin(const manifest& m, const std::string& where, const launch_spec& l,
                                const loaded_cubin& c) {
  const std::string file = m.path.string();
  const cubin_entry* e = c.info.find(l.entry);
  if (e == nullptr) {
    throw bundle_error(file, where + ".entry: '" + l.entry + "' is not an entry of " + c.ref.file);
  }
  auto offsets = param_offsets(l);
  if (e->params.size() != l.params.size()) {
    throw bundle_error(file, where + ".params: " + std::to_string(l.params.size()) + " parameters, but " +
                                 c.ref.file + " entry '" + l.entry + "' takes " +
                                 std::to_string(e->params.size()));
  }
  for (std::size_t i = 0; i < l.params.size(); ++i) {
    const cubin_param& want = e->params[i];
    if (want.ordinal != static_cast<int>(i) || want.offset != static_cast<int>(offsets[i]) ||
        want.size != static_cast<int>(l.params[i].size())) {
      throw bundle_error(file, where + ".params[" + std::to_string(i) + "] " + describe(l.params[i]) + ": " +
                                   std::to_string(l.params[i].size()) + " bytes at offset " +
                                   std::to_string(offsets[i]) + ", but " + c.ref.file + " entry '" + l.entry +
                                   "' has parameter " + std::to_string(want.ordinal) + " of " +
                                   std::to_string(want.size) + " bytes at offset " + std::to_string(want.offset));
    }
  }
  check_cluster(file, where, l, *e);
  if (e->tile_ir) {
    if (l.block != dim3{1, 1, 1} || l.shared_bytes != 0) {
      throw bundle_error(file, where + ": entry '" + l.entry + "' is a Tile IR kernel, launched with block [1,1,1] " +
                                   "and shared_bytes 0");
    }
    return;
  }
  const auto& rb = e->required_block;
  if (rb[0] != 0 && (static_cast<int>(l.block[0]) != rb[0] || static_cast<int>(l.block[1]) != rb[1] ||
                     static_cast<int>(l.block[2]) != rb[2])) {
    throw bundle_error(file, where + ".block: [" + std::to_string(l.block[0]) + "," + std::to_string(l.block[1]) +
                                 "," + std::to_string(l.block[2]) + "], but entry '" + l.entry + "' requires [" +
                                 std::to_string(rb[0]) + "," + std::to_string(rb[1]) + "," +
                                 std::to_string(rb[2]) + "]");
  }
}

bundle load_bundle(const std::filesystem::path& dir) {
  std::filesystem::path manifest_path = dir / "manifest.json";
  if (!std::filesystem::is_directory(dir)) {
    throw bundle_error(dir.string(), "not a bundle folder (missing or not a directory)");
  }
  bundle b;
  b.dir = dir;
  b.plan = parse_manifest(manifest_path);
  const std::string mfile = manifest_path.string();

  for (std::size_t i = 0; i < b.plan.cubins.size(); ++i) {
    const cubin_ref& ref = b.plan.cubins[i];
    std::string field = "cubins[" + std::to_string(i) + "]";
    loaded_cubin c;
    c.ref = ref;
    c.path = dir / ref.file;
    c.image = read_file(c.path, mfile, field + ".file");
    std::string digest = sha256_hex(c.image);
    if (digest != ref.sha256) {
      throw bundle_error(mfile, field + ".sha256: " + ref.file + " has sha256 " + digest + ", manifest says " +
                                    ref.sha256);
    }
    c.info = inspect_cubin(c.image, c.path.string());
    // tileiras marks its sm_90 output arch-specific (sm_90a); a manifest naming the plain SM
    // it asked for is accepted, one naming "a" must get an arch-specific cubin.
    std::string plain = "sm_" + std::to_string(c.info.sm);
    if (b.plan.arch != c.info.arch() && !(b.plan.arch == plain && c.info.arch_specific)) {
      throw bundle_error(c.path.string(), "cubin is for " + c.info.arch() + ", manifest " + mfile +
                                              " says arch " + b.plan.arch);
    }
    b.cubins.push_back(std::move(c));
  }
  // Kernel launches are named by their position in the manifest's launches[], which also
  // holds the plan's harness steps (fill, copy, sum).
  auto check_all = [&](std::vector<launch_spec>& launches, const std::vector<plan_step>& steps, const std::string& prefix) {
    for (const auto& st : steps) {
      if (st.kind != step_kind::kernel) continue;
      launch_spec& l = launches.at(st.launch);
      const loaded_cubin& c = b.cubin(l.cubin);
      check_launch_against_cubin(b.plan, prefix + ".launches[" + std::to_string(st.index) + "]", l, c);
      const cubin_entry* e = c.info.find(l.entry);
      l.grid_counts_clusters = e != nullptr && e->blocks_are_clusters;
    }
  };
  for (std::size_t i = 0; i < b.plan.configs.size(); ++i) {
    auto& plan = b.plan.configs[i];
    const std::string where = "configs[" + std::to_string(i) + "]";
    check_all(plan.launches, plan.steps, where);
    for (std::size_t v = 0; v < plan.variants.size(); ++v) {
      check_all(plan.variants[v].launches, plan.variants[v].steps, where + ".variants[" + std::to_string(v) + "]");
    }
  }
  return b;
}

std::vector<std::filesystem::path> find_bundles(const std::filesystem::path& root) {
  std::vector<std::filesystem::path> found;
  if (std::filesystem::exists(root / "manifest.json")) found.push_back(root);
  if (std::filesystem::is_directory(root)) {
    for (const auto& e : std::filesystem::recursive_directory_iterator(root)) {
      if (e.is_regular_file() && e.path().filename() == "manifest.json" && e.path().parent_path() != root) {
        found.push_back(e.path().parent_path());
      }
    }
  }
  std::sort(found.begin(), found.end());
  return found;
}

}  // namespace portbench::bundle
