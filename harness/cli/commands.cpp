// SPDX-License-Identifier: Apache-2.0
#include "commands.hpp"

#include <array>
#include <string>
#include <vector>

#include "portbench/build_info.hpp"

#include <unistd.h>

namespace portbench::cli {

std::string self_executable() {
  std::array<char, 4096> buf{};
  const ssize_t n = ::readlink("/proc/self/exe", buf.data(), buf.size() - 1);
  return n > 0 ? std::string(buf.data(), static_cast<std::size_t>(n)) : "portbench";
}

int run(int argc, char** argv) {
  CLI::App app{"portbench: proves GPU kernel ports correct and fast"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "portbench " + std::string(version()) + " (revision " +
                                        std::string(build_revision()) + ")");
  // Registration order is the order `--help` lists the subcommands in.
  std::vector<std::pair<CLI::App*, command_action>> actions;
  auto add = [&](command_action (*adder)(CLI::App&)) {
    auto before = app.get_subcommands({}).size();
    command_action action = adder(app);
    auto subs = app.get_subcommands({});
    if (subs.size() > before) actions.emplace_back(subs.back(), std::move(action));
  };
  add(&add_inspect_command);
  add(&add_check_command);
  add(&add_run_command);
  add(&add_worker_command);
  add(&add_cost_command);
  add(&add_report_command);
  add(&add_compare_command);
  add(&add_merge_command);
  add(&add_export_gbench_command);
  add(&add_tune_command);
  add(&add_ir_diff_command);
  add(&add_diagnose_command);
  add(&add_agent_command);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  for (auto& [sub, action] : actions) {
    if (sub->parsed()) return action();
  }
  return 2;
}

}  // namespace portbench::cli
