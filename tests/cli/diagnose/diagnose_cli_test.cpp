// SPDX-License-Identifier: Apache-2.0
// `portbench diagnose` and `portbench ir-diff` as real processes: a results file (written by
// the store's writer) whose provenance names the real smoke bundles, with two configurations
// planted slow; the findings must name what the cubins and manifests say, independently read.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "portbench/bundle/bundle.hpp"
#include "portbench/reference/spec.hpp"
#include "portbench/store/reader.hpp"
#include "process.hpp"
#include "synth.hpp"

namespace portbench::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const fs::path k_bundles = PORTBENCH_BUNDLE_DIR;
const char* k_slow = "vector_add/dtype=float32,n=67108864|rope/";

synth_options real_options() {
  synth_options o;
  o.bundles = k_bundles.string();
  o.slow_regex = k_slow;
  o.slow_speed = 0.5;
  o.port_speed = 0.995;
  o.port_speed_sd = 0;   // every other configuration at 0.995: above the 0.95 gate
  o.runs = 2;
  o.min_samples = 12;
  o.max_samples = 16;
  o.overwrite = true;
  return o;
}

class DiagnoseCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    s_dir = scratch_dir() / "diagnose";
    fs::create_directories(s_dir);
    s_file = s_dir / "real.h5";
    write_synthetic(s_file, real_options());
  }
  static inline fs::path s_dir, s_file;

  static json diagnose_json(std::vector<std::string> extra = {}) {
    std::vector<std::string> args{"diagnose", s_file.string(), "--format", "json", "--sass-cache", (s_dir / "sass").string()};
    args.insert(args.end(), extra.begin(), extra.end());
    auto r = portbench(args);
    EXPECT_EQ(r.rc, 0) << r.err;
    return json::parse(r.out);
  }
  static const json& config(const json& doc, const std::string& prefix) {
    for (const auto& c : doc["configs"]) {
      if (c["config"].get<std::string>().rfind(prefix, 0) == 0) return c;
    }
    static json none;
    ADD_FAILURE() << "no diagnosed configuration starting with " << prefix;
    return none;
  }
};

TEST_F(DiagnoseCli, SelectsExactlyThePlantedSlowConfigurations) {
  auto doc = diagnose_json();
  auto ordered = nlohmann::ordered_json::parse(portbench({"diagnose", s_file.string(), "--format", "json", "--no-sass"}).out);
  EXPECT_EQ(ordered.begin().key(), "verdict");   // a stage output leads with its verdict
  EXPECT_EQ(doc["verdict"], "FINDINGS");
  std::set<std::string> ids;
  for (const auto& c : doc["configs"]) {
    ids.insert(c["config"]);
    EXPECT_NEAR(c["ratio"].get<double>(), 0.5, 0.02) << c["config"];
  }
  EXPECT_EQ(ids.size(), 2u);
  EXPECT_EQ(ids.count("vector_add/dtype=float32,n=67108864"), 1u);
  EXPECT_EQ(doc["configs_in_file"], 20);
  EXPECT_EQ(doc["device"]["sm_count"], 132);   // from the recorded device description
  // A gate far above 0.995 takes every configuration; --config takes those named, whatever their speed.
  EXPECT_EQ(diagnose_json({"--gate", "1.5", "--no-sass"})["configs"].size(), 20u);
  EXPECT_EQ(diagnose_json({"--config", "^rms_norm/", "--no-sass"})["configs"].size(), 5u);
}

TEST_F(DiagnoseCli, FindingsNameWhatTheCubinsAndManifestsSay) {
  auto doc = diagnose_json();
  // rope: the port cubin's local memory, read here with the bundle library.
  const auto& rope = config(doc, "rope/");
  auto port_rope = bundle::load_bundle(k_bundles / "cutile_rust" / "rope");
  const auto& launch = rope["port"]["launches"][0];
  const auto* entry = port_rope.cubin(launch["cubin"]).info.find(launch["entry"]);
  ASSERT_NE(entry, nullptr);
  EXPECT_EQ(launch["resources"]["registers"], entry->registers);
  EXPECT_EQ(launch["resources"]["local_bytes"], std::max(entry->frame_bytes, entry->min_stack_bytes));
  int local = std::max(entry->frame_bytes, entry->min_stack_bytes);
  bool spill = false;
  for (const auto& f : rope["findings"]) {
    if (f["tag"] != "REGISTER_SPILL") continue;
    spill = true;
    EXPECT_NE(f["evidence"].get<std::string>().find(std::to_string(local) + " bytes of local memory"),
              std::string::npos) << f["evidence"];
  }
  EXPECT_EQ(spill, local > 0) << rope["findings"].dump();
  // vector_add: the exporters' tiles (manifest tuning) differ, and the ir-diff says so.
  const auto& va = config(doc, "vector_add/");
  auto tile_of = [](const fs::path& manifest) {
    auto m = json::parse(read_file(manifest));
    for (const auto& c : m["configs"]) {
      if (c["params"]["n"] == 67108864) return c["tuning"]["tile"].get<int>();
    }
    return 0;
  };
  int ref_tile = tile_of(k_bundles / "cutile_python" / "vector_add" / "manifest.json");
  int port_tile = tile_of(k_bundles / "cutile_rust" / "vector_add" / "manifest.json");
  ASSERT_NE(ref_tile, port_tile);
  EXPECT_EQ(va["ir_diff"]["verdict"], "FAIL_STRUCTURAL");
  bool tile = false;
  for (const auto& f : va["findings"]) {
    if (f["tag"] != "TILE_SHAPE_DIFFERS") continue;
    tile = true;
    auto ev = f["evidence"].get<std::string>();
    EXPECT_NE(ev.find("reference `load view weak " + std::to_string(ref_tile) + "xf32"), std::string::npos) << ev;
    EXPECT_NE(ev.find("port `load view weak " + std::to_string(port_tile) + "xf32"), std::string::npos) << ev;
  }
  EXPECT_TRUE(tile) << va["findings"].dump();
  // Waves: the grid over CTAs per SM x 132 SMs, as the plan and the occupancy say.
  const auto& r = va["port"]["launches"][0]["resources"];
  EXPECT_NEAR(r["waves"].get<double>(), r["ctas"].get<double>() / (r["ctas_per_sm"].get<double>() * 132), 1e-9);
  // Roofline: the operator's bytes over the best of N in the file.
  auto results = store::read_results(s_file, {.samples = false});
  const auto* c = results.find("vector_add/dtype=float32,n=67108864");
  ASSERT_NE(c, nullptr);
  double best = 1e300;
  for (const auto& run : c->find(store::role::port)->runs) best = std::min(best, run.stats.median_ns);
  double bytes = 3.0 * 67108864 * 4;   // x, y read, out written
  EXPECT_NEAR(va["port"]["roofline"]["achieved_gbps"].get<double>(), bytes / best, 1e-6 * bytes / best);
  // Every finding is ranked: scores never increase down the list.
  for (const auto& cfg : doc["configs"]) {
    double last = 1e9;
    for (const auto& f : cfg["findings"]) {
      EXPECT_LE(f["score"].get<double>(), last);
      last = f["score"];
    }
  }
}

TEST_F(DiagnoseCli, MarkdownHasTheSummaryAndSideBySideTables) {
  auto r = portbench({"diagnose", s_file.string(), "--sass-cache", (s_dir / "sass").string()});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("# portbench diagnose: FINDINGS"), std::string::npos);
  EXPECT_NE(r.out.find("| # | configuration | port/ref | top finding | evidence |"), std::string::npos);
  EXPECT_NE(r.out.find("| SASS global loads |"), std::string::npos);
  EXPECT_NE(r.out.find("| occupancy |"), std::string::npos);
  EXPECT_NE(r.out.find("ir-diff: **FAIL_STRUCTURAL**"), std::string::npos);
  EXPECT_NE(r.out.find("portbench_diagnose_verdict=FINDINGS"), std::string::npos);
}

TEST_F(DiagnoseCli, WithoutTheDisassemblerItStillRunsAndSaysSo) {
  auto doc = diagnose_json({"--nvdisasm", "/nonexistent/nvdisasm"});
  EXPECT_NE(doc["sass_tool"].get<std::string>().find("SASS mix unavailable"), std::string::npos) << doc["sass_tool"];
  const auto& va = config(doc, "vector_add/");
  EXPECT_TRUE(va["port"]["launches"][0]["sass"].is_null());
  EXPECT_NE(va["port"]["launches"][0]["sass_note"].get<std::string>().find("unavailable"), std::string::npos);
  EXPECT_FALSE(va["findings"].empty());   // the Tile IR and the roofline still speak
}

TEST_F(DiagnoseCli, SassLimitBoundsTheDisassemblyToTheSlowest) {
  auto doc = diagnose_json({"--gate", "1.5", "--sass-limit", "1"});
  ASSERT_EQ(doc["configs"].size(), 20u);
  EXPECT_FALSE(doc["configs"][0]["port"]["launches"][0]["sass"].is_null());   // the slowest
  int left_out = 0;
  for (std::size_t i = 1; i < doc["configs"].size(); ++i) {
    for (const auto& l : doc["configs"][i]["port"]["launches"]) {
      if (l["sass"].is_null()) {
        ++left_out;
        EXPECT_NE(l["sass_note"].get<std::string>().find("--sass-limit"), std::string::npos) << l["sass_note"];
      }
    }
  }
  EXPECT_GT(left_out, 10);
}

TEST_F(DiagnoseCli, MovedBundlesAreFoundWithBundlesAndChangedManifestsAreNoted) {
  fs::path moved = s_dir / "moved", original = s_dir / "original";
  fs::remove_all(moved);
  fs::remove_all(original);
  for (const char* fe : {"cutile_python", "cutile_rust"}) {
    fs::create_directories(original / fe);
    fs::copy(k_bundles / fe / "rope", original / fe / "rope", fs::copy_options::recursive);
  }
  auto o = real_options();
  o.bundles = original.string();
  fs::path file = s_dir / "moved.h5";
  write_synthetic(file, o);
  fs::rename(original, moved);
  auto run = [&](std::vector<std::string> extra) {
    std::vector<std::string> args{"diagnose", file.string(), "--format", "json", "--no-sass"};
    args.insert(args.end(), extra.begin(), extra.end());
    auto r = portbench(args);
    EXPECT_EQ(r.rc, 0) << r.err;
    return json::parse(r.out);
  };
  auto lost = run({});
  ASSERT_EQ(lost["configs"].size(), 1u);
  EXPECT_NE(lost["configs"][0]["port"]["problem"].get<std::string>().find("no cutile_rust bundle of rope"), std::string::npos);
  auto found = run({"--bundles", moved.string()});
  EXPECT_EQ(found["configs"][0]["port"]["problem"], "");
  EXPECT_EQ(found["configs"][0]["port"]["bundle_note"], "manifest sha256 matches the run");
  bool noted = false;
  for (const auto& n : found["notes"]) noted = noted || n.get<std::string>().find("--bundles") != std::string::npos;
  EXPECT_TRUE(noted) << found["notes"].dump();
  {
    std::ofstream(moved / "cutile_rust" / "rope" / "manifest.json", std::ios::app) << "\n";
  }
  auto changed = run({"--bundles", moved.string()});
  EXPECT_NE(changed["configs"][0]["port"]["bundle_note"].get<std::string>().find("manifest changed since the run"),
            std::string::npos);
}

TEST_F(DiagnoseCli, ACudaCppReferenceWithoutTileIrStillShowsThePortsSecondRead) {
  auto o = real_options();
  o.reference_frontend = "cuda_cpp";
  o.port_frontend = "cutile_python";
  o.slow_regex = "m=30000";
  fs::path file = s_dir / "cuda_ref.h5";
  write_synthetic(file, o);
  auto r = portbench({"diagnose", file.string(), "--format", "json", "--sass-cache", (s_dir / "sass").string()});
  ASSERT_EQ(r.rc, 0) << r.err;
  auto doc = json::parse(r.out);
  ASSERT_EQ(doc["configs"].size(), 1u);
  const auto& c = doc["configs"][0];
  EXPECT_NE(c["ir_diff"]["reason"].get<std::string>().find("has no Tile IR text"), std::string::npos);
  ASSERT_FALSE(c["findings"].empty());
  EXPECT_EQ(c["findings"][0]["tag"], "REREADS_INPUT") << c["findings"].dump();
  EXPECT_NE(c["findings"][0]["evidence"].get<std::string>().find("argument 0 loaded in"), std::string::npos);
}

TEST_F(DiagnoseCli, BadInputIsOneLineAndExitTwo) {
  auto r = portbench({"diagnose", (s_dir / "missing.h5").string()});
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(line_count(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("missing.h5"), std::string::npos) << r.err;
  auto bad = portbench({"ir-diff", (k_bundles / "cutile_python" / "rms_norm").string(), (s_dir / "nope").string()});
  EXPECT_EQ(bad.rc, 2);
  EXPECT_NE(bad.err.find("nope"), std::string::npos) << bad.err;
  EXPECT_EQ(line_count(bad.err), 1) << bad.err;
}

TEST_F(DiagnoseCli, IrDiffOfTheTwoCutileFrontEndsNamesTheirDifferences) {
  auto r = portbench({"ir-diff", (k_bundles / "cutile_python").string(), (k_bundles / "cutile_rust").string(),
                      "--config", "^vector_add/", "--format", "json"});
  EXPECT_EQ(r.rc, 1) << r.err;   // one configuration differs structurally
  auto doc = json::parse(r.out);
  EXPECT_EQ(doc["verdict"], "FAIL_STRUCTURAL");
  ASSERT_EQ(doc["bundles"].size(), 1u);
  for (const auto& c : doc["bundles"][0]["configs"]) {
    bool big = c["config"] == "vector_add/dtype=float32,n=67108864";
    EXPECT_EQ(c["verdict"], big ? "FAIL_STRUCTURAL" : "PASS_WITH_NOTES") << c["config"];
  }
  auto aa = portbench({"ir-diff", (k_bundles / "cutile_rust").string(), (k_bundles / "cutile_rust").string()});
  EXPECT_EQ(aa.rc, 0) << aa.out;
  EXPECT_NE(aa.out.find("portbench_ir_diff_verdict=PASS\n"), std::string::npos);
}

}  // namespace
}  // namespace portbench::testing
