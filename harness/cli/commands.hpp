// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <functional>

#include <CLI/CLI.hpp>

namespace portbench::cli {

/// Each subcommand registers itself: adds its options to `app` and returns the action to run
/// when it was chosen. The action returns the process exit code.
using command_action = std::function<int()>;

command_action add_inspect_command(CLI::App& app);
command_action add_check_command(CLI::App& app);
// Further subcommands (run, report, compare, merge, ...) declare theirs here.

/// Parses argv, runs the chosen subcommand, returns its exit code (2 on bad usage).
int run(int argc, char** argv);

}  // namespace portbench::cli
