// SPDX-License-Identifier: Apache-2.0
// `portbench tune` on a bundle whose configurations carry two real candidate plans: the plain
// cuTile vector_add and the same kernel compiled with CTA clusters of 2 (grid counted in
// clusters, CUPTI reporting CTAs). Both must pass numerics and proof, and the record must name
// the faster one with its measured speedup.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "portbench/cuda/context.hpp"
#include "portbench/cuda/driver.hpp"
#include "test_support.hpp"

namespace pt = portbench::testing;
using json = nlohmann::json;

namespace {

// bundles/cutile_python/vector_add with the cluster cubin of bundles/cutile_python_clusters
// added as variant "cta2" of every configuration whose grid the cluster kernel covers.
std::filesystem::path bundle_with_cluster_variant(const pt::temp_dir& tmp) {
  const auto plain = pt::bundle_root() / "cutile_python" / "vector_add";
  const auto clusters = pt::bundle_root() / "cutile_python_clusters" / "vector_add";
  const auto dir = tmp.path() / "vector_add";
  std::filesystem::copy(plain, dir, std::filesystem::copy_options::recursive);
  json m = json::parse(pt::read_text(dir / "manifest.json"));
  const json cm = json::parse(pt::read_text(clusters / "manifest.json"));
  json cta2_launch;
  for (const auto& c : cm["configs"]) {
    if (c["launches"][0]["cluster"][0] == 2) cta2_launch = c["launches"][0];
  }
  EXPECT_FALSE(cta2_launch.is_null()) << "no num_ctas 2 configuration in " << clusters;
  const std::string file = cta2_launch["cubin"];
  std::filesystem::copy_file(clusters / file, dir / file);
  for (const auto& c : cm["cubins"]) {
    if (c["file"] == file) m["cubins"].push_back(c);
  }
  for (auto& c : m["configs"]) {
    json l = cta2_launch;
    l["grid"] = c["launches"][0]["grid"];   // one cluster per 1024-element tile, as the plain grid
    c["variants"] = json::array({{{"name", "plain"}, {"launches", c["launches"]}},
                                 {{"name", "cta2"}, {"tuning", {{"num_ctas", 2}}}, {"launches", json::array({l})}}});
    c["tuning"]["variant"] = "plain";
    c["tuning"]["tuning_source"] = "default: test";
  }
  pt::write_text(dir / "manifest.json", m.dump(1));
  return dir;
}

// A bundle with two candidate plans, where its record goes, and the device's name as the driver
// gives it to this process (not as portbench's worker says it).
class Tune : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (!portbench::cuda::device_available(&why)) GTEST_SKIP() << "no CUDA device: " << why;
    dir = bundle_with_cluster_variant(tmp);
    record = tmp.path() / "record.json";
    gpu = portbench::cuda::context::open(0)->info().name;
    ASSERT_FALSE(gpu.empty());
  }
  pt::temp_dir tmp;
  std::filesystem::path dir, record;
  std::string gpu;
};

TEST_F(Tune, TimesEveryVariantAndRecordsTheFastestThatPasses) {
  const auto r = pt::run_process({PORTBENCH_BIN, "tune", dir.string(), "--runs", "2", "--time-cap", "0.2",
                                  "--gpu", gpu, "--out", record.string()});
  std::printf("%s\n%s\n", r.out.c_str(), r.err.c_str());
  ASSERT_EQ(r.exit_code, 0);
  const json rec = json::parse(pt::read_text(record));
  EXPECT_EQ(rec["schema"], "portbench.tuning-record/1");
  EXPECT_EQ(rec["frontend"], "cutile_python");
  EXPECT_EQ(rec["gpu"], gpu);
  ASSERT_EQ(rec["choices"].size(), 3u);
  for (const auto& c : rec["choices"]) {
    SCOPED_TRACE(c.dump());
    EXPECT_EQ(c["baseline"], "plain");
    EXPECT_GT(c["baseline_ns"].get<double>(), 0);
    ASSERT_EQ(c["measured"].size(), 1u);
    const auto& m = c["measured"][0];
    EXPECT_EQ(m["variant"], "cta2");
    EXPECT_EQ(m["numerics"], "PASS");
    EXPECT_EQ(m["proof"], "EXECUTED") << "CUPTI must see grid x 2 CTAs for the cluster kernel";
    const double speedup = m["speedup"];
    EXPECT_GT(speedup, 0.2);
    EXPECT_LT(speedup, 5.0);
    EXPECT_EQ(c["variant"], speedup > 1 ? "cta2" : "plain");
    EXPECT_DOUBLE_EQ(c["speedup_over_default"].get<double>(), speedup > 1 ? speedup : 1.0);
  }
}

// A record made on one card would choose plans for another: `--gpu` names the card the record is
// for, and tune stops before timing anything on any other, writing no record.
TEST_F(Tune, AnotherGpuThanTheRecordsIsRefusedBeforeTiming) {
  const auto r = pt::run_process({PORTBENCH_BIN, "tune", dir.string(), "--gpu", "NVIDIA B300", "--out", record.string()});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("device 0"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("\"" + gpu + "\""), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("not the record's GPU \"NVIDIA B300\""), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(record));
}

}  // namespace
