// SPDX-License-Identifier: Apache-2.0
// Every front end's exported kernels, launched from C++ through the driver API on random inputs
// and checked against the fp64 reference. Skips (visibly) where there is no CUDA device.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <set>

#include "device_fixture.hpp"
#include "portbench/bundle/bundle.hpp"
#include "portbench/cuda/driver.hpp"
#include "portbench/cuda/error.hpp"
#include "portbench/cuda/memory.hpp"
#include "portbench/cuda/stream.hpp"
#include "portbench/measure/output_guard.hpp"
#include "portbench/verify/device_tensors.hpp"
#include "portbench/verify/numerics.hpp"
#include "portbench/verify/output_digest.hpp"
#include "test_support.hpp"

namespace pb = portbench::bundle;
namespace pc = portbench::cuda;
namespace pv = portbench::verify;
namespace pt = portbench::testing;
namespace verdicts = portbench::verdicts;

namespace {

using Launch = portbench::testing::device_test;

// Appends one line per checked configuration to $PORTBENCH_GPU_SUMMARY (the device script
// prints it as its closing table).
void summarize(const std::string& line) {
  if (const char* path = std::getenv("PORTBENCH_GPU_SUMMARY")) {
    std::ofstream(path, std::ios::app) << line << "\n";
  }
}

TEST_F(Launch, EveryBundleConfigurationIsCorrectOnRandomInputs) {
  std::uint64_t seed = std::random_device{}();
  RecordProperty("seed", std::to_string(seed));
  std::set<std::string> passed_frontends;
  for (const auto& dir : pt::all_bundles()) {
    pb::bundle b = pb::load_bundle(dir);
    if (b.plan.frontend == "faults") continue;   // broken on purpose: tests/gpu_timing/faults
    for (const auto& plan : b.plan.configs) {
      SCOPED_TRACE(b.plan.frontend + " " + plan.config.id() + " seed " + std::to_string(seed));
      std::string verdict, detail;
      try {
        auto res = pv::check_numerics(ctx, b, plan, {.seed = seed});
        verdict = res.verdict;
        for (const auto& rep : res.reports) {
          detail += rep.tensor + " checked=" + std::to_string(rep.checked) + " bad=" + std::to_string(rep.bad) +
                    " max_abs=" + std::to_string(rep.max_abs_err) + " ";
        }
      } catch (const pc::cuda_error& e) {
        verdict = verdicts::numerics::error;
        detail = e.what();
        if (e.is_sticky()) {
          summarize(b.plan.frontend + "\t" + plan.config.id() + "\t" + verdict + "\t" + detail);
          FAIL() << "context lost: " << e.what();
        }
      }
      summarize(b.plan.frontend + "\t" + plan.config.id() + "\t" + verdict + "\t" + detail);
      EXPECT_EQ(verdict, verdicts::numerics::pass) << detail;
      if (verdict == verdicts::numerics::pass) passed_frontends.insert(b.plan.frontend + "/" + b.plan.op);
    }
  }
  for (const char* fe : {"cutile_python", "cutile_rust", "triton", "cuda_cpp"}) {
    for (const char* op : {"vector_add", "rms_norm"}) {
      EXPECT_TRUE(passed_frontends.count(std::string(fe) + "/" + op)) << fe << " " << op << " never passed";
    }
  }
  // Every bundle whose kernels take descriptor tables (array_table: tilegym's group_gemm, a
  // cuTile list of arrays) passed too, not only its first configuration.
  for (const auto& dir : pt::all_bundles()) {
    const pb::manifest m = pb::parse_manifest(dir / "manifest.json");
    bool tables = false;
    for (const auto& c : m.configs) {
      for (const auto& l : c.launches) tables = tables || !pb::descriptor_tables({l}).empty();
    }
    if (tables) {
      EXPECT_TRUE(passed_frontends.count(m.frontend + "/" + m.op)) << dir << ": array_table bundle never passed";
    }
  }
}

TEST_F(Launch, DescriptorTablesOnTheDeviceHoldTheHostWordsOfTheBoundTensors) {
  // What the kernel reads through an array_table parameter: the table device_tensors built,
  // downloaded, is each listed tensor's device address, extents and strides, packed.
  std::size_t checked = 0;
  for (const auto& dir : pt::all_bundles()) {
    pb::bundle b = pb::load_bundle(dir);
    for (const auto& plan : b.plan.configs) {
      const auto tables = pb::descriptor_tables(plan.launches);
      if (tables.empty()) continue;
      SCOPED_TRACE(b.plan.frontend + " " + plan.config.id());
      const auto& op = portbench::reference::find_operator(plan.config.op);
      const auto host = portbench::reference::make_inputs(op, plan.config, 1);
      pv::device_tensors dev(ctx, host, plan);
      for (const auto& p : tables) {
        const auto want = pb::table_descriptors(p, dev.tensors(), "test");
        ASSERT_EQ(want.size(), p.tensors.size() * (1 + 2 * static_cast<std::size_t>(p.rank)));
        const auto it = dev.scratch().array_tables.find(p.tensors);
        ASSERT_NE(it, dev.scratch().array_tables.end());
        std::vector<std::uint64_t> got(want.size());
        PB_CU(ctx->api().cuMemcpyDtoH(got.data(), it->second, got.size() * sizeof(std::uint64_t)));
        EXPECT_EQ(got, want);
        for (std::size_t i = 0; i < p.tensors.size(); ++i) {
          EXPECT_EQ(got[i * (1 + 2 * static_cast<std::size_t>(p.rank))], dev.tensors().at(p.tensors[i]).address);
        }
        ++checked;
      }
      break;   // one configuration per bundle
    }
  }
  if (checked == 0) GTEST_SKIP() << "no bundle with array_table parameters (tilegym's group_gemm: scripts/export_bundles.sh)";
}

TEST_F(Launch, PoisonIsOverwrittenForTwoDifferentPatterns) {
  // The same launch with two different poisons must give identical outputs: an element the
  // kernel skipped would keep the poison and differ.
  for (const auto& dir : pt::all_bundles()) {
    pb::bundle b = pb::load_bundle(dir);
    if (b.plan.frontend == "faults") continue;
    const auto& plan = b.plan.configs.front();
    SCOPED_TRACE(b.plan.frontend + " " + plan.config.id());
    auto first = pv::check_numerics(ctx, b, plan, {.seed = 7, .poison = 0xFFFFFFFFu, .keep_outputs = true});
    auto second = pv::check_numerics(ctx, b, plan, {.seed = 7, .poison = 0x7F7F7F7Fu, .keep_outputs = true});
    EXPECT_EQ(first.verdict, verdicts::numerics::pass);
    EXPECT_EQ(second.verdict, verdicts::numerics::pass);
    ASSERT_FALSE(first.outputs.empty());
    ASSERT_EQ(first.outputs.size(), second.outputs.size());
    for (std::size_t i = 0; i < first.outputs.size(); ++i) {
      const auto& a = first.outputs[i];
      const auto& c = second.outputs[i];
      ASSERT_EQ(a.spec.name, c.spec.name);
      ASSERT_EQ(a.bytes.size(), c.bytes.size()) << a.spec.name;
      // Only the elements the view covers are outputs; storage outside it keeps the poison.
      std::int64_t differing = 0, first_at = -1;
      const std::size_t es = portbench::reference::size_of(a.spec.type);
      for (std::int64_t e = 0; e < a.spec.elements(); ++e) {
        std::vector<std::int64_t> index(a.spec.shape.size());
        std::int64_t rest = e;
        for (std::size_t d = a.spec.shape.size(); d-- > 0;) {
          index[d] = rest % a.spec.shape[d];
          rest /= a.spec.shape[d];
        }
        const auto at = static_cast<std::size_t>(a.spec.storage_index(index)) * es;
        if (std::memcmp(a.bytes.data() + at, c.bytes.data() + at, es) != 0) {
          if (differing++ == 0) first_at = e;
        }
      }
      EXPECT_EQ(differing, 0) << a.spec.name << ": elements differ between the two poisons (first at " << first_at
                              << "): the kernel left them unwritten";
    }
  }
}

TEST_F(Launch, FillAndUploadAreCompleteForKernelsOnOtherStreams) {
  // The harness poisons outputs and uploads inputs through the legacy stream and launches on a
  // non-blocking one, which does not wait for it: a 600 MB poison once raced the kernel after
  // it. A kernel enqueued right after fill_u32/upload must see every element.
  constexpr std::size_t k_bytes = std::size_t{1} << 30;
  pc::device_buffer buf(ctx, k_bytes);
  pc::stream s(ctx);
  portbench::measure::output_guard guard(ctx);
  for (std::uint32_t pattern : {0xA5A5A5A5u, 0x3C3C3C3Cu, 0x5A5A5A5Au}) {
    buf.fill_u32(pattern);
    guard.enqueue_count(s, buf.address(), k_bytes, 4, pattern);
    EXPECT_EQ(guard.read_and_reset(s), k_bytes / 4) << "fill_u32 " << std::hex << pattern;
  }
  std::vector<std::byte> host(k_bytes, std::byte{0x77});
  buf.upload(host);
  guard.enqueue_count(s, buf.address(), k_bytes, 4, 0x77777777u);
  EXPECT_EQ(guard.read_and_reset(s), k_bytes / 4) << "upload";
  // The restore of an in-place input from its pristine device copy (a 4 GiB rope input raced
  // the kernel after it before copy_from waited).
  pc::device_buffer pristine(ctx, k_bytes);
  for (std::uint32_t pattern : {0x1E1E1E1Eu, 0x6B6B6B6Bu}) {
    pristine.fill_u32(pattern);
    buf.copy_from(pristine);
    guard.enqueue_count(s, buf.address(), k_bytes, 4, pattern);
    EXPECT_EQ(guard.read_and_reset(s), k_bytes / 4) << "copy_from " << std::hex << pattern;
  }
}

TEST_F(Launch, OutputDigestSeesEveryByte) {
  // Reproduction and reuse of a verification rest on the digest: any changed byte, at any
  // position (the partial last word included), and another tensor name must change it.
  pc::stream s(ctx);
  pv::output_digest digest(ctx);
  std::mt19937_64 rng(11);
  for (std::size_t bytes : {std::size_t{2}, std::size_t{6}, (std::size_t{1} << 20) + 2, std::size_t{48} << 20}) {
    SCOPED_TRACE(bytes);
    std::vector<std::byte> host(bytes);
    for (auto& b : host) b = static_cast<std::byte>(rng());
    pc::device_buffer buf(ctx, bytes);
    buf.upload(host);
    const std::vector<pv::device_tensors::output_view> view{{"y", buf.address(), bytes, 2}};
    const std::string first = digest.of(s, view);
    EXPECT_EQ(digest.of(s, view), first) << "the same bytes twice";
    EXPECT_NE(digest.of(s, {{"z", buf.address(), bytes, 2}}), first) << "another tensor name";
    for (std::size_t pos : {std::size_t{0}, bytes / 2, bytes - 1, static_cast<std::size_t>(rng() % bytes)}) {
      auto changed = host;
      changed[pos] ^= std::byte{1} << (rng() % 8);
      buf.upload(changed);
      EXPECT_NE(digest.of(s, view), first) << "bit flipped at byte " << pos;
    }
    // Two words swapped: a sum of position-free word hashes would not notice.
    if (bytes >= 8) {
      auto swapped = host;
      std::swap_ranges(swapped.begin(), swapped.begin() + 4, swapped.begin() + 4);
      if (swapped != host) {
        buf.upload(swapped);
        EXPECT_NE(digest.of(s, view), first) << "two words swapped";
      }
    }
    buf.upload(host);
    EXPECT_EQ(digest.of(s, view), first) << "restored bytes";
  }
}

}  // namespace
