// SPDX-License-Identifier: Apache-2.0
// `portbench inspect BUNDLE...`: entries, parameter layout, registers, shared memory and target
// architecture of every cubin, after the same checks a run makes before its first launch.
#include <array>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "commands.hpp"
#include "portbench/bundle/bundle.hpp"
#include "table.hpp"

namespace portbench::cli {
namespace {

void print_bundle(const bundle::bundle& b) {
  const auto& m = b.plan;
  std::printf("bundle    %s\n", b.dir.string().c_str());
  std::printf("frontend  %s   operator %s   arch %s   configs %zu\n", m.frontend.c_str(), m.op.c_str(),
              m.arch.c_str(), m.configs.size());
  std::string tools;
  for (const auto& [tool, version] : m.toolchain) tools += (tools.empty() ? "" : ", ") + tool + " " + version;
  std::printf("toolchain %s\n", tools.c_str());
  for (const auto& c : b.cubins) {
    std::printf("cubin     %s  %s  %zu bytes  sha256 %.16s…%s%s\n", c.ref.file.c_str(), c.info.arch().c_str(),
                c.image.size(), c.ref.sha256.c_str(), c.info.toolkit.empty() ? "" : "  ",
                c.info.toolkit.c_str());
    if (!c.info.device_launch_symbols.empty()) {
      std::printf("          launches kernels from the device (%s)\n", c.info.device_launch_symbols.front().c_str());
    }
    for (const auto& e : c.info.entries) {
      std::printf("  entry   %s%s\n", e.name.c_str(), e.tile_ir ? "  (Tile IR)" : "");
      std::printf("          registers %d  static shared %lld B  frame %d B", e.registers,
                  static_cast<long long>(e.static_shared_bytes), e.frame_bytes);
      if (e.required_block[0] != 0) {
        std::printf("  required block %dx%dx%d", e.required_block[0], e.required_block[1], e.required_block[2]);
      }
      if (e.cluster[0] != 0) {
        std::printf("  cluster %dx%dx%d%s", e.cluster[0], e.cluster[1], e.cluster[2],
                    e.blocks_are_clusters ? " (grid counts clusters)" : "");
      }
      std::printf("\n          params %zu (%d B):", e.params.size(), e.param_bytes);
      for (const auto& p : e.params) std::printf(" #%d@%d:%dB", p.ordinal, p.offset, p.size);
      std::printf("\n");
    }
  }
  if (m.configs.empty()) {
    // A bundle of reasons only: nothing to check, which is not an OK; its reasons, once each.
    std::map<std::string, std::size_t> reasons;
    for (const auto& u : m.unsupported) ++reasons[u.reason];
    std::printf("check     nothing to check: no plans, %zu configurations unsupported\n", m.unsupported.size());
    for (const auto& [reason, n] : reasons) std::printf("  reason  %zu x %s\n", n, reason.c_str());
    return;
  }
  std::size_t launches = 0, steps = 0;
  for (const auto& plan : m.configs) {
    launches += plan.launches.size();
    steps += plan.steps.size() - plan.launches.size();
  }
  std::printf("check     OK: %zu launches in %zu configs agree with their cubins' parameter tables", launches,
              m.configs.size());
  if (steps > 0) std::printf(" (and %zu harness steps: fill, copy, sum)", steps);
  std::printf("\n");
}

std::string triple(const std::array<int, 3>& v) {
  return std::to_string(v[0]) + "x" + std::to_string(v[1]) + "x" + std::to_string(v[2]);
}

// --format json|csv: one row per entry of every cubin.
void add_rows(const bundle::bundle& b, table& t) {
  for (const auto& c : b.cubins) {
    for (const auto& e : c.info.entries) {
      std::string params;
      for (const auto& p : e.params) {
        params += (params.empty() ? "#" : " #") + std::to_string(p.ordinal) + "@" + std::to_string(p.offset) + ":" +
                  std::to_string(p.size);
      }
      t.rows.push_back({b.dir.string(), b.plan.frontend, b.plan.op, c.info.arch(), c.ref.file, c.ref.sha256,
                        static_cast<long long>(c.image.size()), e.name, e.tile_ir, e.registers,
                        static_cast<long long>(e.static_shared_bytes), e.frame_bytes,
                        e.required_block[0] ? nlohmann::json(triple(e.required_block)) : nlohmann::json(nullptr),
                        e.cluster[0] ? nlohmann::json(triple(e.cluster)) : nlohmann::json(nullptr),
                        e.params.size(), e.param_bytes, params, b.plan.configs.size()});
    }
  }
}

}  // namespace

command_action add_inspect_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("inspect", "Check bundles and print their cubins' entries and parameter tables");
  auto dirs = std::make_shared<std::vector<std::string>>();
  auto format = std::make_shared<table_format>(table_format::text);
  cmd->add_option("bundle", *dirs, "Bundle folders (or folders holding bundles)")->required();
  add_format_option(cmd, *format);
  return [dirs, format]() {
    int shown = 0;
    table t{{{"bundle"}, {"frontend"}, {"operator"}, {"arch"}, {"cubin"}, {"sha256"}, {"bytes"}, {"entry"},
             {"tile_ir"}, {"registers"}, {"static_shared_bytes"}, {"frame_bytes"}, {"required_block"}, {"cluster"},
             {"param_count"}, {"param_bytes"}, {"params"}, {"configs"}},
            {}};
    for (const auto& d : *dirs) {
      auto found = bundle::find_bundles(d);
      if (found.empty()) found.push_back(d);   // let load_bundle name what is missing
      for (const auto& dir : found) {
        const auto b = bundle::load_bundle(dir);
        if (*format != table_format::text) {
          add_rows(b, t);
          continue;
        }
        if (shown++ > 0) std::printf("\n");
        print_bundle(b);
      }
    }
    if (*format != table_format::text) print_table(t, *format);
    return 0;
  };
}

}  // namespace portbench::cli
