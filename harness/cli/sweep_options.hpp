// SPDX-License-Identifier: Apache-2.0
// Options and printing that run and check share: selection (--op, --filter), --list,
// --dry-run, --format, the plan's listing and the command line kept in provenance.
#pragma once
#include <cstddef>
#include <string>

#include <CLI/CLI.hpp>

#include "portbench/sweep/plan.hpp"
#include "table.hpp"

namespace portbench::cli {

struct selection_options {
  bool list = false;       ///< print the plan and stop
  bool dry_run = false;    ///< print the plan with estimated times and stop (no GPU needed)
  table_format format = table_format::text;
  std::string shard;       ///< --shard K/N ("": the whole plan)
};

void add_selection_options(CLI::App* cmd, sweep::selection& select, selection_options& view);

/// Estimates the plan and, with --shard, keeps its slice (balanced on the estimates) and
/// estimates the slice.
[[nodiscard]] sweep::plan_estimate estimate_and_shard(sweep::sweep_plan& plan, const selection_options& view,
                                                      const sweep::estimate_options& opt);

/// The suite's configurations that no pair of bundles covers, one stderr line each.
void report_unplanned(const sweep::sweep_plan& plan);
/// " (N left out by --op/--filter)" or "".
[[nodiscard]] std::string deselected_note(const sweep::sweep_plan& plan);
/// --list and --dry-run: the planned configurations (with estimates for --dry-run). Returns 0.
int print_plan(const sweep::sweep_plan& plan, const sweep::plan_estimate& eta, const selection_options& view,
               int runs, std::size_t devices);
/// "portbench run --ref a --suite b ...", the options as given.
[[nodiscard]] std::string command_line(const CLI::App* cmd, const std::string& prefix);

}  // namespace portbench::cli
