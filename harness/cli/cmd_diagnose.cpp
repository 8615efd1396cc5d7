// SPDX-License-Identifier: Apache-2.0
// `portbench diagnose RESULTS.h5 [--config REGEX] [--gate G] [--format md|json] [--bundles DIR]`:
// why the slow configurations are slow, side by side with the reference, and ranked findings
// (docs/diagnose.md). Exit 0 when it ran (findings are not a failure), 2 on bad input.
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "commands.hpp"
#include "portbench/diagnose/diagnose.hpp"
#include "portbench/report/output.hpp"

namespace portbench::cli {
namespace {

struct diagnose_cli_options {
  std::vector<std::string> files;
  std::vector<std::string> bundles;
  std::string format = "md", out, sass_cache;
  bool no_sass = false, no_cache = false;
  diagnose::diagnose_options diag;
};

std::filesystem::path default_cache() {
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x != nullptr && *x != '\0') return std::filesystem::path(x) / "portbench" / "sass";
  if (const char* h = std::getenv("HOME"); h != nullptr && *h != '\0') return std::filesystem::path(h) / ".cache" / "portbench" / "sass";
  return {};
}

int run_diagnose(diagnose_cli_options& o) {
  std::vector<std::filesystem::path> files(o.files.begin(), o.files.end());
  std::vector<std::string> notes;
  auto results = report::load_results(files, {.samples = false, .force = false}, &notes);
  for (const auto& b : o.bundles) o.diag.bundles.emplace_back(b);
  o.diag.sass = !o.no_sass;
  o.diag.sass_opts.cache_dir = o.no_cache ? std::filesystem::path() : o.sass_cache.empty() ? default_cache() : std::filesystem::path(o.sass_cache);
  auto d = diagnose::diagnose_results(results, o.diag);
  d.notes.insert(d.notes.begin(), notes.begin(), notes.end());
  report::emit(o.out, o.format == "json" ? diagnose::render_diagnosis_json(d) : diagnose::render_diagnosis_markdown(d));
  return 0;
}

}  // namespace

command_action add_diagnose_command(CLI::App& app) {
  auto o = std::make_shared<diagnose_cli_options>();
  auto* sub = app.add_subcommand("diagnose", "Why slow configurations are slow: resources, SASS, roofline, ir-diff, findings");
  sub->add_option("files", o->files, "Results files (.h5); several are combined")->required();
  sub->add_option("--config", o->diag.config_regex, "Diagnose the configurations whose id matches (instead of the gate)");
  sub->add_option("--gate", o->diag.gate, "Diagnose configurations with port/reference speed below this (default 0.95)")
      ->check(CLI::Range(0.0, 100.0));
  sub->add_option("--format", o->format, "md (default) or json")->check(CLI::IsMember({"md", "json"}));
  sub->add_option("--out", o->out, "Write here instead of stdout");
  sub->add_option("--bundles", o->bundles, "Look for the bundles below these folders instead of the run's --ref/--port");
  sub->add_option("--copy-gbps", o->diag.copy_gbps, "Copy bandwidth to measure against (default: the file's, else the device table's)")
      ->check(CLI::PositiveNumber);
  sub->add_option("--nvdisasm", o->diag.nvdisasm, "The disassembler (default: docs/diagnose.md's search order)");
  sub->add_option("--jobs", o->diag.sass_opts.jobs, "Concurrent disassemblies (default: hardware threads)");
  sub->add_option("--sass-cache", o->sass_cache, "Cache of SASS mixes by cubin sha256 (default ~/.cache/portbench/sass)");
  sub->add_flag("--no-sass-cache", o->no_cache, "Disassemble every cubin again");
  sub->add_flag("--no-sass", o->no_sass, "Skip the SASS mix");
  sub->add_option("--sass-limit", o->diag.sass_limit,
                  "Disassemble for the slowest N configurations (default 16; 0: all); the rest use the cache only");
  sub->add_option("--roof-fraction", o->diag.roof_fraction, "BELOW_ROOFLINE under this share of the roof (default 0.8)")
      ->check(CLI::Range(0.0, 1.0));
  return [o] { return run_diagnose(*o); };
}

}  // namespace portbench::cli
