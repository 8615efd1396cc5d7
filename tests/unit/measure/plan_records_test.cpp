// SPDX-License-Identifier: Apache-2.0
// The proof check of one sample's kernel records against its plan, for a plan with copy and
// fill steps (an edited copy of the exported cuda_cpp vector_add manifest): the harness's fill
// and copy kernels are part of the plan (entry name and CTA grid), a scratch buffer's fill init
// (a memset) is not a kernel record. Records as the sampler sees them after sorting by start time.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "portbench/bundle/bundle.hpp"
#include "portbench/bundle/steps.hpp"
#include "portbench/measure/sampler.hpp"
#include "test_support.hpp"

namespace pb = portbench::bundle;
namespace pm = portbench::measure;
namespace pt = portbench::testing;
using json = nlohmann::json;

namespace {

class PlanRecords : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto source = pt::bundle_root() / "cuda_cpp" / "vector_add";
    ASSERT_TRUE(std::filesystem::exists(source / "manifest.json")) << source << ": run scripts/export_bundles.sh";
    const auto dir = tmp.path() / "bundle";
    std::filesystem::copy(source, dir, std::filesystem::copy_options::recursive);
    json m = json::parse(pt::read_text(dir / "manifest.json"));
    json& c = m["configs"][0];
    const std::int64_t n = c["params"]["n"].get<std::int64_t>();
    auto view = [](const char* key, const char* name, json shape, json strides) {
      return json{{key, name}, {"shape", std::move(shape)}, {"strides", std::move(strides)}, {"type", "f32"}};
    };
    c["scratch"] = json::array({{{"name", "xs"}, {"bytes", 4 * n}},
                                {{"name", "pos"}, {"bytes", 4}, {"init", {{"fill", 7}, {"type", "i32"}}}}});
    // fill of out, copy of x, the kernel, strided fill of xs: four harness or bundle kernels
    c["launches"] = json::array({{{"step", "fill"}, {"target", view("tensor", "out", {n}, {1})}, {"value", 1}},
                                 {{"step", "copy"}, {"src", view("tensor", "x", {n}, {1})}, {"dst", view("scratch", "xs", {n}, {1})}},
                                 c["launches"][0],
                                 {{"step", "fill"}, {"target", view("scratch", "xs", {n / 2}, {2})}, {"value", 0}}});
    pt::write_text(dir / "manifest.json", m.dump(1));
    b = pb::load_bundle(dir);
    const auto& plan = b.plan.configs[0];
    expected = pb::expected_records(plan.launches, plan.steps, 132);
    for (const auto& e : expected) observed.push_back(record(e.entry, e.cta_grid));
  }
  static pm::kernel_record record(const std::string& name, pb::dim3 grid) {
    pm::kernel_record r;
    r.name = name;
    r.grid[0] = static_cast<std::int32_t>(grid[0]);
    r.grid[1] = static_cast<std::int32_t>(grid[1]);
    r.grid[2] = static_cast<std::int32_t>(grid[2]);
    r.start_ns = 1;
    r.end_ns = 2;
    return r;
  }
  [[nodiscard]] pm::record_check check(const std::vector<pm::kernel_record>& recs) const {
    std::vector<const pm::kernel_record*> ptrs;
    for (const auto& r : recs) ptrs.push_back(&r);
    return pm::check_plan_records(expected, ptrs);
  }

  pt::temp_dir tmp;
  pb::bundle b;
  std::vector<pb::expected_record> expected;
  std::vector<pm::kernel_record> observed;
};

TEST_F(PlanRecords, TheStepKernelsArePartOfThePlan) {
  ASSERT_EQ(expected.size(), 4u);   // the scratch init makes no record
  EXPECT_EQ(expected[0].entry, "portbench_fill_32");
  EXPECT_EQ(expected[1].entry, "portbench_copy_f32_f32");
  EXPECT_EQ(expected[2].entry, b.plan.configs[0].launches[0].entry);
  EXPECT_EQ(expected[3].entry, "portbench_fill_32");
  const auto ok = check(observed);
  EXPECT_EQ(ok.proof, portbench::verdicts::proof::executed);
  EXPECT_TRUE(ok.detail.empty()) << ok.detail;
  EXPECT_FALSE(ok.missing);
}

TEST_F(PlanRecords, EachKernelsTimeInPlanOrder) {
  auto recs = observed;
  for (std::size_t i = 0; i < recs.size(); ++i) {
    recs[i].start_ns = 1000 * (i + 1);
    recs[i].end_ns = recs[i].start_ns + 10 * (i + 1) + 3;
  }
  std::vector<const pm::kernel_record*> ptrs;
  for (const auto& r : recs) ptrs.push_back(&r);
  EXPECT_EQ(pm::plan_kernel_times(expected, ptrs), (std::vector<std::int64_t>{13, 23, 33, 43}));
  // One record too few or too many: no split (the proof check says why).
  auto fewer = ptrs;
  fewer.pop_back();
  EXPECT_TRUE(pm::plan_kernel_times(expected, fewer).empty());
  auto more = ptrs;
  more.push_back(ptrs[0]);
  EXPECT_TRUE(pm::plan_kernel_times(expected, more).empty());
  // A plan of one kernel has nothing to split.
  const std::vector<pb::expected_record> one{expected[2]};
  EXPECT_TRUE(pm::plan_kernel_times(one, {ptrs[2]}).empty());
}

TEST_F(PlanRecords, AMissingStepKernelIsNotExecuted) {
  auto recs = observed;
  recs.erase(recs.begin() + 1);   // the copy never ran
  const auto r = check(recs);
  EXPECT_EQ(r.proof, portbench::verdicts::proof::not_executed);
  EXPECT_TRUE(r.missing);
  EXPECT_EQ(r.detail, "3 kernel records for 4 kernels of the plan");
}

TEST_F(PlanRecords, OneRecordMoreThanThePlanAndItsStepsIsForeign) {
  auto recs = observed;
  recs.push_back(record("intruder", {1, 1, 1}));
  const auto r = check(recs);
  EXPECT_EQ(r.proof, portbench::verdicts::proof::foreign_kernel);
  EXPECT_EQ(r.detail, "5 kernel records for 4 kernels of the plan");
  // A harness that forgot its own step kernels would see them as records too many.
  const std::vector<pb::expected_record> kernels_only{expected[2]};
  std::vector<const pm::kernel_record*> ptrs{&observed[0], &observed[1], &observed[2], &observed[3]};
  EXPECT_EQ(pm::check_plan_records(kernels_only, ptrs).proof, portbench::verdicts::proof::foreign_kernel);
}

TEST_F(PlanRecords, AStepKernelWithAnotherGridOrNameIsForeign) {
  auto recs = observed;
  recs[1].grid[0] += 1;
  auto r = check(recs);
  EXPECT_EQ(r.proof, portbench::verdicts::proof::foreign_kernel);
  EXPECT_NE(r.detail.find("where the plan runs 'portbench_copy_f32_f32'"), std::string::npos) << r.detail;
  recs = observed;
  recs[3].name = "portbench_fill_16";
  r = check(recs);
  EXPECT_EQ(r.proof, portbench::verdicts::proof::foreign_kernel);
  EXPECT_NE(r.detail.find("record 'portbench_fill_16'"), std::string::npos) << r.detail;
}

}  // namespace
