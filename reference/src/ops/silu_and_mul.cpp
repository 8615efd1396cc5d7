// SPDX-License-Identifier: Apache-2.0
// silu_and_mul: y = silu(x[..., :H]) * x[..., H:] for x[batch, seq_len, 2H], y[batch, seq_len, H].
// Elementwise: every element is checked.
#include <vector>

#include "common.hpp"
#include "ops.hpp"
#include "unit_op.hpp"

namespace portbench::reference::detail {
namespace {

struct params {
  std::int64_t b, s, h;
  dtype type;
  explicit params(const config& c)
      : b(dim(c, "batch")), s(dim(c, "seq_len")), h(dim(c, "hidden_size")), type(float_type(c)) {
    if (c.integer_or("input_last_dim", 2 * h) != 2 * h) {
      throw spec_error(c.op + ": input_last_dim must be 2 * hidden_size");
    }
  }
};

class job final : public unit_job {
 public:
  job(const params& p, const std::vector<host_tensor>& ts) : m_p(p), m_x(find_tensor(ts, "x")) {}
  [[nodiscard]] std::int64_t units() const override { return m_p.b * m_p.s; }
  void compute(std::int64_t row, unit_values& out) const override {
    thread_local std::vector<double> x;
    x.resize(static_cast<std::size_t>(2 * m_p.h));
    m_x.read(row * 2 * m_p.h, 1, 2 * m_p.h, x.data());
    double* y = out.append(0, row * m_p.h, 1, m_p.h);
    for (std::int64_t j = 0; j < m_p.h; ++j) {
      y[j] = silu(x[static_cast<std::size_t>(j)]) * x[static_cast<std::size_t>(m_p.h + j)];
    }
  }

 private:
  params m_p;
  tensor_reader m_x;
};

class silu_and_mul final : public unit_operator {
 public:
  [[nodiscard]] std::string name() const override { return "silu_and_mul"; }
  [[nodiscard]] std::vector<tensor_spec> tensors(const config& c) const override {
    const params p(c);
    return {dense("x", p.type, {p.b, p.s, 2 * p.h}, tensor_role::in),
            dense("y", p.type, {p.b, p.s, p.h}, tensor_role::out)};
  }
  [[nodiscard]] std::vector<uniform_fill> uniform_fills(const config&) const override {
    return {
      // Both signs of the gate (silu's curved part) and an up half that is not centred on zero.
      {"x", -3.0, 5.0},
    };
  }
  [[nodiscard]] cost_model cost(const config& c) const override {
    const params p(c);
    const double n = static_cast<double>(p.b * p.s) * static_cast<double>(p.h);
    return {bytes_of(p.type, 3 * n), 5 * n};
  }

 protected:
  [[nodiscard]] std::vector<std::string> outputs(const config&) const override { return {"y"}; }
  [[nodiscard]] std::unique_ptr<unit_job> make_job(const config& c, const std::vector<host_tensor>& in) const override {
    return std::make_unique<job>(params(c), in);
  }
  [[nodiscard]] std::optional<tolerance> tolerance_for(const config&, const std::string&) const override {
    return tolerance{1e-2, 0.0};  // test_silu_and_mul.py
  }
};

}  // namespace

std::unique_ptr<operator_spec> make_silu_and_mul() { return std::make_unique<silu_and_mul>(); }

}  // namespace portbench::reference::detail
