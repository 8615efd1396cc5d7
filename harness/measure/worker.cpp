// SPDX-License-Identifier: Apache-2.0
#include "portbench/measure/worker.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <ostream>

#include "portbench/bundle/bundle.hpp"
#include "portbench/bundle/error.hpp"
#include "portbench/cuda/cupti.hpp"
#include "portbench/cuda/error.hpp"
#include "portbench/verdicts.hpp"
#include "portbench/measure/host_inputs.hpp"
#include "portbench/measure/timing_checks.hpp"
#include "portbench/reference/cache.hpp"
#include "portbench/reference/config_json.hpp"
#include "portbench/reference/spec.hpp"
#include "portbench/reference/tolerance.hpp"
#include "portbench/verify/numerics.hpp"
#include "portbench/verify/output_digest.hpp"
#include "portbench/verify/verified_outputs.hpp"

namespace portbench::measure {
namespace {

using json = nlohmann::json;
using steady = std::chrono::steady_clock;

double seconds_since(steady::time_point t0) { return std::chrono::duration<double>(steady::now() - t0).count(); }

std::string describe(const std::vector<reference::compare_report>& reports) {
  std::string d;
  for (const auto& r : reports) {
    char buf[200];
    std::snprintf(buf, sizeof buf, "%s%s: %lld checked, %lld bad, max abs %.3g, max rel %.3g", d.empty() ? "" : "; ",
                  r.tensor.c_str(), static_cast<long long>(r.checked), static_cast<long long>(r.bad), r.max_abs_err,
                  r.max_rel_err);
    d += buf;
  }
  return d;
}

// What both sides of one configuration share in the numerics passes.
struct item_context {
  const reference::operator_spec& op;
  const reference::config& cfg;
  /// The inputs: inout tensors are restored from pristine() before each launch, in-place
  /// operators' references read it, tensors() receives each side's outputs. Inputs generated on
  /// the device reach the host only for a verification.
  host_inputs& inputs;
  const verify::device_tensors& dev;
  const std::string& generated_digest;             ///< the device's digest of what it generated
  reference::verify_options& vopt;
  verify::verified_key key;                        ///< without the digest
};

// The worker's long-lived helpers.
struct worker_tools {
  sampler& s;
  const output_guard& guard;
  const verify::output_digest& digest;
  verify::verified_outputs& verified;
};

// Numerics and determinism of one side: two launches with different poisons (in-place inputs
// restored before each). The first launch's output digest looks up an earlier verification of
// the same inputs and output (the other side, an earlier run); only a new output is downloaded
// and compared with the fp64 reference. The second launch must reproduce the first's digest.
// Returns the comparison reports; the verdict is judged later, against the reference front
// end's own error.
std::vector<reference::compare_report> check_side(const item_context& c, const worker_tools& t,
                                                  const plan_under_test& p, side_report& rep) {
  constexpr std::uint32_t k_first_poison = 0xFFFFFFFFu, k_second_poison = 0xFFF5FFF5u;
  auto t0 = steady::now();
  const double host_inputs_before = c.inputs.seconds();
  std::uint64_t unwritten = 0;
  std::vector<reference::compare_report> reports;
  bool reproduced = true;
  for (int pass = 0; pass < 2; ++pass) {
    std::uint32_t poison = pass == 0 ? k_first_poison : k_second_poison;
    c.dev.poison_outputs(poison, c.inputs.pristine());
    t.s.run_untimed(p, c.dev);
    for (const auto& o : c.dev.outputs()) t.guard.enqueue_count(t.s.stream(), o.address, o.bytes, o.element_size, poison);
    unwritten += t.guard.read_and_reset(t.s.stream());
    const std::string digest = t.digest.of(t.s.stream(), c.dev.written());
    if (pass == 1) {
      reproduced = digest == rep.output_digest;
      continue;
    }
    rep.output_digest = digest;
    verify::verified_key key = c.key;
    key.digest = digest;
    if (auto earlier = t.verified.find(key)) {
      reports = std::move(*earlier);
      rep.numerics_source = verdicts::numerics_source::reused;
      continue;
    }
    c.inputs.complete(c.generated_digest);
    c.vopt.original_inputs = &c.inputs.pristine();
    c.dev.download_outputs(c.inputs.tensors());
    auto tv = steady::now();
    reports = c.op.verify(c.cfg, c.inputs.tensors(), c.vopt);
    rep.verify_s = seconds_since(tv);
    rep.numerics_source = verdicts::numerics_source::verified;
    t.verified.store(key, reports);
  }
  // Host input generation is the inputs' time, not the check's.
  rep.check_s = seconds_since(t0) - (c.inputs.seconds() - host_inputs_before);
  rep.numerics_detail = describe(reports);
  if (rep.numerics_source == verdicts::numerics_source::reused) rep.numerics_detail += " (reused: same inputs and output digest as a verified launch)";
  if (unwritten > 0) {
    rep.proof = verdicts::proof::output_not_written;
    rep.proof_detail = std::to_string(unwritten) + " output elements kept the poison in the numerics passes";
  } else if (!reproduced) {
    rep.proof = verdicts::proof::nondeterministic;
    rep.proof_detail = "two launches on the same inputs gave different outputs";
  } else {
    rep.proof = verdicts::proof::executed;
  }
  return reports;
}

// A plan whose cubin links the device runtime's launch calls can start work no host launch
// accounts for; CUPTI does not always report such kernels, so the cubin itself is the evidence.
void check_device_launches(const bundle::bundle& b, const bundle::config_plan& plan, side_report& rep) {
  for (const auto& l : plan.launches) {
    const auto& syms = b.cubin(l.cubin).info.device_launch_symbols;
    if (!syms.empty()) {
      rep.proof = verdicts::proof::foreign_kernel;
      rep.proof_detail = l.cubin + " launches kernels from the device (links " + syms.front() + ")";
      return;
    }
  }
}

void fill_timing(const side_result& r, side_report& rep) {
  rep.samples = r.samples;
  rep.kernels = r.kernels;
  rep.median_ns = r.median_ns;
  rep.rel_ci = r.rel_ci;
  rep.timing = r.timing;
  // The worst of the numerics passes and the timed samples stands.
  if (verdicts::proof_severity(r.proof) > verdicts::proof_severity(rep.proof)) {
    rep.proof = r.proof;
    rep.proof_detail = r.proof_detail;
  }
}

// `portbench check` through a worker: one launch of each item's plan on seeded inputs, compared
// with the fp64 reference under the upstream tolerances. No CUPTI: nothing is timed.
int run_check_worker(const job& j, std::ostream& out) {
  auto ctx = cuda::context::open(j.device);
  std::map<std::string, bundle::bundle> bundles;
  for (const auto& item : j.items) {
    out << json{{"event", "begin"}, {"index", item.index}}.dump() << "\n" << std::flush;
    item_report rep;
    rep.index = item.index;
    auto t0 = steady::now();
    bool lost = false;
    try {
      auto it = bundles.find(item.ref_bundle);
      if (it == bundles.end()) it = bundles.emplace(item.ref_bundle, bundle::load_bundle(item.ref_bundle)).first;
      const bundle::bundle& b = it->second;
      rep.ref.frontend = b.plan.frontend;
      const reference::config cfg = reference::config_from_json(item.op, item.params);
      const auto* plan = b.plan.find(cfg);
      if (!plan) throw bundle::bundle_error(item.ref_bundle, "no plan for " + cfg.id());
      auto res = verify::check_numerics(ctx, b, *plan, {.seed = j.seed});
      rep.ref.numerics = res.verdict;
      rep.ref.numerics_detail = describe(res.reports);
      if (!res.error.empty()) rep.ref.numerics_detail += " | " + res.error;
      rep.ref.numerics_source = verdicts::numerics_source::verified;
    } catch (const cuda::cuda_error& e) {
      rep.status = verdicts::status::error;
      rep.ref.numerics = verdicts::numerics::error;
      rep.error = e.what();
      lost = e.is_sticky();
    } catch (const std::exception& e) {
      rep.status = verdicts::status::error;
      rep.ref.numerics = verdicts::numerics::error;
      rep.error = e.what();
    }
    rep.wall_s = seconds_since(t0);
    rep.ref.check_s = rep.wall_s;
    out << to_json(rep).dump() << "\n" << std::flush;
    if (lost) return k_worker_exit_context_lost;
  }
  out << json{{"event", "done"}}.dump() << "\n" << std::flush;
  return 0;
}

// A median below the physical floor (bytes over the peak bandwidth, flops over the peak rate)
// is impossible: the side's timing is INVALID_BELOW_FLOOR, its samples stay on file.
void check_floor(const physical_floor& floor, side_report& rep) {
  if (floor.ns <= 0 || !verdicts::timing_valid(rep.timing) || rep.median_ns >= floor.ns) return;
  rep.timing = verdicts::timing::invalid_below_floor;
  char buf[96];
  std::snprintf(buf, sizeof buf, "median %.0f ns is below the physical floor of %.0f ns: ", rep.median_ns, floor.ns);
  rep.timing_detail = buf + floor.why;
}

}  // namespace

int run_worker(const job& j, std::ostream& out) {
  if (j.mode == job_mode::check) return run_check_worker(j, out);
  // CUPTI first: records of launches made before it is enabled are lost.
  auto cupti = cuda::load_cupti();
  cupti_tracer tracer(cupti);
  auto ctx = cuda::context::open(j.device);
  sm_clock clock(ctx->info().pci_bus_id);
  output_guard guard(ctx);
  sampler s(ctx, tracer, clock, guard);
  verify::output_digest digest(ctx);
  std::optional<verify::input_generator> generator;   // compiled on the first configuration that needs it
  std::unique_ptr<host_inputs> last_inputs;
  std::string last_inputs_key;
  verify::verified_outputs verified(j.verified_dir);
  const worker_tools tools{s, guard, digest, verified};
  std::map<std::string, bundle::bundle> bundles;
  // Expected values of sampled checks, shared by both sides of a configuration.
  reference::reference_cache cache;
  // Modules stay loaded for the worker's life: unloading one and loading the next at the same
  // handle makes CUPTI report the old kernel's name for the new kernel's records.
  std::map<std::string, std::unique_ptr<bundle::loaded_plan>> plans;
  auto get_plan = [&](const bundle::bundle& b, const bundle::config_plan& p) -> const bundle::loaded_plan& {
    auto& slot = plans[b.dir.string() + "|" + p.config.id() + "|" + p.variant];
    if (!slot) slot = std::make_unique<bundle::loaded_plan>(ctx, b, p);
    return *slot;
  };
  // Tuning variants as plans of their own, kept as long as the loaded plans that point at them.
  std::map<std::string, std::unique_ptr<bundle::config_plan>> variant_plans;
  auto get_variant = [&](const bundle::bundle& b, const bundle::config_plan* p,
                         const std::string& name) -> const bundle::config_plan* {
    if (p == nullptr || name.empty() || name == p->variant) return p;
    auto& slot = variant_plans[b.dir.string() + "|" + p->config.id() + "|" + name];
    if (!slot) slot = std::make_unique<bundle::config_plan>(p->with_variant(name, b.plan.path.string()));
    return slot.get();
  };
  auto get_bundle = [&](const std::string& dir) -> const bundle::bundle& {
    auto it = bundles.find(dir);
    if (it == bundles.end()) it = bundles.emplace(dir, bundle::load_bundle(dir)).first;
    return it->second;
  };

  for (const auto& item : j.items) {
    out << json{{"event", "begin"}, {"index", item.index}}.dump() << "\n" << std::flush;
    item_report rep;
    rep.index = item.index;
    auto t0 = steady::now();
    double timed_before = s.timed_device_seconds();
    std::string side = "setup";
    bool lost = false;
    try {
      const auto& ref = get_bundle(item.ref_bundle);
      const auto& port = get_bundle(item.port_bundle);
      rep.ref.frontend = ref.plan.frontend;
      rep.port.frontend = port.plan.frontend;
      reference::config cfg = reference::config_from_json(item.op, item.params);
      const auto* ref_plan = get_variant(ref, ref.plan.find(cfg), item.ref_variant);
      const auto* port_plan = get_variant(port, port.plan.find(cfg), item.port_variant);
      if (!ref_plan || !port_plan) throw bundle::bundle_error(item.port_bundle, "no plan for " + cfg.id());
      const auto& op = reference::find_operator(cfg.op);
      const std::uint64_t seed = inputs_seed(j, cfg.id());
      // Consecutive items of one configuration (a tune's candidates) share the host inputs, so
      // each candidate that needs a verification does not make them again.
      const std::string inputs_key = op.name() + "|" + cfg.id() + "|" + std::to_string(seed);
      if (!last_inputs || last_inputs_key != inputs_key) {
        last_inputs.reset();   // one configuration's inputs in host memory at a time
        last_inputs = std::make_unique<host_inputs>(op, cfg, seed, !j.host_inputs);
        last_inputs_key = inputs_key;
      }
      host_inputs& inputs = *last_inputs;
      const std::vector<const bundle::config_plan*> both{ref_plan, port_plan};
      std::string generated_digest;
      std::optional<verify::device_tensors> dev_slot;
      if (inputs.device_fills().empty()) {
        dev_slot.emplace(ctx, inputs.pristine(), both);
      } else {
        if (!generator) generator.emplace(ctx);
        dev_slot.emplace(ctx, inputs.pristine(), both, verify::generated_inputs{*generator, inputs.device_fills(), seed});
        generated_digest = digest.of(s.stream(), dev_slot->generated());
      }
      const verify::device_tensors& dev = *dev_slot;
      rep.inputs_s = seconds_since(t0);
      const double host_inputs_at_setup = inputs.seconds();
      reference::verify_options vopt;
      vopt.seed = seed;
      vopt.cache = &cache;
      vopt.original_inputs = &inputs.pristine();
      const item_context ic{op, cfg, inputs, dev, generated_digest, vopt, {op.name(), cfg.id(), seed, j.reference_id, ""}};
      side = "reference " + ref.plan.frontend;
      plan_under_test pref{&get_plan(ref, *ref_plan)};
      auto ref_reports = check_side(ic, tools, pref, rep.ref);
      // The reference front end is judged by the upstream tolerances, the port against the
      // reference front end's own error (reference/tolerance.hpp).
      auto ref_judged = reference::judge_all(ref_reports, {});
      rep.ref.numerics = ref_judged.verdict;
      if (!ref_judged.reason.empty()) rep.ref.numerics_detail += " | " + ref_judged.reason;
      check_device_launches(ref, *ref_plan, rep.ref);
      side = "port " + port.plan.frontend;
      plan_under_test pport{&get_plan(port, *port_plan)};
      auto port_reports = check_side(ic, tools, pport, rep.port);
      auto port_judged = reference::judge_all(port_reports, ref_reports);
      rep.port.numerics = port_judged.verdict;
      if (!port_judged.reason.empty()) rep.port.numerics_detail += " | " + port_judged.reason;
      check_device_launches(port, *port_plan, rep.port);
      side = "timing";
      side_result rres, pres;
      auto ts = steady::now();
      s.measure(pref, pport, dev, j.timing, rres, pres);
      rep.sampling_s = seconds_since(ts);
      // Inputs made on the host for a verification count as the inputs' time.
      rep.inputs_s += inputs.seconds() - host_inputs_at_setup;
      fill_timing(rres, rep.ref);
      fill_timing(pres, rep.port);
      physical_floor floor;
      try {
        floor = floor_of(op.cost(cfg), ctx->info().name, ctx->info().l2_bytes, j.timing.cold_l2);
      } catch (const std::exception&) {
        // no cost model for these parameters: no floor to check against
      }
      check_floor(floor, rep.ref);
      check_floor(floor, rep.port);
    } catch (const cuda::cuda_error& e) {
      rep.status = verdicts::status::error;
      rep.error = side + ": " + e.what();
      lost = e.is_sticky();
    } catch (const std::exception& e) {
      rep.status = verdicts::status::error;
      rep.error = side + ": " + e.what();
    }
    rep.wall_s = seconds_since(t0);
    rep.timed_device_s = s.timed_device_seconds() - timed_before;
    out << to_json(rep).dump() << "\n" << std::flush;
    if (lost) return k_worker_exit_context_lost;
  }
  out << json{{"event", "done"}}.dump() << "\n" << std::flush;
  return 0;
}

}  // namespace portbench::measure
