// SPDX-License-Identifier: Apache-2.0
// softmax: row softmax over the last dimension of x[m, n] (upstream computes in fp32; the
// `variant` param picks a kernel and does not change the math). Every row is checked.
#include <cmath>

#include "common.hpp"
#include "ops.hpp"
#include "unit_op.hpp"

namespace portbench::reference::detail {
namespace {

struct params {
  std::int64_t m, n;
  dtype type;
  explicit params(const config& c) : m(dim(c, "m")), n(dim(c, "n")), type(float_type(c)) {}
};

class job final : public unit_job {
 public:
  job(const params& p, const std::vector<host_tensor>& ts) : m_p(p), m_x(find_tensor(ts, "x")) {}
  [[nodiscard]] std::int64_t units() const override { return m_p.m; }
  void compute(std::int64_t row, unit_values& out) const override {
    const std::int64_t base = row * m_p.n;
    double* y = out.append(0, base, 1, m_p.n);
    m_x.read(base, 1, m_p.n, y);
    double mx = -INFINITY;
    for (std::int64_t j = 0; j < m_p.n; ++j) mx = std::max(mx, y[j]);
    double sum = 0;
    for (std::int64_t j = 0; j < m_p.n; ++j) {
      y[j] = std::exp(y[j] - mx);
      sum += y[j];
    }
    for (std::int64_t j = 0; j < m_p.n; ++j) y[j] /= sum;
  }

 private:
  params m_p;
  tensor_reader m_x;
};

class softmax final : public unit_operator {
 public:
  [[nodiscard]] std::string name() const override { return "softmax"; }
  [[nodiscard]] std::vector<tensor_spec> tensors(const config& c) const override {
    const params p(c);
    return {dense("x", p.type, {p.m, p.n}, tensor_role::in), dense("y", p.type, {p.m, p.n}, tensor_role::out)};
  }
  [[nodiscard]] std::vector<uniform_fill> uniform_fills(const config&) const override {
    return {
      // A spread of 8 makes row maxima dominate (errors in max-subtraction or the sum show); the
      // offset of 2 means exp without max-subtraction would leave fp16 range on long rows.
      {"x", -2.0, 6.0},
    };
  }
  [[nodiscard]] cost_model cost(const config& c) const override {
    const params p(c);
    const double mn = static_cast<double>(p.m) * static_cast<double>(p.n);
    return {bytes_of(p.type, 2 * mn), 5 * mn};
  }

 protected:
  [[nodiscard]] std::vector<std::string> outputs(const config&) const override { return {"y"}; }
  [[nodiscard]] std::unique_ptr<unit_job> make_job(const config& c, const std::vector<host_tensor>& in) const override {
    return std::make_unique<job>(params(c), in);
  }
  [[nodiscard]] std::optional<tolerance> tolerance_for(const config& c, const std::string&) const override {
    switch (params(c).type) {  // test_softmax.py test_op; bench_softmax.py for bf16
      case dtype::f32: return tolerance{1e-7, 1e-5};
      case dtype::f16: return tolerance{1e-5, 1e-3};
      default: return tolerance{1e-2, 1e-2};
    }
  }
};

}  // namespace

std::unique_ptr<operator_spec> make_softmax() { return std::make_unique<softmax>(); }

}  // namespace portbench::reference::detail
