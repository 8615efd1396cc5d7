// SPDX-License-Identifier: Apache-2.0
// ir-diff over bundles: pairs the configurations two bundles share (operator and identical
// parameters), finds each launch's Tile IR text (the cubin's `<name>.tileir.txt`, entry by
// symbol) and compares the launch plans entry by entry.
#pragma once
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "portbench/bundle/manifest.hpp"
#include "portbench/diagnose/ir_diff.hpp"

namespace portbench::diagnose {

/// Parsed Tile IR files, by path: configurations that share a cubin parse it once.
class ir_cache {
 public:
  /// The module of `file`; throws bundle::bundle_error if it cannot be read, tile_ir::parse_error
  /// if it does not parse.
  const tile_ir::module& get(const std::filesystem::path& file);

 private:
  std::map<std::string, std::unique_ptr<tile_ir::module>> m_modules;
};

struct launch_ir {
  std::string entry;     ///< entry symbol the plan launches
  std::string ir_file;   ///< Tile IR text it was found in ("" if none)
};

struct config_ir_diff {
  std::string config_id;
  std::string verdict;     ///< ir_verdict literal
  std::string reason;      ///< why NOT_COMPARABLE; else a one-line summary
  std::vector<launch_ir> reference, port;
  std::vector<ir_difference> differences;
};

struct bundle_ir_diff {
  std::string op;
  std::filesystem::path reference_dir, port_dir;
  std::string reference_frontend, port_frontend;
  std::vector<config_ir_diff> configs;
  std::vector<std::string> unpaired;   ///< "config id: why"
  std::string verdict;                 ///< the worst of the configurations' (FAIL_STRUCTURAL first)
};

struct ir_diff_options {
  std::string config_regex;   ///< only configurations whose id matches (search); empty: all
};

/// ir-diff of one configuration's launch plans; `*_dir` are the bundle folders.
[[nodiscard]] config_ir_diff diff_config(const bundle::manifest& ref, const bundle::config_plan& ref_plan,
                                         const bundle::manifest& port, const bundle::config_plan& port_plan,
                                         ir_cache& cache);

/// Each launch's Tile IR entry, nullptr for a launch whose cubin has none.
[[nodiscard]] std::vector<const tile_ir::function*> plan_entries(const bundle::manifest& m, const bundle::config_plan& plan,
                                                                 ir_cache& cache);

/// Two bundles (folders with manifest.json), or two folders of bundles paired by operator.
/// Throws bundle::bundle_error / tile_ir::parse_error / std::runtime_error on bad input (no
/// configuration in common, no bundle in a folder, a bad regex).
[[nodiscard]] std::vector<bundle_ir_diff> diff_bundles(const std::filesystem::path& ref,
                                                       const std::filesystem::path& port,
                                                       const ir_diff_options& opts = {});

/// The worst verdict over bundles (PASS when the list is empty is never returned: NOT_COMPARABLE).
[[nodiscard]] std::string overall_verdict(const std::vector<bundle_ir_diff>& diffs);

[[nodiscard]] std::string render_ir_diff_markdown(const std::vector<bundle_ir_diff>& diffs);
[[nodiscard]] std::string render_ir_diff_json(const std::vector<bundle_ir_diff>& diffs);

}  // namespace portbench::diagnose
