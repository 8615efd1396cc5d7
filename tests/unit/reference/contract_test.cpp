// SPDX-License-Identifier: Apache-2.0
// The contract every operator keeps, on a small config of each: inputs seeded and not all zero,
// positive cost, the written reference passes verify() and judge_all(), and a single corrupted
// output element makes the verdict FAIL (the tests can fail).
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "portbench/reference/random.hpp"
#include "portbench/reference/tolerance.hpp"
#include "small_configs.hpp"

namespace pr = portbench::reference;

namespace {

class contract : public ::testing::TestWithParam<pr::config> {};

std::string name_of(const ::testing::TestParamInfo<pr::config>& info) {
  return info.param.op + "_" + std::to_string(info.index);
}

}  // namespace

TEST(contract_list, covers_every_operator) {
  std::set<std::string> covered;
  for (const auto& c : pb_test::small_configs()) covered.insert(pr::find_operator(c.op).name());
  for (const auto& n : pr::operator_names()) EXPECT_TRUE(covered.count(n)) << n;
  EXPECT_EQ(pr::operator_names().size(), 25U);  // the 24 TileGym operators plus vector_add
}

TEST_P(contract, inputs_cost_reference_and_corruption) {
  const pr::config& c = GetParam();
  const auto& op = pr::find_operator(c.op);
  const auto specs = op.tensors(c);
  ASSERT_FALSE(specs.empty());
  const auto cost = op.cost(c);
  EXPECT_GT(cost.bytes_moved, 0);
  EXPECT_GT(cost.flops, 0);

  auto ts = pr::make_inputs(op, c, 11);
  const auto again = pr::make_inputs(op, c, 11);
  const auto other = pr::make_inputs(op, c, 12);
  bool any_differs = false;
  for (std::size_t i = 0; i < ts.size(); ++i) {
    if (ts[i].spec.role == pr::tensor_role::out) continue;
    EXPECT_EQ(ts[i].bytes, again[i].bytes) << ts[i].spec.name;
    any_differs = any_differs || ts[i].bytes != other[i].bytes;
    const auto v = pb_test::logical(ts[i]);
    std::size_t zeros = 0;
    for (double x : v) zeros += x == 0.0;
    EXPECT_LT(zeros, v.size()) << ts[i].spec.name << " is all zeros";
  }
  EXPECT_TRUE(any_differs);

  op.write_reference(c, ts, 2);
  const auto ref = pb_test::verify(op, c, ts, 11);
  ASSERT_FALSE(ref.empty());
  const auto ok = pr::judge_all(ref, {});
  EXPECT_EQ(ok.verdict, "PASS") << ok.reason;

  // Corrupt one element of the first output (an id for integer outputs, a value otherwise).
  for (auto& t : ts) {
    if (t.spec.role == pr::tensor_role::in) continue;
    const std::int64_t idx = t.spec.storage_elements / 2;
    const double v = pr::load_element(t.bytes.data(), t.spec.type, idx);
    const double bad = pr::is_floating(t.spec.type) ? v + 0.5 * (std::abs(v) + 1.0) : v + 1;
    if (c.op == "dropout") {
      pr::store_element(t.bytes.data(), t.spec.type, idx, v == 0 ? 3.0 : v * 0.5);
    } else {
      pr::store_element(t.bytes.data(), t.spec.type, idx, bad);
    }
    break;
  }
  const auto port = pb_test::verify(op, c, ts, 11);
  const auto j = pr::judge_all(port, ref);
  EXPECT_EQ(j.verdict, "FAIL") << j.reason;
}

// The split the worker uses when it generates the declared fills on the device: the undeclared
// inputs from the host plus the declared fills applied on their own make exactly make_inputs'
// bytes, and every declared fill names a distinct input.
TEST_P(contract, declared_fills_and_the_undeclared_rest_make_the_same_inputs) {
  const pr::config& c = GetParam();
  const auto& op = pr::find_operator(c.op);
  const auto whole = pr::make_inputs(op, c, 21);
  auto split = pr::make_undeclared_inputs(op, c, 21);
  ASSERT_EQ(split.size(), whole.size());
  std::set<std::string> declared;
  for (const auto& f : op.uniform_fills(c)) {
    EXPECT_TRUE(declared.insert(f.tensor).second) << f.tensor << " is declared twice";
    EXPECT_LT(f.lo, f.hi) << f.tensor;
    auto& t = pr::find_tensor(split, f.tensor);
    EXPECT_NE(t.spec.role, pr::tensor_role::out) << f.tensor;
    EXPECT_TRUE(t.bytes.empty()) << f.tensor << " is declared, so the host leaves it to the device";
    t.bytes.resize(t.spec.storage_bytes());
    pr::fill_uniform(t, 21, f.lo, f.hi);
  }
  for (std::size_t i = 0; i < whole.size(); ++i) {
    if (whole[i].spec.role == pr::tensor_role::out) continue;
    EXPECT_EQ(split[i].bytes, whole[i].bytes) << whole[i].spec.name;
  }
}

INSTANTIATE_TEST_SUITE_P(all, contract, ::testing::ValuesIn(pb_test::small_configs()), name_of);
