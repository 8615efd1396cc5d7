// SPDX-License-Identifier: Apache-2.0
// The harness's step kernels on the device: every copy between two element types converts each
// element exactly as the host reference does (floats from their exact value, rounded to nearest
// even once; integers truncated or wrapped), through strided views of rank 1 to 6, on the 32-bit
// and the 64-bit index paths, and writes nothing outside its view; fills (each a fill kernel) and scratch inits (memset or upload) set
// every element of their view and nothing else. Skips (visibly) without a CUDA device.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <map>
#include <random>

#include "device_fixture.hpp"
#include "portbench/bundle/launcher.hpp"
#include "portbench/bundle/step_kernels.hpp"
#include "portbench/bundle/steps.hpp"
#include "portbench/cuda/driver.hpp"
#include "portbench/cuda/error.hpp"
#include "portbench/cuda/memory.hpp"
#include "portbench/cuda/stream.hpp"
#include "portbench/reference/half.hpp"

namespace pb = portbench::bundle;
namespace pc = portbench::cuda;
namespace pr = portbench::reference;

namespace {

using et = pb::element_type;
const std::vector<et> k_all{et::f64, et::f32, et::f16, et::bf16, et::i64, et::i32,
                            et::i16, et::i8,  et::u64, et::u32, et::u16,  et::u8};

bool is_unsigned(et t) { return t == et::u64 || t == et::u32 || t == et::u16 || t == et::u8; }

std::uint64_t load_bits(const std::vector<std::byte>& buf, std::int64_t i, et t) {
  std::uint64_t b = 0;
  std::memcpy(&b, buf.data() + i * pb::size_of(t), pb::size_of(t));
  return b;
}
void store_bits(std::vector<std::byte>& buf, std::int64_t i, et t, std::uint64_t b) {
  std::memcpy(buf.data() + i * pb::size_of(t), &b, pb::size_of(t));
}

// The exact value of an element: a double for floats, an integer for integers.
struct value {
  bool integer = false;
  std::int64_t i = 0;
  double d = 0;
};

value decode(et t, std::uint64_t b) {
  switch (t) {
    case et::f64: return {false, 0, std::bit_cast<double>(b)};
    case et::f32: return {false, 0, std::bit_cast<float>(static_cast<std::uint32_t>(b))};
    case et::f16: return {false, 0, pr::fp16_to_double(static_cast<std::uint16_t>(b))};
    case et::bf16: return {false, 0, pr::bf16_to_double(static_cast<std::uint16_t>(b))};
    case et::i64: case et::u64: return {true, static_cast<std::int64_t>(b), 0};
    case et::i32: return {true, static_cast<std::int32_t>(b), 0};
    case et::i16: return {true, static_cast<std::int16_t>(b), 0};
    case et::i8: return {true, static_cast<std::int8_t>(b), 0};
    case et::u32: return {true, static_cast<std::uint32_t>(b), 0};
    case et::u16: return {true, static_cast<std::uint16_t>(b), 0};
    case et::u8: return {true, static_cast<std::uint8_t>(b), 0};
  }
  return {};
}

// What a copy must write: C++ conversion semantics with one rounding from the exact value.
std::uint64_t convert(et s, et d, std::uint64_t bits) {
  if (s == d) return bits;
  const value v = decode(s, bits);
  if (pb::is_floating(d)) {
    const double x = v.integer ? static_cast<double>(v.i) : v.d;
    switch (d) {
      case et::f64: return std::bit_cast<std::uint64_t>(x);
      case et::f32: return std::bit_cast<std::uint32_t>(static_cast<float>(x));
      case et::f16: return pr::fp16_from_double(x);
      default: return pr::bf16_from_double(x);
    }
  }
  const std::int64_t i = v.integer ? v.i : static_cast<std::int64_t>(std::trunc(v.d));
  const std::size_t bytes = pb::size_of(d);
  return bytes == 8 ? static_cast<std::uint64_t>(i) : static_cast<std::uint64_t>(i) & ((std::uint64_t{1} << (8 * bytes)) - 1);
}

// Random element bits: values in [-100, 100) (in [0, 200) where either side is unsigned, so
// no conversion leaves its type's range), never all zero.
std::uint64_t random_bits(et t, bool non_negative, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> real(non_negative ? 0.0 : -100.0, non_negative ? 200.0 : 100.0);
  std::uniform_int_distribution<int> whole(non_negative ? 0 : -100, non_negative ? 199 : 99);
  switch (t) {
    case et::f64: return std::bit_cast<std::uint64_t>(real(rng));
    case et::f32: return std::bit_cast<std::uint32_t>(static_cast<float>(real(rng)));
    case et::f16: return pr::fp16_from_double(real(rng));
    case et::bf16: return pr::bf16_from_double(real(rng));
    default: {
      const std::int64_t i = whole(rng);
      const std::size_t bytes = pb::size_of(t);
      return bytes == 8 ? static_cast<std::uint64_t>(i) : static_cast<std::uint64_t>(i) & ((std::uint64_t{1} << (8 * bytes)) - 1);
    }
  }
}

using Steps = portbench::testing::device_test;

struct layout {
  std::vector<std::int64_t> shape, src_strides, dst_strides;
  std::int64_t src_offset = 0, dst_offset = 0;
};

std::int64_t span(const std::vector<std::int64_t>& shape, const std::vector<std::int64_t>& strides, std::int64_t offset) {
  std::int64_t last = offset;
  for (std::size_t k = 0; k < shape.size(); ++k) last += (shape[k] - 1) * strides[k];
  return last + 1;
}

// Copies through `l` for every type pair and compares every element of the destination
// buffer: the view's elements converted, the rest untouched.
void check_all_pairs(const pc::context_ptr& ctx, const pb::step_kernels& kernels, const layout& l) {
  pc::stream s(ctx);
  std::mt19937_64 rng(42);
  const std::int64_t src_elems = span(l.shape, l.src_strides, l.src_offset);
  const std::int64_t dst_elems = span(l.shape, l.dst_strides, l.dst_offset);
  for (et st : k_all) {
    for (et dt : k_all) {
      SCOPED_TRACE(pb::copy_entry(st, dt));
      const bool non_negative = is_unsigned(st) || is_unsigned(dt);
      std::vector<std::byte> src(src_elems * pb::size_of(st)), dst(dst_elems * pb::size_of(dt), std::byte{0xAB});
      for (std::int64_t i = 0; i < src_elems; ++i) store_bits(src, i, st, random_bits(st, non_negative, rng));
      pc::device_buffer dsrc(ctx, src.size()), ddst(ctx, dst.size());
      dsrc.upload(src);
      ddst.upload(dst);
      const pb::view_spec sv{"", "a", st, l.src_offset, l.shape, l.src_strides};
      const pb::view_spec dv{"", "b", dt, l.dst_offset, l.shape, l.dst_strides};
      const std::vector<pb::scratch_spec> specs{{"a", src.size(), false, std::nullopt}, {"b", dst.size(), false, std::nullopt}};
      const pb::scratch_bindings sb{{{"a", dsrc.address()}, {"b", ddst.address()}}, {}};
      kernels.copy(s, pb::bind_copy({sv, dv}, {}, sb, specs, "test"));
      s.synchronize();
      std::vector<std::byte> got(dst.size());
      ddst.download(got);
      auto want = dst;
      std::vector<std::int64_t> idx(l.shape.size(), 0);
      const std::int64_t n = sv.elements();
      for (std::int64_t e = 0; e < n; ++e) {
        std::int64_t so = l.src_offset, dof = l.dst_offset;
        for (std::size_t k = 0; k < idx.size(); ++k) {
          so += idx[k] * l.src_strides[k];
          dof += idx[k] * l.dst_strides[k];
        }
        store_bits(want, dof, dt, convert(st, dt, load_bits(src, so, st)));
        for (std::size_t k = idx.size(); k-- > 0;) {
          if (++idx[k] < l.shape[k]) break;
          idx[k] = 0;
        }
      }
      std::int64_t bad = 0, first = -1;
      for (std::int64_t i = 0; i < dst_elems; ++i) {
        if (load_bits(got, i, dt) != load_bits(want, i, dt)) {
          if (first < 0) first = i;
          ++bad;
        }
      }
      EXPECT_EQ(bad, 0) << "first at element " << first << ": got " << std::hex << load_bits(got, first, dt) << ", want "
                        << load_bits(want, first, dt);
    }
  }
}

pb::step_kernel_set all_kernels() {
  pb::step_kernel_set set;
  for (et s : k_all) {
    for (et d : k_all) set.copies.emplace_back(s, d);
  }
  set.fill_sizes = {1, 2, 4, 8};
  return set;
}

TEST_F(Steps, CopiesConvertEveryElementThroughStridedViews) {
  const pb::step_kernels kernels(ctx, all_kernels());
  // A transpose of [B,S,H,D] storage to [B,H,S,D] (attention_sink's q, k, v), into a buffer
  // with an offset and a gap after every row.
  check_all_pairs(ctx, kernels, {{3, 5, 7, 64}, {7 * 5 * 64, 64, 5 * 64, 1}, {5 * 7 * 80, 7 * 80, 80, 1}, 0, 11});
  // Rank 6 with size-1 axes and a reversed inner order; and a rank-1 gathering stride.
  check_all_pairs(ctx, kernels, {{2, 1, 3, 4, 1, 5}, {1, 7, 2, 6, 9, 24}, {60, 60, 20, 5, 5, 1}, 3, 0});
  check_all_pairs(ctx, kernels, {{1000}, {3}, {1}, 2, 0});
}

TEST_F(Steps, CopiesBeyondThe32BitIndexRangeTakeTheWidePath) {
  // Rows 2^31 + 16 elements apart: offsets past int32, so the kernel indexes with 64 bits.
  const pb::step_kernels kernels(ctx, all_kernels());
  const std::int64_t row = (std::int64_t{1} << 31) + 16;
  pc::device_buffer src(ctx, static_cast<std::size_t>(row + 64)), dst(ctx, 2 * 64 * 4);
  std::vector<std::byte> host(64, std::byte{0});
  for (int i = 0; i < 64; ++i) host[i] = static_cast<std::byte>(i + 1);
  PB_CU(ctx->api().cuMemcpyHtoD(src.address(), host.data(), 64));
  for (int i = 0; i < 64; ++i) host[i] = static_cast<std::byte>(200 - i);
  PB_CU(ctx->api().cuMemcpyHtoD(src.address() + row, host.data(), 64));
  const pb::view_spec sv{"", "a", et::u8, 0, {2, 64}, {row, 1}};
  const pb::view_spec dv{"", "b", et::f32, 0, {2, 64}, {64, 1}};
  const std::vector<pb::scratch_spec> specs{{"a", src.size(), false, std::nullopt}, {"b", dst.size(), false, std::nullopt}};
  pc::stream s(ctx);
  kernels.copy(s, pb::bind_copy({sv, dv}, {}, pb::scratch_bindings{{{"a", src.address()}, {"b", dst.address()}}, {}}, specs, "test"));
  s.synchronize();
  std::vector<std::byte> got(dst.size());
  dst.download(got);
  for (int i = 0; i < 64; ++i) {
    float a, b;
    std::memcpy(&a, got.data() + 4 * i, 4);
    std::memcpy(&b, got.data() + 4 * (64 + i), 4);
    EXPECT_EQ(a, static_cast<float>(i + 1)) << i;
    EXPECT_EQ(b, static_cast<float>(200 - i)) << i;
  }
}

TEST_F(Steps, ScratchInitsAndFillKernelsSetTheirViewAndNothingElse) {
  // A plan of steps alone, as the launcher runs them: scratch inits (a memset, an upload), then
  // fill steps in order, each a harness fill kernel.
  pb::config_plan plan;
  plan.config.op = "vector_add";
  constexpr std::int64_t n = 4096;
  plan.scratch = {{"i32", 4 * n, false, pb::make_fill_value(et::i32, std::int64_t{1144})},
                  {"f64", 8 * n, false, pb::make_fill_value(et::f64, 2.5)},
                  {"h", 2 * n, false, std::nullopt}};
  auto fill = [](const char* buf, et t, std::int64_t offset, std::vector<std::int64_t> shape,
                 std::vector<std::int64_t> strides, std::variant<std::int64_t, double> v) {
    pb::plan_step st;
    st.kind = pb::step_kind::fill;
    st.fill.target = {"", buf, t, offset, std::move(shape), std::move(strides)};
    st.fill.value = pb::make_fill_value(t, v);
    return st;
  };
  plan.steps = {fill("h", et::f16, 0, {n}, {1}, -1.0),                  // dense
                fill("h", et::f16, 5, {10, 20}, {300, 2}, 0.5),         // strided
                fill("i32", et::i32, 100, {8, 16}, {16, 1}, std::int64_t{-7})};   // part of a buffer
  for (std::size_t i = 0; i < plan.steps.size(); ++i) plan.steps[i].index = i;
  pb::bundle none;
  const pb::loaded_plan loaded(ctx, none, plan);
  const auto& expected = loaded.expected();
  // The inits (i32: a D32 memset; f64 2.5, whose words differ: an upload) make no record.
  ASSERT_EQ(expected.size(), 3u);
  EXPECT_EQ(expected[0].entry, "portbench_fill_16");
  EXPECT_EQ(expected[1].entry, "portbench_fill_16");
  EXPECT_EQ(expected[2].entry, "portbench_fill_32");
  std::map<std::string, pc::device_buffer> bufs;
  pb::scratch_bindings sb;
  for (const auto& sc : plan.scratch) {
    auto& b = bufs.emplace(sc.name, pc::device_buffer(ctx, sc.bytes)).first->second;
    b.fill_u32(0xA5A5A5A5u);
    sb.buffers[sc.name] = b.address();
  }
  pc::stream s(ctx);
  loaded.enqueue(s, {}, sb);
  s.synchronize();
  auto get = [&](const char* name) {
    std::vector<std::byte> v(bufs.at(name).size());
    bufs.at(name).download(v);
    return v;
  };
  const auto i32 = get("i32"), f64 = get("f64"), h = get("h");
  for (std::int64_t i = 0; i < n; ++i) {
    const bool in = i >= 100 && i < 100 + 128;
    EXPECT_EQ(load_bits(i32, i, et::i32), in ? 0xFFFFFFF9u : 1144u) << i;
    EXPECT_EQ(load_bits(f64, i, et::f64), std::bit_cast<std::uint64_t>(2.5)) << i;
  }
  std::vector<std::uint64_t> want(n, 0xBC00u);   // -1.0 in fp16
  for (int r = 0; r < 10; ++r) {
    for (int c = 0; c < 20; ++c) want[5 + 300 * r + 2 * c] = 0x3800u;   // 0.5
  }
  for (std::int64_t i = 0; i < n; ++i) EXPECT_EQ(load_bits(h, i, et::f16), want[i]) << i;
}

// ---- sums --------------------------------------------------------------------------------

struct sum_case {
  const char* name;
  et src_type, dst_type;
  std::int64_t src_offset;
  std::vector<std::int64_t> src_shape, src_strides;
  std::size_t axis;
  std::int64_t dst_offset;
  std::vector<std::int64_t> dst_strides;
};

// What a sum step must write at every dst element: acc = x_0, acc += x_j in index order in the
// accumulator type (fp64 where either side is f64, fp32 for other floats, int64 for integers),
// rounded once to dst's type.
void host_sum(const sum_case& c, const std::vector<std::byte>& src, std::vector<std::byte>& dst) {
  const auto dshape = pb::sum_result_shape(c.src_shape, c.axis);
  std::vector<std::int64_t> outer_strides;
  for (std::size_t k = 0; k < c.src_strides.size(); ++k) {
    if (k != c.axis) outer_strides.push_back(c.src_strides[k]);
  }
  if (outer_strides.empty()) outer_strides.push_back(0);
  const et acc = pb::sum_accumulator(c.src_type, c.dst_type);
  std::vector<std::int64_t> idx(dshape.size(), 0);
  std::int64_t n = 1;
  for (auto e : dshape) n *= e;
  for (std::int64_t e = 0; e < n; ++e) {
    std::int64_t so = c.src_offset, dof = c.dst_offset;
    for (std::size_t k = 0; k < idx.size(); ++k) {
      so += idx[k] * outer_strides[k];
      dof += idx[k] * c.dst_strides[k];
    }
    double d = 0;
    float f = 0;
    std::int64_t i = 0;
    for (std::int64_t j = 0; j < c.src_shape[c.axis]; ++j) {
      const value v = decode(c.src_type, load_bits(src, so + j * c.src_strides[c.axis], c.src_type));
      if (acc == et::f64) d = j == 0 ? v.d : d + v.d;
      else if (acc == et::f32) f = j == 0 ? static_cast<float>(v.d) : f + static_cast<float>(v.d);   // exact widening
      else i = j == 0 ? v.i : static_cast<std::int64_t>(static_cast<std::uint64_t>(i) + static_cast<std::uint64_t>(v.i));
    }
    std::uint64_t bits = 0;
    if (acc == et::i64) bits = convert(et::i64, c.dst_type, static_cast<std::uint64_t>(i));
    else if (acc == et::f64) bits = convert(et::f64, c.dst_type, std::bit_cast<std::uint64_t>(d));
    else bits = convert(et::f32, c.dst_type, std::bit_cast<std::uint32_t>(f));
    store_bits(dst, dof, c.dst_type, bits);
    for (std::size_t k = idx.size(); k-- > 0;) {
      if (++idx[k] < dshape[k]) break;
      idx[k] = 0;
    }
  }
}

TEST_F(Steps, SumsMatchAHostSumInIndexOrderWithOneRounding) {
  // Non-zero data in [-2, 2) (integers in [-100, 100)); cases as the plans have them (moe's
  // [tokens, top_k, hidden] over top_k in fp16, torch.add of two top-k rows as a stacked axis)
  // and every accumulator, strided and offset dst views, a rank-1 sum into one element.
  const std::int64_t m = 64, k = 6, h = 512;
  const std::vector<sum_case> cases = {
      {"fp16 over top_k", et::f16, et::f16, 0, {m, k, h}, {k * h, h, 1}, 1, 0, {h, 1}},
      {"fp16 add of two rows", et::f16, et::f16, 0, {2, m, h}, {h, k * h, 1}, 0, 0, {h, 1}},
      {"bf16 outer axis, gapped dst", et::bf16, et::bf16, 3, {33, 7, 65}, {7 * 65, 65, 1}, 0, 5, {80, 1}},
      {"bf16 inner axis", et::bf16, et::bf16, 0, {40, 129}, {129, 1}, 1, 0, {1}},
      {"fp16 into fp32", et::f16, et::f32, 0, {m, k, h}, {k * h, h, 1}, 1, 0, {h, 1}},
      {"fp32 rank 1", et::f32, et::f32, 7, {1000}, {1}, 0, 2, {1}},
      {"fp32 into bf16, transposed", et::f32, et::bf16, 0, {96, 48}, {1, 96}, 0, 0, {1}},
      {"fp64", et::f64, et::f64, 0, {10, 300}, {300, 1}, 1, 0, {1}},
      {"int32", et::i32, et::i32, 0, {50, 9}, {9, 1}, 1, 0, {1}},
      {"uint8 into int64", et::u8, et::i64, 0, {17, 31}, {31, 1}, 0, 0, {1}},
  };
  pb::step_kernel_set set;
  for (const auto& c : cases) {
    const std::pair<et, et> p{c.src_type, c.dst_type};
    if (std::find(set.sums.begin(), set.sums.end(), p) == set.sums.end()) set.sums.push_back(p);
  }
  const pb::step_kernels kernels(ctx, set);
  pc::stream s(ctx);
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> real(-2.0, 2.0);
  std::uniform_int_distribution<int> whole(-100, 99);
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const std::int64_t src_elems = span(c.src_shape, c.src_strides, c.src_offset);
    const auto dshape = pb::sum_result_shape(c.src_shape, c.axis);
    const std::int64_t dst_elems = span(dshape, c.dst_strides, c.dst_offset) + 3;   // room past the view
    std::vector<std::byte> src(src_elems * pb::size_of(c.src_type)), dst(dst_elems * pb::size_of(c.dst_type), std::byte{0xA5});
    for (std::int64_t i = 0; i < src_elems; ++i) {
      std::uint64_t b = 0;
      switch (c.src_type) {
        case et::f64: b = std::bit_cast<std::uint64_t>(real(rng)); break;
        case et::f32: b = std::bit_cast<std::uint32_t>(static_cast<float>(real(rng))); break;
        case et::f16: b = pr::fp16_from_double(real(rng)); break;
        case et::bf16: b = pr::bf16_from_double(real(rng)); break;
        case et::u8: b = static_cast<std::uint64_t>(whole(rng) + 100); break;
        default: b = static_cast<std::uint64_t>(static_cast<std::uint32_t>(whole(rng))); break;
      }
      store_bits(src, i, c.src_type, b);
    }
    pc::device_buffer dsrc(ctx, src.size()), ddst(ctx, dst.size());
    dsrc.upload(src);
    ddst.upload(dst);
    const pb::sum_step st{{"", "a", c.src_type, c.src_offset, c.src_shape, c.src_strides},
                          {"", "b", c.dst_type, c.dst_offset, dshape, c.dst_strides}, c.axis};
    const std::vector<pb::scratch_spec> specs{{"a", src.size(), false, std::nullopt}, {"b", dst.size(), false, std::nullopt}};
    const pb::scratch_bindings sb{{{"a", dsrc.address()}, {"b", ddst.address()}}, {}};
    kernels.sum(s, pb::bind_sum(st, {}, sb, specs, "test"));
    s.synchronize();
    std::vector<std::byte> got(dst.size());
    ddst.download(got);
    auto want = dst;
    host_sum(c, src, want);
    std::int64_t bad = 0, first = -1, nonzero = 0;
    for (std::int64_t i = 0; i < dst_elems; ++i) {
      if (load_bits(got, i, c.dst_type) != load_bits(want, i, c.dst_type)) {
        if (first < 0) first = i;
        ++bad;
      }
      if (load_bits(want, i, c.dst_type) != 0) ++nonzero;
    }
    EXPECT_GT(nonzero, dst_elems / 2) << "the data sums to zero: the comparison proves little";
    EXPECT_EQ(bad, 0) << "first at element " << first << ": got " << std::hex << load_bits(got, first, c.dst_type)
                      << ", want " << load_bits(want, first, c.dst_type);
  }
}

TEST_F(Steps, APlanRunsItsSumStepsInOrderAfterTheCopiesTheyRead) {
  // As the launcher runs a plan: a copy fp32 -> fp16 into scratch, then its sum over axis 1.
  pb::config_plan plan;
  plan.config.op = "vector_add";
  constexpr std::int64_t r = 96, c = 5;
  plan.scratch = {{"x", 4 * r * c, false, pb::make_fill_value(et::f32, 1.25)},
                  {"h", 2 * r * c, false, std::nullopt},
                  {"y", 2 * r, false, std::nullopt}};
  pb::plan_step copy, sum;
  copy.kind = pb::step_kind::copy;
  copy.copy = {{"", "x", et::f32, 0, {r, c}, {c, 1}}, {"", "h", et::f16, 0, {r, c}, {c, 1}}};
  sum.kind = pb::step_kind::sum;
  sum.index = 1;
  sum.sum = {{"", "h", et::f16, 0, {r, c}, {c, 1}}, {"", "y", et::f16, 0, {r}, {1}}, 1};
  plan.steps = {copy, sum};
  pb::bundle none;
  const pb::loaded_plan loaded(ctx, none, plan);
  ASSERT_EQ(loaded.expected().size(), 2u);
  EXPECT_EQ(loaded.expected()[1].entry, "portbench_sum_f16_f16");
  std::map<std::string, pc::device_buffer> bufs;
  pb::scratch_bindings sb;
  for (const auto& sc : plan.scratch) {
    auto& b = bufs.emplace(sc.name, pc::device_buffer(ctx, sc.bytes)).first->second;
    b.fill_u32(0xA5A5A5A5u);
    sb.buffers[sc.name] = b.address();
  }
  pc::stream s(ctx);
  loaded.enqueue(s, {}, sb);
  s.synchronize();
  std::vector<std::byte> y(bufs.at("y").size());
  bufs.at("y").download(y);
  for (std::int64_t i = 0; i < r; ++i) EXPECT_EQ(load_bits(y, i, et::f16), pr::fp16_from_double(6.25)) << i;
}

}  // namespace
