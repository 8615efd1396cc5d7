// SPDX-License-Identifier: Apache-2.0
#include "provenance_io.hpp"

#include <array>
#include <nlohmann/json.hpp>

#include "hdf5.hpp"

namespace portbench::store::detail {
namespace {

constexpr std::array<const char*, 16> known_names = {
    "schema",        "created_utc",       "portbench_version", "gpu_name",
    "driver_version", "sm_clock_mhz",     "memory_clock_mhz",  "cuda_version",
    "cupti_version", "git_revision",      "command_line",      "suite",
    "seeds",         "reference_frontend", "port_frontend",    "bundles"};

std::string bundles_to_json(const std::vector<bundle_provenance>& bundles) {
  nlohmann::json arr = nlohmann::json::array();
  for (const auto& b : bundles) {
    arr.push_back({{"role", b.role},
                   {"frontend", b.frontend},
                   {"operator", b.op},
                   {"bundle_sha256", b.bundle_sha256},
                   {"cubin_sha256", b.cubin_sha256}});
  }
  return arr.dump();
}

std::vector<bundle_provenance> bundles_from_json(const std::string& text) {
  std::vector<bundle_provenance> out;
  if (text.empty()) return out;
  auto arr = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!arr.is_array()) throw h5_error("root attribute 'bundles' is not a JSON array");
  for (const auto& j : arr) {
    bundle_provenance b;
    b.role = j.value("role", "");
    b.frontend = j.value("frontend", "");
    b.op = j.value("operator", "");
    b.bundle_sha256 = j.value("bundle_sha256", "");
    if (j.contains("cubin_sha256") && j["cubin_sha256"].is_object()) {
      for (const auto& [k, v] : j["cubin_sha256"].items()) {
        if (v.is_string()) b.cubin_sha256[k] = v.get<std::string>();
      }
    }
    out.push_back(std::move(b));
  }
  return out;
}

}  // namespace

bool is_provenance_attribute(const std::string& name) {
  for (const char* k : known_names) {
    if (name == k) return true;
  }
  return false;
}

void write_provenance(hid_t root, const provenance& p) {
  for (const auto& [k, v] : p.extra) {
    if (is_provenance_attribute(k)) {
      throw h5_error("provenance extra key '" + k + "' shadows a provenance attribute");
    }
  }
  write_attribute(root, "schema", p.schema);
  write_attribute(root, "created_utc", p.created_utc);
  write_attribute(root, "portbench_version", p.portbench_version);
  write_attribute(root, "gpu_name", p.gpu_name);
  write_attribute(root, "driver_version", p.driver_version);
  write_attribute(root, "sm_clock_mhz", p.sm_clock_mhz);
  write_attribute(root, "memory_clock_mhz", p.memory_clock_mhz);
  write_attribute(root, "cuda_version", p.cuda_version);
  write_attribute(root, "cupti_version", p.cupti_version);
  write_attribute(root, "git_revision", p.git_revision);
  write_attribute(root, "command_line", p.command_line);
  write_attribute(root, "suite", p.suite);
  write_attribute(root, "seeds", std::span<const std::int64_t>(p.seeds));
  write_attribute(root, "reference_frontend", p.reference_frontend);
  write_attribute(root, "port_frontend", p.port_frontend);
  write_attribute(root, "bundles", bundles_to_json(p.bundles));
  for (const auto& [k, v] : p.extra) write_attribute(root, k, v);
}

provenance read_provenance(hid_t root) {
  provenance p;
  auto text = [&](const char* name) { return read_string_attribute(root, name).value_or(""); };
  p.schema = text("schema");
  p.created_utc = text("created_utc");
  p.portbench_version = text("portbench_version");
  p.gpu_name = text("gpu_name");
  p.driver_version = text("driver_version");
  p.sm_clock_mhz = read_int_attribute(root, "sm_clock_mhz").value_or(0);
  p.memory_clock_mhz = read_int_attribute(root, "memory_clock_mhz").value_or(0);
  p.cuda_version = text("cuda_version");
  p.cupti_version = text("cupti_version");
  p.git_revision = text("git_revision");
  p.command_line = text("command_line");
  p.suite = text("suite");
  p.seeds = read_int_array_attribute(root, "seeds");
  p.reference_frontend = text("reference_frontend");
  p.port_frontend = text("port_frontend");
  p.bundles = bundles_from_json(text("bundles"));
  for (const auto& name : attribute_names(root)) {
    if (is_provenance_attribute(name)) continue;
    if (auto v = read_string_attribute(root, name)) p.extra[name] = *v;
  }
  return p;
}

}  // namespace portbench::store::detail
