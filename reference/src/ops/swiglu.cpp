// SPDX-License-Identifier: Apache-2.0
// swiglu: c = silu(a) * b for same-shape a, b, c [batch, seq_len, hidden_size]
// (`intermediate_size` is carried by the upstream config but unused). Every element is checked.
#include <algorithm>
#include <vector>

#include "common.hpp"
#include "ops.hpp"
#include "unit_op.hpp"

namespace portbench::reference::detail {
namespace {

constexpr std::int64_t chunk = 1 << 14;

struct params {
  std::int64_t b, s, h;
  dtype type;
  explicit params(const config& c)
      : b(dim(c, "batch")), s(dim(c, "seq_len")), h(dim(c, "hidden_size")), type(float_type(c)) {}
  [[nodiscard]] std::int64_t n() const { return b * s * h; }
};

class job final : public unit_job {
 public:
  job(const params& p, const std::vector<host_tensor>& ts)
      : m_n(p.n()), m_a(find_tensor(ts, "a")), m_b(find_tensor(ts, "b")) {}
  [[nodiscard]] std::int64_t units() const override { return (m_n + chunk - 1) / chunk; }
  void compute(std::int64_t u, unit_values& out) const override {
    const std::int64_t begin = u * chunk;
    const std::int64_t count = std::min(chunk, m_n - begin);
    thread_local std::vector<double> b;
    b.resize(static_cast<std::size_t>(count));
    double* c = out.append(0, begin, 1, count);
    m_a.read(begin, 1, count, c);
    m_b.read(begin, 1, count, b.data());
    for (std::int64_t i = 0; i < count; ++i) c[i] = silu(c[i]) * b[static_cast<std::size_t>(i)];
  }

 private:
  std::int64_t m_n;
  tensor_reader m_a, m_b;
};

class swiglu final : public unit_operator {
 public:
  [[nodiscard]] std::string name() const override { return "swiglu"; }
  [[nodiscard]] std::vector<tensor_spec> tensors(const config& c) const override {
    const params p(c);
    return {dense("a", p.type, {p.b, p.s, p.h}, tensor_role::in), dense("b", p.type, {p.b, p.s, p.h}, tensor_role::in),
            dense("c", p.type, {p.b, p.s, p.h}, tensor_role::out)};
  }
  [[nodiscard]] std::vector<uniform_fill> uniform_fills(const config&) const override {
    return {
      {"a", -3.0, 5.0},
      {"b", -1.0, 2.0},
    };
  }
  [[nodiscard]] cost_model cost(const config& c) const override {
    const auto n = static_cast<double>(params(c).n());
    return {bytes_of(params(c).type, 3 * n), 5 * n};
  }

 protected:
  [[nodiscard]] std::vector<std::string> outputs(const config&) const override { return {"c"}; }
  [[nodiscard]] std::unique_ptr<unit_job> make_job(const config& c, const std::vector<host_tensor>& in) const override {
    return std::make_unique<job>(params(c), in);
  }
  [[nodiscard]] std::optional<tolerance> tolerance_for(const config&, const std::string&) const override {
    return tolerance{1e-2, 1e-2};  // test_swiglu.py
  }
};

}  // namespace

std::unique_ptr<operator_spec> make_swiglu() { return std::make_unique<swiglu>(); }

}  // namespace portbench::reference::detail
