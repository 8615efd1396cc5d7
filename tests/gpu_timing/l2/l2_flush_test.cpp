// SPDX-License-Identifier: Apache-2.0
// The sampler's L2 flush (measure/l2_flush.hpp), timed with CUPTI as the sampler times kernels:
// - cold: a buffer a quarter of the L2's size, read again after the flush, reads slower than
//   when it was just read (it comes from DRAM, not L2);
// - clean: a read of the L2's size after the flush is faster than after overwriting a buffer of
//   twice the L2 (the old flush), whose dirty lines that read must write back.
// Needs a quiet GPU (label gpu-timing); skips, with the reason, where there is no device.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "portbench/cuda/context.hpp"
#include "portbench/cuda/cupti.hpp"
#include "portbench/cuda/driver.hpp"
#include "portbench/cuda/error.hpp"
#include "portbench/cuda/memory.hpp"
#include "portbench/cuda/module.hpp"
#include "portbench/cuda/nvrtc.hpp"
#include "portbench/cuda/stream.hpp"
#include "portbench/measure/cupti_tracer.hpp"
#include "portbench/measure/l2_flush.hpp"

namespace pc = portbench::cuda;
namespace pm = portbench::measure;

namespace {

constexpr const char* k_read = R"(
extern "C" __global__ void test_read(const uint4* buf, unsigned long long n, unsigned int* sink) {
  unsigned int acc = 0;
  for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
       i += (unsigned long long)gridDim.x * blockDim.x) {
    const uint4 v = buf[i];
    acc += v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x9E3779B9u) *sink = acc;
}
)";

constexpr std::uint64_t k_harness = 0, k_timed = 1;
constexpr int k_reps = 9;

class L2Flush : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (!pc::device_available(&why)) GTEST_SKIP() << "no CUDA device: " << why;
    // CUPTI before anything is loaded or launched: earlier launches leave no records.
    tracer.emplace(pc::load_cupti());
    ctx = pc::context::open(0);
    stream.emplace(ctx);
    const auto& info = ctx->info();
    module = pc::module::load(
        ctx, pc::compile_to_cubin(k_read, "test_read.cu", "sm_" + std::to_string(info.cc_major) + std::to_string(info.cc_minor)),
        "test_read (NVRTC)");
    read.emplace(module, "test_read");
    sink = pc::device_buffer(ctx, sizeof(unsigned));
    sink.fill_u32(0);
  }

  void launch_read(const pc::device_buffer& b) const {
    CUdeviceptr buf = b.address(), out = sink.address();
    unsigned long long n = b.size() / 16;
    void* args[] = {&buf, &n, &out};
    const unsigned blocks = static_cast<unsigned>(ctx->info().sm_count) * 8;
    PB_CU(ctx->api().cuLaunchKernel(read->native(), blocks, 1, 1, 256, 1, 1, 0, stream->native(), args, nullptr));
  }

  /// Median CUPTI device time (us) of reading `b`, each time right after `before`.
  double read_us(const pc::device_buffer& b, const std::function<void()>& before) {
    for (int i = 0; i < k_reps; ++i) {
      tracer->push(k_harness);
      before();
      tracer->pop();
      tracer->push(k_timed);
      launch_read(b);
      tracer->pop();
    }
    stream->synchronize();
    const pm::trace_batch batch = tracer->flush_and_take();
    std::vector<double> us;
    for (const auto& r : batch.kernels) {
      auto ext = batch.external_id.find(r.correlation_id);
      if (ext != batch.external_id.end() && ext->second == k_timed && r.end_ns > r.start_ns) {
        us.push_back(static_cast<double>(r.end_ns - r.start_ns) / 1e3);
      }
    }
    EXPECT_EQ(us.size(), static_cast<std::size_t>(k_reps)) << "CUPTI records of the timed reads";
    if (us.empty()) return 0;
    std::sort(us.begin(), us.end());
    return us[us.size() / 2];
  }

  std::optional<pm::cupti_tracer> tracer;
  pc::context_ptr ctx;
  std::optional<pc::stream> stream;
  std::shared_ptr<const pc::module> module;
  std::optional<pc::kernel> read;
  pc::device_buffer sink;
};

TEST_F(L2Flush, LeavesTheL2ColdAndClean) {
  const auto l2 = static_cast<std::size_t>(ctx->info().l2_bytes);
  ASSERT_GT(l2, 0u);
  pm::l2_flush flush(ctx);
  EXPECT_EQ(flush.bytes(), 2 * l2);
  pc::device_buffer quarter(ctx, l2 / 4), whole(ctx, l2), old_flush(ctx, 2 * l2);
  quarter.fill_u32(0x3C003C00u);
  whole.fill_u32(0x40004000u);

  const double warm = read_us(quarter, [&] { launch_read(quarter); });
  const double cold = read_us(quarter, [&] { flush.enqueue(*stream); });
  const double after_clean = read_us(whole, [&] { flush.enqueue(*stream); });
  const double after_dirty = read_us(whole, [&] {
    PB_CU(ctx->api().cuMemsetD32Async(old_flush.address(), 7u, old_flush.size() / 4, stream->native()));
  });
  std::printf("L2 %.1f MiB: read of %.1f MiB warm %.2f us, after the flush %.2f us; read of %.1f MiB after the flush "
              "%.2f us, after overwriting twice the L2 %.2f us\n",
              l2 / 1048576.0, l2 / 4 / 1048576.0, warm, cold, l2 / 1048576.0, after_clean, after_dirty);
  RecordProperty("warm_us", std::to_string(warm));
  RecordProperty("cold_us", std::to_string(cold));
  RecordProperty("after_clean_us", std::to_string(after_clean));
  RecordProperty("after_dirty_us", std::to_string(after_dirty));
  EXPECT_GT(cold, 1.2 * warm) << "after the flush the buffer must come from DRAM";
  EXPECT_LT(after_clean, 0.9 * after_dirty) << "the flush must leave no dirty lines for the timed kernel";
}

}  // namespace
