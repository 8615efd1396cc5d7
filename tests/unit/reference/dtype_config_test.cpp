// SPDX-License-Identifier: Apache-2.0
// dtype names and constants; configuration parameters and ids.
#include <gtest/gtest.h>

#include <cmath>

#include "portbench/reference/config.hpp"
#include "portbench/reference/dtype.hpp"
#include "portbench/reference/spec.hpp"

namespace pr = portbench::reference;

TEST(dtype, parses_torch_and_canonical_names) {
  EXPECT_EQ(pr::parse_dtype("float16"), pr::dtype::f16);
  EXPECT_EQ(pr::parse_dtype("fp16"), pr::dtype::f16);
  EXPECT_EQ(pr::parse_dtype("bfloat16"), pr::dtype::bf16);
  EXPECT_EQ(pr::parse_dtype("float32"), pr::dtype::f32);
  EXPECT_EQ(pr::parse_dtype("float8_e4m3fn"), pr::dtype::f8e4m3);
  EXPECT_EQ(pr::parse_dtype("float8_e5m2"), pr::dtype::f8e5m2);
  EXPECT_EQ(pr::parse_dtype("torch.int32"), pr::dtype::i32);
  EXPECT_FALSE(pr::parse_dtype("float17").has_value());
  for (int i = 0; i <= static_cast<int>(pr::dtype::boolean); ++i) {
    const auto t = static_cast<pr::dtype>(i);
    EXPECT_EQ(pr::parse_dtype(pr::to_string(t)), t);
    EXPECT_EQ(pr::parse_dtype(pr::torch_name(t)), t);
  }
}

TEST(dtype, constants) {
  EXPECT_EQ(pr::size_of(pr::dtype::bf16), 2U);
  EXPECT_EQ(pr::size_of(pr::dtype::f8e5m2), 1U);
  EXPECT_EQ(pr::machine_epsilon(pr::dtype::f16), std::ldexp(1.0, -10));
  EXPECT_EQ(pr::min_subnormal(pr::dtype::f16), std::ldexp(1.0, -24));
  EXPECT_EQ(pr::min_subnormal(pr::dtype::f8e4m3), std::ldexp(1.0, -9));
  EXPECT_EQ(pr::max_finite(pr::dtype::f8e4m3), 448.0);
  EXPECT_TRUE(pr::is_floating(pr::dtype::bf16));
  EXPECT_FALSE(pr::is_floating(pr::dtype::i32));
}

TEST(config, typed_access_and_errors) {
  pr::config c{"rms_norm", {{"m", std::int64_t{4}}, {"eps", 1e-5}, {"dtype", std::string("float16")},
                            {"flag", true}, {"window", std::monostate{}}}};
  EXPECT_EQ(c.integer("m"), 4);
  EXPECT_EQ(c.real("m"), 4.0);
  EXPECT_EQ(c.real("eps"), 1e-5);
  EXPECT_EQ(c.type("dtype"), pr::dtype::f16);
  EXPECT_TRUE(c.flag("flag", false));
  EXPECT_TRUE(c.is_null("window"));
  EXPECT_EQ(c.integer_or("window", 7), 7);
  EXPECT_EQ(c.integer_or("absent", 3), 3);
  EXPECT_THROW((void)c.integer("absent"), pr::spec_error);
  EXPECT_THROW((void)c.text("m"), pr::spec_error);
  try {
    (void)c.integer("nope");
  } catch (const pr::spec_error& e) {
    EXPECT_NE(std::string(e.what()).find("rms_norm"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("nope"), std::string::npos);
  }
}

TEST(config, id_is_sorted_and_stable) {
  pr::config a{"op", {{"n", std::int64_t{2}}, {"m", std::int64_t{1}}, {"eps", 1e-5}, {"w", std::monostate{}}}};
  EXPECT_EQ(a.id(), "op/eps=1e-05,m=1,n=2,w=None");
  pr::config b = a;
  b.params["eps"] = 0.00001;
  EXPECT_EQ(a.id(), b.id());
  b.params["eps"] = 1e-6;
  EXPECT_NE(a.id(), b.id());
}

TEST(tensor_spec, strides_and_views) {
  const auto t = pr::make_tensor("x", pr::dtype::f16, {2, 3, 4}, pr::tensor_role::in);
  EXPECT_EQ(t.strides, (std::vector<std::int64_t>{12, 4, 1}));
  EXPECT_EQ(t.storage_bytes(), 48U);
  EXPECT_TRUE(t.is_contiguous());
  pr::tensor_spec v = t;
  v.shape = {2, 4, 3};  // a transposed view
  v.strides = {12, 1, 4};
  EXPECT_FALSE(v.is_contiguous());
  const std::int64_t idx[] = {1, 2, 1};
  EXPECT_EQ(v.storage_index(idx), 12 + 2 + 4);
}
