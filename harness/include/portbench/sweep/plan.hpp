// SPDX-License-Identifier: Apache-2.0
// The plan of a sweep: which configurations run, on which reference and port bundles. Built
// without a GPU, so `--list` and `--dry-run` work anywhere.
//
//   sweep::plan_options o{.ref_dirs = {"bundles/tilegym"}, .port_dirs = {"bundles/cutile_rust"},
//                         .suite_file = "configs/smoke.json", .select = {.ops = {"rms_norm"}}};
//   sweep::sweep_plan plan = sweep::plan_sweep(o);          // or plan_check(dirs, select)
//   auto eta = sweep::estimate(plan, {.runs = 4});            // seconds, no GPU needed
#pragma once
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "portbench/bundle/bundle.hpp"
#include "portbench/error.hpp"
#include "portbench/measure/timing_options.hpp"
#include "portbench/reference/config.hpp"

namespace portbench::sweep {

/// A sweep that cannot be set up: bad options, two bundles of one operator on one side, a
/// results file to resume that does not match the call, no usable device. One line.
class sweep_error : public portbench::input_error {
 public:
  using input_error::input_error;
};

/// Which configurations take part (Google Benchmark's --benchmark_filter, nvbench's -b).
struct selection {
  std::vector<std::string> ops;   ///< --op NAME, repeatable; empty: every operator
  std::string filter;             ///< --filter REGEX (ECMAScript), searched in the configuration id
};

/// One slice of a plan for one host: --shard K/N keeps the items of slice K (0-based) of N,
/// balanced by planned_item::estimated_s. {0, 1} is the whole plan.
struct shard {
  int index = 0;
  int count = 1;

  [[nodiscard]] bool whole() const noexcept { return count == 1; }
  [[nodiscard]] std::string text() const { return std::to_string(index) + "/" + std::to_string(count); }
};

/// Parses "K/N" with 0 <= K < N. Throws sweep_error naming `option` and the text.
[[nodiscard]] shard parse_shard(const std::string& text, const std::string& option = "--shard");

struct plan_options {
  std::vector<std::string> ref_dirs, port_dirs;   ///< bundle folders or folders holding bundles
  std::string suite_file;
  selection select;
};

/// One side of a planned configuration: the bundle folder, its front end, and the tuning
/// variant run instead of the bundle's chosen plan ("": the chosen plan; `tune` sets it).
struct planned_side {
  std::string bundle;
  std::string frontend;
  std::string variant;
};

struct planned_item {
  reference::config config;
  nlohmann::json params;            ///< as the suite (or the manifest) wrote them
  planned_side reference, port;     ///< port.bundle is empty in a check plan
  double estimated_s = 0;           ///< worker seconds per run (estimate(); shards balance on it)

  [[nodiscard]] std::string id() const { return config.id(); }
};

enum class plan_kind { sweep, check };

/// A bundle the plan loaded and checked, and which side it was given for.
struct plan_bundle {
  bundle::bundle loaded;
  bool reference_side = true;
  bool used = false;                ///< some item runs it
};

struct sweep_plan {
  plan_kind kind = plan_kind::sweep;
  std::string suite_name, suite_file;
  std::vector<planned_item> items;
  std::vector<std::pair<std::string, std::string>> unpaired;   ///< config id, why not planned
  std::size_t deselected = 0;                                  ///< left out by the selection
  std::vector<plan_bundle> bundles;
  sweep::shard part;              ///< the slice this plan keeps (keep_shard)
  std::size_t all_shards_items = 0;   ///< items of the plan before keep_shard (coverage check)
};

/// Loads the suite and every bundle below the folders (all checks of `inspect`), keeps the
/// selected configurations and pairs each with the reference and port bundle of its operator.
/// Throws suite_error, bundle_error (a folder without bundles, a bad bundle) or sweep_error
/// (two bundles of one operator on one side, a bad --filter).
[[nodiscard]] sweep_plan plan_sweep(const plan_options& opt);

/// Every configuration of every bundle below `dirs` that the selection keeps (`portbench
/// check`); each item's reference side is the bundle.
[[nodiscard]] sweep_plan plan_check(const std::vector<std::string>& dirs, const selection& select);

/// True when the selection keeps `c`. Throws sweep_error for an invalid regular expression.
[[nodiscard]] bool selected(const selection& s, const reference::config& c);

struct estimate_options {
  int runs = 1;
  std::size_t devices = 1;
  measure::timing_options timing;
};

struct plan_estimate {
  double item_seconds = 0;    ///< sum of the items' estimates, one run
  double startup_seconds = 0; ///< worker processes starting (context, CUPTI, modules)
  double wall_seconds = 0;    ///< runs x items / devices + startup
  std::size_t workers = 0;    ///< worker processes the sweep starts (without restarts)
};

/// Keeps the items of slice `s` (after estimate(), which sets the costs it balances): items
/// in decreasing estimated_s, ties in plan order, each onto the slice with the least estimated
/// time so far (lowest index on ties). Every host computes the same split from the same plan,
/// every item lands in exactly one slice, and the kept items stay in plan order.
void keep_shard(sweep_plan& plan, const shard& s);

/// A rough wall time of the plan (docs/cli.md, "dry run"), from each configuration's bytes and
/// flops (reference/ cost models) and the timing options; also fills each item's estimated_s.
plan_estimate estimate(sweep_plan& plan, const estimate_options& opt);

}  // namespace portbench::sweep
