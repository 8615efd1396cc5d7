// SPDX-License-Identifier: Apache-2.0
// The device input generator compiles (NVRTC, sm_90) to one kernel per dtype taking one
// by-value struct, with nothing spilled. That it writes the host's bytes is tested on the GPU
// (tests/gpu/launch/input_generator_test.cpp).
#include <gtest/gtest.h>

#include "portbench/bundle/cubin.hpp"
#include "portbench/cuda/nvrtc.hpp"
#include "portbench/verify/input_generator.hpp"
#include "nvrtc_support.hpp"

namespace pb = portbench::bundle;
namespace pr = portbench::reference;
namespace pv = portbench::verify;

TEST(InputGenerator, EveryDtypeCompilesToAKernelOfOneStructParameter) {
  std::string why;
  if (!portbench::testing::load_nvrtc(why)) GTEST_SKIP() << "no NVRTC: " << why;
  const auto image = portbench::cuda::compile_to_cubin(pv::input_generator_source(), "portbench_inputs.cu", "sm_90");
  const auto info = pb::inspect_cubin(image, "portbench input generator (NVRTC)");
  EXPECT_EQ(info.sm, 90);
  const pr::dtype all[] = {pr::dtype::f64, pr::dtype::f32, pr::dtype::f16, pr::dtype::bf16,
                           pr::dtype::f8e4m3, pr::dtype::f8e5m2, pr::dtype::i64, pr::dtype::i32,
                           pr::dtype::i16, pr::dtype::i8, pr::dtype::u8, pr::dtype::boolean};
  EXPECT_EQ(info.entries.size(), std::size(all));
  for (auto t : all) {
    const auto* e = info.find(pv::input_generator_entry(t));
    ASSERT_NE(e, nullptr) << pv::input_generator_entry(t);
    ASSERT_EQ(e->params.size(), 1u) << e->name;
    EXPECT_EQ(e->params[0].size, static_cast<int>(pv::input_generator_param_bytes())) << e->name;
    EXPECT_EQ(e->frame_bytes, 0) << e->name << " spills to local memory";
  }
}
