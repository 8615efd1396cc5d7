// SPDX-License-Identifier: Apache-2.0
// The fixture of tests that need a CUDA device: a context on device 0, or a visible skip naming
// why there is none (this CPU machine, CI).
#pragma once
#include <gtest/gtest.h>

#include <string>

#include "portbench/cuda/context.hpp"
#include "portbench/cuda/driver.hpp"

namespace portbench::testing {

class device_test : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (!cuda::device_available(&why)) GTEST_SKIP() << "no CUDA device: " << why;
    ctx = cuda::context::open(0);
  }
  cuda::context_ptr ctx;
};

}  // namespace portbench::testing
