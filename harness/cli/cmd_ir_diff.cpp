// SPDX-License-Identifier: Apache-2.0
// `portbench ir-diff REF_BUNDLE PORT_BUNDLE [--config REGEX] [--format md|json] [--out PATH]`:
// the structural Tile IR diff of every configuration both bundles support (docs/diagnose.md).
// Exit 0 when every configuration is PASS or PASS_WITH_NOTES, 1 otherwise, 2 on bad input.
#include <cstdio>
#include <memory>
#include <string>

#include "commands.hpp"
#include "portbench/diagnose/bundle_ir.hpp"
#include "portbench/diagnose/verdicts.hpp"
#include "portbench/report/output.hpp"

namespace portbench::cli {
namespace {

struct ir_diff_cli_options {
  std::string reference, port, format = "md", out;
  diagnose::ir_diff_options diff;
};

int run_ir_diff(const ir_diff_cli_options& o) {
  auto diffs = diagnose::diff_bundles(o.reference, o.port, o.diff);
  report::emit(o.out, o.format == "json" ? diagnose::render_ir_diff_json(diffs) : diagnose::render_ir_diff_markdown(diffs));
  std::string v = diagnose::overall_verdict(diffs);
  return v == diagnose::ir_verdict::pass || v == diagnose::ir_verdict::pass_with_notes ? 0 : 1;
}

}  // namespace

command_action add_ir_diff_command(CLI::App& app) {
  auto o = std::make_shared<ir_diff_cli_options>();
  auto* sub = app.add_subcommand("ir-diff", "Structural Tile IR diff of a reference and a port bundle");
  sub->add_option("reference", o->reference, "Reference bundle (or a folder of bundles, paired by operator)")->required();
  sub->add_option("port", o->port, "Port bundle (or a folder of bundles)")->required();
  sub->add_option("--config", o->diff.config_regex, "Only configurations whose id matches this regular expression");
  sub->add_option("--format", o->format, "md (default) or json")->check(CLI::IsMember({"md", "json"}));
  sub->add_option("--out", o->out, "Write here instead of stdout");
  return [o] { return run_ir_diff(*o); };
}

}  // namespace portbench::cli
