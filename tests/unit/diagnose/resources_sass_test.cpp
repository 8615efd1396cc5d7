// SPDX-License-Identifier: Apache-2.0
// Occupancy against hand-worked H200 figures; SASS classes of known opcodes; the mix parsed
// from real nvdisasm output of the exported cubins, cross-checked against cuobjdump -sass.
#include <gtest/gtest.h>

#include <regex>
#include <sstream>

#include "portbench/bundle/bundle.hpp"
#include "portbench/diagnose/resources.hpp"
#include "portbench/diagnose/sass.hpp"
#include "test_support.hpp"

namespace portbench::diagnose {
namespace {

namespace fs = std::filesystem;

device_spec h200() {
  auto d = find_device("NVIDIA H200");
  EXPECT_TRUE(d.has_value());
  return d.value_or(device_spec{});
}

TEST(Occupancy, RegistersSharedMemoryAndThreadsLimitAsWorkedByHand) {
  auto d = h200();
  EXPECT_EQ(d.sm_count, 132);
  bundle::cubin_entry e;
  e.registers = 64;
  e.static_shared_bytes = 35928;
  e.tile_ir = true;
  e.required_block = {256, 1, 1};
  bundle::launch_spec l;
  l.grid = {512, 1, 1};
  // 64 regs x 32 lanes = 2048 per warp; 65536 / 2048 = 32 warps = 4 CTAs of 8 warps.
  // Shared: 233472 / (35928 + 1024) = 6 CTAs. Threads: 2048 / 256 = 8. So 4, by registers.
  auto r = resources_of(e, l, d);
  EXPECT_EQ(r.threads_per_cta, 256);   // .reqntid, not the launch's block (1,1,1)
  EXPECT_EQ(r.ctas_per_sm, 4);
  EXPECT_EQ(r.limiter, "registers");
  EXPECT_DOUBLE_EQ(r.occupancy, 0.5);
  EXPECT_NEAR(r.waves, 512.0 / (4 * 132), 1e-12);
  EXPECT_NEAR(r.fill(), 512.0 / 528, 1e-12);

  e.registers = 32;                    // 1024 per warp: 64 warps = 8 CTAs; shared still 6
  r = resources_of(e, l, d);
  EXPECT_EQ(r.ctas_per_sm, 6);
  EXPECT_EQ(r.limiter, "shared memory");

  e.static_shared_bytes = 0;
  e.tile_ir = false;
  l.block = {1024, 1, 1};              // 2048 / 1024 = 2 CTAs by threads (32 regs allow 2)
  r = resources_of(e, l, d);
  EXPECT_EQ(r.threads_per_cta, 1024);
  EXPECT_EQ(r.ctas_per_sm, 2);
  EXPECT_EQ(r.limiter, "threads");

  l.grid = {3000, 1, 1};               // 32 CTAs/SM x 132 SMs = 4224 slots: 0.71 waves
  l.block = {32, 1, 1};
  e.registers = 16;
  r = resources_of(e, l, d);
  EXPECT_EQ(r.ctas_per_sm, 32);
  EXPECT_EQ(r.limiter, "CTA slots");
  EXPECT_NEAR(r.fill(), 3000.0 / 4224, 1e-12);   // under one wave: the share of slots filled
  l.grid = {10000, 1, 1};              // 2.37 waves: the third one 37% full, 79% overall
  r = resources_of(e, l, d);
  EXPECT_NEAR(r.fill(), (10000.0 / 4224) / 3, 1e-12);
}

TEST(Sass, OpcodeClassesAndWidths) {
  int bits = 0;
  EXPECT_EQ(classify_sass("LDG.E.128.CONSTANT", &bits), sass_class::global_load);
  EXPECT_EQ(bits, 128);
  EXPECT_EQ(classify_sass("LDG.E.U16", &bits), sass_class::global_load);
  EXPECT_EQ(bits, 16);
  EXPECT_EQ(classify_sass("LDG.E", &bits), sass_class::global_load);
  EXPECT_EQ(bits, 32);
  EXPECT_EQ(classify_sass("STG.E.64", &bits), sass_class::global_store);
  EXPECT_EQ(bits, 64);
  EXPECT_EQ(classify_sass("LDGSTS.E.BYPASS.LTC128B.128", &bits), sass_class::global_load_async);
  EXPECT_EQ(bits, 128);
  EXPECT_EQ(classify_sass("UTMALDG.2D"), sass_class::tma);
  EXPECT_EQ(classify_sass("UBLKCP.S.G"), sass_class::tma);
  EXPECT_EQ(classify_sass("HGMMA.64x128x16.F32.BF16"), sass_class::tensor);
  EXPECT_EQ(classify_sass("HMMA.16816.F32"), sass_class::tensor);
  EXPECT_EQ(classify_sass("LDL.64"), sass_class::local);
  EXPECT_EQ(classify_sass("LDS.128"), sass_class::shared);
  EXPECT_EQ(classify_sass("FFMA.FTZ"), sass_class::ffma);
  EXPECT_EQ(classify_sass("MUFU.RSQ"), sass_class::mufu);
  EXPECT_EQ(classify_sass("SYNCS.ARRIVE.TRANS64"), sass_class::barrier);
  EXPECT_EQ(classify_sass("BAR.SYNC.DEFER_BLOCKING"), sass_class::barrier);
  EXPECT_EQ(classify_sass("SHFL.BFLY"), sass_class::shuffle);
  EXPECT_EQ(classify_sass("IMAD.MOV.U32"), sass_class::other);
}

/// cuobjdump -sass: instructions per "Function : name".
std::map<std::string, int> cuobjdump_counts(const fs::path& cuobjdump, const fs::path& cubin) {
  auto dir = cuobjdump.parent_path().string();
  auto r = testing::run_process({"/usr/bin/env", "PATH=" + dir + ":/usr/bin:/bin", cuobjdump.string(), "-sass", cubin.string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::map<std::string, int> out;
  std::regex function(R"(^\s*Function : (\S+))");
  std::regex instruction(R"(^\s*/\*[0-9a-f]{4,}\*/\s+[@!A-Z])");
  std::string current;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (std::regex_search(line, m, function)) current = m[1];
    else if (!current.empty() && std::regex_search(line, instruction)) ++out[current];
  }
  return out;
}

TEST(Sass, MixOfEveryExportedCubinAgreesWithCuobjdump) {
  std::string searched;
  auto tool = find_sass_tool("", &searched);
  if (!tool) GTEST_SKIP() << "no nvdisasm (looked in " << searched << "): run scripts/setup.sh";
  fs::path cuobjdump = tool->path.parent_path() / "cuobjdump";
  if (!fs::exists(cuobjdump)) GTEST_SKIP() << "no cuobjdump beside " << tool->path;
  testing::temp_dir cache;
  sass_reader reader(*tool, {.cache_dir = cache.path(), .jobs = 2});
  std::vector<std::pair<std::string, fs::path>> cubins;
  std::vector<bundle::bundle> bundles;
  for (const char* fe : {"cutile_python", "cutile_rust", "triton", "cuda_cpp"}) {
    for (const auto& dir : bundle::find_bundles(testing::bundle_root() / fe)) {
      if (dir.filename() != "rms_norm") continue;   // every front end, one operator: ~0.5 s per cubin
      bundles.push_back(bundle::load_bundle(dir));
      for (const auto& c : bundles.back().cubins) cubins.emplace_back(c.ref.sha256, c.path);
    }
  }
  ASSERT_GT(cubins.size(), 8u);
  reader.load(cubins);
  EXPECT_EQ(reader.disassembled(), static_cast<int>(cubins.size()));
  int entries = 0, with_tma = 0, with_ldg = 0;
  for (const auto& b : bundles) {
    for (const auto& c : b.cubins) {
      auto want = cuobjdump_counts(cuobjdump, c.path);
      for (const auto& e : c.info.entries) {
        std::string why;
        const auto* m = reader.mix(c.ref.sha256, e.name, &why);
        ASSERT_NE(m, nullptr) << c.path << " " << e.name << ": " << why;
        EXPECT_EQ(m->total, want[e.name]) << c.path << " " << e.name;
        int sum = 0;
        for (const auto& [cls, n] : m->classes) sum += n;
        EXPECT_EQ(sum, m->total);
        ++entries;
        with_tma += m->count(sass_class::tma) > 0;
        with_ldg += m->count(sass_class::global_load) > 0;
      }
    }
  }
  EXPECT_GT(entries, 8);
  EXPECT_GT(with_tma, 0);   // cuTile rows come through TMA
  EXPECT_GT(with_ldg, 0);   // Triton and CUDA C++ load with LDG
  // A second reader finds everything in the cache and disassembles nothing.
  sass_reader again(*tool, {.cache_dir = cache.path(), .jobs = 2});
  again.load(cubins);
  EXPECT_EQ(again.disassembled(), 0);
  EXPECT_EQ(again.cached(), static_cast<int>(cubins.size()));
}

TEST(Sass, AnExplicitToolThatIsMissingIsNotReplaced) {
  std::string searched;
  EXPECT_FALSE(find_sass_tool("/nonexistent/nvdisasm", &searched).has_value());
  EXPECT_EQ(searched, "/nonexistent/nvdisasm");
}

}  // namespace
}  // namespace portbench::diagnose
