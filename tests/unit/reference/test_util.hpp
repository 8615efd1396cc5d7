// SPDX-License-Identifier: Apache-2.0
// Helpers for the reference tests: logical reads of tensors, the generic "reference vs an
// independent implementation" check, and perturbation.
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "portbench/reference/compare.hpp"
#include "portbench/reference/spec.hpp"
#include "portbench/reference/tensor_access.hpp"
#include "portbench/reference/tolerance.hpp"

namespace pb_test {

namespace pr = portbench::reference;

/// Builds a config from {key, value} pairs.
inline pr::config cfg(std::string op, std::map<std::string, pr::param_value> p) {
  return pr::config{std::move(op), std::move(p)};
}
inline pr::param_value I(std::int64_t v) { return v; }
inline pr::param_value S(const char* v) { return std::string(v); }

/// All elements of a tensor in logical row-major order (follows strides).
inline std::vector<double> logical(const pr::host_tensor& t) {
  const auto& s = t.spec;
  std::vector<double> out;
  out.reserve(static_cast<std::size_t>(s.elements()));
  std::vector<std::int64_t> idx(s.shape.size(), 0);
  for (std::int64_t k = 0; k < s.elements(); ++k) {
    out.push_back(pr::load_element(t.bytes.data(), s.type, s.storage_index(idx)));
    for (std::size_t d = idx.size(); d-- > 0;) {
      if (++idx[d] < s.shape[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

/// Verifies, with the seed, and returns the reports.
inline std::vector<pr::compare_report> verify(const pr::operator_spec& op, const pr::config& c,
                                              const std::vector<pr::host_tensor>& ts, std::uint64_t seed,
                                              double sample_scale = 1.0) {
  pr::verify_options o;
  o.seed = seed;
  o.threads = 2;
  o.sample_scale = sample_scale;
  return op.verify(c, ts, o);
}

/// The operator's write_reference must agree with `expected` (logical order per output, fp64
/// from an independent implementation) to within rounding in the output dtype; verify() must
/// then pass it against itself; a perturbed copy must fail.
inline void check_against_independent(const pr::config& c, std::uint64_t seed,
                                      const std::function<std::map<std::string, std::vector<double>>(
                                          const std::vector<pr::host_tensor>&)>& independent,
                                      double slack_ulps = 2.0) {
  const auto& op = pr::find_operator(c.op);
  auto ts = pr::make_inputs(op, c, seed);
  const auto expected = independent(ts);
  op.write_reference(c, ts, 2);
  for (const auto& [name, want] : expected) {
    const auto& t = pr::find_tensor(ts, name);
    const auto got = logical(t);
    ASSERT_EQ(got.size(), want.size()) << name;
    double scale = 0;
    for (double w : want) scale = std::max(scale, std::abs(w));
    ASSERT_GT(scale, 0.0) << name << ": all-zero reference";
    const double eps = pr::is_floating(t.spec.type) ? pr::machine_epsilon(t.spec.type) : 0.0;
    for (std::size_t i = 0; i < want.size(); ++i) {
      const double tol = slack_ulps * eps * (std::abs(want[i]) + 1e-3 * scale) + pr::min_subnormal(t.spec.type);
      ASSERT_NEAR(got[i], want[i], tol) << c.id() << " " << name << "[" << i << "]";
    }
  }
  // The rounded reference passes against fp64 alone (within rounding), and every output is
  // checked.
  const auto reports = verify(op, c, ts, seed);
  ASSERT_FALSE(reports.empty());
  for (const auto& r : reports) {
    EXPECT_GT(r.checked, 0) << r.tensor << " " << r.note;
    EXPECT_EQ(r.nonfinite, 0) << r.tensor;
    if (r.method != "exact" && r.method != "keep_ratio") {
      EXPECT_LE(r.max_norm_err, 1.0) << r.tensor;
    }
  }
  EXPECT_EQ(pr::judge_all(reports, {}).verdict, "PASS") << pr::judge_all(reports, {}).reason;
}

}  // namespace pb_test

namespace portbench::reference {
// Readable test names in gtest output instead of a byte dump.
inline void PrintTo(const config& c, std::ostream* os) { *os << c.id(); }
}  // namespace portbench::reference
