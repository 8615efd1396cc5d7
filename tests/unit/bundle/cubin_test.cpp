// SPDX-License-Identifier: Apache-2.0
// Cubin inspection on the real cubins every exporter wrote, cross-checked against cuobjdump.
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>

#include "portbench/bundle/bundle.hpp"
#include "portbench/bundle/cubin.hpp"
#include "portbench/bundle/error.hpp"
#include "test_support.hpp"

namespace pb = portbench::bundle;
namespace pt = portbench::testing;

namespace {

// Parses cuobjdump -elf's KPARAM_INFO lines: entry -> [(ordinal, offset, size)].
std::map<std::string, std::vector<pb::cubin_param>> cuobjdump_params(const std::filesystem::path& cubin) {
  auto r = pt::run_process({PORTBENCH_CUOBJDUMP, "-elf", cubin.string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::map<std::string, std::vector<pb::cubin_param>> out;
  std::regex section(R"(^\.nv\.info\.(\S+)\s*$)");
  std::regex kparam(R"(Ordinal\s*:\s*0x([0-9a-f]+)\s+Offset\s*:\s*0x([0-9a-f]+)\s+Size\s*:\s*0x([0-9a-f]+))");
  std::string current;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (std::regex_match(line, m, section)) current = m[1];
    else if (line.rfind(".", 0) == 0) current.clear();
    else if (!current.empty() && std::regex_search(line, m, kparam)) {
      out[current].push_back({std::stoi(m[1], nullptr, 16), std::stoi(m[2], nullptr, 16), std::stoi(m[3], nullptr, 16)});
    }
  }
  for (auto& [name, ps] : out) {
    std::sort(ps.begin(), ps.end(), [](auto& a, auto& b) { return a.ordinal < b.ordinal; });
  }
  return out;
}

TEST(Cubin, EveryExportedCubinInspectsAndAgreesWithCuobjdump) {
  if (!std::filesystem::exists(PORTBENCH_CUOBJDUMP)) GTEST_SKIP() << "cuobjdump not installed: run scripts/setup.sh";
  int cubins = 0;
  for (const auto& dir : pt::all_bundles()) {
    for (const auto& e : std::filesystem::directory_iterator(dir)) {
      if (e.path().extension() != ".cubin") continue;
      ++cubins;
      auto image = pt::read_bytes(e.path());
      pb::cubin_info info = pb::inspect_cubin(image, e.path().string());
      EXPECT_EQ(info.sm, 90) << e.path();
      ASSERT_FALSE(info.entries.empty()) << e.path();
      auto reference = cuobjdump_params(e.path());
      for (const auto& entry : info.entries) {
        EXPECT_GT(entry.registers, 0) << e.path() << " " << entry.name;
        ASSERT_TRUE(reference.count(entry.name)) << "cuobjdump has no .nv.info." << entry.name;
        const auto& want = reference[entry.name];
        ASSERT_EQ(entry.params.size(), want.size()) << entry.name;
        for (std::size_t i = 0; i < want.size(); ++i) {
          EXPECT_EQ(entry.params[i].ordinal, want[i].ordinal);
          EXPECT_EQ(entry.params[i].offset, want[i].offset);
          EXPECT_EQ(entry.params[i].size, want[i].size);
        }
      }
    }
  }
  EXPECT_GT(cubins, 0);
}

// cuobjdump -elf's value of attribute `name` in each .nv.info.<entry> (absent: not in the map).
std::map<std::string, int> cuobjdump_attribute(const std::string& dump, const std::string& name) {
  std::map<std::string, int> out;
  std::regex section(R"(^\.nv\.info\.(\S+)\s*$)");
  std::regex value(R"(^\s*Value:\s*0x([0-9a-f]+))");
  std::string current;
  bool want = false;
  std::istringstream lines(dump);
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (std::regex_match(line, m, section)) current = m[1];
    else if (line.rfind(".", 0) == 0) current.clear();
    else if (!current.empty() && line.find("Attribute:\t" + name) != std::string::npos) want = line.substr(line.find(name)) == name;
    else if (want && std::regex_search(line, m, value)) {
      out[current] = std::stoi(m[1], nullptr, 16);
      want = false;
    }
  }
  return out;
}

TEST(Cubin, ResourceAttributesAgreeWithCuobjdump) {
  if (!std::filesystem::exists(PORTBENCH_CUOBJDUMP)) GTEST_SKIP() << "cuobjdump not installed: run scripts/setup.sh";
  int checked = 0;
  for (const auto& dir : pt::all_bundles()) {
    for (const auto& e : std::filesystem::directory_iterator(dir)) {
      if (e.path().extension() != ".cubin") continue;
      auto info = pb::inspect_cubin(pt::read_bytes(e.path()), e.path().string());
      auto dump = pt::run_process({PORTBENCH_CUOBJDUMP, "-elf", e.path().string()}).out;
      auto maxreg = cuobjdump_attribute(dump, "EIATTR_MAXREG_COUNT");
      auto barriers = cuobjdump_attribute(dump, "EIATTR_NUM_BARRIERS");
      auto mbarriers = cuobjdump_attribute(dump, "EIATTR_NUM_MBARRIERS");
      for (const auto& entry : info.entries) {
        EXPECT_EQ(entry.max_registers, maxreg.count(entry.name) ? maxreg[entry.name] : -1) << e.path();
        EXPECT_EQ(entry.barriers, barriers.count(entry.name) ? barriers[entry.name] : 0) << e.path();
        EXPECT_EQ(entry.mbarriers, mbarriers.count(entry.name) ? mbarriers[entry.name] : 0) << e.path();
        checked += mbarriers.count(entry.name) ? 1 : 0;
      }
    }
  }
  EXPECT_GT(checked, 10);   // the Tile IR (TMA) entries carry mbarriers
}

TEST(Cubin, RejectsTruncatedImagesWithOneLineNamingTheFile) {
  auto bundles = pt::all_bundles();
  ASSERT_FALSE(bundles.empty());
  for (const auto& e : std::filesystem::directory_iterator(bundles.front())) {
    if (e.path().extension() != ".cubin") continue;
    auto image = pt::read_bytes(e.path());
    for (std::size_t keep : {std::size_t{0}, std::size_t{10}, std::size_t{64}, image.size() / 2, image.size() - 1}) {
      std::vector<std::byte> cut(image.begin(), image.begin() + static_cast<std::ptrdiff_t>(keep));
      try {
        (void)pb::inspect_cubin(cut, "cut.cubin");
        ADD_FAILURE() << "a cubin cut to " << keep << " bytes was accepted";
      } catch (const pb::bundle_error& err) {
        std::string msg = err.what();
        EXPECT_EQ(msg.rfind("cut.cubin: ", 0), 0u) << msg;
        EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
      }
    }
    return;
  }
  FAIL() << "no cubin in " << bundles.front();
}

TEST(Cubin, RejectsNonElfInput) {
  std::vector<std::byte> text(200, std::byte{'x'});
  EXPECT_THROW((void)pb::inspect_cubin(text, "x.cubin"), pb::bundle_error);
}

}  // namespace
