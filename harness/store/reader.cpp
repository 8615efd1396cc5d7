// SPDX-License-Identifier: Apache-2.0
#include "portbench/store/reader.hpp"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <system_error>

#include "contents.hpp"
#include "heap_check.hpp"
#include "layout.hpp"
#include "portbench/store/error.hpp"
#include "portbench/verdicts.hpp"
#include "provenance_io.hpp"

namespace portbench::store::detail {
namespace {

run_record read_run(hid_t group, const scalar_attributes& a, const config_results& config,
                    const role_results& rr, bool samples) {
  auto text = [&](const char* name) {
    auto it = a.text.find(name);
    return it == a.text.end() ? std::string() : it->second;
  };
  auto number = [&](const char* name, double fallback) {
    auto it = a.number.find(name);
    return it == a.number.end() ? fallback : it->second;
  };
  const double nan = std::nan("");
  run_record r;
  r.config_id = config.info.id;
  r.role = rr.role;
  r.frontend = rr.frontend;
  r.run = static_cast<int>(number("run", -1));
  r.verdicts.numerics = text("numerics");
  r.verdicts.proof = text("proof");
  r.verdicts.timing = text("timing");
  r.numerics_source = text("numerics_source");   // "" in files written before it existed
  r.output_digest = text("output_digest");
  r.error = text("error");
  r.dropped_samples = static_cast<std::int64_t>(number("dropped_samples", 0));
  r.throttled_samples = static_cast<std::int64_t>(number("throttled_samples", 0));   // 0 in older files
  r.timing_detail = text("timing_detail");
  r.stats.count = static_cast<std::int64_t>(number("count", 0));
  r.stats.median_ns = number("median_ns", nan);
  r.stats.min_ns = number("min_ns", nan);
  r.stats.max_ns = number("max_ns", nan);
  r.stats.mean_ns = number("mean_ns", nan);
  r.stats.median_ci_low_ns = number("median_ci_low_ns", nan);
  r.stats.median_ci_high_ns = number("median_ci_high_ns", nan);
  r.stats.median_rel_ci = number("median_rel_ci", nan);
  r.stats.median_sm_clock_mhz = number("median_sm_clock_mhz", nan);
  r.cost.inputs_s = number("inputs_s", nan);
  r.cost.check_s = number("check_s", nan);
  r.cost.verify_s = number("verify_s", nan);
  r.cost.sampling_s = number("sampling_s", nan);
  r.cost.item_wall_s = number("item_wall_s", nan);
  // Per-kernel times (multi-kernel plans; absent in older files).
  if (const std::string entries = text("kernel_entries"); !entries.empty()) {
    const auto j = nlohmann::json::parse(entries, nullptr, /*allow_exceptions=*/false);
    if (!j.is_array() || !std::all_of(j.begin(), j.end(), [](const auto& e) { return e.is_string(); })) {
      throw h5_error("attribute kernel_entries is not a JSON array of names: " + entries);
    }
    r.kernel_entries = j.get<std::vector<std::string>>();
    r.stats.kernel_median_ns = read_int_array_attribute(group, "kernel_median_ns");
  }
  if (samples) {
    r.time_ns = read_int64_dataset(group, "time_ns");
    if (link_exists(group, "sm_clock_mhz")) r.sm_clock_mhz = read_int32_dataset(group, "sm_clock_mhz");
    if (link_exists(group, "event_time_ns")) r.event_time_ns = read_int64_dataset(group, "event_time_ns");
    if (!r.kernel_entries.empty()) {
      r.kernel_time_ns = read_int64_dataset(group, "kernel_time_ns");
      if (r.kernel_time_ns.size() != r.kernel_entries.size() * r.time_ns.size()) {
        throw h5_error("kernel_time_ns has " + std::to_string(r.kernel_time_ns.size()) + " values for " +
                       std::to_string(r.time_ns.size()) + " samples of " + std::to_string(r.kernel_entries.size()) +
                       " kernels");
      }
    }
  }
  return r;
}

/// Collects what a crash left behind: runs without their marker, and groups that cannot be
/// read (objects whose writing was cut short). Both are skipped, never fatal.
struct damage {
  std::vector<std::string>* removable;  // paths resume() deletes; may be null
  results_file& out;
  void incomplete_run(const std::string& path) {
    ++out.incomplete_runs;
    if (removable != nullptr) removable->push_back(path);
  }
  void unreadable(const std::string& path, const h5_error& e, bool can_remove) {
    out.unreadable_groups.push_back(path + " (" + e.what() + ")");
    if (removable != nullptr && can_remove) removable->push_back(path);
  }
};

void read_role(hid_t group, const std::string& path, config_results& config, bool samples,
               damage& dmg) {
  role_results rr;
  auto role_text = read_string_attribute(group, "role").value_or("");
  auto parsed = role_from_string(role_text);
  if (!parsed) throw h5_error("unknown role '" + role_text + "'");
  rr.role = *parsed;
  rr.frontend = read_string_attribute(group, "frontend").value_or("");
  for (const auto& name : child_names(group)) {
    std::string run_path = path + "/" + name;
    try {
      group_handle run = open_group(group, name);
      scalar_attributes attrs = read_scalar_attributes(run.get());
      auto state = attrs.text.find("state");
      if (state == attrs.text.end() || state->second != verdicts::run_state::complete) {
        dmg.incomplete_run(run_path);
        continue;
      }
      rr.runs.push_back(read_run(run.get(), attrs, config, rr, samples));
    } catch (const h5_error& e) {
      dmg.unreadable(run_path, e, true);
    }
  }
  std::sort(rr.runs.begin(), rr.runs.end(),
            [](const run_record& a, const run_record& b) { return a.run < b.run; });
  config.roles.push_back(std::move(rr));
}

/// One configuration group; false when it is unreadable (recorded in `dmg`).
bool read_config(hid_t op_group, const std::string& name, const std::string& path, bool samples,
                 damage& dmg, std::int64_t& ordinal, config_results& c) {
  try {
    group_handle cfg = open_group(op_group, name);
    c.info.id = read_string_attribute(cfg.get(), "id").value_or("");
    c.info.op = read_string_attribute(cfg.get(), "operator").value_or("");
    c.info.params_json = read_string_attribute(cfg.get(), "params").value_or("{}");
    if (c.info.id.empty()) throw h5_error("configuration without an 'id' attribute");
    ordinal = read_int_attribute(cfg.get(), "ordinal").value_or(0);
    for (const char* role_name : {"reference", "port"}) {
      if (!link_exists(cfg.get(), role_name)) continue;
      std::string role_path = path + "/" + role_name;
      try {
        group_handle rg = open_group(cfg.get(), role_name);
        read_role(rg.get(), role_path, c, samples, dmg);
      } catch (const h5_error& e) {
        dmg.unreadable(role_path, e, true);
      }
    }
    return true;
  } catch (const h5_error& e) {
    dmg.unreadable(path, e, true);
    return false;
  }
}

}  // namespace

plist_handle file_access_plist() {
  plist_handle fapl{check(H5Pcreate(H5P_FILE_ACCESS), "H5Pcreate")};
  check(H5Pset_libver_bounds(fapl.get(), H5F_LIBVER_V18, H5F_LIBVER_V18), "H5Pset_libver_bounds");
  return fapl;
}

file_handle open_results_file(const std::filesystem::path& path, bool writable) {
  silence_hdf5_errors();
  std::error_code ec;
  auto status = std::filesystem::status(path, ec);
  if (!std::filesystem::exists(status)) throw store_error(path, "cannot open: no such file");
  if (std::filesystem::is_directory(status)) throw store_error(path, "cannot open: is a directory");
  if (auto bad = check_global_heaps(path)) throw store_error(path, "corrupt HDF5 file: " + *bad);
  plist_handle fapl = file_access_plist();
  hid_t id = H5Fopen(path.c_str(), writable ? H5F_ACC_RDWR : H5F_ACC_RDONLY, fapl.get());
  if (id < 0) {
    std::string inner = describe_failure("");
    std::string cause = "cannot open as HDF5";
    if (inner.find("file signature not found") != std::string::npos) {
      cause = "not an HDF5 file";
    } else if (inner.find("truncated file") != std::string::npos) {
      cause = "cannot open as HDF5: the file is truncated";
    } else if (inner.find("lock") != std::string::npos) {
      cause = "cannot open: locked by another process (a run still writing it?)";
    }
    throw store_error(path, inner.empty() ? cause : cause + " (HDF5" + inner + ")");
  }
  file_handle file{id};
  // A writer killed during H5Fflush may have written objects but not yet the superblock's
  // end-of-allocation; raising it to the file's size makes them addressable (in memory only
  // for a read-only open). Whatever is still half-written is then skipped, group by group.
  static_cast<void>(H5Fincrement_filesize(file.get(), 0));
  try {
    auto schema = read_string_attribute(file.get(), "schema");
    if (!schema) {
      throw store_error(path, "not a portbench results file (no root attribute 'schema')");
    }
    if (*schema != schema_version) {
      throw store_error(path, "unsupported results schema '" + *schema + "' (this portbench reads " +
                                  std::string(schema_version) + ")");
    }
    if (!link_exists(file.get(), configs_group)) {
      throw store_error(path, "not a portbench results file (no '/configs' group)");
    }
  } catch (const h5_error& e) {
    throw store_error(path, e.what());
  }
  return file;
}

results_file read_contents(hid_t file, const std::filesystem::path& path, bool samples,
                           std::vector<std::string>* incomplete) {
  results_file out;
  out.path = path;
  out.provenance = read_provenance(file);
  damage dmg{incomplete, out};
  group_handle configs = open_group(file, configs_group);
  std::vector<std::pair<std::int64_t, config_results>> ordered;
  for (const auto& op_name : child_names(configs.get())) {
    std::string op_path = std::string(configs_group) + "/" + op_name;
    std::vector<std::string> names;
    group_handle op_group;
    try {
      op_group = open_group(configs.get(), op_name);
      names = child_names(op_group.get());
    } catch (const h5_error& e) {
      dmg.unreadable(op_path, e, false);  // may hold good configurations: never removed
      continue;
    }
    for (const auto& cfg_name : names) {
      config_results c;
      std::int64_t ordinal = 0;
      if (read_config(op_group.get(), cfg_name, op_path + "/" + cfg_name, samples, dmg, ordinal, c)) {
        ordered.emplace_back(ordinal, std::move(c));
      }
    }
  }
  std::stable_sort(ordered.begin(), ordered.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [ordinal, c] : ordered) out.configs.push_back(std::move(c));
  return out;
}

}  // namespace portbench::store::detail

namespace portbench::store {

results_file read_results(const std::filesystem::path& path, const read_options& opts) {
  detail::file_handle file = detail::open_results_file(path, /*writable=*/false);
  try {
    return detail::read_contents(file.get(), path, opts.samples, nullptr);
  } catch (const detail::h5_error& e) {
    throw store_error(path, e.what());
  }
}

provenance read_provenance(const std::filesystem::path& path) {
  detail::file_handle file = detail::open_results_file(path, /*writable=*/false);
  try {
    return detail::read_provenance(file.get());
  } catch (const detail::h5_error& e) {
    throw store_error(path, e.what());
  }
}

}  // namespace portbench::store
