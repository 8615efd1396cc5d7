// SPDX-License-Identifier: Apache-2.0
// Parameter packing: values, offsets at natural alignment, and refusal of bad bindings.
#include <gtest/gtest.h>

#include <cstring>

#include "portbench/bundle/error.hpp"
#include "portbench/bundle/launcher.hpp"

namespace pb = portbench::bundle;
namespace pr = portbench::reference;

namespace {

pb::param_binding bind(pb::param_kind k, std::string tensor = {}, int dim = 0, pb::scalar_type t = pb::scalar_type::u64) {
  pb::param_binding p;
  p.kind = k;
  p.tensor = std::move(tensor);
  p.dim = dim;
  p.type = t;
  return p;
}

template <typename T>
T read_at(const std::vector<std::byte>& b, std::size_t off) {
  T v;
  std::memcpy(&v, b.data() + off, sizeof(T));
  return v;
}

TEST(Pack, CuTileStyleArrayThenScalar) {
  pb::launch_spec l;
  l.params = {bind(pb::param_kind::ptr, "x"), bind(pb::param_kind::extent, "x", 0, pb::scalar_type::i32),
              bind(pb::param_kind::extent, "x", 1, pb::scalar_type::i32),
              bind(pb::param_kind::stride, "x", 0, pb::scalar_type::i32),
              bind(pb::param_kind::stride, "x", 1, pb::scalar_type::i32)};
  pb::param_binding eps;
  eps.kind = pb::param_kind::literal;
  eps.type = pb::scalar_type::f32;
  eps.value = 1e-5;
  l.params.push_back(eps);
  l.params.push_back(bind(pb::param_kind::null));   // 8-byte aligned after a 4-byte float

  pb::tensor_bindings t;
  pr::tensor_spec spec{"x", pr::dtype::f16, {333, 768}, {1024, 1}, 333 * 1024, pr::tensor_role::in};
  t["x"] = {0xdead0000, spec};
  auto packed = pb::pack_params(l, t, {}, "test");
  auto offsets = pb::param_offsets(l);
  EXPECT_EQ(offsets, (std::vector<std::size_t>{0, 8, 12, 16, 20, 24, 32}));
  const auto& b = packed.bytes();
  ASSERT_EQ(b.size(), 40u);
  EXPECT_EQ(read_at<std::uint64_t>(b, 0), 0xdead0000u);
  EXPECT_EQ(read_at<std::int32_t>(b, 8), 333);
  EXPECT_EQ(read_at<std::int32_t>(b, 12), 768);
  EXPECT_EQ(read_at<std::int32_t>(b, 16), 1024);
  EXPECT_EQ(read_at<std::int32_t>(b, 20), 1);
  EXPECT_FLOAT_EQ(read_at<float>(b, 24), 1e-5f);
  EXPECT_EQ(read_at<std::uint64_t>(b, 32), 0u);
  EXPECT_EQ(packed.pointers()[3], static_cast<const void*>(b.data() + 16));
}

TEST(Pack, RefusesUnknownTensorDimensionAndOverflow) {
  pb::tensor_bindings t;
  pr::tensor_spec spec{"x", pr::dtype::f32, {std::int64_t{1} << 33}, {1}, std::int64_t{1} << 33, pr::tensor_role::in};
  t["x"] = {0x1000, spec};
  pb::launch_spec l;
  l.params = {bind(pb::param_kind::ptr, "y")};
  EXPECT_THROW((void)pb::pack_params(l, t, {}, "w"), pb::bundle_error);
  l.params = {bind(pb::param_kind::extent, "x", 1, pb::scalar_type::i32)};
  EXPECT_THROW((void)pb::pack_params(l, t, {}, "w"), pb::bundle_error);
  l.params = {bind(pb::param_kind::extent, "x", 0, pb::scalar_type::i32)};   // 2^33 does not fit i32
  EXPECT_THROW((void)pb::pack_params(l, t, {}, "w"), pb::bundle_error);
  l.params = {bind(pb::param_kind::extent, "x", 0, pb::scalar_type::i64)};
  EXPECT_NO_THROW((void)pb::pack_params(l, t, {}, "w"));
}

}  // namespace

TEST(Pack, PointerOffsetIsElementsIntoTheView) {
  pb::launch_spec l;
  auto p = bind(pb::param_kind::ptr, "x");
  p.offset = 768;   // the second half of a 1536-wide fp16 row
  l.params = {p};
  pb::tensor_bindings t;
  pr::tensor_spec spec{"x", pr::dtype::f16, {4, 1536}, {1536, 1}, 4 * 1536, pr::tensor_role::in};
  t["x"] = {0x10000, spec};
  auto packed = pb::pack_params(l, t, {}, "test");
  EXPECT_EQ(read_at<std::uint64_t>(packed.bytes(), 0), 0x10000u + 768u * 2u);
  l.params[0].offset = 4 * 1536;   // one past the end
  EXPECT_THROW((void)pb::pack_params(l, t, {}, "test"), pb::bundle_error);
}

TEST(Pack, PointerTableIsTheAddressOfTheTableOfItsTensors) {
  pb::launch_spec l;
  pb::param_binding table;
  table.kind = pb::param_kind::ptr_table;
  table.tensors = {"a0", "a1"};
  pb::param_binding groups;
  groups.kind = pb::param_kind::literal;
  groups.type = pb::scalar_type::i32;
  groups.value = std::int64_t{2};
  l.params = {table, groups};
  pb::tensor_bindings t;
  for (const char* name : {"a0", "a1"}) {
    t[name] = {0x1000, pr::tensor_spec{name, pr::dtype::f16, {64, 64}, {64, 1}, 64 * 64, pr::tensor_role::in}};
  }
  pb::scratch_bindings s;
  s.tables[{"a1", "a0"}] = 0xbad0000;   // another order is another table
  EXPECT_THROW((void)pb::pack_params(l, t, s, "test"), pb::bundle_error);
  s.tables[{"a0", "a1"}] = 0x7ab1e000;
  auto packed = pb::pack_params(l, t, s, "test");
  ASSERT_EQ(packed.bytes().size(), 12u);
  EXPECT_EQ(read_at<std::uint64_t>(packed.bytes(), 0), 0x7ab1e000u);
  EXPECT_EQ(read_at<std::int32_t>(packed.bytes(), 8), 2);
  // A table naming a tensor the operator lacks is refused, naming the tensor.
  l.params[0].tensors = {"a0", "a2"};
  s.tables[{"a0", "a2"}] = 0x7ab1f000;
  try {
    (void)pb::pack_params(l, t, s, "m.json: launches[0]");
    ADD_FAILURE() << "a table of an unknown tensor was packed";
  } catch (const pb::bundle_error& e) {
    EXPECT_NE(std::string(e.what()).find("params[0]: binds tensor 'a2'"), std::string::npos) << e.what();
  }
}

namespace {

pb::param_binding array_table(std::vector<std::string> names, int rank, pb::scalar_type index) {
  pb::param_binding p;
  p.kind = pb::param_kind::array_table;
  p.tensors = std::move(names);
  p.rank = rank;
  p.index_type = index;
  return p;
}

}  // namespace

TEST(ArrayTable, DescriptorsOfGroupGemmsTensorsAreAddressExtentsStridesAs64BitWords) {
  // The operator's own tensors for a configuration with transposed B ([N, K] storage).
  const pr::config c{"group_gemm", {{"num_groups", std::int64_t{2}}, {"m", std::int64_t{48}}, {"n", std::int64_t{24}},
                                    {"k", std::int64_t{40}}, {"transpose_b", true}, {"dtype", std::string("float16")}}};
  pb::tensor_bindings t;
  CUdeviceptr next = 0x7f0000000000ULL;
  for (const auto& spec : pr::find_operator("group_gemm").tensors(c)) t[spec.name] = {next += 0x100000, spec};
  const auto b = array_table({"b0", "b1"}, 2, pb::scalar_type::i32);
  const std::vector<std::uint64_t> words = pb::table_descriptors(b, t, "test");
  ASSERT_EQ(words.size(), 2u * (1 + 2 * 2));   // no header, no padding to a power of two
  // The host bytes as uploaded: little-endian 64-bit words, entry g at byte 40 g.
  std::vector<std::byte> bytes(words.size() * 8);
  std::memcpy(bytes.data(), words.data(), bytes.size());
  for (std::size_t g = 0; g < 2; ++g) {
    const auto& bt = t.at("b" + std::to_string(g));
    const std::size_t at = g * 40;
    EXPECT_EQ(read_at<std::uint64_t>(bytes, at), static_cast<std::uint64_t>(bt.address));
    EXPECT_EQ(read_at<std::int64_t>(bytes, at + 8), 24);    // extents [N, K]
    EXPECT_EQ(read_at<std::int64_t>(bytes, at + 16), 40);
    EXPECT_EQ(read_at<std::int64_t>(bytes, at + 24), 40);   // strides [K, 1] in elements
    EXPECT_EQ(read_at<std::int64_t>(bytes, at + 32), 1);
    EXPECT_EQ(std::to_integer<int>(bytes[at + 8]), 24);     // little-endian: the low byte first
  }
  // An i64 table's words are the same: the index type only bounds the values.
  EXPECT_EQ(pb::table_descriptors(array_table({"b0", "b1"}, 2, pb::scalar_type::i64), t, "test"), words);
  // A negative stride is its two's complement word.
  pb::tensor_bindings neg = t;
  neg.at("a0").spec.strides[0] = -40;
  EXPECT_EQ(pb::table_descriptors(array_table({"a0"}, 2, pb::scalar_type::i32), neg, "test")[3],
            static_cast<std::uint64_t>(std::int64_t{-40}));
}

TEST(ArrayTable, RefusesAnUnboundTensorAnotherRankAndValuesBeyondItsIndexType) {
  pb::tensor_bindings t;
  t["x"] = {0x1000, pr::tensor_spec{"x", pr::dtype::f32, {4, 3000000000}, {3000000000, 1}, 12000000000, pr::tensor_role::in}};
  t["v"] = {0x2000, pr::tensor_spec{"v", pr::dtype::f32, {8}, {1}, 8, pr::tensor_role::in}};
  auto message = [&](const pb::param_binding& p) -> std::string {
    try {
      (void)pb::table_descriptors(p, t, "m.json: launches[0].params[2]");
    } catch (const pb::bundle_error& e) {
      return e.what();
    }
    return "accepted";
  };
  EXPECT_NE(message(array_table({"v", "w"}, 1, pb::scalar_type::i64)).find("params[2]: binds tensor 'w'"), std::string::npos);
  EXPECT_NE(message(array_table({"v", "x"}, 1, pb::scalar_type::i64)).find("array table of rank 1 lists tensor 'x' of rank 2"),
            std::string::npos);
  EXPECT_NE(message(array_table({"x"}, 2, pb::scalar_type::i32)).find("tensor 'x': extent 3000000000 does not fit the table's index type i32"),
            std::string::npos);
  EXPECT_EQ(message(array_table({"x"}, 2, pb::scalar_type::i64)), "accepted");
}

TEST(ArrayTable, PackedAsTheAddressOfItsTableAndBuiltOncePerTensorList) {
  pb::launch_spec l;
  pb::param_binding groups;
  groups.kind = pb::param_kind::literal;
  groups.type = pb::scalar_type::i32;
  groups.value = std::int64_t{2};
  l.params = {array_table({"a0", "a1"}, 2, pb::scalar_type::i32), groups,
              array_table({"a0", "a1"}, 2, pb::scalar_type::i32), groups};
  pb::launch_spec l2;
  l2.params = {array_table({"a1", "a0"}, 2, pb::scalar_type::i32)};
  const auto tables = pb::descriptor_tables({l, l2});
  ASSERT_EQ(tables.size(), 2u);
  EXPECT_EQ(tables[0].tensors, (std::vector<std::string>{"a0", "a1"}));
  EXPECT_EQ(tables[1].tensors, (std::vector<std::string>{"a1", "a0"}));
  EXPECT_TRUE(pb::address_tables({l, l2}).empty());   // no ptr_table among them
  pb::tensor_bindings t;
  for (const char* name : {"a0", "a1"}) {
    t[name] = {0x1000, pr::tensor_spec{name, pr::dtype::f16, {64, 64}, {64, 1}, 64 * 64, pr::tensor_role::in}};
  }
  pb::scratch_bindings s;
  s.tables[{"a0", "a1"}] = 0xbad0000;   // an address table is not a descriptor table
  EXPECT_THROW((void)pb::pack_params(l, t, s, "test"), pb::bundle_error);
  s.array_tables[{"a0", "a1"}] = 0x7ab1e000;
  auto packed = pb::pack_params(l, t, s, "test");
  ASSERT_EQ(packed.bytes().size(), 28u);   // pointer, i32, pointer at 16, i32
  EXPECT_EQ(read_at<std::uint64_t>(packed.bytes(), 0), 0x7ab1e000u);
  EXPECT_EQ(read_at<std::int32_t>(packed.bytes(), 8), 2);
  EXPECT_EQ(read_at<std::uint64_t>(packed.bytes(), 16), 0x7ab1e000u);
  // A rank that the tensors do not have is refused at packing too, naming the parameter.
  l.params[0].rank = 3;
  try {
    (void)pb::pack_params(l, t, s, "m.json: launches[0]");
    ADD_FAILURE() << "a table of the wrong rank was packed";
  } catch (const pb::bundle_error& e) {
    EXPECT_NE(std::string(e.what()).find("params[0]: array table of rank 3"), std::string::npos) << e.what();
  }
}
