// SPDX-License-Identifier: Apache-2.0
// `portbench cost --suite FILE`: the fewest bytes each configuration must move and its flops,
// from the operator specs (reference/), as JSON lines; scripts turn timings into bandwidth with it.
#include <cstdio>
#include <memory>

#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "portbench/sweep/suite.hpp"
#include "portbench/reference/spec.hpp"

namespace portbench::cli {

command_action add_cost_command(CLI::App& app) {
  auto suite_file = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand("cost", "Bytes moved and flops of every configuration of a suite (JSON lines)");
  cmd->add_option("--suite", *suite_file, "Suite file (configs/*.json)")->required();
  return [suite_file]() {
    auto s = sweep::load_suite(*suite_file);
    for (const auto& e : s.entries) {
      nlohmann::json line = {{"id", e.config.id()}, {"op", e.config.op}};
      try {
        auto c = reference::find_operator(e.config.op).cost(e.config);
        line["bytes"] = c.bytes_moved;
        line["flops"] = c.flops;
      } catch (const std::exception& ex) {
        line["error"] = ex.what();
      }
      std::printf("%s\n", line.dump().c_str());
    }
    return 0;
  };
}

}  // namespace portbench::cli
