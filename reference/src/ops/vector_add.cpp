// SPDX-License-Identifier: Apache-2.0
// vector_add: out = x + y over n elements (the harness's smoke operator). Every element checked.
#include <algorithm>
#include <vector>

#include "common.hpp"
#include "ops.hpp"
#include "unit_op.hpp"

namespace portbench::reference::detail {
namespace {

constexpr std::int64_t chunk = 1 << 16;

class job final : public unit_job {
 public:
  job(const std::vector<host_tensor>& ts, std::int64_t n)
      : m_x(find_tensor(ts, "x")), m_y(find_tensor(ts, "y")), m_n(n) {}
  [[nodiscard]] std::int64_t units() const override { return (m_n + chunk - 1) / chunk; }
  void compute(std::int64_t u, unit_values& out) const override {
    const std::int64_t begin = u * chunk;
    const std::int64_t count = std::min(chunk, m_n - begin);
    thread_local std::vector<double> y;
    y.resize(static_cast<std::size_t>(count));
    double* w = out.append(0, begin, 1, count);
    m_x.read(begin, 1, count, w);
    m_y.read(begin, 1, count, y.data());
    for (std::int64_t i = 0; i < count; ++i) w[i] += y[static_cast<std::size_t>(i)];
  }

 private:
  tensor_reader m_x, m_y;
  std::int64_t m_n;
};

class vector_add final : public unit_operator {
 public:
  [[nodiscard]] std::string name() const override { return "vector_add"; }
  [[nodiscard]] std::vector<tensor_spec> tensors(const config& c) const override {
    const std::int64_t n = dim(c, "n");
    const dtype t = float_type(c);
    return {dense("x", t, {n}, tensor_role::in), dense("y", t, {n}, tensor_role::in),
            dense("out", t, {n}, tensor_role::out)};
  }
  [[nodiscard]] std::vector<uniform_fill> uniform_fills(const config&) const override {
    return {
      // Means 0.5 and 0.25: the sum is not centred on zero, so a dropped operand shows.
      {"x", -1.0, 2.0},
      {"y", -0.5, 1.0},
    };
  }
  [[nodiscard]] cost_model cost(const config& c) const override {
    const auto n = static_cast<double>(dim(c, "n"));
    return {bytes_of(float_type(c), 3 * n), n};
  }

 protected:
  [[nodiscard]] std::vector<std::string> outputs(const config&) const override { return {"out"}; }
  [[nodiscard]] std::unique_ptr<unit_job> make_job(const config& c, const std::vector<host_tensor>& in) const override {
    return std::make_unique<job>(in, dim(c, "n"));
  }
};

}  // namespace

std::unique_ptr<operator_spec> make_vector_add() { return std::make_unique<vector_add>(); }

}  // namespace portbench::reference::detail
