// SPDX-License-Identifier: Apache-2.0
#include "portbench/verify/verified_outputs.hpp"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <system_error>
#include <unistd.h>

#include "portbench/reference/random.hpp"

namespace portbench::verify {
namespace {

using json = nlohmann::json;

json real(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

double real_from(const json& j) {
  if (j.is_number()) return j.get<double>();
  const auto s = j.get<std::string>();
  if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
  if (s == "inf") return std::numeric_limits<double>::infinity();
  if (s == "-inf") return -std::numeric_limits<double>::infinity();
  throw std::runtime_error("not a real: " + s);
}

}  // namespace

std::string verified_key::text() const {
  return op + "|" + config_id + "|" + std::to_string(seed) + "|" + reference_id + "|" + digest;
}

json to_json(const reference::compare_report& r) {
  return {{"tensor", r.tensor},
          {"checked", r.checked},
          {"bad", r.bad},
          {"first_bad_index", r.first_bad_index},
          {"max_abs_err", real(r.max_abs_err)},
          {"max_rel_err", real(r.max_rel_err)},
          {"atol", real(r.atol)},
          {"rtol", real(r.rtol)},
          {"method", r.method},
          {"type", std::string(reference::to_string(r.type))},
          {"total", r.total},
          {"nonfinite", r.nonfinite},
          {"ref_rms", real(r.ref_rms)},
          {"max_norm_err", real(r.max_norm_err)},
          {"rms_norm_err", real(r.rms_norm_err)},
          {"note", r.note}};
}

reference::compare_report report_from_json(const json& j) {
  reference::compare_report r;
  r.tensor = j.at("tensor").get<std::string>();
  r.checked = j.at("checked").get<std::int64_t>();
  r.bad = j.at("bad").get<std::int64_t>();
  r.first_bad_index = j.at("first_bad_index").get<std::int64_t>();
  r.max_abs_err = real_from(j.at("max_abs_err"));
  r.max_rel_err = real_from(j.at("max_rel_err"));
  r.atol = real_from(j.at("atol"));
  r.rtol = real_from(j.at("rtol"));
  r.method = j.at("method").get<std::string>();
  const auto type = reference::parse_dtype(j.at("type").get<std::string>());
  if (!type) throw std::runtime_error("unknown dtype " + j.at("type").get<std::string>());
  r.type = *type;
  r.total = j.at("total").get<std::int64_t>();
  r.nonfinite = j.at("nonfinite").get<std::int64_t>();
  r.ref_rms = real_from(j.at("ref_rms"));
  r.max_norm_err = real_from(j.at("max_norm_err"));
  r.rms_norm_err = real_from(j.at("rms_norm_err"));
  r.note = j.at("note").get<std::string>();
  return r;
}

verified_outputs::verified_outputs(std::filesystem::path folder) : m_folder(std::move(folder)) {}

std::filesystem::path verified_outputs::file_for(const std::string& key) const {
  char name[32];
  std::snprintf(name, sizeof name, "%016llx.json", static_cast<unsigned long long>(reference::hash_text(key)));
  return m_folder / name;
}

std::optional<std::vector<reference::compare_report>> verified_outputs::find(const verified_key& key) {
  const std::string k = key.text();
  std::lock_guard lock(m_mutex);
  if (auto it = m_entries.find(k); it != m_entries.end()) return it->second;
  if (m_folder.empty()) return std::nullopt;
  std::ifstream in(file_for(k));
  if (!in) return std::nullopt;
  try {
    const json j = json::parse(in);
    if (j.at("key").get<std::string>() != k) return std::nullopt;   // another key with the same hash
    std::vector<reference::compare_report> reports;
    for (const auto& r : j.at("reports")) reports.push_back(report_from_json(r));
    m_entries[k] = reports;
    return reports;
  } catch (const std::exception&) {
    return std::nullopt;   // a torn or foreign file: verify again and overwrite it
  }
}

void verified_outputs::store(const verified_key& key, const std::vector<reference::compare_report>& reports) {
  const std::string k = key.text();
  std::lock_guard lock(m_mutex);
  m_entries[k] = reports;
  if (m_folder.empty()) return;
  json arr = json::array();
  for (const auto& r : reports) arr.push_back(to_json(r));
  std::error_code ec;
  std::filesystem::create_directories(m_folder, ec);
  const auto file = file_for(k);
  // Written under a private name, then renamed: a worker on another GPU never reads half a file.
  const auto tmp = file.string() + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << json{{"key", k}, {"reports", arr}}.dump();
    if (!out) return;   // the cache is an optimisation: a full disk only costs a later recheck
  }
  std::filesystem::rename(tmp, file, ec);
  if (ec) std::filesystem::remove(tmp, ec);
}

}  // namespace portbench::verify
