// SPDX-License-Identifier: Apache-2.0
// The tolerance model's verdicts (see tolerance.hpp for the rule).
#include <cstdio>
#include <map>
#include <utility>

#include "portbench/reference/tolerance.hpp"

namespace portbench::reference {
namespace {

std::string fmt(const char* f, double a, double b) {
  char buf[160];
  std::snprintf(buf, sizeof buf, f, a, b);
  return buf;
}

bool is_exact_method(const std::string& method) {
  return method == "exact" || method == "keep_ratio";
}

judgement make(std::string_view v, std::string reason) { return {std::string(v), std::move(reason)}; }

}  // namespace

tolerance_model tolerance_model::for_dtype(dtype t) noexcept {
  tolerance_model m;
  switch (t) {
    case dtype::f32:
      // fp32 outputs carry the kernel's own approximations (exp2, rsqrt, reduction order) in
      // units far finer than a half-precision ulp: a few ulps of fp32 are noise, not a defect.
      m.max_floor = 16;
      m.rms_floor = 4;
      break;
    case dtype::f8e4m3:
    case dtype::f8e5m2:
      // One fp8 ulp is 2^-3 or 2^-2 of the value: one rounding step either way is all a
      // correct kernel differs by.
      m.max_floor = 2;
      m.rms_floor = 1;
      break;
    default:
      break;
  }
  return m;
}

judgement judge_rounding(const compare_report& port) {
  const std::string who = port.tensor + (port.method.empty() ? "" : " [" + port.method + "]");
  if (port.checked == 0) return make(verdicts::not_checked, who + ": nothing checked. " + port.note);
  if (port.beyond_rounding == 0) {
    std::string why = who + ": every checked element within upstream atol/rtol";
    if (port.bad > 0) {
      why += " or within one " + std::string(to_string(port.type)) + " ulp plus accumulation roundoff of the fp64 value (" +
             std::to_string(port.bad) + " outside upstream atol/rtol by rounding alone";
      if (port.within_accumulation_only > 0) {
        why += "; " + std::to_string(port.within_accumulation_only) +
               " of them only within the product sum's accumulation bound, accumulation_eps * sum|a b|";
      }
      why += ")";
    }
    return make(verdicts::pass, why);
  }
  return make(verdicts::fail, who + ": " + std::to_string(port.beyond_rounding) + " of " + std::to_string(port.checked) +
                                  " beyond upstream atol/rtol and beyond the output's rounding" +
                                  fmt(" (max abs %.3g, max rel %.3g)", port.max_abs_err, port.max_rel_err) +
                                  "; first outside upstream tolerance at " + std::to_string(port.first_bad_index));
}

judgement judge_upstream(const compare_report& port) {
  if (port.checked == 0) return make(verdicts::not_checked, port.tensor + ": nothing checked. " + port.note);
  if (port.bad == 0) return make(verdicts::pass, port.tensor + ": all checked elements within upstream atol/rtol");
  return make(verdicts::fail, port.tensor + ": " + std::to_string(port.bad) + " of " +
                                  std::to_string(port.checked) + " outside upstream atol/rtol" +
                                  fmt(" (max abs %.3g, max rel %.3g)", port.max_abs_err, port.max_rel_err));
}

judgement judge_report(const compare_report& port, const compare_report& ref, dtype type,
                       const tolerance_model& m) {
  (void)type;
  const std::string who = port.tensor + (port.method.empty() ? "" : " [" + port.method + "]");
  if (port.checked == 0) return make(verdicts::not_checked, who + ": nothing checked. " + port.note);
  if (port.nonfinite > 0) {
    return make(verdicts::fail, who + ": " + std::to_string(port.nonfinite) +
                                    " NaN/inf where the fp64 reference is finite (first at " +
                                    std::to_string(port.first_bad_index) + ")");
  }
  if (is_exact_method(port.method)) {
    if (port.bad == 0) return make(verdicts::pass, who + ": exact check passed");
    return make(verdicts::fail, who + ": " + std::to_string(port.bad) + " of " +
                                    std::to_string(port.checked) + " failed the exact check (first at " +
                                    std::to_string(port.first_bad_index) + ")");
  }
  if (ref.checked == 0) {
    auto j = judge_rounding(port);
    j.reason += " (no reference front-end report: judged against fp64 alone)";
    return j;
  }
  const double allowed_max = std::max(m.max_ratio * ref.max_norm_err, m.max_floor);
  const double allowed_rms = std::max(m.rms_ratio * ref.rms_norm_err, m.rms_floor);
  const bool ok_max = port.max_norm_err <= allowed_max;
  const bool ok_rms = port.rms_norm_err <= allowed_rms;
  std::string detail = fmt(": max err %.3g (allowed %.3g", port.max_norm_err, allowed_max) +
                       fmt("), rms err %.3g (allowed %.3g)", port.rms_norm_err, allowed_rms) +
                       fmt(" in eps units; reference front end %.3g / %.3g", ref.max_norm_err,
                           ref.rms_norm_err);
  if (ref.checked != port.checked) detail += "; warning: the two reports checked different counts";
  if (ok_max && ok_rms) return make(verdicts::pass, who + detail);
  return make(verdicts::fail, who + detail + (port.first_bad_index >= 0
                                                  ? "; first element outside upstream tolerance at " +
                                                        std::to_string(port.first_bad_index)
                                                  : std::string()));
}

judgement judge_report(const compare_report& port, const compare_report& ref) {
  return judge_report(port, ref, port.type, tolerance_model::for_dtype(port.type));
}

std::string judge(const compare_report& port, const compare_report& ref, dtype type) {
  return judge_report(port, ref, type, tolerance_model::for_dtype(type)).verdict;
}

judgement judge_all(const std::vector<compare_report>& port, const std::vector<compare_report>& ref) {
  if (port.empty()) return make(verdicts::not_checked, "no output reports");
  std::map<std::pair<std::string, std::string>, const compare_report*> by_key;
  for (const auto& r : ref) by_key[{r.tensor, r.method}] = &r;
  const compare_report none{};
  judgement worst = make(verdicts::pass, "");
  int rank = 0;  // 0 pass, 1 not checked, 2 fail
  std::string reasons;
  for (const auto& p : port) {
    const auto it = by_key.find({p.tensor, p.method});
    const auto j = judge_report(p, it == by_key.end() ? none : *it->second);
    const int r = j.verdict == verdicts::fail ? 2 : j.verdict == verdicts::not_checked ? 1 : 0;
    if (r > rank) rank = r;
    if (!reasons.empty()) reasons += " | ";
    reasons += j.verdict + " " + j.reason;
  }
  worst.verdict = std::string(rank == 2 ? verdicts::fail : rank == 1 ? verdicts::not_checked : verdicts::pass);
  worst.reason = reasons;
  return worst;
}

}  // namespace portbench::reference
