// SPDX-License-Identifier: Apache-2.0
#include "portbench/store/writer.hpp"

#include <chrono>
#include <cmath>
#include <ctime>
#include <map>
#include <nlohmann/json.hpp>

#include "contents.hpp"
#include "layout.hpp"
#include "portbench/stats/summary.hpp"
#include "portbench/store/error.hpp"
#include "portbench/store/merge.hpp"
#include "portbench/store/reader.hpp"
#include "portbench/verdicts.hpp"
#include "provenance_io.hpp"

namespace portbench::store {
namespace {

struct config_entry {
  std::string group_path;
  config_info info;
};

std::string utc_now() {
  std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string canonical_params(const std::filesystem::path& path, const config_info& c) {
  auto j = nlohmann::json::parse(c.params_json.empty() ? std::string("{}") : c.params_json, nullptr,
                                 /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    throw store_error(path, "configuration '" + c.id + "': params is not a JSON object: " + c.params_json);
  }
  return j.dump();
}

run_stats compute_stats(const run_record& r) {
  run_stats s;
  stats::sample_summary sum = stats::summarize(r.time_ns);
  s.count = static_cast<std::int64_t>(sum.count);
  s.median_ns = sum.median;
  s.min_ns = sum.min;
  s.max_ns = sum.max;
  s.mean_ns = sum.mean;
  s.median_ci_low_ns = sum.median_ci_low;
  s.median_ci_high_ns = sum.median_ci_high;
  s.median_rel_ci = sum.median_rel_ci;
  std::vector<double> clocks(r.sm_clock_mhz.begin(), r.sm_clock_mhz.end());
  s.median_sm_clock_mhz = stats::median(clocks);
  const std::size_t k = r.kernel_entries.size();
  if (k > 0 && r.kernel_time_ns.size() == k * r.time_ns.size() && !r.time_ns.empty()) {
    for (std::size_t j = 0; j < k; ++j) {
      std::vector<double> column;
      for (std::size_t i = 0; i < r.time_ns.size(); ++i) column.push_back(static_cast<double>(r.kernel_time_ns[i * k + j]));
      s.kernel_median_ns.push_back(std::llround(stats::median(column)));
    }
  }
  return s;
}

void validate_run(const std::filesystem::path& path, const run_record& r) {
  auto where = [&] {
    return "run (" + r.config_id + ", " + std::string(to_string(r.role)) + ", " +
           std::to_string(r.run) + ")";
  };
  if (r.frontend.empty()) throw store_error(path, where() + ": empty front end name");
  if (r.run < 0) throw store_error(path, where() + ": negative run index");
  for (const auto* v : {&r.verdicts.numerics, &r.verdicts.proof, &r.verdicts.timing}) {
    if (!verdicts::is_literal(*v)) {
      throw store_error(path, where() + ": verdict '" + *v + "' is not an upper-case literal");
    }
  }
  std::size_t n = r.time_ns.size();
  if ((!r.sm_clock_mhz.empty() && r.sm_clock_mhz.size() != n) ||
      (!r.event_time_ns.empty() && r.event_time_ns.size() != n)) {
    throw store_error(path, where() + ": sm_clock_mhz/event_time_ns lengths differ from time_ns");
  }
  // Per-kernel times: a row per sample, a column per kernel, each row summing to the sample.
  const std::size_t k = r.kernel_entries.size();
  if (k == 0 && !r.kernel_time_ns.empty()) throw store_error(path, where() + ": kernel_time_ns without kernel_entries");
  if (k > 0) {
    if (r.kernel_time_ns.size() != k * n) {
      throw store_error(path, where() + ": kernel_time_ns has " + std::to_string(r.kernel_time_ns.size()) + " values for " +
                                  std::to_string(n) + " samples of " + std::to_string(k) + " kernels");
    }
    for (std::size_t i = 0; i < n; ++i) {
      std::int64_t sum = 0;
      for (std::size_t j = 0; j < k; ++j) sum += r.kernel_time_ns[i * k + j];
      if (sum != r.time_ns[i]) {
        throw store_error(path, where() + ": sample " + std::to_string(i) + "'s kernel times add up to " + std::to_string(sum) +
                                    " ns, not its " + std::to_string(r.time_ns[i]) + " ns");
      }
    }
  }
  if (verdicts::timing_valid(r.verdicts.timing)) {
    if (n == 0) throw store_error(path, where() + ": timing VALID but no samples");
    for (auto t : r.time_ns) {
      if (t <= 0) throw store_error(path, where() + ": timing VALID but a sample is <= 0 ns");
    }
  }
}

}  // namespace

struct results_writer::state {
  std::filesystem::path path;
  detail::file_handle file;
  store::provenance prov;
  std::map<std::string, config_entry, std::less<>> configs;
  std::map<std::pair<std::string, role>, std::string> frontends;
  std::set<run_key> existing;
  std::int64_t removed_incomplete = 0;
  std::int64_t next_ordinal = 0;

  void require_open() const {
    if (!file) throw store_error(path, "writer is closed");
  }
  void flush() {
    require_open();
    if (H5Fflush(file.get(), H5F_SCOPE_GLOBAL) < 0) {
      throw store_error(path, detail::describe_failure("H5Fflush"));
    }
  }
};

results_writer::results_writer(std::unique_ptr<state> s) : m(std::move(s)) {}
results_writer::results_writer(results_writer&&) noexcept = default;
results_writer& results_writer::operator=(results_writer&&) noexcept = default;

results_writer::~results_writer() {
  if (m && m->file) {
    H5Fflush(m->file.get(), H5F_SCOPE_GLOBAL);
    m->file.reset();
  }
}

results_writer results_writer::create(const std::filesystem::path& path, const store::provenance& prov,
                                      const create_options& opts) {
  detail::silence_hdf5_errors();
  if (!opts.overwrite && std::filesystem::exists(path)) {
    throw store_error(path, "cannot create: file exists (resume it, or choose another path)");
  }
  auto s = std::make_unique<state>();
  s->path = path;
  s->prov = prov;
  s->prov.schema = std::string(schema_version);
  if (s->prov.created_utc.empty()) s->prov.created_utc = utc_now();
  // Written under a temporary name and renamed once its first flush is done, so that a kill
  // during creation never leaves a half-made file at `path`.
  std::filesystem::path partial = path;
  partial += ".partial";
  detail::plist_handle fapl = detail::file_access_plist();
  detail::plist_handle fcpl = detail::compact_attributes_plist(H5P_FILE_CREATE);
  hid_t id = H5Fcreate(partial.c_str(), H5F_ACC_TRUNC, fcpl.get(), fapl.get());
  if (id < 0) throw store_error(path, detail::describe_failure("cannot create"));
  s->file = detail::file_handle{id};
  try {
    detail::write_provenance(s->file.get(), s->prov);
    detail::group_handle g = detail::open_or_create_group(s->file.get(), detail::configs_group);
  } catch (const detail::h5_error& e) {
    throw store_error(path, e.what());
  }
  s->flush();
  std::error_code ec;
  std::filesystem::rename(partial, path, ec);
  if (ec) throw store_error(path, "cannot create: rename from " + partial.string() + ": " + ec.message());
  return results_writer(std::move(s));
}

namespace {

/// Rewrites a file whose crash damage cannot be removed in place: every readable configuration
/// and complete run goes to a fresh file that replaces it; the original is kept as
/// "<path>.damaged".
void rebuild(const std::filesystem::path& path) {
  results_file good = read_results(path);
  std::filesystem::path fresh = path;
  fresh += ".rebuilt";
  write_results(fresh, good, {.overwrite = true});
  std::filesystem::path kept = path;
  kept += ".damaged";
  std::error_code ec;
  std::filesystem::rename(path, kept, ec);
  if (!ec) std::filesystem::rename(fresh, path, ec);
  if (ec) throw store_error(path, "cannot replace the damaged file: " + ec.message());
}

}  // namespace

results_writer results_writer::resume(const std::filesystem::path& path) {
  for (int attempt = 0;; ++attempt) {
    auto s = std::make_unique<state>();
    s->path = path;
    s->file = detail::open_results_file(path, /*writable=*/true);
    results_file contents;
    std::vector<std::string> removable;
    try {
      contents = detail::read_contents(s->file.get(), path, /*samples=*/false, &removable);
      if (contents.unreadable_groups.empty()) {
        for (const auto& p : removable) {
          detail::check(H5Ldelete(s->file.get(), p.c_str(), H5P_DEFAULT), "remove cut-short run " + p);
        }
        s->flush();
      }
    } catch (const detail::h5_error& e) {
      contents.unreadable_groups.push_back(e.what());
    } catch (const store_error& e) {
      contents.unreadable_groups.push_back(e.what());
    }
    if (!contents.unreadable_groups.empty()) {
      if (attempt > 0) {
        throw store_error(path, "cannot resume: still damaged after a rebuild: " +
                                    contents.unreadable_groups.front());
      }
      s->file.reset();
      rebuild(path);
      continue;
    }
    s->removed_incomplete = static_cast<std::int64_t>(removable.size());
    s->prov = std::move(contents.provenance);
    for (const auto& c : contents.configs) {
      s->configs[c.info.id] = {detail::config_group_path(c.info.id, c.info.op), c.info};
      for (const auto& rr : c.roles) {
        s->frontends[{c.info.id, rr.role}] = rr.frontend;
        for (const auto& run : rr.runs) s->existing.insert(run.key());
      }
    }
    s->next_ordinal = static_cast<std::int64_t>(contents.configs.size());
    return results_writer(std::move(s));
  }
}

void results_writer::add_config(const config_info& config) {
  m->require_open();
  if (config.id.empty() || config.op.empty()) {
    throw store_error(m->path, "configuration needs a non-empty id and operator");
  }
  config_info c = config;
  c.params_json = canonical_params(m->path, config);
  if (auto it = m->configs.find(c.id); it != m->configs.end()) {
    if (it->second.info.op != c.op || canonical_params(m->path, it->second.info) != c.params_json) {
      throw store_error(m->path, "configuration '" + c.id + "' is already in the file with other "
                                 "operator or parameters");
    }
    return;
  }
  std::string group_path = detail::config_group_path(c.id, c.op);
  try {
    if (detail::path_exists(m->file.get(), group_path)) {
      throw store_error(m->path, "configuration '" + c.id + "' maps onto the group of another id");
    }
    detail::group_handle op = detail::open_or_create_group(
        m->file.get(), std::string(detail::configs_group) + "/" + detail::escape_link_name(c.op));
    detail::write_attribute(op.get(), "operator", c.op);
    detail::group_handle g = detail::open_or_create_group(m->file.get(), group_path);
    detail::write_attribute(g.get(), "id", c.id);
    detail::write_attribute(g.get(), "operator", c.op);
    detail::write_attribute(g.get(), "params", c.params_json);
    detail::write_attribute(g.get(), "ordinal", m->next_ordinal);
  } catch (const detail::h5_error& e) {
    throw store_error(m->path, e.what());
  }
  ++m->next_ordinal;
  m->configs[c.id] = {group_path, c};
  m->flush();
}

run_stats results_writer::append(const run_record& run) {
  m->require_open();
  auto cfg = m->configs.find(run.config_id);
  if (cfg == m->configs.end()) {
    throw store_error(m->path, "run for unknown configuration '" + run.config_id +
                                   "' (call add_config first)");
  }
  if (m->existing.count(run.key()) != 0) {
    throw store_error(m->path, "run (" + run.config_id + ", " + std::string(to_string(run.role)) +
                                   ", " + std::to_string(run.run) + ") is already in the file");
  }
  validate_run(m->path, run);
  auto fe_key = std::make_pair(run.config_id, run.role);
  if (auto it = m->frontends.find(fe_key); it != m->frontends.end() && it->second != run.frontend) {
    throw store_error(m->path, "configuration '" + run.config_id + "' has " +
                                   std::string(to_string(run.role)) + " front end '" + it->second +
                                   "', not '" + run.frontend + "'");
  }
  run_stats st = compute_stats(run);
  std::string role_path = cfg->second.group_path + "/" + std::string(to_string(run.role));
  try {
    detail::group_handle rg = detail::open_or_create_group(m->file.get(), role_path);
    detail::write_attribute(rg.get(), "role", to_string(run.role));
    detail::write_attribute(rg.get(), "frontend", run.frontend);
    std::string run_name = detail::run_group_name(run.run);
    if (detail::link_exists(rg.get(), run_name)) {  // left by a crash: rewrite it
      detail::check(H5Ldelete(rg.get(), run_name.c_str(), H5P_DEFAULT), "remove " + run_name);
    }
    detail::group_handle g = detail::open_or_create_group(rg.get(), run_name);
    detail::write_dataset(g.get(), "time_ns", std::span<const std::int64_t>(run.time_ns), "ns");
    detail::write_dataset(g.get(), "sm_clock_mhz", std::span<const std::int32_t>(run.sm_clock_mhz), "MHz");
    detail::write_dataset(g.get(), "event_time_ns", std::span<const std::int64_t>(run.event_time_ns), "ns");
    if (!run.kernel_entries.empty()) {
      detail::write_matrix(g.get(), "kernel_time_ns", std::span<const std::int64_t>(run.kernel_time_ns),
                           run.kernel_entries.size(), "ns");
      detail::write_attribute(g.get(), "kernel_entries", nlohmann::json(run.kernel_entries).dump());
      detail::write_attribute(g.get(), "kernel_median_ns", std::span<const std::int64_t>(st.kernel_median_ns));
    }
    detail::write_attribute(g.get(), "run", static_cast<std::int64_t>(run.run));
    detail::write_attribute(g.get(), "numerics", run.verdicts.numerics);
    detail::write_attribute(g.get(), "proof", run.verdicts.proof);
    detail::write_attribute(g.get(), "timing", run.verdicts.timing);
    detail::write_attribute(g.get(), "numerics_source", run.numerics_source);
    detail::write_attribute(g.get(), "output_digest", run.output_digest);
    detail::write_attribute(g.get(), "error", run.error);
    detail::write_attribute(g.get(), "dropped_samples", run.dropped_samples);
    detail::write_attribute(g.get(), "throttled_samples", run.throttled_samples);
    detail::write_attribute(g.get(), "timing_detail", run.timing_detail);
    detail::write_attribute(g.get(), "count", st.count);
    detail::write_attribute(g.get(), "median_ns", st.median_ns);
    detail::write_attribute(g.get(), "min_ns", st.min_ns);
    detail::write_attribute(g.get(), "max_ns", st.max_ns);
    detail::write_attribute(g.get(), "mean_ns", st.mean_ns);
    detail::write_attribute(g.get(), "median_ci_low_ns", st.median_ci_low_ns);
    detail::write_attribute(g.get(), "median_ci_high_ns", st.median_ci_high_ns);
    detail::write_attribute(g.get(), "median_rel_ci", st.median_rel_ci);
    detail::write_attribute(g.get(), "median_sm_clock_mhz", st.median_sm_clock_mhz);
    detail::write_attribute(g.get(), "inputs_s", run.cost.inputs_s);
    detail::write_attribute(g.get(), "check_s", run.cost.check_s);
    detail::write_attribute(g.get(), "verify_s", run.cost.verify_s);
    detail::write_attribute(g.get(), "sampling_s", run.cost.sampling_s);
    detail::write_attribute(g.get(), "item_wall_s", run.cost.item_wall_s);
    detail::write_attribute(g.get(), "state", verdicts::run_state::complete);  // last: the run is whole
  } catch (const detail::h5_error& e) {
    throw store_error(m->path, e.what());
  }
  m->frontends[fe_key] = run.frontend;
  m->existing.insert(run.key());
  m->flush();
  return st;
}

bool results_writer::contains(const run_key& key) const { return m->existing.count(key) != 0; }
const std::set<run_key>& results_writer::existing_runs() const { return m->existing; }
bool results_writer::has_config(std::string_view config_id) const {
  return m->configs.find(config_id) != m->configs.end();
}
std::int64_t results_writer::removed_incomplete_runs() const { return m->removed_incomplete; }
const store::provenance& results_writer::provenance() const { return m->prov; }
const std::filesystem::path& results_writer::path() const { return m->path; }

void results_writer::annotate(const std::string& key, std::string_view value) {
  m->require_open();
  if (detail::is_provenance_attribute(key)) {
    throw store_error(m->path, "annotation '" + key + "' would replace a provenance attribute");
  }
  try {
    detail::write_attribute(m->file.get(), key, value);
  } catch (const detail::h5_error& e) {
    throw store_error(m->path, e.what());
  }
  m->prov.extra[key] = std::string(value);
  m->flush();
}

void results_writer::flush() { m->flush(); }

void results_writer::close() {
  if (!m || !m->file) return;
  m->flush();
  if (H5Fclose(m->file.release()) < 0) throw store_error(m->path, detail::describe_failure("close"));
}

}  // namespace portbench::store
