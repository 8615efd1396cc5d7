// SPDX-License-Identifier: Apache-2.0
#include "portbench/measure/sampler.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>

#include "portbench/bundle/steps.hpp"
#include "portbench/cuda/error.hpp"

namespace portbench::measure {
namespace {

// Launches attributed to the harness itself (warm-up, numerics passes, poison checks).
constexpr std::uint64_t k_harness_id = 0;

void raise_proof(side_result& side, std::string_view verdict, const std::string& detail) {
  if (verdicts::proof_severity(verdict) > verdicts::proof_severity(side.proof)) {
    side.proof = verdict;
    side.proof_detail = detail;
  }
}

std::vector<std::int64_t> valid_times(const side_result& s) {
  std::vector<std::int64_t> v;
  for (const auto& x : s.samples) {
    if (x.problem.empty() && x.device_ns > 0) v.push_back(x.device_ns);
  }
  return v;
}

}  // namespace

record_check check_plan_records(const std::vector<bundle::expected_record>& expected,
                                const std::vector<const kernel_record*>& recs) {
  record_check out;
  if (recs.size() < expected.size()) {
    out.proof = verdicts::proof::not_executed;
    out.missing = true;
    out.detail = std::to_string(recs.size()) + " kernel records for " + std::to_string(expected.size()) +
                 " kernels of the plan";
    return out;
  }
  auto raise = [&](std::string_view verdict, const std::string& detail) {
    if (verdicts::proof_severity(verdict) > verdicts::proof_severity(out.proof)) {
      out.proof = verdict;
      out.detail = detail;
    }
  };
  if (recs.size() > expected.size()) {
    raise(verdicts::proof::foreign_kernel, std::to_string(recs.size()) + " kernel records for " + std::to_string(expected.size()) +
                                      " kernels of the plan");
  }
  for (std::size_t i = 0; i < recs.size() && i < expected.size(); ++i) {
    const kernel_record& r = *recs[i];
    const auto& e = expected[i];
    const bundle::dim3 g = e.cta_grid;   // CUPTI counts CTAs, also where the grid counts clusters
    const bool grid_ok = r.grid[0] == static_cast<std::int32_t>(g[0]) && r.grid[1] == static_cast<std::int32_t>(g[1]) &&
                         r.grid[2] == static_cast<std::int32_t>(g[2]);
    if (r.name != e.entry || !grid_ok) {
      raise(verdicts::proof::foreign_kernel,
            "record '" + r.name + "' grid " + std::to_string(r.grid[0]) + "x" + std::to_string(r.grid[1]) + "x" +
                std::to_string(r.grid[2]) + " where the plan runs '" + e.entry + "' with grid " + std::to_string(g[0]) +
                "x" + std::to_string(g[1]) + "x" + std::to_string(g[2]) + " CTAs");
    }
  }
  return out;
}

std::vector<std::int64_t> plan_kernel_times(const std::vector<bundle::expected_record>& expected,
                                            const std::vector<const kernel_record*>& recs) {
  std::vector<std::int64_t> out;
  if (expected.size() < 2 || recs.size() != expected.size()) return out;
  for (const kernel_record* r : recs) out.push_back(static_cast<std::int64_t>(r->end_ns - r->start_ns));
  return out;
}

sampler::sampler(cuda::context_ptr ctx, cupti_tracer& tracer, const sm_clock& clock, const output_guard& guard)
    : m_ctx(ctx),
      m_tracer(tracer),
      m_clock(clock),
      m_guard(guard),
      m_stream(ctx),
      m_start(ctx),
      m_end(ctx),
      m_l2_flush(ctx) {}

void sampler::run_untimed(const plan_under_test& p, const verify::device_tensors& tensors) const {
  m_tracer.push(k_harness_id);
  try {
    p.plan->enqueue(m_stream, tensors.tensors(), tensors.scratch());
  } catch (...) {
    m_tracer.pop();
    throw;
  }
  m_tracer.pop();
  m_stream.synchronize();
}

void sampler::take_sample(const plan_under_test& p, const verify::device_tensors& tensors, side_result& out) {
  std::uint64_t id = m_next_id++;
  sample s;
  s.poison = poison_pattern(id);
  tensors.poison_outputs_async(m_stream, s.poison);
  if (m_cold_l2) {
    m_tracer.push(k_harness_id);
    m_l2_flush.enqueue(m_stream);
    m_tracer.pop();
  }
  m_tracer.push(id);
  try {
    m_start.record(m_stream);
    p.plan->enqueue(m_stream, tensors.tensors(), tensors.scratch());
    m_end.record(m_stream);
  } catch (...) {
    m_tracer.pop();
    throw;
  }
  m_tracer.pop();
  m_tracer.push(k_harness_id);
  for (const auto& o : tensors.outputs()) m_guard.enqueue_count(m_stream, o.address, o.bytes, o.element_size, s.poison);
  m_tracer.pop();
  s.sm_mhz = m_clock.sm_mhz();
  s.unwritten = m_guard.read_and_reset(m_stream);   // synchronises the stream
  s.event_ns = m_end.since(m_start).count();
  if (s.unwritten > 0) {
    raise_proof(out, verdicts::proof::output_not_written,
                std::to_string(s.unwritten) + " output elements kept the poison of sample " + std::to_string(out.samples.size()));
  }
  out.samples.push_back(s);
  m_window.push_back({id, &out, &p, out.samples.size() - 1});
}

void sampler::attribute(const std::vector<pending>& window) {
  trace_batch batch = m_tracer.flush_and_take();
  std::map<std::uint64_t, std::vector<const kernel_record*>> by_sample;
  std::vector<const kernel_record*> strangers;
  for (const auto& r : batch.kernels) {
    auto ext = batch.external_id.find(r.correlation_id);
    if (r.device_launched || ext == batch.external_id.end()) strangers.push_back(&r);
    else if (ext->second != k_harness_id) by_sample[ext->second].push_back(&r);
  }
  for (const pending& p : window) {
    sample& s = p.side->samples[p.index];
    auto& recs = by_sample[p.id];
    std::sort(recs.begin(), recs.end(), [](auto* a, auto* b) { return a->start_ns < b->start_ns; });
    // What the plan's execution makes: its own kernels and the harness's copy and fill kernels.
    const auto& expected = p.plan->plan->expected();
    if (batch.dropped > 0) s.problem = verdicts::sample_problem::dropped_records;
    const record_check rc = check_plan_records(expected, recs);
    if (rc.missing) {
      s.problem = verdicts::sample_problem::missing_record;
      raise_proof(*p.side, verdicts::proof::not_executed,
                  rc.detail + " (round: " + std::to_string(batch.kernels.size()) + " kernel records, " +
                      std::to_string(batch.external_id.size()) + " correlations, " + std::to_string(strangers.size()) +
                      " unattributed)");
      continue;
    }
    if (!rc.detail.empty()) raise_proof(*p.side, rc.proof, rc.detail);
    std::uint64_t first = UINT64_MAX, last = 0;
    std::int64_t total = 0;
    for (const kernel_record* r : recs) {
      if (r->start_ns == 0 || r->end_ns == 0 || r->end_ns < r->start_ns) s.problem = verdicts::sample_problem::zero_timestamp;
      first = std::min(first, r->start_ns);
      last = std::max(last, r->end_ns);
      total += static_cast<std::int64_t>(r->end_ns - r->start_ns);
    }
    for (const kernel_record* r : strangers) {
      if (r->start_ns < last && r->end_ns > first) {
        raise_proof(*p.side, verdicts::proof::foreign_kernel,
                    std::string(r->device_launched ? "device-launched " : "") + "kernel '" + r->name +
                        "' ran inside the sample's window");
      }
    }
    if (s.problem.empty()) {
      s.device_ns = total;
      s.kernel_ns = plan_kernel_times(expected, recs);
      if (!s.kernel_ns.empty() && p.side->kernels.empty()) {
        for (const auto& e : expected) p.side->kernels.push_back(e.entry);
      }
      m_timed_ns += static_cast<double>(total);
      // A real time, but not of the clock the figures are for: kept out of the statistics.
      if (clock_throttled(s.sm_mhz, m_max_sm_mhz, m_throttle_fraction)) s.problem = verdicts::sample_problem::clock_throttled;
    }
  }
}

void sampler::measure(const plan_under_test& ref, const plan_under_test& port, const verify::device_tensors& tensors,
                      const timing_options& opt, side_result& ref_out, side_result& port_out) {
  m_cold_l2 = opt.cold_l2;
  m_throttle_fraction = opt.throttle_fraction;
  m_max_sm_mhz = m_clock.max_sm_mhz();
  for (int i = 0; i < opt.warmup_launches; ++i) {
    run_untimed(ref, tensors);
    run_untimed(port, tensors);
  }
  auto start = std::chrono::steady_clock::now();
  auto cap = std::chrono::duration<double>(opt.time_cap_s);
  for (int round = 0;; ++round) {
    // ABBA, then BAAB: each side is sampled first as often as second.
    bool ref_first = round % 2 == 0;
    const plan_under_test* order[4] = {&ref, &port, &port, &ref};
    if (!ref_first) std::swap(order[0], order[1]), std::swap(order[2], order[3]);
    m_window.clear();
    for (const auto* p : order) take_sample(*p, tensors, p == &ref ? ref_out : port_out);
    attribute(m_window);
    auto r = median_with_ci(valid_times(ref_out));
    auto q = median_with_ci(valid_times(port_out));
    auto n = std::min(ref_out.samples.size(), port_out.samples.size());
    bool tight = r.rel_half_width <= opt.target_rel_ci && q.rel_half_width <= opt.target_rel_ci;
    bool enough = static_cast<int>(n) >= opt.min_samples;
    if ((enough && tight) || static_cast<int>(n) >= opt.max_samples ||
        (enough && std::chrono::steady_clock::now() - start > cap)) {
      break;
    }
  }
  for (side_result* side : {&ref_out, &port_out}) {
    const auto times = valid_times(*side);
    const auto stats = median_with_ci(times);
    side->median_ns = stats.median;
    side->rel_ci = stats.rel_half_width;
    if (!times.empty()) {
      side->timing = verdicts::timing::valid;
      continue;
    }
    // No valid sample: the most telling problem names the verdict.
    bool missing = false, zero = false, throttled = false;
    for (const auto& smp : side->samples) {
      missing = missing || smp.problem == verdicts::sample_problem::missing_record;
      zero = zero || smp.problem == verdicts::sample_problem::zero_timestamp;
      throttled = throttled || smp.problem == verdicts::sample_problem::clock_throttled;
    }
    side->timing = missing     ? verdicts::timing::invalid_missing_records
                   : zero      ? verdicts::timing::invalid_zero_timestamp
                   : throttled ? verdicts::timing::invalid_clock_throttled
                               : verdicts::timing::invalid_no_samples;
  }
}

}  // namespace portbench::measure
