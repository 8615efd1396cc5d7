// SPDX-License-Identifier: Apache-2.0
// layer_norm_legacy and persistent_layer_norm (param `variant`): y = (x - mean) / sqrt(var + eps)
// * (w + weight_shift) + b over the last dimension of x[m, n], biased variance. The persistent
// variant also returns mean and rstd in fp32. Every row is checked.
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
  bool persistent;
  double eps, shift;
  params(const config& c, bool persistent_default)
      : m(dim(c, "m")), n(dim(c, "n")), type(float_type(c)),
        persistent(c.text_or("variant", persistent_default ? "persistent_layer_norm" : "layer_norm_legacy") ==
                   "persistent_layer_norm"),
        eps(c.real_or("eps", persistent ? 1e-6 : 1e-5)), shift(c.real_or("weight_shift", 0.0)) {
    const auto v = c.text_or("variant", "layer_norm_legacy");
    if (v != "layer_norm_legacy" && v != "persistent_layer_norm") {
      throw spec_error(c.op + ": variant must be layer_norm_legacy or persistent_layer_norm, not '" + v + "'");
    }
  }
};

class job final : public unit_job {
 public:
  job(const params& p, const std::vector<host_tensor>& ts)
      : m_p(p), m_x(find_tensor(ts, "x")), m_w(static_cast<std::size_t>(p.n)), m_b(static_cast<std::size_t>(p.n)) {
    tensor_reader(find_tensor(ts, "w")).read(0, 1, p.n, m_w.data());
    tensor_reader(find_tensor(ts, "b")).read(0, 1, p.n, m_b.data());
  }
  [[nodiscard]] std::int64_t units() const override { return m_p.m; }
  void compute(std::int64_t row, unit_values& out) const override {
    const std::int64_t base = row * m_p.n;
    const auto n = static_cast<double>(m_p.n);
    double* y = out.append(0, base, 1, m_p.n);
    m_x.read(base, 1, m_p.n, y);
    double mean = 0;
    for (std::int64_t j = 0; j < m_p.n; ++j) mean += y[j];
    mean /= n;
    double var = 0;
    for (std::int64_t j = 0; j < m_p.n; ++j) var += (y[j] - mean) * (y[j] - mean);
    const double rstd = 1.0 / std::sqrt(var / n + m_p.eps);
    for (std::int64_t j = 0; j < m_p.n; ++j) {
      const auto sj = static_cast<std::size_t>(j);
      y[j] = (y[j] - mean) * rstd * (m_w[sj] + m_p.shift) + m_b[sj];
    }
    if (m_p.persistent) {
      out.put(1, row, mean);
      out.put(2, row, rstd);
    }
  }

 private:
  params m_p;
  tensor_reader m_x;
  std::vector<double> m_w, m_b;
};

class layer_norm final : public unit_operator {
 public:
  explicit layer_norm(bool persistent_default) : m_persistent_default(persistent_default) {}
  [[nodiscard]] std::string name() const override {
    return m_persistent_default ? "persistent_layer_norm" : "layer_norm_legacy";
  }
  [[nodiscard]] std::vector<tensor_spec> tensors(const config& c) const override {
    const params p(c, m_persistent_default);
    std::vector<tensor_spec> ts{dense("x", p.type, {p.m, p.n}, tensor_role::in),
                                dense("w", p.type, {p.n}, tensor_role::in),
                                dense("b", p.type, {p.n}, tensor_role::in),
                                dense("y", p.type, {p.m, p.n}, tensor_role::out)};
    if (p.persistent) {
      ts.push_back(dense("mean", dtype::f32, {p.m}, tensor_role::out));
      ts.push_back(dense("rstd", dtype::f32, {p.m}, tensor_role::out));
    }
    return ts;
  }
  [[nodiscard]] std::vector<uniform_fill> uniform_fills(const config&) const override {
    return {
      // Rows with mean about 1: a kernel that skips the mean subtraction is far off.
      {"x", -1.0, 3.0},
      {"w", 0.5, 1.5},
      {"b", -0.25, 0.75},
    };
  }
  [[nodiscard]] cost_model cost(const config& c) const override {
    const params p(c, m_persistent_default);
    const double mn = static_cast<double>(p.m) * static_cast<double>(p.n);
    double bytes = bytes_of(p.type, 2 * mn + 2 * static_cast<double>(p.n));
    if (p.persistent) bytes += 8.0 * static_cast<double>(p.m);
    return {bytes, 7 * mn};
  }

 protected:
  [[nodiscard]] std::vector<std::string> outputs(const config& c) const override {
    if (params(c, m_persistent_default).persistent) return {"y", "mean", "rstd"};
    return {"y"};
  }
  [[nodiscard]] std::unique_ptr<unit_job> make_job(const config& c, const std::vector<host_tensor>& in) const override {
    return std::make_unique<job>(params(c, m_persistent_default), in);
  }
  [[nodiscard]] std::optional<tolerance> tolerance_for(const config& c, const std::string&) const override {
    // test_layer_norm_legacy.py: legacy 1e-2 / 0; persistent 1e-2 / 1e-2 on y, mean and rstd.
    if (params(c, m_persistent_default).persistent) return tolerance{1e-2, 1e-2};
    return tolerance{1e-2, 0.0};
  }

 private:
  bool m_persistent_default;
};

}  // namespace

std::unique_ptr<operator_spec> make_layer_norm(bool persistent_default) {
  return std::make_unique<layer_norm>(persistent_default);
}

}  // namespace portbench::reference::detail
