// SPDX-License-Identifier: Apache-2.0
// The tolerance model: a port's error against fp64 is judged relative to the reference front
// end's own error on the same inputs and the same checked elements, with a floor per dtype
// expressed in units of the output's epsilon (see compare_report::max_norm_err).
//
//   allowed_max = max(max_ratio * ref.max_norm_err, max_floor)
//   allowed_rms = max(rms_ratio * ref.rms_norm_err, rms_floor)
//   PASS  iff port.checked > 0, port.nonfinite == 0, port.max_norm_err <= allowed_max and
//         port.rms_norm_err <= allowed_rms
//
// Without a reference front-end report (the reference itself, or `check` of one bundle) an
// output is judged against fp64 alone by judge_rounding: upstream atol/rtol or the output
// dtype's rounding, element by element.
//
// Exact checks (integer outputs, dropout's keep ratio) pass iff bad == 0. Verdicts are literal
// strings; nothing checked is NOT_CHECKED, never a pass.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "portbench/reference/spec.hpp"
#include "portbench/verdicts.hpp"

namespace portbench::reference {

/// The numerics literals (portbench/verdicts.hpp) under the name this part has always used.
namespace verdicts = ::portbench::verdicts::numerics;

struct tolerance_model {
  double max_ratio = 4.0;   ///< port max error may be this many times the reference's
  double rms_ratio = 2.0;   ///< port rms error may be this many times the reference's
  double max_floor = 4.0;   ///< always allowed: 4 units (about 4 ulps, 8 half-ulps of rounding)
  double rms_floor = 1.0;   ///< always allowed on the rms

  /// The model for an output dtype: fp32 allows 16 units (its ulps are far finer than the
  /// approximations a correct kernel makes), fp8 2 (one ulp is a large step), others 4.
  [[nodiscard]] static tolerance_model for_dtype(dtype t) noexcept;
};

struct judgement {
  std::string verdict;   ///< "PASS", "FAIL" or "NOT_CHECKED"
  std::string reason;    ///< one line a person can act on
};

/// Judges one output of a port against the reference front end's report for the same output.
/// A `reference` with checked == 0 (reference front end absent) falls back to judge_upstream.
[[nodiscard]] judgement judge_report(const compare_report& port, const compare_report& reference,
                                     dtype type, const tolerance_model& model);
[[nodiscard]] judgement judge_report(const compare_report& port, const compare_report& reference);
/// The verdict literal only.
[[nodiscard]] std::string judge(const compare_report& port, const compare_report& reference, dtype type);
/// The upstream allclose criterion alone: PASS iff checked > 0 and bad == 0.
[[nodiscard]] judgement judge_upstream(const compare_report& port);
/// An output judged against fp64 alone (no reference front end ran, or it is the reference):
/// PASS iff something was checked and every element is within upstream atol/rtol or within
/// what rounding explains (compare_report::beyond_rounding == 0). Upstream's tolerances are set
/// against torch's result in the same dtype, not against fp64; a correct fp16 product can be
/// a full ulp from fp64 and outside a tight rtol, while a flipped bit is not rounding.
[[nodiscard]] judgement judge_rounding(const compare_report& port);
/// All outputs of one configuration: reports are paired by (tensor, method). FAIL if any fails;
/// NOT_CHECKED if any output was not checked (or the list is empty); otherwise PASS.
[[nodiscard]] judgement judge_all(const std::vector<compare_report>& port,
                                  const std::vector<compare_report>& reference);

}  // namespace portbench::reference
