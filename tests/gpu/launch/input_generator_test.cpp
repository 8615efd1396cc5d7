// SPDX-License-Identifier: Apache-2.0
// The device input generator writes exactly the host's bytes (reference::fill_uniform) for every
// dtype, including the ranges where rounding is delicate (narrow-float subnormals, overflow to
// inf or NaN, integer saturation); the device digest of what it wrote equals host_digest of the
// host's bytes; and a generated in-place input is restored from its pristine copy.
#include <gtest/gtest.h>

#include <vector>

#include "device_fixture.hpp"
#include "portbench/cuda/driver.hpp"
#include "portbench/cuda/error.hpp"
#include "portbench/cuda/memory.hpp"
#include "portbench/cuda/stream.hpp"
#include "portbench/reference/random.hpp"
#include "portbench/verify/device_tensors.hpp"
#include "portbench/verify/input_generator.hpp"
#include "portbench/verify/output_digest.hpp"

namespace pc = portbench::cuda;
namespace pr = portbench::reference;
namespace pv = portbench::verify;

namespace {

using InputGenerator = portbench::testing::device_test;

pr::host_tensor tensor_of(const std::string& name, pr::dtype t, std::int64_t n) {
  pr::host_tensor h;
  h.spec = pr::make_tensor(name, t, {n}, pr::tensor_role::in);
  h.bytes.resize(h.spec.storage_bytes());
  return h;
}

}  // namespace

TEST_F(InputGenerator, EveryDtypeAndRangeGivesTheHostsBytes) {
  const pv::input_generator gen(ctx);
  const pv::output_digest digest(ctx);
  const pc::stream s(ctx);
  const pr::dtype all[] = {pr::dtype::f64, pr::dtype::f32, pr::dtype::f16, pr::dtype::bf16,
                           pr::dtype::f8e4m3, pr::dtype::f8e5m2, pr::dtype::i64, pr::dtype::i32,
                           pr::dtype::i16, pr::dtype::i8, pr::dtype::u8, pr::dtype::boolean};
  struct range {
    double lo, hi;
  };
  // The operators' ranges, a range of narrow subnormals, one past fp16's and e4m3's largest
  // finite values, and one past every small integer type's limits.
  const range ranges[] = {{-1.0, 1.5}, {0.125, 2.0}, {-1e-6, 1e-6}, {-1e5, 7e4}, {-300.0, 700.0}, {0.0, 2.0}};
  const std::int64_t n = (std::int64_t{3} << 20) + 77;   // not a multiple of a block or a word
  std::uint64_t seed = 40;
  for (auto t : all) {
    for (const auto& r : ranges) {
      SCOPED_TRACE(std::string(pr::to_string(t)) + " [" + std::to_string(r.lo) + ", " + std::to_string(r.hi) + ")");
      auto host = tensor_of("x" + std::to_string(seed), t, n);
      pr::fill_uniform(host, ++seed, r.lo, r.hi);
      pc::device_buffer buf(ctx, host.bytes.size());
      buf.fill_u32(0xDEADBEEFu);
      gen.enqueue(s, {buf.address(), t, n, pr::stream_key(seed, host.spec.name), r.lo, r.hi});
      s.synchronize();
      std::vector<std::byte> got(host.bytes.size());
      buf.download(got);
      std::size_t first = 0;
      while (first < got.size() && got[first] == host.bytes[first]) ++first;
      EXPECT_EQ(first, got.size()) << "first differing byte " << first;
      const std::string dev = digest.of(s, {{host.spec.name, buf.address(), host.bytes.size(), 1}});
      EXPECT_EQ(dev, pv::host_digest(host.spec.name, host.bytes));
    }
  }
}

TEST_F(InputGenerator, AGeneratedInPlaceInputIsRestoredBeforeEachNumericsLaunch) {
  pr::config c;
  c.op = "rope";
  c.params = {{"bsz", std::int64_t{2}}, {"seq_len", std::int64_t{64}}, {"num_q_heads", std::int64_t{4}},
              {"num_kv_heads", std::int64_t{2}}, {"head_dim", std::int64_t{64}}, {"dtype", std::string("float16")}};
  const auto& op = pr::find_operator(c.op);
  const auto whole = pr::make_inputs(op, c, 17);
  const auto split = pr::make_undeclared_inputs(op, c, 17);
  const pv::input_generator gen(ctx);
  const pv::device_tensors dev(ctx, split, {}, pv::generated_inputs{gen, op.uniform_fills(c), 17});
  const auto& q = dev.tensors().at("q");
  const auto& want = pr::find_tensor(whole, "q").bytes;
  std::vector<std::byte> got(want.size());
  PB_CU(ctx->api().cuMemcpyDtoH(got.data(), q.address, got.size()));
  EXPECT_EQ(got, want) << "generated as the host makes it";
  PB_CU(ctx->api().cuMemsetD8(q.address, 0x3C, got.size()));   // a kernel wrote q in place
  dev.poison_outputs(0xFFFFFFFFu, split);
  PB_CU(ctx->api().cuMemcpyDtoH(got.data(), q.address, got.size()));
  EXPECT_EQ(got, want) << "restored from the pristine copy";
  // cos and sin are not declared fills: uploaded from the host.
  const auto& cs = pr::find_tensor(whole, "cos").bytes;
  std::vector<std::byte> cos_dev(cs.size());
  PB_CU(ctx->api().cuMemcpyDtoH(cos_dev.data(), dev.tensors().at("cos").address, cos_dev.size()));
  EXPECT_EQ(cos_dev, cs);
  EXPECT_EQ(dev.generated().size(), 2u);
}
