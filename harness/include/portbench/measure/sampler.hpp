// SPDX-License-Identifier: Apache-2.0
// Paired, interleaved sampling of a reference and a port plan on the same buffers: a cold, clean
// L2 before each sample (l2_flush.hpp), ABBA order, CUPTI device time attributed by correlation
// id, CUDA event time beside it, SM clock per sample, and proof of execution for every timed
// launch.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "portbench/bundle/launcher.hpp"
#include "portbench/bundle/steps.hpp"
#include "portbench/cuda/stream.hpp"
#include "portbench/measure/cupti_tracer.hpp"
#include "portbench/measure/l2_flush.hpp"
#include "portbench/measure/output_guard.hpp"
#include "portbench/measure/sm_clock.hpp"
#include "portbench/measure/timing_checks.hpp"
#include "portbench/measure/timing_options.hpp"
#include "portbench/verdicts.hpp"
#include "portbench/verify/device_tensors.hpp"

namespace portbench::measure {

struct sample {
  std::int64_t device_ns = -1;   ///< sum of the plan's CUPTI kernel records; -1 when invalid
  std::int64_t event_ns = -1;    ///< CUDA events around the plan (includes launch gaps)
  int sm_mhz = -1;
  std::uint32_t poison = 0;
  std::uint64_t unwritten = 0;   ///< output elements still holding the poison afterwards
  std::string problem;           ///< empty when valid, else why the sample is invalid
  /// Each kernel record's time in the plan's order (side_result::kernels), summing to
  /// device_ns; empty for a plan of one kernel or when the records do not match the plan.
  std::vector<std::int64_t> kernel_ns;
};

struct side_result {
  std::vector<sample> samples;
  /// The kernels of a multi-kernel plan in order (entries, harness step kernels included):
  /// what sample::kernel_ns is of. Empty for a plan of one kernel.
  std::vector<std::string> kernels;
  std::string proof{verdicts::proof::executed};
  std::string proof_detail;
  std::string timing;
  double median_ns = 0;
  double rel_ci = 0;   ///< half-width of the median's 95% CI over the median

};

/// A plan under test; its launches say what its CUPTI records must show.
struct plan_under_test {
  const bundle::loaded_plan* plan = nullptr;
};

class sampler {
 public:
  sampler(cuda::context_ptr ctx, cupti_tracer& tracer, const sm_clock& clock, const output_guard& guard);

  /// Samples both plans on the same tensors until the CI target, the cap or max_samples.
  void measure(const plan_under_test& ref, const plan_under_test& port, const verify::device_tensors& tensors,
               const timing_options& opt, side_result& ref_out, side_result& port_out);

  /// Launches a plan once outside any sample (warm-up, numerics), attributed to the harness.
  void run_untimed(const plan_under_test& p, const verify::device_tensors& tensors) const;

  [[nodiscard]] const cuda::stream& stream() const noexcept { return m_stream; }
  /// Seconds the GPU spent inside timed samples (CUPTI), since construction.
  [[nodiscard]] double timed_device_seconds() const noexcept { return m_timed_ns * 1e-9; }

 private:
  struct pending {
    std::uint64_t id;
    side_result* side;
    const plan_under_test* plan;
    std::size_t index;
  };
  void take_sample(const plan_under_test& p, const verify::device_tensors& tensors, side_result& out);
  void attribute(const std::vector<pending>& window);

  cuda::context_ptr m_ctx;
  cupti_tracer& m_tracer;
  const sm_clock& m_clock;
  const output_guard& m_guard;
  cuda::stream m_stream;
  cuda::event m_start, m_end;
  l2_flush m_l2_flush;
  std::uint64_t m_next_id = 1;
  std::vector<pending> m_window;
  double m_timed_ns = 0;
  bool m_cold_l2 = true;
  double m_throttle_fraction = 0;
  int m_max_sm_mhz = -1;
};

/// One sample's kernel records (sorted by start) against the kernel records its plan's
/// execution makes (bundle::loaded_plan::expected(): the plan's launches and the harness's copy
/// and fill kernels, in order): fewer is NOT_EXECUTED (`missing`), more, or one whose entry
/// name or CTA grid differs, is FOREIGN_KERNEL; else EXECUTED with an empty detail.
struct record_check {
  std::string proof{verdicts::proof::executed};
  std::string detail;
  bool missing = false;
};
[[nodiscard]] record_check check_plan_records(const std::vector<bundle::expected_record>& expected,
                                              const std::vector<const kernel_record*>& recs);

/// Each record's device time where a multi-kernel plan's records match it one for one (as
/// check_plan_records pairs them, the same count); empty for a plan of one kernel or other
/// records. The per-kernel split of a sample, for finding which kernel of a plan is slow.
[[nodiscard]] std::vector<std::int64_t> plan_kernel_times(const std::vector<bundle::expected_record>& expected,
                                                          const std::vector<const kernel_record*>& recs);

}  // namespace portbench::measure
