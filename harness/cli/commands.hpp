// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <functional>
#include <string>

#include <CLI/CLI.hpp>

namespace portbench::cli {

/// Each subcommand registers itself: adds its options to `app` and returns the action to run
/// when it was chosen. The action returns the process exit code.
using command_action = std::function<int()>;

command_action add_inspect_command(CLI::App& app);
command_action add_check_command(CLI::App& app);
command_action add_run_command(CLI::App& app);
command_action add_worker_command(CLI::App& app);
command_action add_cost_command(CLI::App& app);
command_action add_report_command(CLI::App& app);
command_action add_compare_command(CLI::App& app);
command_action add_merge_command(CLI::App& app);
command_action add_export_gbench_command(CLI::App& app);
command_action add_ir_diff_command(CLI::App& app);
command_action add_diagnose_command(CLI::App& app);
command_action add_tune_command(CLI::App& app);
command_action add_agent_command(CLI::App& app);

/// Parses argv, runs the chosen subcommand, returns its exit code (2 on bad usage).
/// This program's own path (/proc/self/exe): what the agent runs for its portbench stages.
[[nodiscard]] std::string self_executable();

int run(int argc, char** argv);

}  // namespace portbench::cli
