// SPDX-License-Identifier: Apache-2.0
// Incremental HDF5 writer: the measurement engine appends one (configuration, role, run) at a
// time; every call ends with H5Fflush, so a killed process leaves a readable file holding
// everything appended before the kill. `resume` reopens such a file and says which runs exist.
//
//   auto w = store::results_writer::create("results/x.h5", prov);   // or ::resume(path)
//   w.add_config({.id = cfg.id(), .op = cfg.op, .params_json = params});
//   store::run_record r{.config_id = cfg.id(), .role = store::role::port,
//                       .frontend = "cutile_rust", .run = 0};
//   for (auto& s : samples) r.add_sample(s);          // {device_ns, sm_clock_mhz, event_ns}
//   r.verdicts = {.numerics = "PASS", .proof = "EXECUTED", .timing = "VALID"};
//   if (!w.contains(r.key())) w.append(r);
#pragma once
#include <cstdint>
#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <string_view>

#include "portbench/store/results.hpp"

namespace portbench::store {

struct create_options {
  bool overwrite = false;  ///< replace an existing file instead of refusing
};

class results_writer {
 public:
  /// Creates the file, writes the provenance as root attributes and flushes. Throws
  /// store_error if the file exists (unless `overwrite`) or cannot be created.
  [[nodiscard]] static results_writer create(const std::filesystem::path& path,
                                             const provenance& prov,
                                             const create_options& opts = {});
  /// Reopens an existing results file for appending (`portbench run --resume`). Run groups
  /// that a crash left without their COMPLETE marker are removed, so that they can be written
  /// again. When a kill during a flush left groups unreadable, the file is first rebuilt from
  /// everything readable (the original kept as "<path>.damaged").
  [[nodiscard]] static results_writer resume(const std::filesystem::path& path);

  results_writer(results_writer&&) noexcept;
  results_writer& operator=(results_writer&&) noexcept;
  results_writer(const results_writer&) = delete;
  results_writer& operator=(const results_writer&) = delete;
  /// Closes the file; errors are swallowed (call close() to see them).
  ~results_writer();

  /// Declares a configuration (idempotent). Throws when the id is already in the file with a
  /// different operator or parameters.
  void add_config(const config_info& config);
  /// Writes one run: samples, statistics computed from them, verdicts and error, then the
  /// COMPLETE marker, then flushes. Returns the statistics written. Throws store_error when the
  /// configuration was not added, the run already exists, the role's front end differs from
  /// the one on file, a verdict is not a literal, or a VALID run has no or non-positive samples.
  run_stats append(const run_record& run);

  [[nodiscard]] bool contains(const run_key& key) const;
  /// Complete runs in the file: those found by resume() plus those appended since.
  [[nodiscard]] const std::set<run_key>& existing_runs() const;
  [[nodiscard]] bool has_config(std::string_view config_id) const;
  /// Groups resume() removed because a crash had cut them short.
  [[nodiscard]] std::int64_t removed_incomplete_runs() const;
  [[nodiscard]] const store::provenance& provenance() const;
  [[nodiscard]] const std::filesystem::path& path() const;

  /// Adds or replaces a free-form string attribute at the root (provenance `extra`).
  void annotate(const std::string& key, std::string_view value);
  void flush();
  /// Flushes and closes; further calls throw. Idempotent.
  void close();

 private:
  struct state;
  explicit results_writer(std::unique_ptr<state> s);
  std::unique_ptr<state> m;
};

}  // namespace portbench::store
