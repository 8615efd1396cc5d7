// SPDX-License-Identifier: Apache-2.0
// The registry and the contract every operator keeps: tensors from a config, seeded inputs that
// are not all zero and differ by seed, a positive cost, and verify() reporting every output.
#include <gtest/gtest.h>

#include <algorithm>

#include "portbench/reference/tolerance.hpp"
#include "test_util.hpp"

namespace pr = portbench::reference;
using pb_test::cfg;
using pb_test::I;
using pb_test::S;

TEST(registry, unknown_operator_is_a_spec_error) {
  EXPECT_THROW((void)pr::find_operator("no_such_op"), pr::spec_error);
  try {
    (void)pr::find_operator("no_such_op");
  } catch (const pr::spec_error& e) {
    EXPECT_NE(std::string(e.what()).find("no_such_op"), std::string::npos);
  }
}

TEST(registry, smoke_operators_exist) {
  const auto names = pr::operator_names();
  EXPECT_NE(std::find(names.begin(), names.end(), "vector_add"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "rms_norm"), names.end());
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
}

TEST(registry, smoke_suite_tensors) {
  const auto& va = pr::find_operator("vector_add");
  const auto ts = va.tensors(cfg("vector_add", {{"n", I(1000003)}, {"dtype", S("float32")}}));
  ASSERT_EQ(ts.size(), 3U);
  EXPECT_EQ(ts[0].name, "x");
  EXPECT_EQ(ts[1].name, "y");
  EXPECT_EQ(ts[2].name, "out");
  EXPECT_EQ(ts[2].role, pr::tensor_role::out);
  EXPECT_EQ(ts[2].shape, (std::vector<std::int64_t>{1000003}));
  const auto& rn = pr::find_operator("rms_norm");
  const auto rt = rn.tensors(cfg("rms_norm", {{"m", I(333)}, {"n", I(768)}, {"dtype", S("bfloat16")}}));
  ASSERT_EQ(rt.size(), 3U);
  EXPECT_EQ(rt[0].name, "x");
  EXPECT_EQ(rt[0].shape, (std::vector<std::int64_t>{333, 768}));
  EXPECT_EQ(rt[0].type, pr::dtype::bf16);
  EXPECT_EQ(rt[1].name, "w");
  EXPECT_EQ(rt[2].name, "y");
  EXPECT_THROW((void)rn.tensors(cfg("rms_norm", {{"m", I(4)}, {"dtype", S("float16")}})), pr::spec_error);
  EXPECT_THROW((void)rn.tensors(cfg("rms_norm", {{"m", I(4)}, {"n", I(4)}, {"dtype", S("float99")}})),
               pr::spec_error);
}
