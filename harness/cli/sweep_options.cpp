// SPDX-License-Identifier: Apache-2.0
#include "sweep_options.hpp"

#include <cstdio>

namespace portbench::cli {

void add_selection_options(CLI::App* cmd, sweep::selection& select, selection_options& view) {
  cmd->add_option("--op", select.ops, "Only these operators (repeatable)");
  cmd->add_option("--filter", select.filter, "Only configurations whose id matches this regular expression");
  cmd->add_flag("--list", view.list, "List the planned configurations and stop");
  cmd->add_flag("--dry-run", view.dry_run, "Print the plan with an estimated time and stop (no GPU needed)");
  cmd->add_option("--shard", view.shard,
                  "Only slice K of N (0-based K/N), balanced by estimated cost; every configuration is in exactly one slice");
  add_format_option(cmd, view.format);
}

sweep::plan_estimate estimate_and_shard(sweep::sweep_plan& plan, const selection_options& view,
                                        const sweep::estimate_options& opt) {
  auto eta = sweep::estimate(plan, opt);
  if (view.shard.empty()) return eta;
  sweep::keep_shard(plan, sweep::parse_shard(view.shard));
  return sweep::estimate(plan, opt);
}

void report_unplanned(const sweep::sweep_plan& plan) {
  for (const auto& [id, why] : plan.unpaired) std::fprintf(stderr, "portbench: not paired: %s: %s\n", id.c_str(), why.c_str());
}

std::string deselected_note(const sweep::sweep_plan& plan) {
  std::string note = plan.deselected ? " (" + std::to_string(plan.deselected) + " left out by --op/--filter)" : "";
  if (!plan.part.whole()) {
    note += " (shard " + plan.part.text() + ": " + std::to_string(plan.items.size()) + " of " +
            std::to_string(plan.all_shards_items) + " configurations)";
  }
  return note;
}

int print_plan(const sweep::sweep_plan& plan, const sweep::plan_estimate& eta, const selection_options& view,
               int runs, std::size_t devices) {
  const bool check = plan.kind == sweep::plan_kind::check;
  table t;
  t.columns = {{"configuration"}, {"operator"}, {check ? "frontend" : "reference"}};
  if (!check) t.columns.push_back({"port"});
  if (view.dry_run) t.columns.push_back({"estimated_s", 3});
  for (const auto& item : plan.items) {
    std::vector<nlohmann::json> row{item.id(), item.config.op, item.reference.frontend};
    if (!check) row.emplace_back(item.port.frontend);
    if (view.dry_run) row.push_back(number(item.estimated_s));
    t.rows.push_back(std::move(row));
  }
  if (!view.dry_run) {
    print_table(t, view.format);
    return 0;
  }
  const int n_runs = check ? 1 : runs;
  if (view.format == table_format::json) {
    nlohmann::json doc = {{"configurations", to_json(t)}, {"runs", n_runs}, {"devices", devices},
                          {"workers", eta.workers}, {"estimated_item_s", eta.item_seconds},
                          {"estimated_startup_s", eta.startup_seconds}, {"estimated_wall_s", eta.wall_seconds},
                          {"deselected", plan.deselected}, {"unpaired", plan.unpaired.size()},
                          {"shard", plan.part.text()}, {"configurations_in_all_shards", plan.all_shards_items}};
    std::printf("%s\n", doc.dump().c_str());
    return 0;
  }
  print_table(t, view.format);
  std::fprintf(view.format == table_format::csv ? stderr : stdout,
               "plan: %zu configurations x %d run(s) on %zu device(s), %zu worker processes; estimated wall ~%.0f s "
               "(%.0f s in configurations, %.0f s starting workers)%s\n",
               plan.items.size(), n_runs, devices, eta.workers, eta.wall_seconds, n_runs * eta.item_seconds,
               eta.startup_seconds, deselected_note(plan).c_str());
  return 0;
}

std::string command_line(const CLI::App* cmd, const std::string& prefix) {
  std::string line = prefix;
  for (const auto* opt : cmd->get_options()) {
    if (opt->get_name() == "--help") continue;
    for (const auto& v : opt->results()) line += " " + opt->get_name() + " " + v;
  }
  return line;
}

}  // namespace portbench::cli
