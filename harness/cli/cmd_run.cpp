// SPDX-License-Identifier: Apache-2.0
// `portbench run --ref DIR --port DIR --suite FILE [--runs N] [--out FILE]`: pairs the suite's
// configurations, runs N independent worker runs per configuration, writes every sample and
// verdict to HDF5 as it arrives, and prints a short table of best-of-N ratios last.
#include <unistd.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <span>
#include <algorithm>
#include <map>
#include <memory>

#include "commands.hpp"
#include "portbench/bundle/sha256.hpp"
#include "portbench/measure/orchestrator.hpp"
#include "portbench/verdicts.hpp"
#include "portbench/store/writer.hpp"
#include "portbench/verify/verified_outputs.hpp"

namespace portbench::cli {
namespace {

using json = nlohmann::json;

struct run_cli_options {
  measure::sweep_options sweep;
  std::string out = "results/run.h5";
  bool aa = false;
  bool resume = false;
  bool overwrite = false;
};

std::string self_exe() {
  std::array<char, 4096> buf{};
  ssize_t n = ::readlink("/proc/self/exe", buf.data(), buf.size() - 1);
  return n > 0 ? std::string(buf.data(), static_cast<std::size_t>(n)) : "portbench";
}

std::string capture(const std::string& cmd) {
  std::string out;
  if (FILE* f = ::popen(cmd.c_str(), "r")) {
    std::array<char, 4096> buf{};
    while (std::fgets(buf.data(), buf.size(), f)) out += buf.data();
    ::pclose(f);
  }
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

store::provenance make_provenance(const run_cli_options& o, const measure::sweep_plan& plan,
                                  const std::string& argv_line) {
  store::provenance p;
  p.portbench_version = "0.1.0";
  p.command_line = argv_line;
  p.suite = plan.suite_name;
  p.seeds = {static_cast<std::int64_t>(o.sweep.seed)};
  const char* rev = std::getenv("PORTBENCH_GIT_REVISION");
  p.git_revision = rev ? rev : capture("git rev-parse --verify -q HEAD 2>/dev/null");
  if (p.git_revision.empty()) p.git_revision = "unknown";
  // The worker describes the device: the orchestrator itself never touches the GPU.
  std::string desc = capture("'" + o.sweep.worker_exe + "' worker --describe-device " +
                             std::to_string(o.sweep.devices.front()) + " 2>/dev/null");
  if (!desc.empty() && desc.front() == '{') {
    json d = json::parse(desc);
    p.gpu_name = d.value("gpu_name", "");
    p.driver_version = d.value("driver_version", "");
    p.sm_clock_mhz = d.value("max_sm_clock_mhz", 0);
    p.memory_clock_mhz = d.value("memory_clock_mhz", 0);
    int api = d.value("driver_api_version", 0);
    p.cuda_version = std::to_string(api / 1000) + "." + std::to_string(api % 1000 / 10);
    p.cupti_version = std::to_string(d.value("cupti_version", 0));
    p.extra["device"] = desc;
  } else {
    p.gpu_name = "unknown (no device could be described)";
  }
  for (const auto* b : plan.bundles_used) {
    store::bundle_provenance bp;
    bool is_ref = false;
    for (const auto& pr : plan.pairs) is_ref = is_ref || pr.ref_bundle == b->dir.string();
    bp.role = is_ref ? "reference" : "port";
    bp.frontend = b->plan.frontend;
    bp.op = b->plan.op;
    for (const auto& c : b->cubins) bp.cubin_sha256[c.ref.file] = c.ref.sha256;
    std::ifstream manifest(b->plan.path, std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(manifest)), std::istreambuf_iterator<char>());
    bp.bundle_sha256 = bundle::sha256_hex(std::as_bytes(std::span(text.data(), text.size())));
    p.bundles.push_back(std::move(bp));
    for (const auto& [tool, version] : b->plan.toolchain) p.extra["toolchain." + b->plan.frontend + "." + tool] = version;
  }
  if (!plan.pairs.empty()) {
    p.reference_frontend = plan.pairs.front().ref_frontend;
    p.port_frontend = plan.pairs.front().port_frontend;
  }
  const auto& t = o.sweep.timing;
  p.extra["timing"] = json{{"warmup_launches", t.warmup_launches}, {"min_samples", t.min_samples},
                           {"max_samples", t.max_samples}, {"target_rel_ci", t.target_rel_ci},
                           {"time_cap_s", t.time_cap_s}, {"cold_l2", t.cold_l2}, {"runs", o.sweep.runs}}.dump();
  return p;
}

store::run_record to_record(const measure::planned_pair& pair, int run, const measure::item_report& r, bool ref) {
  const measure::side_report& s = ref ? r.ref : r.port;
  store::run_record rec;
  rec.config_id = pair.config.id();
  rec.role = ref ? store::role::reference : store::role::port;
  rec.frontend = ref ? pair.ref_frontend : pair.port_frontend;
  rec.run = run;
  for (const auto& x : s.samples) {
    if (x.problem.empty() && x.device_ns > 0) rec.add_sample({x.device_ns, x.sm_mhz, x.event_ns});
    else ++rec.dropped_samples;
  }
  rec.cost = {r.inputs_s, s.check_s, s.verify_s, r.sampling_s, r.wall_s};
  rec.verdicts.numerics = s.numerics;
  rec.numerics_source = s.numerics_source;
  rec.output_digest = s.output_digest;
  rec.verdicts.proof = s.proof;
  rec.verdicts.timing = s.timing;
  if (rec.verdicts.timing == verdicts::timing::valid && rec.time_ns.empty()) rec.verdicts.timing = verdicts::timing::invalid_no_samples;
  if (r.status != verdicts::status::ok) rec.error = r.status + ": " + r.error;
  else if (!s.proof_detail.empty()) rec.error = s.proof_detail;
  return rec;
}

// Per configuration: each run's medians, for the closing table.
struct config_summary {
  std::string id, ref_fe, port_fe;
  std::vector<double> ref_medians, port_medians;
  std::string numerics, proof, status{verdicts::status::ok};
};

std::string worst(const std::string& a, const std::string& b) {
  if (a.empty()) return b;
  if (a == verdicts::numerics::pass || a == verdicts::proof::executed || a == verdicts::status::ok) return b;
  return a;
}

// Where the workers' wall time went, summed over every configuration run.
struct cost_totals {
  double inputs_s = 0, check_s = 0, verify_s = 0, sampling_s = 0;
  int verified = 0, reused = 0;   ///< sides compared with the fp64 reference, and sides reusing one
};

int print_summary(const std::map<std::string, config_summary>& rows, const measure::sweep_summary& s,
                  const cost_totals& c) {
  std::printf("\n%-48s %12s %12s %8s %8s %10s %-20s %s\n", "configuration", "ref best us", "port best us", "ratio",
              "spread", "numerics", "proof", "status");
  double log_sum = 0;
  int n_ratio = 0;
  bool all_ok = true;
  for (const auto& [id, row] : rows) {
    auto best = [](const std::vector<double>& v) { return v.empty() ? NAN : *std::min_element(v.begin(), v.end()); };
    auto spread = [](const std::vector<double>& v) {
      if (v.size() < 2) return 0.0;
      auto [lo, hi] = std::minmax_element(v.begin(), v.end());
      return (*hi - *lo) / *lo;
    };
    double r = best(row.ref_medians), p = best(row.port_medians);
    double ratio = r / p;   // port speed over reference speed
    bool ok = row.status == verdicts::status::ok && row.numerics == verdicts::numerics::pass && row.proof == verdicts::proof::executed;
    all_ok = all_ok && ok;
    if (ok && std::isfinite(ratio)) {
      log_sum += std::log(ratio);
      ++n_ratio;
    }
    std::printf("%-48s %12.2f %12.2f %8.4f %7.2f%% %10s %-20s %s\n", id.c_str(), r / 1e3, p / 1e3, ratio,
                100 * std::max(spread(row.ref_medians), spread(row.port_medians)), row.numerics.c_str(),
                row.proof.c_str(), row.status.c_str());
  }
  std::printf("geomean (port/ref speed, %d configurations): %.4f\n", n_ratio, n_ratio ? std::exp(log_sum / n_ratio) : NAN);
  std::printf("wall %.1f s, GPU in timed kernels %.2f s (%.1f%%), workers started %d, configuration runs %d, failed %d\n",
              s.wall_s, s.timed_device_s, s.wall_s > 0 ? 100 * s.timed_device_s / s.wall_s : 0.0, s.workers_started,
              s.items_run, s.items_failed);
  std::printf("worker time: inputs %.1f s, numerics passes %.1f s (CPU verification %.1f s), timed sampling %.1f s\n",
              c.inputs_s, c.check_s, c.verify_s, c.sampling_s);
  std::printf("numerics: %d sides verified against fp64, %d reused a verified output (same inputs, same digest)\n",
              c.verified, c.reused);
  return all_ok ? 0 : 1;
}

int run_command(run_cli_options& o, const std::string& argv_line) {
  if (o.aa) o.sweep.port_dirs = o.sweep.ref_dirs;
  if (o.sweep.port_dirs.empty()) throw std::runtime_error("--port: required (or --aa for the same bundles on both sides)");
  o.sweep.worker_exe = self_exe();
  o.sweep.progress = ::isatty(2);
  auto plan = measure::plan_sweep(o.sweep);
  for (const auto& [id, why] : plan.unpaired) std::fprintf(stderr, "portbench: not paired: %s: %s\n", id.c_str(), why.c_str());
  if (plan.pairs.empty()) throw std::runtime_error(o.sweep.suite_file + ": no configuration is supported by both sides");

  std::filesystem::path out(o.out);
  if (out.has_parent_path()) std::filesystem::create_directories(out.parent_path());
  auto writer = o.resume && std::filesystem::exists(out)
                    ? store::results_writer::resume(out)
                    : store::results_writer::create(out, make_provenance(o, plan, argv_line), {.overwrite = o.overwrite});
  // A verified output is reused only under the same reference library.
  o.sweep.reference_id = writer.provenance().portbench_version + "@" + writer.provenance().git_revision;
  for (const auto& pair : plan.pairs) {
    writer.add_config({pair.config.id(), pair.config.op, pair.params.dump()});
  }
  std::map<std::string, config_summary> rows;
  cost_totals costs;
  auto sink = [&](const measure::planned_pair& pair, int run, const measure::item_report& r) {
    auto ref = to_record(pair, run, r, true), port = to_record(pair, run, r, false);
    writer.append(ref);
    writer.append(port);
    costs.inputs_s += r.inputs_s;
    costs.check_s += r.ref.check_s + r.port.check_s;
    costs.verify_s += r.ref.verify_s + r.port.verify_s;
    for (const auto* side : {&r.ref, &r.port}) {
      costs.verified += side->numerics_source == verdicts::numerics_source::verified;
      costs.reused += side->numerics_source == verdicts::numerics_source::reused;
    }
    costs.sampling_s += r.sampling_s;
    auto& row = rows[pair.config.id()];
    row.id = pair.config.id();
    if (r.ref.median_ns > 0 && r.ref.timing == verdicts::timing::valid) row.ref_medians.push_back(r.ref.median_ns);
    if (r.port.median_ns > 0 && r.port.timing == verdicts::timing::valid) row.port_medians.push_back(r.port.median_ns);
    row.numerics = worst(row.numerics, worst(r.ref.numerics, r.port.numerics));
    row.proof = worst(row.proof, worst(r.ref.proof, r.port.proof));
    if (r.status != verdicts::status::ok) row.status = r.status;
  };
  auto done = [&](const measure::planned_pair& pair, int run) {
    return writer.contains({pair.config.id(), store::role::reference, run}) &&
           writer.contains({pair.config.id(), store::role::port, run});
  };
  auto summary = measure::run_sweep(o.sweep, plan, sink, done);
  writer.annotate("sweep_summary", json{{"wall_s", summary.wall_s}, {"timed_device_s", summary.timed_device_s},
                                        {"workers_started", summary.workers_started}, {"items_run", summary.items_run},
                                        {"items_failed", summary.items_failed}}.dump());
  writer.close();
  std::printf("results: %s\n", out.string().c_str());
  return print_summary(rows, summary, costs);
}

}  // namespace

command_action add_run_command(CLI::App& app) {
  auto o = std::make_shared<run_cli_options>();
  auto argv_line = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand("run", "Time reference and port bundles on a suite's paired configurations");
  auto& s = o->sweep;
  cmd->add_option("--ref", s.ref_dirs, "Reference bundle folders")->required();
  cmd->add_option("--port", s.port_dirs, "Port bundle folders");
  cmd->add_flag("--aa", o->aa, "A/A: the reference bundles on both sides");
  cmd->add_option("--suite", s.suite_file, "Suite file (configs/*.json)")->required();
  cmd->add_option("--runs", s.runs, "Independent worker runs per configuration (best of N)")->check(CLI::PositiveNumber);
  cmd->add_option("--out", o->out, "Results file (HDF5)");
  cmd->add_flag("--resume", o->resume, "Append to an existing results file, skipping what it holds");
  cmd->add_flag("--overwrite", o->overwrite, "Replace an existing results file");
  cmd->add_option("--devices", s.devices, "CUDA device ordinals, one worker each")->delimiter(',');
  cmd->add_option("--seed", s.seed, "Base seed of the inputs");
  cmd->add_flag("--vary-inputs", s.vary_inputs, "Fresh inputs in every run, each verified (default: the same inputs, verified once)");
  cmd->add_option("--verified-cache", s.verified_dir, "Folder of verified outputs kept between sweeps (default: the sweep's own)");
  cmd->add_option("--timeout", s.item_timeout_s, "Seconds one configuration may take before its worker is killed");
  cmd->add_option("--min-samples", s.timing.min_samples, "Samples per side at least");
  cmd->add_option("--max-samples", s.timing.max_samples, "Samples per side at most");
  cmd->add_option("--target-ci", s.timing.target_rel_ci, "Stop when the median's 95% CI half-width is below this fraction");
  cmd->add_option("--time-cap", s.timing.time_cap_s, "Seconds of sampling per configuration and run at most");
  cmd->add_option("--warmup", s.timing.warmup_launches, "Untimed launches per side before sampling");
  cmd->add_flag("!--warm-l2", s.timing.cold_l2, "Do not flush L2 before each sample");
  cmd->callback([cmd, argv_line]() {
    std::string line = "portbench run";
    for (const auto* opt : cmd->get_options()) {
      for (const auto& v : opt->results()) line += " " + opt->get_name() + " " + v;
    }
    *argv_line = line;
  });
  return [o, argv_line]() { return run_command(*o, *argv_line); };
}

}  // namespace portbench::cli
