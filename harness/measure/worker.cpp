// SPDX-License-Identifier: Apache-2.0
#include "portbench/measure/worker.hpp"

#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <ostream>

#include "portbench/bundle/bundle.hpp"
#include "portbench/bundle/error.hpp"
#include "portbench/cuda/cupti.hpp"
#include "portbench/cuda/error.hpp"
#include "portbench/measure/verdicts.hpp"
#include "portbench/reference/cache.hpp"
#include "portbench/reference/spec.hpp"
#include "portbench/reference/tolerance.hpp"
#include "portbench/verify/numerics.hpp"

namespace portbench::measure {
namespace {

using json = nlohmann::json;
using steady = std::chrono::steady_clock;

double seconds_since(steady::time_point t0) { return std::chrono::duration<double>(steady::now() - t0).count(); }

reference::config config_of(const job_item& item) {
  reference::config c;
  c.op = item.op;
  for (const auto& [key, v] : item.params.items()) {
    if (v.is_null()) c.params[key] = std::monostate{};
    else if (v.is_boolean()) c.params[key] = v.get<bool>();
    else if (v.is_number_integer()) c.params[key] = v.get<std::int64_t>();
    else if (v.is_number()) c.params[key] = v.get<double>();
    else c.params[key] = v.get<std::string>();
  }
  return c;
}

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

// Numerics and determinism of one side: two launches with different poisons (in-place inputs
// restored before each); the first is compared with the fp64 reference, the second must
// reproduce it bit for bit. `work` holds the inputs and receives the outputs (one host copy
// per configuration: at GB sizes the copies, not the comparison, were the numerics' cost).
// Returns the comparison reports; the verdict is judged later, against the reference front
// end's own error.
std::vector<reference::compare_report> check_side(const reference::operator_spec& op, const reference::config& cfg,
                                                  const std::vector<reference::host_tensor>& inputs,
                                                  std::vector<reference::host_tensor>& work,
                                                  const verify::device_tensors& dev, sampler& s,
                                                  const output_guard& guard, const plan_under_test& p,
                                                  const reference::verify_options& vopt, side_report& rep) {
  constexpr std::uint32_t k_first_poison = 0xFFFFFFFFu, k_second_poison = 0xFFF5FFF5u;
  auto t0 = steady::now();
  std::uint64_t unwritten = 0;
  std::vector<reference::compare_report> reports;
  bool reproduced = true;
  for (int pass = 0; pass < 2; ++pass) {
    std::uint32_t poison = pass == 0 ? k_first_poison : k_second_poison;
    dev.poison_outputs(poison, inputs);
    s.run_untimed(p, dev);
    for (const auto& o : dev.outputs()) guard.enqueue_count(s.stream(), o.address, o.bytes, o.element_size, poison);
    unwritten += guard.read_and_reset(s.stream());
    if (pass == 0) {
      dev.download_outputs(work);
      auto tv = steady::now();
      reports = op.verify(cfg, work, vopt);
      rep.verify_s = seconds_since(tv);
    } else {
      reproduced = dev.outputs_equal(work);
    }
  }
  rep.check_s = seconds_since(t0);
  rep.numerics_detail = describe(reports);
  if (unwritten > 0) {
    rep.proof = k_proof_output_not_written;
    rep.proof_detail = std::to_string(unwritten) + " output elements kept the poison in the numerics passes";
  } else if (!reproduced) {
    rep.proof = k_proof_nondeterministic;
    rep.proof_detail = "two launches on the same inputs gave different outputs";
  } else {
    rep.proof = k_proof_executed;
  }
  return reports;
}

// A plan whose cubin links the device runtime's launch calls can start work no host launch
// accounts for; CUPTI does not always report such kernels, so the cubin itself is the evidence.
void check_device_launches(const bundle::bundle& b, const bundle::config_plan& plan, side_report& rep) {
  for (const auto& l : plan.launches) {
    const auto& syms = b.cubin(l.cubin).info.device_launch_symbols;
    if (!syms.empty()) {
      rep.proof = k_proof_foreign_kernel;
      rep.proof_detail = l.cubin + " launches kernels from the device (links " + syms.front() + ")";
      return;
    }
  }
}

void fill_timing(const side_result& r, side_report& rep) {
  rep.samples = r.samples;
  rep.median_ns = r.median_ns;
  rep.rel_ci = r.rel_ci;
  rep.timing = r.timing;
  // The worst of the numerics passes and the timed samples stands.
  if (proof_severity(r.proof) > proof_severity(rep.proof)) {
    rep.proof = r.proof;
    rep.proof_detail = r.proof_detail;
  }
}

}  // namespace

int run_worker(const job& j, std::ostream& out) {
  // CUPTI first: records of launches made before it is enabled are lost.
  auto cupti = cuda::load_cupti();
  cupti_tracer tracer(cupti);
  auto ctx = cuda::context::open(j.device);
  sm_clock clock(ctx->info().pci_bus_id);
  output_guard guard(ctx);
  sampler s(ctx, tracer, clock, guard);
  std::map<std::string, bundle::bundle> bundles;
  // Expected values of sampled checks, shared by both sides of a configuration.
  reference::reference_cache cache;
  // Modules stay loaded for the worker's life: unloading one and loading the next at the same
  // handle makes CUPTI report the old kernel's name for the new kernel's records.
  std::map<std::string, std::unique_ptr<bundle::loaded_plan>> plans;
  auto get_plan = [&](const bundle::bundle& b, const bundle::config_plan& p) -> const bundle::loaded_plan& {
    auto& slot = plans[b.dir.string() + "|" + p.config.id()];
    if (!slot) slot = std::make_unique<bundle::loaded_plan>(ctx, b, p);
    return *slot;
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
      reference::config cfg = config_of(item);
      const auto* ref_plan = ref.plan.find(cfg);
      const auto* port_plan = port.plan.find(cfg);
      if (!ref_plan || !port_plan) throw bundle::bundle_error(item.port_bundle, "no plan for " + cfg.id());
      const auto& op = reference::find_operator(cfg.op);
      const auto inputs = reference::make_inputs(op, cfg, item_seed(j.seed, cfg.id(), j.run));
      verify::device_tensors dev(ctx, inputs, {ref_plan, port_plan});
      auto work = inputs;   // receives each side's outputs in turn
      rep.inputs_s = seconds_since(t0);
      side = "reference " + ref.plan.frontend;
      plan_under_test pref{&get_plan(ref, *ref_plan)};
      reference::verify_options vopt;
      vopt.seed = item_seed(j.seed, cfg.id(), j.run);
      vopt.cache = &cache;
      vopt.original_inputs = &inputs;
      auto ref_reports = check_side(op, cfg, inputs, work, dev, s, guard, pref, vopt, rep.ref);
      // The reference front end is judged by the upstream tolerances, the port against the
      // reference front end's own error (reference/tolerance.hpp).
      auto ref_judged = reference::judge_all(ref_reports, {});
      rep.ref.numerics = ref_judged.verdict;
      if (!ref_judged.reason.empty()) rep.ref.numerics_detail += " | " + ref_judged.reason;
      check_device_launches(ref, *ref_plan, rep.ref);
      side = "port " + port.plan.frontend;
      plan_under_test pport{&get_plan(port, *port_plan)};
      auto port_reports = check_side(op, cfg, inputs, work, dev, s, guard, pport, vopt, rep.port);
      auto port_judged = reference::judge_all(port_reports, ref_reports);
      rep.port.numerics = port_judged.verdict;
      if (!port_judged.reason.empty()) rep.port.numerics_detail += " | " + port_judged.reason;
      check_device_launches(port, *port_plan, rep.port);
      side = "timing";
      side_result rres, pres;
      auto ts = steady::now();
      s.measure(pref, pport, dev, j.timing, rres, pres);
      rep.sampling_s = seconds_since(ts);
      fill_timing(rres, rep.ref);
      fill_timing(pres, rep.port);
    } catch (const cuda::cuda_error& e) {
      rep.status = k_status_error;
      rep.error = side + ": " + e.what();
      lost = e.is_sticky();
    } catch (const std::exception& e) {
      rep.status = k_status_error;
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
