// SPDX-License-Identifier: Apache-2.0
// `portbench check BUNDLES...`: launches every configuration of every bundle once on random
// inputs and checks it against the fp64 reference. Exit 0 when all PASS, 1 otherwise.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "commands.hpp"
#include "portbench/bundle/bundle.hpp"
#include "portbench/cuda/context.hpp"
#include "portbench/cuda/error.hpp"
#include "portbench/verify/numerics.hpp"

namespace portbench::cli {
namespace {

struct check_cli_options {
  std::vector<std::string> bundles;
  int device = 0;
  std::uint64_t seed = 1;
};

struct row {
  std::string frontend, op, config, verdict, detail;
};

void print_rows(const std::vector<row>& rows) {
  std::printf("%-14s %-12s %-44s %-12s %s\n", "frontend", "operator", "config", "numerics", "detail");
  for (const auto& r : rows) {
    std::printf("%-14s %-12s %-44s %-12s %s\n", r.frontend.c_str(), r.op.c_str(), r.config.c_str(),
                r.verdict.c_str(), r.detail.c_str());
  }
}

std::string describe(const verify::numerics_result& res) {
  std::string d;
  char buf[160];
  for (const auto& rep : res.reports) {
    std::snprintf(buf, sizeof buf, "%s%s: %lld checked, %lld bad, max abs %.3g, max rel %.3g", d.empty() ? "" : "; ",
                  rep.tensor.c_str(), static_cast<long long>(rep.checked), static_cast<long long>(rep.bad),
                  rep.max_abs_err, rep.max_rel_err);
    d += buf;
  }
  return d;
}

int run_check(const check_cli_options& o) {
  std::vector<bundle::bundle> bundles;
  for (const auto& d : o.bundles) {
    auto found = bundle::find_bundles(d);
    if (found.empty()) found.push_back(d);
    for (const auto& dir : found) bundles.push_back(bundle::load_bundle(dir));
  }
  auto ctx = cuda::context::open(o.device);
  std::printf("device %s (sm_%d%d), driver %d\n", ctx->info().name.c_str(), ctx->info().cc_major,
              ctx->info().cc_minor, ctx->info().driver_version);
  std::vector<row> rows;
  bool all_pass = true;
  std::string context_lost;
  for (const auto& b : bundles) {
    for (const auto& plan : b.plan.configs) {
      row r{b.plan.frontend, b.plan.op, plan.config.id(), "", ""};
      if (!context_lost.empty()) {
        r.verdict = verdicts::numerics::not_run;
        r.detail = "context lost earlier: " + context_lost;
      } else {
        try {
          auto res = verify::check_numerics(ctx, b, plan, {.seed = o.seed});
          r.verdict = res.verdict;
          r.detail = describe(res);
        } catch (const cuda::cuda_error& e) {
          r.verdict = verdicts::numerics::error;
          r.detail = e.what();
          if (e.is_sticky()) context_lost = e.code_name();
        }
      }
      all_pass = all_pass && r.verdict == verdicts::numerics::pass;
      rows.push_back(std::move(r));
    }
  }
  print_rows(rows);
  return all_pass ? 0 : 1;
}

}  // namespace

command_action add_check_command(CLI::App& app) {
  auto o = std::make_shared<check_cli_options>();
  auto* cmd = app.add_subcommand("check", "Launch every configuration of the bundles once and verify it against the fp64 reference");
  cmd->add_option("bundles", o->bundles, "Bundle folders (or folders holding bundles)")->required();
  cmd->add_option("--device", o->device, "CUDA device ordinal")->check(CLI::NonNegativeNumber);
  cmd->add_option("--seed", o->seed, "Seed of the random inputs");
  return [o]() { return run_check(*o); };
}

}  // namespace portbench::cli
