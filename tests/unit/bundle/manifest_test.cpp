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

}  // namespace
