// SPDX-License-Identifier: Apache-2.0
// The store of verified outputs: reports survive memory and files exactly (non-finite values
// included), any part of the key that differs is a miss, and a damaged file is a miss.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "portbench/verify/verified_outputs.hpp"
#include "test_support.hpp"

namespace pv = portbench::verify;
namespace pr = portbench::reference;
namespace pt = portbench::testing;

namespace {

std::vector<pr::compare_report> sample_reports() {
  pr::compare_report a;
  a.tensor = "y";
  a.checked = 1 << 20;
  a.bad = 3;
  a.first_bad_index = 17;
  a.max_abs_err = 0.1 + 1e-17;   // not a short decimal: must survive exactly
  a.max_rel_err = std::numeric_limits<double>::infinity();
  a.atol = 5e-2;
  a.rtol = 0;
  a.method = "all";
  a.type = pr::dtype::bf16;
  a.total = 1 << 20;
  a.nonfinite = 1;
  a.ref_rms = 0.7071067811865476;
  a.max_norm_err = std::numeric_limits<double>::quiet_NaN();
  a.rms_norm_err = -std::numeric_limits<double>::infinity();
  a.note = "12 of 4096 rows sampled";
  pr::compare_report b = a;
  b.tensor = "rstd";
  b.type = pr::dtype::f32;
  b.max_rel_err = 1.25e-7;
  b.max_norm_err = 0.49;
  b.rms_norm_err = 0.2;
  return {a, b};
}

void expect_same(const std::vector<pr::compare_report>& want, const std::vector<pr::compare_report>& got) {
  ASSERT_EQ(got.size(), want.size());
  auto same = [](double x, double y) { return (std::isnan(x) && std::isnan(y)) || x == y; };
  for (std::size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(got[i].tensor, want[i].tensor);
    EXPECT_EQ(got[i].checked, want[i].checked);
    EXPECT_EQ(got[i].bad, want[i].bad);
    EXPECT_EQ(got[i].first_bad_index, want[i].first_bad_index);
    EXPECT_TRUE(same(got[i].max_abs_err, want[i].max_abs_err)) << got[i].max_abs_err;
    EXPECT_TRUE(same(got[i].max_rel_err, want[i].max_rel_err)) << got[i].max_rel_err;
    EXPECT_TRUE(same(got[i].max_norm_err, want[i].max_norm_err)) << got[i].max_norm_err;
    EXPECT_TRUE(same(got[i].rms_norm_err, want[i].rms_norm_err)) << got[i].rms_norm_err;
    EXPECT_EQ(got[i].ref_rms, want[i].ref_rms);
    EXPECT_EQ(got[i].method, want[i].method);
    EXPECT_EQ(got[i].type, want[i].type);
    EXPECT_EQ(got[i].total, want[i].total);
    EXPECT_EQ(got[i].nonfinite, want[i].nonfinite);
    EXPECT_EQ(got[i].note, want[i].note);
  }
}

pv::verified_key key() { return {"rms_norm", "rms_norm/m=4,n=8", 42, "0.1.0@abc", "y:00112233445566778899aabbccddeeff"}; }

TEST(VerifiedOutputs, ReportsSurviveAFolderExactly) {
  pt::temp_dir tmp;
  const auto reports = sample_reports();
  {
    pv::verified_outputs writer(tmp.path() / "v");
    EXPECT_FALSE(writer.find(key()).has_value());
    writer.store(key(), reports);
    expect_same(reports, *writer.find(key()));
  }
  pv::verified_outputs reader(tmp.path() / "v");   // another worker: reads the file
  const auto got = reader.find(key());
  ASSERT_TRUE(got.has_value());
  expect_same(reports, *got);
}

TEST(VerifiedOutputs, EveryPartOfTheKeyMatters) {
  pt::temp_dir tmp;
  pv::verified_outputs store(tmp.path());
  store.store(key(), sample_reports());
  auto k = key();
  k.digest[5] = 'f';
  EXPECT_FALSE(store.find(k).has_value()) << "another output";
  k = key();
  k.seed = 43;
  EXPECT_FALSE(store.find(k).has_value()) << "other inputs";
  k = key();
  k.reference_id = "0.1.0@def";
  EXPECT_FALSE(store.find(k).has_value()) << "another reference library";
  k = key();
  k.config_id = "rms_norm/m=4,n=16";
  EXPECT_FALSE(store.find(k).has_value()) << "another configuration";
  EXPECT_TRUE(store.find(key()).has_value());
}

TEST(VerifiedOutputs, DamagedFilesAreMissesAndGetRewritten) {
  pt::temp_dir tmp;
  const auto reports = sample_reports();
  {
    pv::verified_outputs writer(tmp.path());
    writer.store(key(), reports);
  }
  std::filesystem::path file;
  for (const auto& e : std::filesystem::directory_iterator(tmp.path())) file = e.path();
  ASSERT_FALSE(file.empty());
  const std::string whole = pt::read_text(file);
  pt::write_text(file, whole.substr(0, whole.size() / 2));   // torn
  pv::verified_outputs torn(tmp.path());
  EXPECT_FALSE(torn.find(key()).has_value());
  torn.store(key(), reports);
  pv::verified_outputs again(tmp.path());
  expect_same(reports, *again.find(key()));
}

}  // namespace
