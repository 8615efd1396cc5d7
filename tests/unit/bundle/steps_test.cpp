// SPDX-License-Identifier: Apache-2.0
// Fill, copy and sum steps in a launch plan: parsed and validated field by field (each error one line
// naming the manifest and the JSON path), bound against the operator's tensors (bounds, element
// types, overlap), the kernel records their execution makes (what the proof check expects), and
// the harness kernels' source compiled with NVRTC for sm_90 (no GPU needed to compile).
// Each manifest case starts from a real exported bundle (cuda_cpp vector_add) and edits a copy.
#include <gtest/gtest.h>

#include <bit>
#include <functional>
#include <set>
#include <sstream>
#include <nlohmann/json.hpp>

#include "portbench/bundle/bundle.hpp"
#include "portbench/bundle/cubin.hpp"
#include "portbench/bundle/error.hpp"
#include "portbench/bundle/step_kernels.hpp"
#include "portbench/bundle/steps.hpp"
#include "portbench/cuda/nvrtc.hpp"
#include "portbench/reference/spec.hpp"
#include "nvrtc_support.hpp"
#include "test_support.hpp"

namespace pb = portbench::bundle;
namespace pr = portbench::reference;
namespace pt = portbench::testing;
using json = nlohmann::json;

namespace {

json view(const std::string& key, const std::string& name, json shape, json strides, const std::string& type,
          std::int64_t offset = 0) {
  json v = {{key, name}, {"shape", std::move(shape)}, {"strides", std::move(strides)}, {"type", type}};
  if (offset != 0) v["offset"] = offset;
  return v;
}

class StepsManifest : public ::testing::Test {
 protected:
  void SetUp() override {
    source = pt::bundle_root() / "cuda_cpp" / "vector_add";
    ASSERT_TRUE(std::filesystem::exists(source / "manifest.json")) << source << ": run scripts/export_bundles.sh";
    dir = tmp.path() / "bundle";
    std::filesystem::copy(source, dir, std::filesystem::copy_options::recursive);
    manifest = json::parse(pt::read_text(dir / "manifest.json"));
    n = manifest["configs"][0]["params"]["n"].get<std::int64_t>();
    kernel = manifest["configs"][0]["launches"][0];
  }
  json& cfg() { return manifest["configs"][0]; }
  void save() { pt::write_text(dir / "manifest.json", manifest.dump(1)); }
  // Saves and loads, expecting a bundle_error; returns its one-line message.
  std::string load_error() {
    save();
    try {
      (void)pb::load_bundle(dir);
    } catch (const pb::bundle_error& e) {
      std::string msg = e.what();
      EXPECT_EQ(msg.find('\n'), std::string::npos) << "not one line: " << msg;
      EXPECT_NE(msg.find("manifest.json: "), std::string::npos) << msg;
      return msg;
    }
    ADD_FAILURE() << "the broken manifest was accepted";
    return {};
  }
  // A plan: out filled with 0.5 (a fill kernel), x copied into a transposed scratch layout, the kernel, the
  // scratch converted to fp16, a strided fp16 fill (a kernel, not a memset).
  void steps_plan() {
    const std::int64_t r = n / 256, c = 256;
    ASSERT_EQ(r * c, n);
    cfg()["scratch"] = json::array({{{"name", "xs"}, {"bytes", 4 * n}},
                                    {{"name", "h"}, {"bytes", 2 * n}},
                                    {{"name", "pos"}, {"bytes", 8}, {"init", {{"fill", 2047}, {"type", "i32"}}}},
                                    {{"name", "one"}, {"bytes", 16}, {"init", {{"fill", 1.0}, {"type", "f64"}}}}});
    cfg()["launches"] = json::array(
        {{{"step", "fill"}, {"target", view("tensor", "out", {n}, {1}, "f32")}, {"value", 0.5}},
         {{"step", "copy"}, {"src", view("tensor", "x", {r, c}, {c, 1}, "f32")}, {"dst", view("scratch", "xs", {r, c}, {1, r}, "f32")}},
         kernel,
         {{"step", "copy"}, {"src", view("scratch", "xs", {r, c}, {1, r}, "f32")}, {"dst", view("scratch", "h", {r, c}, {c, 1}, "f16")}},
         {{"step", "fill"}, {"target", view("scratch", "h", {r / 2}, {2 * c}, "f16", 3)}, {"value", -2}}});
  }

  pt::temp_dir tmp;
  std::filesystem::path source, dir;
  json manifest, kernel;
  std::int64_t n = 0;
};

TEST_F(StepsManifest, StepsParseInPlanOrderBesideTheKernels) {
  steps_plan();
  json variant = {{"name", "with_steps"}, {"launches", cfg()["launches"]}, {"scratch", cfg()["scratch"]}};
  cfg()["variants"] = json::array({variant});
  cfg()["tuning"]["variant"] = "with_steps";
  save();
  const auto b = pb::load_bundle(dir);
  const auto& plan = b.plan.configs[0];
  ASSERT_EQ(plan.launches.size(), 1u);
  ASSERT_EQ(plan.steps.size(), 5u);
  const std::vector<pb::step_kind> kinds{pb::step_kind::fill, pb::step_kind::copy, pb::step_kind::kernel,
                                         pb::step_kind::copy, pb::step_kind::fill};
  for (std::size_t i = 0; i < kinds.size(); ++i) {
    EXPECT_EQ(plan.steps[i].kind, kinds[i]) << i;
    EXPECT_EQ(plan.steps[i].index, i);
  }
  EXPECT_EQ(plan.steps[2].launch, 0u);
  const auto& fill = plan.steps[0].fill;
  EXPECT_EQ(fill.target.tensor, "out");
  EXPECT_EQ(fill.value.bits, std::bit_cast<std::uint32_t>(0.5f));
  const auto& copy = plan.steps[3].copy;
  EXPECT_EQ(copy.src.scratch, "xs");
  EXPECT_EQ(copy.dst.type, pb::element_type::f16);
  EXPECT_EQ(copy.src.strides, (std::vector<std::int64_t>{1, n / 256}));
  const auto& strided = plan.steps[4].fill;
  EXPECT_EQ(strided.target.offset, 3);
  EXPECT_EQ(strided.value.bits, 0xC000u);   // -2.0 in fp16
  ASSERT_EQ(plan.scratch.size(), 4u);
  ASSERT_TRUE(plan.scratch[2].fill_init.has_value());
  EXPECT_EQ(plan.scratch[2].fill_init->bits, 2047u);
  EXPECT_FALSE(plan.scratch[2].zero_init);
  EXPECT_EQ(plan.scratch[3].fill_init->bits, std::bit_cast<std::uint64_t>(1.0));
  const auto v = plan.with_variant("with_steps", "m.json");
  EXPECT_EQ(v.steps.size(), 5u);
  EXPECT_EQ(v.steps[3].copy.dst.scratch, "h");
}

TEST_F(StepsManifest, KernelLaunchErrorsNameTheirPositionAmongTheSteps) {
  steps_plan();
  cfg()["launches"][2]["entry"] = "no_such_kernel";
  EXPECT_NE(load_error().find("configs[0].launches[2].entry: 'no_such_kernel' is not an entry"), std::string::npos);
}

struct bad_case {
  const char* what;
  std::function<void(json& launches, json& scratch)> edit;
  const char* message;
};

TEST_F(StepsManifest, EveryBadFieldIsOneLineNamingItsPath) {
  const std::vector<bad_case> cases = {
      {"unknown step", [](json& l, json&) { l[0] = {{"step", "scale"}}; },
       "configs[0].launches[0].step: unknown step 'scale' (expected \"fill\", \"copy\" or \"sum\""},
      {"tensor and scratch", [](json& l, json&) { l[0]["target"]["scratch"] = "xs"; },
       "configs[0].launches[0].target: expected exactly one of \"tensor\" and \"scratch\""},
      {"undeclared scratch", [](json& l, json&) { l[1]["dst"]["scratch"] = "nope"; },
       "configs[0].launches[1].dst.scratch: scratch buffer 'nope' is not declared in scratch"},
      {"strides short", [](json& l, json&) { l[1]["src"]["strides"] = json::array({1}); },
       "configs[0].launches[1].src.strides: 1 strides for 2 extents"},
      {"zero extent", [](json& l, json&) { l[0]["target"]["shape"] = json::array({0}); },
       "configs[0].launches[0].target.shape[0]: must be >= 1"},
      {"rank 7", [](json& l, json&) {
         l[0]["target"]["shape"] = json::array({1, 1, 1, 1, 1, 1, 1});
         l[0]["target"]["strides"] = json::array({1, 1, 1, 1, 1, 1, 1});
       },
       "configs[0].launches[0].target.shape: expected 1 to 6 extents"},
      {"negative stride", [](json& l, json&) { l[1]["src"]["strides"][0] = -1; },
       "configs[0].launches[1].src.strides[0]: must be >= 0"},
      {"negative offset", [](json& l, json&) { l[0]["target"]["offset"] = -3; },
       "configs[0].launches[0].target.offset: must be >= 0"},
      {"shapes differ", [](json& l, json&) { l[3]["dst"]["shape"] = json::array({4, 4}); },
       "configs[0].launches[3].dst.shape: [4,4] differs from src.shape"},
      {"value out of range", [](json& l, json&) {
         l[0]["target"]["type"] = "i8";
         l[0]["value"] = 300;
       },
       "configs[0].launches[0].value: value 300 does not fit i8"},
      {"fractional integer", [](json& l, json&) {
         l[0]["target"]["type"] = "i32";
         l[0]["value"] = 1.5;
       },
       "configs[0].launches[0].value: expected an integer"},
      {"unknown element type", [](json& l, json&) { l[1]["dst"]["type"] = "f8"; },
       "configs[0].launches[1].dst.type: unknown element type 'f8'"},
      {"misspelt field", [](json& l, json&) { l[0]["target"]["ofset"] = 1; },
       "configs[0].launches[0].target.ofset: unknown field"},
      {"field of another step", [](json& l, json&) { l[1]["value"] = 1; },
       "configs[0].launches[1].value: unknown field"},
      {"fill without value", [](json& l, json&) { l[0].erase("value"); },
       "configs[0].launches[0].value: missing field"},
      {"init of part elements", [](json&, json& s) { s[2]["bytes"] = 6; },
       "configs[0].scratch[2].init.type: 6 bytes are not a whole number of i32 elements"},
      {"init value out of range", [](json&, json& s) { s[2]["init"]["fill"] = 1LL << 40; },
       "configs[0].scratch[2].init.fill: value 1099511627776 does not fit i32"},
      {"init of another shape", [](json&, json& s) { s[2]["init"] = json::array({0}); },
       "configs[0].scratch[2].init: expected \"zero\", \"none\" or {\"fill\": V, \"type\": T}"},
      {"steps alone", [](json& l, json&) { l.erase(2); },
       "configs[0].launches: the plan launches no kernel (harness steps alone run nothing of the bundle)"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    steps_plan();
    c.edit(cfg()["launches"], cfg()["scratch"]);
    const std::string msg = load_error();
    EXPECT_NE(msg.find(c.message), std::string::npos) << msg;
  }
}

// A plan with sum steps: x as [r, c] summed over its rows into scratch (axis 0), x converted to
// fp16 in scratch, that summed over its columns in fp16 (axis 1), the row sums summed to one
// element (rank 1 -> [1]), the kernel, and two rows of the fp16 copy added (a stacked axis).
void sum_plan(json& cfg, std::int64_t n, const json& kernel) {
  const std::int64_t r = n / 256, c = 256;
  cfg["scratch"] = json::array({{{"name", "cols"}, {"bytes", 4 * c}},
                                {{"name", "h"}, {"bytes", 2 * n}},
                                {{"name", "rows"}, {"bytes", 2 * r}},
                                {{"name", "total"}, {"bytes", 2}},
                                {{"name", "pair"}, {"bytes", 2 * c}}});
  cfg["launches"] = json::array(
      {{{"step", "sum"}, {"src", view("tensor", "x", {r, c}, {c, 1}, "f32")}, {"dst", view("scratch", "cols", {c}, {1}, "f32")}, {"axis", 0}},
       {{"step", "copy"}, {"src", view("tensor", "x", {n}, {1}, "f32")}, {"dst", view("scratch", "h", {n}, {1}, "f16")}},
       {{"step", "sum"}, {"src", view("scratch", "h", {r, c}, {c, 1}, "f16")}, {"dst", view("scratch", "rows", {r}, {1}, "f16")}, {"axis", 1}},
       {{"step", "sum"}, {"src", view("scratch", "rows", {r}, {1}, "f16")}, {"dst", view("scratch", "total", {1}, {1}, "f16")}, {"axis", 0}},
       kernel,
       {{"step", "sum"}, {"src", view("scratch", "h", {2, c}, {3 * c, 1}, "f16", c)}, {"dst", view("scratch", "pair", {c}, {1}, "f16")}, {"axis", 0}}});
}

TEST_F(StepsManifest, SumStepsParseWithTheirAxisAndMakeSumKernelRecordsOverDst) {
  sum_plan(cfg(), n, kernel);
  save();
  const auto b = pb::load_bundle(dir);
  const auto& plan = b.plan.configs[0];
  ASSERT_EQ(plan.steps.size(), 6u);
  EXPECT_EQ(plan.steps[0].kind, pb::step_kind::sum);
  EXPECT_EQ(plan.steps[0].sum.axis, 0u);
  EXPECT_EQ(plan.steps[0].sum.src.shape, (std::vector<std::int64_t>{n / 256, 256}));
  EXPECT_EQ(plan.steps[2].sum.axis, 1u);
  EXPECT_EQ(plan.steps[2].sum.dst.type, pb::element_type::f16);
  EXPECT_EQ(plan.steps[3].sum.dst.shape, (std::vector<std::int64_t>{1}));
  EXPECT_EQ(plan.steps[5].sum.src.offset, 256);
  EXPECT_EQ(plan.steps[5].sum.src.strides, (std::vector<std::int64_t>{768, 1}));
  const auto recs = pb::expected_records(plan.launches, plan.steps, 132);
  const std::vector<std::string> names{"portbench_sum_f32_f32", "portbench_copy_f32_f16", "portbench_sum_f16_f16",
                                       "portbench_sum_f16_f16", plan.launches[0].entry, "portbench_sum_f16_f16"};
  ASSERT_EQ(recs.size(), names.size());
  for (std::size_t i = 0; i < names.size(); ++i) EXPECT_EQ(recs[i].entry, names[i]) << i;
  // One thread per dst element (grid-stride beyond 8 blocks per SM): the grid follows dst.
  EXPECT_EQ(recs[0].cta_grid, (pb::dim3{1, 1, 1}));   // 256 column sums
  EXPECT_EQ(recs[2].cta_grid, (pb::dim3{static_cast<unsigned>((n / 256 + 255) / 256), 1, 1}));
  EXPECT_EQ(recs[3].cta_grid, (pb::dim3{1, 1, 1}));
  EXPECT_TRUE(recs[0].harness && recs[3].harness && recs[5].harness);
  const auto k = pb::needed_step_kernels(plan.steps);
  EXPECT_EQ(k.sums, (std::vector<std::pair<pb::element_type, pb::element_type>>{
                        {pb::element_type::f32, pb::element_type::f32}, {pb::element_type::f16, pb::element_type::f16}}));
  EXPECT_EQ(k.copies.size(), 1u);
  EXPECT_FALSE(k.empty());
  EXPECT_EQ(pb::sum_accumulator(pb::element_type::f16, pb::element_type::f16), pb::element_type::f32);
  EXPECT_EQ(pb::sum_accumulator(pb::element_type::bf16, pb::element_type::f64), pb::element_type::f64);
  EXPECT_EQ(pb::sum_accumulator(pb::element_type::u8, pb::element_type::i32), pb::element_type::i64);
  EXPECT_EQ(pb::sum_result_shape({4, 5, 6}, 1), (std::vector<std::int64_t>{4, 6}));
  EXPECT_EQ(pb::sum_result_shape({7}, 0), (std::vector<std::int64_t>{1}));
}

TEST_F(StepsManifest, EveryBadSumFieldIsOneLineNamingItsPath) {
  const std::vector<bad_case> cases = {
      {"axis past the rank", [](json& l, json&) { l[0]["axis"] = 2; },
       "configs[0].launches[0].axis: 2 is not an axis of src (rank 2)"},
      {"negative axis", [](json& l, json&) { l[2]["axis"] = -1; },
       "configs[0].launches[2].axis: -1 is not an axis of src (rank 2)"},
      {"axis not an integer", [](json& l, json&) { l[2]["axis"] = 1.5; }, "configs[0].launches[2].axis: "},
      {"no axis", [](json& l, json&) { l[0].erase("axis"); }, "configs[0].launches[0].axis: missing field"},
      {"dst keeps the axis", [](json& l, json&) {
         l[0]["dst"]["shape"] = json::array({1, 256});
         l[0]["dst"]["strides"] = json::array({256, 1});
       },
       "configs[0].launches[0].dst.shape: [1,256] is not src.shape"},
      {"dst of the other axis", [](json& l, json&) { l[2]["axis"] = 0; },
       "configs[0].launches[2].dst.shape: "},
      {"float into integer", [](json& l, json&) { l[0]["dst"]["type"] = "i32"; },
       "configs[0].launches[0].dst.type: a sum of f32 into i32: src and dst are both floating or both integer"},
      {"a copy's field", [](json& l, json&) { l[0]["value"] = 0; }, "configs[0].launches[0].value: unknown field"},
      {"a bad view", [](json& l, json&) { l[3]["src"]["strides"][0] = -2; },
       "configs[0].launches[3].src.strides[0]: must be >= 0"},
      {"an undeclared buffer", [](json& l, json&) { l[5]["dst"]["scratch"] = "nope"; },
       "configs[0].launches[5].dst.scratch: scratch buffer 'nope' is not declared in scratch"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    sum_plan(cfg(), n, kernel);
    c.edit(cfg()["launches"], cfg()["scratch"]);
    const std::string msg = load_error();
    EXPECT_NE(msg.find(c.message), std::string::npos) << msg;
  }
}

// ---- docs/bundle-manifest.md says what the parser takes -----------------------------------

// The section of the manifest doc that describes steps, from its heading to the next one.
std::string steps_section() {
  const std::string doc = pt::read_text(std::filesystem::path(PORTBENCH_SOURCE_DIR) / "docs" / "bundle-manifest.md");
  const auto a = doc.find("## Fill, copy and sum steps");
  if (a == std::string::npos) return {};
  const auto b = doc.find("\n## ", a + 1);
  return doc.substr(a, b == std::string::npos ? std::string::npos : b - a);
}

// The backticked words of the table row whose first cell starts with `first`.
std::vector<std::string> row_words(const std::string& section, const std::string& first) {
  std::vector<std::string> out;
  const auto at = section.find("\n| " + first);
  if (at == std::string::npos) return out;
  const std::string row = section.substr(at + 1, section.find('\n', at + 1) - at - 1);
  for (std::size_t i = row.find('`'); i != std::string::npos;) {
    const auto j = row.find('`', i + 1);
    if (j == std::string::npos) break;
    out.push_back(row.substr(i + 1, j - i - 1));
    i = row.find('`', j + 1);
  }
  return out;
}

// The lines of the section's ```json blocks that start with `prefix`, parsed with the doc's
// placeholder VIEW replaced by `view`.
std::vector<json> examples(const std::string& section, const std::string& prefix, const json& view) {
  std::vector<json> out;
  std::istringstream in(section);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(prefix, 0) != 0) continue;
    for (auto p = line.find("VIEW"); p != std::string::npos; p = line.find("VIEW")) line.replace(p, 4, view.dump());
    out.push_back(json::parse(line));
  }
  return out;
}

TEST_F(StepsManifest, TheDocumentedStepSchemaIsWhatTheParserTakes) {
  const std::string section = steps_section();
  ASSERT_FALSE(section.empty()) << "docs/bundle-manifest.md has no section \"Fill, copy and sum steps\"";
  // Every documented element type parses, and they are all of them (the 12 the harness knows).
  const auto types = row_words(section, "`type`");
  ASSERT_GT(types.size(), 1u);
  std::set<std::string> documented(types.begin() + 1, types.end());
  std::set<std::string> known;
  for (const char* t : {"f64", "f32", "f16", "bf16", "i64", "i32", "i16", "i8", "u64", "u32", "u16", "u8"}) {
    known.insert(t);
    EXPECT_TRUE(pb::parse_element_type(t).has_value()) << t;
  }
  EXPECT_EQ(documented, known);
  // The view fields the table documents are the keys of the doc's view examples, and such a view
  // (names and extents of this bundle's tensors, every documented field present) is accepted.
  std::set<std::string> fields;
  for (const char* row : {"`tensor` or `scratch`", "`offset`", "`shape`", "`strides`", "`type`"}) {
    const auto w = row_words(section, row);
    ASSERT_FALSE(w.empty()) << "no table row " << row;
    fields.insert(w[0]);
    if (w.size() > 1 && std::string(row).find(" or ") != std::string::npos) fields.insert(w[1]);
  }
  std::set<std::string> example_keys;
  for (const auto& v : examples(section, "{\"tensor\"", {})) for (const auto& [k, _] : v.items()) example_keys.insert(k);
  for (const auto& v : examples(section, "{\"scratch\"", {})) for (const auto& [k, _] : v.items()) example_keys.insert(k);
  EXPECT_EQ(example_keys, fields);
  // Both documented step examples run through the parser with real views in place of VIEW.
  const json out_view = view("tensor", "out", {n}, {1}, "f32", 0);
  json with_offset = view("scratch", "xs", {n / 2}, {1}, "f32", n / 2);
  const auto fills = examples(section, "{\"step\": \"fill\"", out_view);
  const auto copies = examples(section, "{\"step\": \"copy\"", with_offset);
  ASSERT_EQ(fills.size(), 1u);
  ASSERT_EQ(copies.size(), 1u);
  auto sums = examples(section, "{\"step\": \"sum\"", with_offset);
  ASSERT_EQ(sums.size(), 1u);
  sums[0]["src"] = view("tensor", "x", {n / 2, 2}, {2, 1}, "f32");   // summed over its axis 1 into xs' second half
  json copy = copies[0];
  copy["src"] = view("tensor", "x", {n / 2}, {2}, "f32", 1);
  cfg()["scratch"] = json::array({{{"name", "xs"}, {"bytes", 4 * n}, {"init", {{"fill", 3}, {"type", "i32"}}}}});
  cfg()["launches"] = json::array({fills[0], copy, kernel, sums[0]});
  save();
  const auto b = pb::load_bundle(dir);
  const auto& plan = b.plan.configs[0];
  ASSERT_EQ(plan.steps.size(), 4u);
  EXPECT_EQ(plan.steps[3].kind, pb::step_kind::sum);
  EXPECT_EQ(plan.steps[3].sum.axis, 1u);
  EXPECT_EQ(plan.steps[0].kind, pb::step_kind::fill);
  EXPECT_EQ(plan.steps[0].fill.value.bits, std::bit_cast<std::uint32_t>(1144.0f));
  EXPECT_EQ(plan.steps[1].copy.dst.offset, n / 2);
  EXPECT_EQ(plan.scratch[0].fill_init->bits, 3u);
  // The scratch table's init forms are the ones the parser takes.
  const std::string doc = pt::read_text(std::filesystem::path(PORTBENCH_SOURCE_DIR) / "docs" / "bundle-manifest.md");
  EXPECT_NE(doc.find("\"init\": \"zero\"\\|\"none\"\\|{\"fill\": V, \"type\": T}"), std::string::npos);
}

// ---- binding against the operator's tensors ----------------------------------------------

class StepBinding : public ::testing::Test {
 protected:
  void SetUp() override {
    cfg.op = "vector_add";
    cfg.params["n"] = std::int64_t{4096};
    cfg.params["dtype"] = std::string("float32");
    CUdeviceptr next = 0x100000000ULL;
    for (const auto& s : pr::find_operator("vector_add").tensors(cfg)) tensors[s.name] = {(next += 0x10000000ULL), s};
    scratch_specs = {{"ws", 4096 * 4, false, std::nullopt}};
    scratch.buffers["ws"] = 0x7f0000000000ULL;
  }
  static pb::view_spec tview(const std::string& t, std::vector<std::int64_t> shape, std::vector<std::int64_t> strides,
                             pb::element_type type = pb::element_type::f32, std::int64_t offset = 0) {
    pb::view_spec v;
    v.tensor = t;
    v.type = type;
    v.offset = offset;
    v.shape = std::move(shape);
    v.strides = std::move(strides);
    return v;
  }
  std::string bind_error(const pb::view_spec& v) {
    try {
      (void)pb::bind_view(v, tensors, scratch, scratch_specs, "m.json: configs[0].launches[0].target");
    } catch (const pb::bundle_error& e) {
      return e.what();
    }
    ADD_FAILURE() << "bound";
    return {};
  }
  std::string copy_error(const pb::copy_step& c) {
    try {
      (void)pb::bind_copy(c, tensors, scratch, scratch_specs, "m.json: configs[0].launches[0]");
    } catch (const pb::bundle_error& e) {
      return e.what();
    }
    ADD_FAILURE() << "bound";
    return {};
  }

  pr::config cfg;
  pb::tensor_bindings tensors;
  pb::scratch_bindings scratch;
  std::vector<pb::scratch_spec> scratch_specs;
};

TEST_F(StepBinding, ViewsBindToTheTensorsViewStartAndOffset) {
  const auto b = pb::bind_view(tview("x", {64, 64}, {1, 64}, pb::element_type::f32, 0), tensors, scratch, scratch_specs, "w");
  EXPECT_EQ(b.base, tensors.at("x").address);
  EXPECT_EQ(b.last, 4095);
  EXPECT_EQ(b.elements(), 4096);
  const auto o = pb::bind_view(tview("y", {10}, {2}, pb::element_type::f32, 7), tensors, scratch, scratch_specs, "w");
  EXPECT_EQ(o.first_byte(), tensors.at("y").address + 28);
  EXPECT_EQ(o.end_byte(), tensors.at("y").address + 4 * (7 + 18 + 1));
}

TEST_F(StepBinding, WrongTypeOutOfBoundsAndUnknownNamesAreRefused) {
  EXPECT_NE(bind_error(tview("x", {4096}, {1}, pb::element_type::f16)).find("views tensor 'x' as f16, but it is fp32"),
            std::string::npos);
  EXPECT_NE(bind_error(tview("x", {4096}, {1}, pb::element_type::f32, 1))
                .find("views element 4096 of tensor 'x', which holds 4096 f32 elements"),
            std::string::npos);
  EXPECT_NE(bind_error(tview("x", {2, 2048}, {2049, 1})).find("views element 4096 of tensor 'x'"), std::string::npos);
  EXPECT_NE(bind_error(tview("q", {1}, {1})).find("views tensor 'q', which the operator does not have"), std::string::npos);
  pb::view_spec s = tview("", {4097}, {1});
  s.tensor.clear();
  s.scratch = "ws";
  EXPECT_NE(bind_error(s).find("views element 4096 of scratch 'ws', which holds 4096 f32 elements"), std::string::npos);
  s.scratch = "gone";
  EXPECT_NE(bind_error(s).find("scratch buffer 'gone' was not allocated"), std::string::npos);
}

TEST_F(StepBinding, CopiesMayNotRaceOnTheirDestination) {
  pb::copy_step c{tview("x", {64, 64}, {64, 1}), tview("out", {64, 64}, {1, 64})};
  EXPECT_NO_THROW((void)pb::bind_copy(c, tensors, scratch, scratch_specs, "w"));   // a transpose
  c.dst.strides = {1, 1};
  EXPECT_NE(copy_error(c).find("launches[0].dst: the view of tensor 'out' overlaps itself"), std::string::npos);
  c.dst = tview("out", {64, 64}, {0, 1});
  EXPECT_NE(copy_error(c).find("overlaps itself"), std::string::npos);
  pb::copy_step inside{tview("x", {8}, {1}), tview("x", {8}, {1}, pb::element_type::f32, 4)};
  EXPECT_NE(copy_error(inside).find("src (tensor 'x') and dst (tensor 'x') overlap in memory"), std::string::npos);
  pb::copy_step apart{tview("x", {8}, {1}), tview("x", {8}, {1}, pb::element_type::f32, 8)};
  EXPECT_NO_THROW((void)pb::bind_copy(apart, tensors, scratch, scratch_specs, "w"));
}

TEST_F(StepBinding, SumsMayNotRaceOnTheirDestinationNorWriteWhatTheyRead) {
  // The torch.add form: two rows of x as one view with a stacked axis, into out.
  pb::sum_step st{tview("x", {2, 2048}, {2048, 1}), tview("out", {2048}, {1}), 0};
  const auto b = pb::bind_sum(st, tensors, scratch, scratch_specs, "w");
  EXPECT_EQ(b.axis, 0u);
  EXPECT_EQ(b.src.last, 4095);
  EXPECT_EQ(b.dst.base, tensors.at("out").address);
  // A stride-0 summed axis reads one element repeatedly: allowed (only dst may not overlap).
  st.src = tview("x", {3, 2048}, {0, 1});
  EXPECT_NO_THROW((void)pb::bind_sum(st, tensors, scratch, scratch_specs, "w"));
  const auto error = [&](const pb::sum_step& bad) -> std::string {
    try {
      (void)pb::bind_sum(bad, tensors, scratch, scratch_specs, "m.json: configs[0].launches[3]");
    } catch (const pb::bundle_error& e) {
      return e.what();
    }
    ADD_FAILURE() << "bound";
    return {};
  };
  pb::sum_step self{tview("x", {2, 64}, {64, 1}), tview("out", {64}, {0}), 0};
  EXPECT_NE(error(self).find("launches[3].dst: the view of tensor 'out' overlaps itself"), std::string::npos);
  pb::sum_step inplace{tview("x", {2, 64}, {64, 1}), tview("x", {64}, {1}), 0};
  EXPECT_NE(error(inplace).find("launches[3]: src (tensor 'x') and dst (tensor 'x') overlap in memory"), std::string::npos);
  pb::sum_step outside{tview("x", {2, 2048}, {2048, 1}), tview("out", {2048}, {1}, pb::element_type::f32, 2049), 0};
  EXPECT_NE(error(outside).find("launches[3].dst: views element 4096 of tensor 'out'"), std::string::npos);
  // check_steps binds sums too, naming the step's position.
  std::vector<pb::plan_step> steps(1);
  steps[0].kind = pb::step_kind::sum;
  steps[0].index = 5;
  steps[0].sum = inplace;
  try {
    pb::check_steps(steps, scratch_specs, tensors, scratch, "m.json: configs[2]");
    ADD_FAILURE() << "bound";
  } catch (const pb::bundle_error& e) {
    EXPECT_NE(std::string(e.what()).find("m.json: configs[2].launches[5]: src (tensor 'x') and dst"), std::string::npos)
        << e.what();
  }
}

// ---- what runs, and the records the proof check expects ------------------------------------

TEST(StepExecution, ScratchFillInitIsAMemsetWhereAUnitRepeatsTheBitsElseAnUpload) {
  pb::view_spec dense;
  dense.shape = {4, 1, 8};
  dense.strides = {8, 99, 1};   // size-1 axes do not break a dense run
  auto fill = [&](pb::element_type t, std::variant<std::int64_t, double> v) {
    dense.type = t;
    return pb::choose_fill(dense, pb::make_fill_value(t, v));
  };
  auto m = fill(pb::element_type::f16, 1.0);
  EXPECT_TRUE(m.memset);
  EXPECT_EQ(m.unit, 2u);
  EXPECT_EQ(m.pattern, 0x3C00u);
  EXPECT_EQ(m.count, 32u);
  m = fill(pb::element_type::bf16, -1.0);
  EXPECT_EQ(m.pattern, 0xBF80u);
  m = fill(pb::element_type::i32, 1144);
  EXPECT_TRUE(m.memset);
  EXPECT_EQ(m.unit, 4u);
  EXPECT_EQ(m.pattern, 1144u);
  m = fill(pb::element_type::i8, -1);
  EXPECT_EQ(m.unit, 1u);
  EXPECT_EQ(m.pattern, 0xFFu);
  m = fill(pb::element_type::i64, -1);   // both words 0xffffffff
  EXPECT_TRUE(m.memset);
  EXPECT_EQ(m.unit, 4u);
  EXPECT_EQ(m.count, 64u);
  EXPECT_FALSE(fill(pb::element_type::i64, 5).memset);
  EXPECT_FALSE(fill(pb::element_type::f64, 1.0).memset);
  EXPECT_TRUE(fill(pb::element_type::f64, 0.0).memset);
  pb::view_spec strided = dense;
  strided.strides = {16, 99, 1};   // a gap between the rows
  strided.type = pb::element_type::f32;
  EXPECT_FALSE(pb::choose_fill(strided, pb::make_fill_value(pb::element_type::f32, 2.0)).memset);
  EXPECT_THROW((void)pb::make_fill_value(pb::element_type::u8, std::int64_t{-1}), std::invalid_argument);
  EXPECT_EQ(pb::make_fill_value(pb::element_type::u16, std::int64_t{65535}).bits, 0xFFFFu);
  EXPECT_EQ(pb::make_fill_value(pb::element_type::i16, std::int64_t{-2}).bits, 0xFFFEu);
  // The upload of a fill no memset lays down: little-endian elements of the value's bits.
  const auto image = pb::fill_image(pb::make_fill_value(pb::element_type::i64, std::int64_t{5}), 3);
  ASSERT_EQ(image.size(), 24u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(image[8 * i], std::byte{5}) << i;
    for (std::size_t b = 1; b < 8; ++b) EXPECT_EQ(image[8 * i + b], std::byte{0}) << i << " " << b;
  }
  const auto half = pb::fill_image(pb::make_fill_value(pb::element_type::f16, -2.0), 2);
  ASSERT_EQ(half.size(), 4u);
  EXPECT_EQ(half[0], std::byte{0x00});
  EXPECT_EQ(half[1], std::byte{0xC0});   // -2.0 in fp16 is 0xC000
  EXPECT_EQ(half[3], std::byte{0xC0});
}

TEST_F(StepsManifest, ExpectedRecordsAreTheKernelsAndTheHarnessKernelsInOrder) {
  steps_plan();
  save();
  const auto b = pb::load_bundle(dir);
  const auto& plan = b.plan.configs[0];
  const auto recs = pb::expected_records(plan.launches, plan.steps, 132);
  // Scratch inits ("pos" a memset, "one" an upload: 1.0 in f64 repeats in no 4-byte unit) make
  // no record; every step is a harness kernel, also the dense f32 fill of out a memset could do:
  // fill, copy, kernel, copy (f32 -> f16), strided fp16 fill.
  const std::vector<std::string> names{"portbench_fill_32", "portbench_copy_f32_f32", plan.launches[0].entry,
                                       "portbench_copy_f32_f16", "portbench_fill_16"};
  ASSERT_EQ(recs.size(), names.size());
  for (std::size_t i = 0; i < names.size(); ++i) EXPECT_EQ(recs[i].entry, names[i]) << i;
  const auto grid_of = [](std::int64_t elements) {
    return pb::dim3{static_cast<unsigned>(std::min<std::int64_t>((elements + 255) / 256, 1056)), 1, 1};
  };
  EXPECT_EQ(recs[0].cta_grid, grid_of(n));
  EXPECT_TRUE(recs[0].harness);
  EXPECT_EQ(recs[1].cta_grid, (pb::dim3{static_cast<unsigned>(std::min<std::int64_t>((n + 255) / 256, 1056)), 1, 1}));
  EXPECT_EQ(recs[2].cta_grid, plan.launches[0].grid);
  EXPECT_FALSE(recs[2].harness);
  EXPECT_TRUE(recs[1].harness && recs[4].harness);
  EXPECT_EQ(recs[4].cta_grid, (pb::dim3{static_cast<unsigned>((n / 512 + 255) / 256), 1, 1}));
  const auto k = pb::needed_step_kernels(plan.steps);
  EXPECT_EQ(k.copies.size(), 2u);
  EXPECT_EQ(k.fill_sizes, (std::vector<std::size_t>{4, 2}));
  EXPECT_EQ(pb::step_grid(1LL << 40, 132)[0], 1056u);
  EXPECT_EQ(pb::step_grid(1, 132)[0], 1u);
}

// ---- the harness kernels compile ----------------------------------------------------------

TEST(StepKernels, EveryElementTypeCompilesAsSourceAndDestinationToOneStructParameter) {
  std::string why;
  if (!portbench::testing::load_nvrtc(why)) GTEST_SKIP() << "no NVRTC: " << why;
  const std::vector<pb::element_type> all{pb::element_type::f64, pb::element_type::f32, pb::element_type::f16,
                                          pb::element_type::bf16, pb::element_type::i64, pb::element_type::i32,
                                          pb::element_type::i16, pb::element_type::i8, pb::element_type::u64,
                                          pb::element_type::u32, pb::element_type::u16, pb::element_type::u8};
  // Each type once as source and once as destination of a conversion (a cycle through all of
  // them, every conversion kind: float-float, float-int, int-float, int-int), a plain copy, and
  // the conversions tilegym's plans use; tests/gpu/launch/steps_test.cpp compiles and runs all
  // 144 pairs (compiling them all here took minutes on this shared 2-core machine).
  pb::step_kernel_set set;
  for (std::size_t i = 0; i < all.size(); ++i) set.copies.emplace_back(all[i], all[(i + 1) % all.size()]);
  set.copies.emplace_back(pb::element_type::bf16, pb::element_type::bf16);
  set.copies.emplace_back(pb::element_type::f32, pb::element_type::bf16);
  set.copies.emplace_back(pb::element_type::i32, pb::element_type::f16);
  set.copies.emplace_back(pb::element_type::f64, pb::element_type::i8);
  set.fill_sizes = {1, 2, 4, 8};
  const std::string source = pb::step_kernel_source(set);
  EXPECT_NE(source.find("pb_f32_to_bf16(x)"), std::string::npos);   // f32 -> bf16: one rounding from float
  EXPECT_NE(source.find("pb_f64_to_f16((double)x)"), std::string::npos);   // integers through double
  const auto image = portbench::cuda::compile_to_cubin(source, "portbench_steps.cu", "sm_90");
  const auto info = pb::inspect_cubin(image, "portbench_steps (NVRTC)");
  EXPECT_EQ(info.sm, 90);
  EXPECT_EQ(info.entries.size(), set.copies.size() + 4);
  for (const auto& [s, d] : set.copies) {
    const auto* e = info.find(pb::copy_entry(s, d));
    ASSERT_NE(e, nullptr) << pb::copy_entry(s, d);
    ASSERT_EQ(e->params.size(), 1u) << e->name;
    EXPECT_EQ(e->params[0].size, static_cast<int>(pb::step_kernel_param_bytes())) << e->name;
    EXPECT_EQ(e->frame_bytes, 0) << e->name << ": index arrays spilled to local memory";
  }
  for (std::size_t b : {1, 2, 4, 8}) {
    const auto* e = info.find(pb::fill_entry(b));
    ASSERT_NE(e, nullptr) << b;
    EXPECT_EQ(e->params.at(0).size, static_cast<int>(pb::step_kernel_param_bytes()));
  }
}

TEST(StepKernels, SumsOfEveryAccumulatorCompileBesideCopiesSharingTheirConversions) {
  std::string why;
  if (!portbench::testing::load_nvrtc(why)) GTEST_SKIP() << "no NVRTC: " << why;
  using et = pb::element_type;
  // Each float type into itself (fp32 accumulation for the 16-bit ones, as torch), the widening
  // and narrowing float pairs, fp64 accumulation, integers through int64 (signed and unsigned);
  // a copy f16 -> f32 beside a sum that converts f16 -> f32 too (one conversion struct for both).
  pb::step_kernel_set set;
  set.sums = {{et::f16, et::f16}, {et::bf16, et::bf16}, {et::f32, et::f32}, {et::f64, et::f64}, {et::f16, et::f32},
              {et::f32, et::bf16}, {et::bf16, et::f64}, {et::i32, et::i32}, {et::u8, et::i64}, {et::i64, et::u16}};
  set.copies = {{et::f16, et::f32}, {et::f32, et::f16}};
  const std::string source = pb::step_kernel_source(set);
  // The 16-bit sums accumulate in float and round once; fp64 where either side is.
  EXPECT_NE(source.find("pb_sum<unsigned short, unsigned short, float, pb_cvt_f16_f32, pb_cvt_f32_f16, true>"),
            std::string::npos);
  EXPECT_NE(source.find("pb_sum<unsigned short, double, double, pb_cvt_bf16_f64, pb_cvt_f64_f64, true>"),
            std::string::npos);
  EXPECT_NE(source.find("pb_sum<unsigned char, long long, long long, pb_cvt_u8_i64, pb_cvt_i64_i64, true>"),
            std::string::npos);
  const auto first = source.find("struct pb_cvt_f16_f32 ");
  ASSERT_NE(first, std::string::npos);
  EXPECT_EQ(source.find("struct pb_cvt_f16_f32 ", first + 1), std::string::npos) << "a conversion struct twice";
  const auto image = portbench::cuda::compile_to_cubin(source, "portbench_steps.cu", "sm_90");
  const auto info = pb::inspect_cubin(image, "portbench_steps (NVRTC)");
  EXPECT_EQ(info.entries.size(), set.sums.size() + set.copies.size());
  for (const auto& [s, d] : set.sums) {
    const auto* e = info.find(pb::sum_entry(s, d));
    ASSERT_NE(e, nullptr) << pb::sum_entry(s, d);
    ASSERT_EQ(e->params.size(), 1u) << e->name;
    EXPECT_EQ(e->params[0].size, static_cast<int>(pb::step_kernel_param_bytes())) << e->name;
    EXPECT_EQ(e->frame_bytes, 0) << e->name << ": index arrays spilled to local memory";
  }
}

}  // namespace
