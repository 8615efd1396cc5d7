// SPDX-License-Identifier: Apache-2.0
// Bad bundles are refused before any launch, with one line naming the file and the problem.
// Each case starts from a real exported bundle and breaks one thing.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "portbench/bundle/bundle.hpp"
#include "portbench/bundle/error.hpp"
#include "portbench/bundle/sha256.hpp"
#include "test_support.hpp"

namespace pb = portbench::bundle;
namespace pt = portbench::testing;
using json = nlohmann::json;

namespace {

class BrokenBundle : public ::testing::Test {
 protected:
  void SetUp() override {
    auto bundles = pt::all_bundles();
    ASSERT_FALSE(bundles.empty());
    source = bundles.front();
    dir = tmp.path() / "bundle";
    std::filesystem::copy(source, dir, std::filesystem::copy_options::recursive);
    manifest = json::parse(pt::read_text(dir / "manifest.json"));
  }
  void save() { pt::write_text(dir / "manifest.json", manifest.dump(1)); }
  std::filesystem::path first_cubin() { return dir / manifest["cubins"][0]["file"].get<std::string>(); }
  void rehash(const std::vector<std::byte>& image) {
    pt::write_bytes(first_cubin(), image);
    manifest["cubins"][0]["sha256"] = pb::sha256_hex(image);
    save();
  }
  // Loads the bundle expecting a bundle_error; returns its one-line message.
  std::string load_error() {
    try {
      (void)pb::load_bundle(dir);
    } catch (const pb::bundle_error& e) {
      std::string msg = e.what();
      EXPECT_EQ(msg.find('\n'), std::string::npos) << "not one line: " << msg;
      return msg;
    }
    ADD_FAILURE() << "the broken bundle was accepted";
    return {};
  }

  pt::temp_dir tmp;
  std::filesystem::path source, dir;
  json manifest;
};

TEST_F(BrokenBundle, IntactCopyLoads) {
  auto b = pb::load_bundle(dir);
  EXPECT_FALSE(b.plan.configs.empty());
  EXPECT_FALSE(b.cubins.empty());
}

TEST_F(BrokenBundle, TruncatedCubin) {
  auto image = pt::read_bytes(first_cubin());
  image.resize(image.size() / 2);
  rehash(image);
  std::string msg = load_error();
  EXPECT_NE(msg.find(first_cubin().string() + ": "), std::string::npos) << msg;
  EXPECT_NE(msg.find("truncated"), std::string::npos) << msg;
}

TEST_F(BrokenBundle, CubinChangedAfterExportFailsItsHash) {
  auto image = pt::read_bytes(first_cubin());
  image[image.size() / 3] ^= std::byte{0x5a};
  pt::write_bytes(first_cubin(), image);
  std::string msg = load_error();
  EXPECT_NE(msg.find("manifest.json: cubins[0].sha256"), std::string::npos) << msg;
}

TEST_F(BrokenBundle, CubinForAnotherArchitecture) {
  auto image = pt::read_bytes(first_cubin());
  // Rewrite the SM field of e_flags to 80 (Ampere), where the CUDA ELF ABI keeps it.
  auto abi = std::to_integer<int>(image[8]);
  image[abi >= 8 ? 0x31 : 0x30] = std::byte{80};
  rehash(image);
  std::string msg = load_error();
  EXPECT_NE(msg.find("cubin is for sm_80"), std::string::npos) << msg;
  EXPECT_NE(msg.find(first_cubin().string()), std::string::npos) << msg;
}

TEST_F(BrokenBundle, MissingCubinFile) {
  std::filesystem::remove(first_cubin());
  std::string msg = load_error();
  EXPECT_NE(msg.find("cubins[0].file: cannot open"), std::string::npos) << msg;
}

TEST_F(BrokenBundle, ManifestMissingAField) {
  manifest["configs"][0]["launches"][0].erase("entry");
  save();
  std::string msg = load_error();
  EXPECT_NE(msg.find("manifest.json: configs[0].launches[0].entry: missing field"), std::string::npos) << msg;
}

TEST_F(BrokenBundle, ManifestWithWrongSchema) {
  manifest["schema"] = "portbench.bundle/0";
  save();
  EXPECT_NE(load_error().find("schema: unsupported schema"), std::string::npos);
}

TEST_F(BrokenBundle, ManifestWithUnknownParamKind) {
  manifest["configs"][0]["launches"][0]["params"][0]["kind"] = "pointer";
  save();
  EXPECT_NE(load_error().find("configs[0].launches[0].params[0].kind: unknown kind 'pointer'"), std::string::npos);
}

TEST_F(BrokenBundle, ParameterCountDisagreesWithCubin) {
  auto& params = manifest["configs"][0]["launches"][0]["params"];
  params.erase(params.size() - 1);
  save();
  std::string msg = load_error();
  EXPECT_NE(msg.find("configs[0].launches[0].params: "), std::string::npos) << msg;
  EXPECT_NE(msg.find("takes"), std::string::npos) << msg;
}

TEST_F(BrokenBundle, ParameterSizeDisagreesWithCubin) {
  // Widen the first 4-byte parameter to 8 bytes: same count, wrong size and offsets.
  auto& params = manifest["configs"][0]["launches"][0]["params"];
  bool changed = false;
  for (auto& p : params) {
    if (p.contains("type") && (p["type"] == "i32" || p["type"] == "u32" || p["type"] == "f32")) {
      p["type"] = p["type"] == "f32" ? "f64" : "i64";
      changed = true;
      break;
    }
  }
  if (!changed) {
    params[0] = json{{"kind", "literal"}, {"type", "i32"}, {"value", 1}};   // a pointer narrowed to 4 bytes
  }
  save();
  std::string msg = load_error();
  EXPECT_NE(msg.find("bytes at offset"), std::string::npos) << msg;
  EXPECT_NE(msg.find("' has parameter"), std::string::npos) << msg;
}

TEST_F(BrokenBundle, EntryNotInCubin) {
  manifest["configs"][0]["launches"][0]["entry"] = "no_such_kernel";
  save();
  EXPECT_NE(load_error().find("'no_such_kernel' is not an entry"), std::string::npos);
}

TEST_F(BrokenBundle, PathLeavingTheBundle) {
  manifest["cubins"][0]["file"] = "../elsewhere.cubin";
  save();
  EXPECT_NE(load_error().find("leaves the bundle"), std::string::npos);
}

TEST_F(BrokenBundle, NotJson) {
  pt::write_text(dir / "manifest.json", "{\"schema\": ");
  EXPECT_NE(load_error().find("not valid JSON"), std::string::npos);
}

// A number too large for a double is nlohmann's out_of_range, not a parse_error: it once left
// the parser as an unknown exception (found by tests/fuzz/fuzz_manifest).
TEST_F(BrokenBundle, NumberTooLargeIsNotValidJson) {
  std::string text = pt::read_text(dir / "manifest.json");
  const auto at = text.find("\"shared_bytes\"");
  ASSERT_NE(at, std::string::npos);
  text.insert(text.find(':', at) + 1, " 143e6612750,\"x\":");
  pt::write_text(dir / "manifest.json", text);
  const std::string msg = load_error();
  EXPECT_NE(msg.find("manifest.json: not valid JSON: [json.exception.out_of_range.406] number overflow parsing "
                     "'143e6612750'"),
            std::string::npos)
      << msg;
}

}  // namespace

// ---- manifest additions: tuning variants, view offsets, zero-initialised scratch, clusters ----

TEST_F(BrokenBundle, VariantsParseAndMaterialise) {
  ASSERT_GE(manifest["configs"].size(), 1u);
  auto& c = manifest["configs"][0];
  json a = {{"name", "a"}, {"tuning", {{"tile", 1}}}, {"launches", c["launches"]}};
  json b = {{"name", "b"}, {"tuning", {{"tile", 2}}}, {"launches", c["launches"]},
            {"scratch", json::array({{{"name", "ws"}, {"bytes", 64}, {"init", "zero"}}})}};
  c["variants"] = json::array({a, b});
  c["tuning"]["variant"] = "a";
  save();
  auto loaded = pb::load_bundle(dir);
  const auto& plan = loaded.plan.configs[0];
  ASSERT_EQ(plan.variants.size(), 2u);
  EXPECT_EQ(plan.variant, "a");
  EXPECT_EQ(plan.with_variant("a", "m").launches.size(), plan.launches.size());   // the chosen plan itself
  const auto vb = plan.with_variant("b", "m");
  EXPECT_EQ(vb.variant, "b");
  ASSERT_EQ(vb.scratch.size(), 1u);
  EXPECT_TRUE(vb.scratch[0].zero_init);
  EXPECT_EQ(vb.scratch[0].bytes, 64u);
  EXPECT_NE(vb.tuning_json.find("\"tile\":2"), std::string::npos) << vb.tuning_json;
  EXPECT_EQ(plan.with_variant("", "m").tuning_json, plan.tuning_json);
  try {
    (void)plan.with_variant("c", "m.json");
    ADD_FAILURE() << "an unknown variant was materialised";
  } catch (const pb::bundle_error& e) {
    EXPECT_NE(std::string(e.what()).find("no variant 'c' (2 variants)"), std::string::npos) << e.what();
  }
}

TEST_F(BrokenBundle, VariantNamedTwice) {
  auto& c = manifest["configs"][0];
  c["variants"] = json::array({{{"name", "a"}, {"launches", c["launches"]}}, {{"name", "a"}, {"launches", c["launches"]}}});
  save();
  EXPECT_NE(load_error().find("configs[0].variants[1].name: variant 'a' is named twice"), std::string::npos);
}

TEST_F(BrokenBundle, VariantLaunchIsCheckedAgainstItsCubin) {
  auto& c = manifest["configs"][0];
  json launches = c["launches"];
  launches[0]["params"].erase(launches[0]["params"].size() - 1);
  c["variants"] = json::array({{{"name", "short"}, {"launches", launches}}});
  save();
  std::string msg = load_error();
  EXPECT_NE(msg.find("configs[0].variants[0].launches[0].params: "), std::string::npos) << msg;
}

TEST_F(BrokenBundle, ScratchInitMustBeZeroOrNone) {
  manifest["configs"][0]["scratch"] = json::array({{{"name", "ws"}, {"bytes", 16}, {"init", "ones"}}});
  save();
  EXPECT_NE(load_error().find("configs[0].scratch[0].init: expected \"zero\" or \"none\", got 'ones'"), std::string::npos);
}

TEST_F(BrokenBundle, PointerOffsetMustNotBeNegative) {
  auto& params = manifest["configs"][0]["launches"][0]["params"];
  std::size_t i = 0;
  while (i < params.size() && params[i]["kind"] != "ptr") ++i;
  ASSERT_LT(i, params.size());
  params[i]["offset"] = -4;
  save();
  EXPECT_NE(load_error().find("params[" + std::to_string(i) + "].offset: must be >= 0"), std::string::npos);
}

TEST_F(BrokenBundle, PointerTableListsTensorsInOrder) {
  // A ptr_table parameter is one 8-byte pointer, like the ptr it replaces: the cubin still agrees.
  auto& params = manifest["configs"][0]["launches"][0]["params"];
  ASSERT_EQ(params[0]["kind"], "ptr");
  params[0] = {{"kind", "ptr_table"}, {"tensors", json::array({"y", "x", "y"})}};
  save();
  auto b = pb::load_bundle(dir);
  const auto& p = b.plan.configs.at(0).launches.at(0).params.at(0);
  EXPECT_EQ(p.kind, pb::param_kind::ptr_table);
  EXPECT_EQ(p.tensors, (std::vector<std::string>{"y", "x", "y"}));
  EXPECT_EQ(p.size(), 8u);
  EXPECT_STREQ(pb::to_string(p.kind), "ptr_table");
}

TEST_F(BrokenBundle, PointerTableMustNameTensors) {
  auto& p0 = manifest["configs"][0]["launches"][0]["params"][0];
  p0 = {{"kind", "ptr_table"}, {"tensors", json::array()}};
  save();
  EXPECT_NE(load_error().find("configs[0].launches[0].params[0].tensors: lists no tensors"), std::string::npos);
  manifest["configs"][0]["launches"][0]["params"][0] = {{"kind", "ptr_table"}, {"tensors", json::array({"x", ""})}};
  save();
  EXPECT_NE(load_error().find("params[0].tensors[1]: must name a tensor"), std::string::npos);
  manifest["configs"][0]["launches"][0]["params"][0] = {{"kind", "ptr_table"}, {"tensors", "x"}};
  save();
  EXPECT_NE(load_error().find("params[0].tensors: expected an array"), std::string::npos);
  manifest["configs"][0]["launches"][0]["params"][0] = {{"kind", "ptr_table"}};
  save();
  EXPECT_NE(load_error().find("params[0].tensors: missing field"), std::string::npos);
}

TEST_F(BrokenBundle, ArrayTableListsTensorsWithRankAndIndexType) {
  // An array_table parameter is one 8-byte pointer, like the ptr it replaces: the cubin still agrees.
  auto& params = manifest["configs"][0]["launches"][0]["params"];
  ASSERT_EQ(params[0]["kind"], "ptr");
  params[0] = {{"kind", "array_table"}, {"tensors", json::array({"y", "x"})}, {"rank", 1}, {"index_type", "i32"}};
  save();
  auto b = pb::load_bundle(dir);
  const auto& p = b.plan.configs.at(0).launches.at(0).params.at(0);
  EXPECT_EQ(p.kind, pb::param_kind::array_table);
  EXPECT_EQ(p.tensors, (std::vector<std::string>{"y", "x"}));
  EXPECT_EQ(p.rank, 1);
  EXPECT_EQ(p.index_type, pb::scalar_type::i32);
  EXPECT_EQ(p.size(), 8u);
  EXPECT_STREQ(pb::to_string(p.kind), "array_table");
  manifest["configs"][0]["launches"][0]["params"][0]["index_type"] = "i64";
  manifest["configs"][0]["launches"][0]["params"][0]["rank"] = 0;
  save();
  const auto b64 = pb::load_bundle(dir);
  EXPECT_EQ(b64.plan.configs.at(0).launches.at(0).params.at(0).index_type, pb::scalar_type::i64);
  EXPECT_EQ(b64.plan.configs.at(0).launches.at(0).params.at(0).rank, 0);
}

TEST_F(BrokenBundle, ArrayTableInPlaceOfA4ByteParameterDisagreesWithTheCubin) {
  // The cubin parameter check still applies: an 8-byte table pointer where the entry takes 4 bytes.
  auto& params = manifest["configs"][0]["launches"][0]["params"];
  std::size_t i = 0;
  while (i < params.size() && !(params[i].contains("type") && params[i]["type"] == "i32")) ++i;
  ASSERT_LT(i, params.size()) << "the first bundle has no i32 parameter";
  params[i] = {{"kind", "array_table"}, {"tensors", json::array({"x"})}, {"rank", 1}, {"index_type", "i32"}};
  save();
  const std::string msg = load_error();
  EXPECT_NE(msg.find("manifest.json: configs[0].launches[0]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("array_table [x] rank 1 i32"), std::string::npos) << msg;
}

TEST_F(BrokenBundle, ArrayTableFieldsAreChecked) {
  const json good = {{"kind", "array_table"}, {"tensors", json::array({"x", "y"})}, {"rank", 1}, {"index_type", "i32"}};
  auto expect = [&](const char* field, const json& value, const std::string& want) {
    json p = good;
    if (value.is_null()) p.erase(field);
    else p[field] = value;
    manifest["configs"][0]["launches"][0]["params"][0] = p;
    save();
    const std::string msg = load_error();
    EXPECT_NE(msg.find("manifest.json: configs[0].launches[0].params[0]." + want), std::string::npos)
        << field << ": " << msg;
  };
  expect("tensors", nullptr, "tensors: missing field");
  expect("tensors", json::array(), "tensors: lists no tensors");
  expect("tensors", "x", "tensors: expected an array");
  expect("tensors", json::array({"x", ""}), "tensors[1]: must name a tensor");
  expect("rank", nullptr, "rank: missing field");
  expect("rank", -1, "rank: must be 0..16");
  expect("rank", 17, "rank: must be 0..16");
  expect("rank", "2", "rank: ");
  expect("index_type", nullptr, "index_type: missing field");
  expect("index_type", "i16", "index_type: unknown type 'i16'");
  expect("index_type", "u32", "index_type: must be i32 or i64");
  expect("index_type", "f32", "index_type: must be i32 or i64");
}

TEST_F(BrokenBundle, UnsupportedConfigurationsKeepTheExportersReason) {
  // The first configuration moves from configs[] to unsupported[]: no plan, and the reason.
  json first = manifest["configs"][0];
  ASSERT_GT(manifest["configs"].size(), 1u);
  manifest["configs"].erase(0);
  manifest["unsupported"] = json::array({{{"params", first["params"]}, {"reason", "k = 100: rows not 16-byte aligned"}}});
  save();
  auto b = pb::load_bundle(dir);
  ASSERT_EQ(b.plan.unsupported.size(), 1u);
  const auto& c = b.plan.unsupported[0].config;
  EXPECT_EQ(b.plan.find(c), nullptr);
  ASSERT_NE(b.plan.unsupported_reason(c), nullptr);
  EXPECT_EQ(*b.plan.unsupported_reason(c), "k = 100: rows not 16-byte aligned");
  EXPECT_EQ(b.plan.unsupported_reason(b.plan.configs.at(0).config), nullptr);
}

TEST_F(BrokenBundle, UnsupportedEntriesNeedParamsAndAReasonAndNoPlan) {
  json params = manifest["configs"][0]["params"];
  manifest["unsupported"] = json::array({{{"params", params}, {"reason", "why"}}});
  save();
  EXPECT_NE(load_error().find("unsupported[0].params: also has a plan in configs[]"), std::string::npos);
  params["__not_a_param"] = 1;
  manifest["unsupported"] = json::array({{{"params", params}, {"reason", ""}}});
  save();
  EXPECT_NE(load_error().find("unsupported[0].reason: must not be empty"), std::string::npos);
  manifest["unsupported"] = json::array({{{"params", 3}, {"reason", "why"}}});
  save();
  EXPECT_NE(load_error().find("unsupported[0].params: expected an object"), std::string::npos);
  manifest["unsupported"] = json::array({{{"params", params}}});
  save();
  EXPECT_NE(load_error().find("unsupported[0].reason: missing field"), std::string::npos);
}

TEST_F(BrokenBundle, ABundleOfReasonsOnlyLoadsButNoCubinsNeedsThem) {
  // An exporter that can express none of an operator's configurations (tilegym's group_gemm: its
  // list-of-arrays parameter) writes no cubins and no plans, only the reasons.
  json reasons = json::array();
  for (const auto& c : manifest["configs"]) reasons.push_back({{"params", c["params"]}, {"reason", "not expressible"}});
  manifest["unsupported"] = reasons;
  manifest["configs"] = json::array();
  manifest["cubins"] = json::array();
  save();
  auto b = pb::load_bundle(dir);
  EXPECT_TRUE(b.plan.configs.empty());
  ASSERT_EQ(b.plan.unsupported.size(), reasons.size());
  EXPECT_EQ(*b.plan.unsupported_reason(b.plan.unsupported[0].config), "not expressible");
  // Without reasons, or with a plan left, an empty cubin list is still a broken bundle.
  manifest["unsupported"] = json::array();
  save();
  EXPECT_NE(load_error().find("lists no cubins"), std::string::npos);
}

// The CTA-cluster bundle (configs/clusters.json): tileiras fixes the cluster in the cubin and
// the launch grid counts clusters; CUPTI reports grid x cluster CTAs.
class ClusterBundle : public ::testing::Test {
 protected:
  void SetUp() override {
    source = pt::bundle_root() / "cutile_python_clusters" / "vector_add";
    ASSERT_TRUE(std::filesystem::exists(source / "manifest.json")) << source << ": run scripts/export_bundles.sh";
    dir = tmp.path() / "bundle";
    std::filesystem::copy(source, dir, std::filesystem::copy_options::recursive);
    manifest = json::parse(pt::read_text(dir / "manifest.json"));
  }
  pt::temp_dir tmp;
  std::filesystem::path source, dir;
  json manifest;
};

TEST_F(ClusterBundle, GridCountsClustersAndCuptiSeesCtas) {
  auto b = pb::load_bundle(dir);
  for (const auto& plan : b.plan.configs) {
    const auto& l = plan.launches.at(0);
    const auto* e = b.cubin(l.cubin).info.find(l.entry);
    ASSERT_NE(e, nullptr);
    EXPECT_TRUE(e->blocks_are_clusters) << l.entry;
    EXPECT_EQ(e->cluster[0], static_cast<int>(l.cluster[0])) << l.entry;
    EXPECT_GT(l.cluster[0], 1u);
    EXPECT_TRUE(l.grid_counts_clusters);
    EXPECT_EQ(l.cta_grid()[0], l.grid[0] * l.cluster[0]);
  }
}

TEST_F(ClusterBundle, DeclaredClusterMustMatchTheCubin) {
  manifest["configs"][0]["launches"][0]["cluster"] = json::array({1, 1, 1});
  pt::write_text(dir / "manifest.json", manifest.dump(1));
  try {
    (void)pb::load_bundle(dir);
    ADD_FAILURE() << "a cluster kernel declared without its cluster was accepted";
  } catch (const pb::bundle_error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("configs[0].launches[0].cluster: [1,1,1], but entry"), std::string::npos) << msg;
    EXPECT_NE(msg.find("EIATTR_CTA_PER_CLUSTER"), std::string::npos) << msg;
  }
}

TEST(Cubin, PlainTileIrEntryHasNoCluster) {
  for (const auto& dir : pt::all_bundles()) {
    if (dir.string().find("cutile_python/vector_add") == std::string::npos) continue;
    auto b = pb::load_bundle(dir);
    for (const auto& c : b.cubins) {
      for (const auto& e : c.info.entries) {
        EXPECT_EQ(e.cluster[0], 0) << e.name;
        EXPECT_FALSE(e.blocks_are_clusters) << e.name;
      }
    }
    for (const auto& plan : b.plan.configs) EXPECT_FALSE(plan.launches.at(0).grid_counts_clusters);
    return;
  }
  ADD_FAILURE() << "no cutile_python/vector_add bundle below " << pt::bundle_root();
}
