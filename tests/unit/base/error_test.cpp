// SPDX-License-Identifier: Apache-2.0
// The one error base: every error type derives from portbench::error and carries what failed
// (code, call, file:line, file/field), while its one-line message keeps its documented form.
#include <gtest/gtest.h>

#include <string>

#include "portbench/bundle/error.hpp"
#include "portbench/cuda/cupti.hpp"
#include "portbench/cuda/error.hpp"
#include "portbench/cuda/nvrtc.hpp"
#include "portbench/error.hpp"
#include "portbench/reference/spec.hpp"
#include "portbench/store/error.hpp"

namespace pb = portbench;

namespace {

template <typename E, typename... Args>
pb::error caught(Args&&... args) {
  try {
    throw E(std::forward<Args>(args)...);
  } catch (const pb::error& e) {
    return e;
  }
}

TEST(ErrorBase, CudaErrorKeepsCodeCallAndWhere) {
  const int line = __LINE__ + 2;
  try {
    PB_CU(CUDA_ERROR_ILLEGAL_ADDRESS);
    FAIL() << "PB_CU did not throw";
  } catch (const pb::error& e) {
    EXPECT_EQ(e.code(), 700);
    EXPECT_EQ(e.code_name(), "CUDA_ERROR_ILLEGAL_ADDRESS");
    EXPECT_EQ(e.call(), "CUDA_ERROR_ILLEGAL_ADDRESS");
    EXPECT_EQ(e.where().str(), "error_test.cpp:" + std::to_string(line));
    EXPECT_EQ(std::string(e.what()),
              "CUDA_ERROR_ILLEGAL_ADDRESS: CUDA_ERROR_ILLEGAL_ADDRESS (700) [error_test.cpp:" +
                  std::to_string(line) + "]");
    const auto* cuda = dynamic_cast<const pb::cuda::cuda_error*>(&e);
    ASSERT_NE(cuda, nullptr);
    EXPECT_TRUE(cuda->is_sticky());
  }
}

TEST(ErrorBase, CuptiAndNvrtcErrorsKeepTheirCodes) {
  auto cupti = caught<pb::cuda::cupti_error>(CUPTI_ERROR_UNKNOWN, "cuptiActivityEnable", "CUPTI_ERROR_UNKNOWN");
  EXPECT_EQ(cupti.code(), 999);
  EXPECT_EQ(cupti.call(), "cuptiActivityEnable");
  EXPECT_NE(std::string(cupti.what()).find("cuptiActivityEnable: CUPTI error 999 (CUPTI_ERROR_UNKNOWN)"),
            std::string::npos) << cupti.what();
  auto nvrtc = caught<pb::cuda::nvrtc_error>(NVRTC_ERROR_COMPILATION, "nvrtcCompileProgram", "log");
  EXPECT_EQ(nvrtc.code(), static_cast<long long>(NVRTC_ERROR_COMPILATION));
  EXPECT_EQ(nvrtc.call(), "nvrtcCompileProgram");
}

TEST(ErrorBase, InputErrorsNameFileAndField) {
  auto b = caught<pb::bundle::bundle_error>("b/manifest.json", "configs[0].grid", "expected 3 positive integers");
  EXPECT_EQ(std::string(b.what()), "b/manifest.json: configs[0].grid: expected 3 positive integers");
  EXPECT_EQ(b.file(), "b/manifest.json");
  EXPECT_EQ(b.field(), "configs[0].grid");
  auto old_form = caught<pb::bundle::bundle_error>("b/manifest.json", "schema: missing field");
  EXPECT_EQ(std::string(old_form.what()), "b/manifest.json: schema: missing field");
  EXPECT_EQ(old_form.file(), "b/manifest.json");
  auto s = caught<pb::store::store_error>("run.h5", "cannot open:\nno such file");
  EXPECT_EQ(std::string(s.what()), "run.h5: cannot open: no such file") << "one line";
  EXPECT_EQ(s.file(), "run.h5");
  auto spec = caught<pb::reference::spec_error>("rms_norm: parameter 'm' is required");
  EXPECT_EQ(std::string(spec.what()), "rms_norm: parameter 'm' is required");
  EXPECT_FALSE(spec.where().str().empty());
  auto in = caught<pb::input_error>("s.json", "", "cannot open");
  EXPECT_EQ(std::string(in.what()), "s.json: cannot open");
}

}  // namespace
