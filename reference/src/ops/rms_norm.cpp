// SPDX-License-Identifier: Apache-2.0
// rms_norm: y = x * rsqrt(mean(x^2) + eps) * (offset + w) per row of x[m, n] (Llama: offset 0;
// Gemma3: offset 1). Upstream accumulates in fp32; the reference is fp64. Every row is checked:
// the reference costs one pass over x.
#include <cmath>
#include <vector>

#include "common.hpp"
#include "ops.hpp"
#include "unit_op.hpp"

namespace portbench::reference::detail {
namespace {

struct params {
  std::int64_t m, n;
  dtype type;
  double eps, offset;
  explicit params(const config& c)
      : m(dim(c, "m")), n(dim(c, "n")), type(float_type(c)), eps(c.real_or("eps", 1e-5)),
        offset(c.real_or("offset", 0.0)) {}
};

class job final : public unit_job {
 public:
  job(const params& p, const std::vector<host_tensor>& ts)
      : m_p(p), m_x(find_tensor(ts, "x")), m_w(static_cast<std::size_t>(p.n)) {
    tensor_reader(find_tensor(ts, "w")).read(0, 1, p.n, m_w.data());
  }
  [[nodiscard]] std::int64_t units() const override { return m_p.m; }
  void compute(std::int64_t row, unit_values& out) const override {
    const std::int64_t base = row * m_p.n;
    double* y = out.append(0, base, 1, m_p.n);
    m_x.read(base, 1, m_p.n, y);  // x first, scaled in place
    double ss = 0;
    for (std::int64_t j = 0; j < m_p.n; ++j) ss += y[j] * y[j];
    const double r = 1.0 / std::sqrt(ss / static_cast<double>(m_p.n) + m_p.eps);
    for (std::int64_t j = 0; j < m_p.n; ++j) y[j] *= r * (m_p.offset + m_w[static_cast<std::size_t>(j)]);
  }

 private:
  params m_p;
  tensor_reader m_x;
  std::vector<double> m_w;
};

class rms_norm final : public unit_operator {
 public:
  [[nodiscard]] std::string name() const override { return "rms_norm"; }
  [[nodiscard]] std::vector<tensor_spec> tensors(const config& c) const override {
    const params p(c);
    return {dense("x", p.type, {p.m, p.n}, tensor_role::in), dense("w", p.type, {p.n}, tensor_role::in),
            dense("y", p.type, {p.m, p.n}, tensor_role::out)};
  }
  [[nodiscard]] std::vector<uniform_fill> uniform_fills(const config&) const override {
    return {
      // Mean 0.5 keeps rows far from zero rms; w around 1 but not 1, so a dropped weight shows.
      {"x", -1.0, 2.0},
      {"w", 0.5, 1.5},
    };
  }
  [[nodiscard]] cost_model cost(const config& c) const override {
    const params p(c);
    const double mn = static_cast<double>(p.m) * static_cast<double>(p.n);
    return {bytes_of(p.type, 2 * mn + static_cast<double>(p.n)), 4 * mn};
  }

 protected:
  [[nodiscard]] std::vector<std::string> outputs(const config&) const override { return {"y"}; }
  [[nodiscard]] std::unique_ptr<unit_job> make_job(const config& c, const std::vector<host_tensor>& in) const override {
    return std::make_unique<job>(params(c), in);
  }
  [[nodiscard]] std::optional<tolerance> tolerance_for(const config&, const std::string&) const override {
    return tolerance{5e-2, 0.0};  // test_rms_norm.py: atol 5e-2, rtol 0
  }
};

}  // namespace

std::unique_ptr<operator_spec> make_rms_norm() { return std::make_unique<rms_norm>(); }

}  // namespace portbench::reference::detail
