// SPDX-License-Identifier: Apache-2.0
// ir-diff on the real Tile IR of the exported smoke bundles (both printers: tileirdisasm for
// cuTile Python, cutile-rs for cuTile Rust): the model both parse into, A/A = PASS on every
// bundle, invariance to names/locations/dead ops, and the verdict and difference of a changed
// tile shape, a missing hint and a different loop nest.
#include <gtest/gtest.h>

#include <regex>

#include "portbench/bundle/manifest.hpp"
#include "portbench/diagnose/bundle_ir.hpp"
#include "portbench/diagnose/verdicts.hpp"
#include "test_support.hpp"

namespace portbench::diagnose {
namespace {

namespace fs = std::filesystem;
using testing::bundle_root;
using testing::read_text;

struct located {
  fs::path file;
  std::string symbol;
};

/// The Tile IR file and entry of a configuration's first launch, through the manifest.
located entry_of(const std::string& frontend, const std::string& op, const std::string& config_id) {
  auto m = bundle::parse_manifest(bundle_root() / frontend / op / "manifest.json");
  for (const auto& plan : m.configs) {
    if (plan.config.id() != config_id) continue;
    const auto& l = plan.launches.at(0);
    for (const auto& c : m.cubins) {
      if (c.file != l.cubin) continue;
      for (const auto& ir : c.ir) {
        if (ir.find(".tileir.txt") != std::string::npos) return {m.path.parent_path() / ir, l.entry};
      }
    }
  }
  ADD_FAILURE() << "no Tile IR for " << config_id << " in " << frontend << "/" << op;
  return {};
}

tile_ir::function function_from(const std::string& text, const std::string& symbol, const std::string& origin) {
  auto mod = tile_ir::parse(text, origin);
  const auto* f = mod.find(symbol);
  if (f == nullptr) throw std::runtime_error(origin + ": no entry " + symbol);
  return *f;
}

tile_ir::function load(const located& l) { return function_from(read_text(l.file), l.symbol, l.file.string()); }

const ir_difference* find_kind(const ir_diff_result& r, std::string_view kind) {
  for (const auto& d : r.differences) {
    if (d.kind == kind) return &d;
  }
  return nullptr;
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (auto p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size())) s.replace(p, from.size(), to);
  return s;
}

const char* k_rms = "rms_norm/dtype=float16,m=4096,n=1024";

TEST(IrModel, BothPrintersParseIntoTheSameModel) {
  auto py = normalise(load(entry_of("cutile_python", "rms_norm", k_rms)));
  auto rs = normalise(load(entry_of("cutile_rust", "rms_norm", k_rms)));
  // Hints: tileirdisasm's <default = {..}> and cutile-rs's #cuda_tile.optimization_hints<sm_90 = {..}>.
  EXPECT_EQ(py.hints, (std::map<std::string, std::string>{{"occupancy", "4"}}));
  EXPECT_EQ(rs.hints, py.hints);
  EXPECT_EQ(py.hint_targets, "default");
  EXPECT_EQ(rs.hint_targets, "sm_90");
  EXPECT_EQ(py.body.shape(), "entry{}");
  EXPECT_EQ(rs.body.shape(), "entry{}");
  ASSERT_EQ(py.body.memory.size(), 3u);
  ASSERT_EQ(rs.body.memory.size(), 3u);
  EXPECT_EQ(py.body.memory[0].describe(), "load view weak 8x1024xf16 padding=zero");
  EXPECT_EQ(py.body.memory[2].describe(), "store view weak 8x1024xf16");
  for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(py.body.memory[i].describe(), rs.body.memory[i].describe());
  // The reduce body: a "(%a: t, %b: t) {" line after the op vs a ^bb0 label inside it;
  // identities "[0.000000e+00 : f32]" vs "[0]".
  ASSERT_EQ(py.body.reductions.size(), 1u);
  ASSERT_EQ(rs.body.reductions.size(), 1u);
  EXPECT_EQ(py.body.reductions[0].describe(), "reduce dim=1 identities=[0] of 8x1024xf32 by addf");
  EXPECT_EQ(rs.body.reductions[0].describe(), py.body.reductions[0].describe());
  // cutile-rs prints dozens of unused constants; they are dead code, not structure.
  EXPECT_GT(rs.dead_ops, 50);
}

TEST(IrModel, IdentitiesAreCompared_AsValues) {
  const char* id = "softmax/dtype=float32,m=512,n=2048,variant=baseline";
  auto py = normalise(load(entry_of("cutile_python", "softmax", id)));
  auto rs = normalise(load(entry_of("cutile_rust", "softmax", id)));
  ASSERT_FALSE(py.body.reductions.empty());
  // "[0xFF800000 : f32]" (tileirdisasm) and "[-inf]" (cutile-rs) are the same identity.
  EXPECT_EQ(py.body.reductions[0].identities, "-inf");
  EXPECT_EQ(rs.body.reductions[0].identities, "-inf");
}

TEST(IrDiff, EveryTileIrBundleAgainstItselfIsPass) {
  int tile_ir_configs = 0;
  for (const auto& dir : testing::all_bundles()) {
    auto m = bundle::parse_manifest(dir / "manifest.json");
    bool has_tile_ir = false;
    for (const auto& c : m.cubins) {
      for (const auto& ir : c.ir) has_tile_ir = has_tile_ir || ir.find(".tileir.txt") != std::string::npos;
    }
    auto diffs = diff_bundles(dir, dir);
    ASSERT_EQ(diffs.size(), 1u);
    for (const auto& c : diffs[0].configs) {
      if (has_tile_ir) {
        EXPECT_EQ(c.verdict, ir_verdict::pass) << dir << " " << c.config_id << ": " << c.reason;
        EXPECT_TRUE(c.differences.empty());
        ++tile_ir_configs;
      } else {
        // Bundles without Tile IR (Triton, CUDA C++) are not comparable, never a pass.
        EXPECT_EQ(c.verdict, ir_verdict::not_comparable) << dir;
        EXPECT_NE(c.reason.find("has no Tile IR text"), std::string::npos) << c.reason;
      }
    }
  }
  EXPECT_GE(tile_ir_configs, 30);   // 20 smoke configurations in each of two cuTile front ends
}

TEST(IrDiff, NamesLocationsAndDeadOpsDoNotMatter) {
  auto where = entry_of("cutile_python", "layer_norm_legacy",
                        "layer_norm_legacy/dtype=float16,eps=1e-05,m=333,n=16384,variant=layer_norm_legacy,weight_shift=0");
  std::string text = read_text(where.file);
  std::string noisy = std::regex_replace(text, std::regex("%([A-Za-z_][A-Za-z0-9_]*)"), "%renamed_$1");
  noisy = std::regex_replace(noisy, std::regex(" : tile<i32>\n"), " : tile<i32> loc(#loc7)\n");
  noisy = replace_all(noisy, "  return\n", "  %unused = constant <i32: 7> : tile<i32>\n  return\n");
  noisy += "#loc7 = loc(\"layer_norm.py\":12:4)\n";
  ASSERT_NE(noisy, text);
  auto r = diff(function_from(text, where.symbol, "original"), function_from(noisy, where.symbol, "noisy"));
  EXPECT_EQ(r.verdict, ir_verdict::pass);
  for (const auto& d : r.differences) ADD_FAILURE() << d.kind << " at " << d.where << ": " << d.reference << " | " << d.port;
}

TEST(IrDiff, ChangedTileShapeIsStructural) {
  auto where = entry_of("cutile_python", "rms_norm", k_rms);
  std::string text = read_text(where.file);
  std::string port = replace_all(replace_all(text, "8x1024", "4x1024"), "tile<8x", "tile<4x");
  auto r = diff(function_from(text, where.symbol, "ref"), function_from(port, where.symbol, "port"));
  EXPECT_EQ(r.verdict, ir_verdict::fail_structural);
  const auto* d = find_kind(r, difference_kind::tile_shape);
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->severity, severity::structural);
  EXPECT_EQ(d->reference, "load view weak 8x1024xf16 padding=zero");
  EXPECT_EQ(d->port, "load view weak 4x1024xf16 padding=zero");
  EXPECT_EQ(find_kind(r, difference_kind::hint), nullptr);
  EXPECT_EQ(find_kind(r, difference_kind::control_flow), nullptr);
}

TEST(IrDiff, MissingHintIsStructuralInEitherSpelling) {
  for (const char* fe : {"cutile_python", "cutile_rust"}) {
    auto where = entry_of(fe, "rms_norm", k_rms);
    std::string text = read_text(where.file);
    std::string port = std::regex_replace(text, std::regex(" optimization_hints ?= ?[^{]*\\{occupancy = 4\\}>"), "");
    ASSERT_NE(port, text) << fe;
    auto r = diff(function_from(text, where.symbol, "ref"), function_from(port, where.symbol, "port"));
    EXPECT_EQ(r.verdict, ir_verdict::fail_structural) << fe;
    ASSERT_EQ(r.differences.size(), 1u) << fe;
    EXPECT_EQ(r.differences[0].kind, difference_kind::hint);
    EXPECT_EQ(r.differences[0].reference, "occupancy = 4");
    EXPECT_EQ(r.differences[0].port, "(none)");
  }
}

TEST(IrDiff, DifferentLoopNestIsStructural) {
  // The same bundle's one-tile layer_norm and its looping kernel (rows wider than 8192).
  auto single = load(entry_of("cutile_python", "layer_norm_legacy",
                              "layer_norm_legacy/dtype=float16,eps=1e-05,m=1024,n=1024,variant=layer_norm_legacy,weight_shift=0"));
  auto loop = load(entry_of("cutile_python", "layer_norm_legacy",
                            "layer_norm_legacy/dtype=float16,eps=1e-05,m=333,n=16384,variant=layer_norm_legacy,weight_shift=0"));
  auto r = diff(single, loop);
  EXPECT_EQ(r.verdict, ir_verdict::fail_structural);
  const auto* d = find_kind(r, difference_kind::control_flow);
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->reference, "entry{}");
  EXPECT_EQ(d->port, "entry{for(2 results){} for(0 results){}}");
  EXPECT_EQ(d->severity, severity::structural);
}

TEST(IrDiff, CrossFrontEndRmsNormDiffersOnlyInNotes) {
  // cuTile Rust's rms_norm adds the spec's `offset` to the weight (one more addf) and passes
  // the partition dims as arguments; nothing structural differs from cuTile Python's.
  auto py = load(entry_of("cutile_python", "rms_norm", k_rms));
  auto rs = load(entry_of("cutile_rust", "rms_norm", k_rms));
  auto r = diff(py, rs);
  EXPECT_EQ(r.verdict, ir_verdict::pass_with_notes);
  EXPECT_EQ(r.structural(), 0);
  const auto* ops = find_kind(r, difference_kind::ops);
  ASSERT_NE(ops, nullptr);
  EXPECT_EQ(ops->reference, "addf x1");
  EXPECT_EQ(ops->port, "addf x2");
  ASSERT_NE(find_kind(r, difference_kind::signature), nullptr);
}

TEST(IrModel, AnInputReadInTwoPassesIsNamed) {
  // The looping layer_norm reads x (its first argument, the manifest's first ptr) once for the
  // statistics and again to normalise; the one-tile kernel holds the row and reads it once.
  const char* loop_id = "layer_norm_legacy/dtype=float16,eps=1e-05,m=333,n=16384,variant=layer_norm_legacy,weight_shift=0";
  const char* single_id = "layer_norm_legacy/dtype=float16,eps=1e-05,m=1024,n=1024,variant=layer_norm_legacy,weight_shift=0";
  auto m = bundle::parse_manifest(bundle_root() / "cutile_python" / "layer_norm_legacy" / "manifest.json");
  for (const auto& plan : m.configs) {
    if (plan.config.id() != loop_id) continue;
    const auto& p0 = plan.launches.at(0).params.at(0);
    EXPECT_EQ(p0.kind, bundle::param_kind::ptr);
    EXPECT_EQ(p0.tensor, "x");
  }
  for (const char* fe : {"cutile_python", "cutile_rust"}) {
    auto rereads = reread_tensors(normalise(load(entry_of(fe, "layer_norm_legacy", loop_id))));
    ASSERT_EQ(rereads.size(), 1u) << fe;
    EXPECT_EQ(rereads[0].rfind("argument 0 loaded in ", 0), 0u) << rereads[0];
    EXPECT_NE(rereads[0].find("entry/for(0 results)"), std::string::npos) << rereads[0];
    EXPECT_TRUE(reread_tensors(normalise(load(entry_of(fe, "layer_norm_legacy", single_id)))).empty()) << fe;
  }
}

TEST(IrDiff, RoundingSpellingsAgreeAndDefaultsVanish) {
  // cutile-rs prints cutile-ir's RoundingMode integer, tileirdisasm the name (4 = approx).
  auto entry = [](const std::string& exp_attr, const std::string& max_attr) {
    return function_from("entry @k(%a: tile<4xf32>, %b: tile<4xf32>) {\n  %0 = exp %a " + exp_attr +
                             " : tile<4xf32>\n  %1 = maxf %0, %b" + max_attr + " : tile<4xf32>\n  %2 = addf %1, %1 : tile<4xf32>\n"
                             "  %t = make_token : token\n  %3 = store_ptr_tko weak %a, %2 token=%t : tile<4xptr<f32>>, "
                             "tile<4xf32> -> token\n  return\n}\n",
                         "k", "inline");
  };
  auto disasm = entry("rounding<approx>", "");
  auto rs = entry("{rounding_mode = 4}", " {rounding_mode = 0}");
  EXPECT_EQ(diff(disasm, rs).verdict, ir_verdict::pass);
  auto full = entry("", "");
  auto r = diff(disasm, full);
  EXPECT_EQ(r.verdict, ir_verdict::fail_structural);
  ASSERT_NE(find_kind(r, difference_kind::rounding), nullptr);
  EXPECT_EQ(find_kind(r, difference_kind::rounding)->reference, "exp rounding=approx x1");
  // A pointer store's data tile is the value's, not the pointers'.
  auto m = normalise(disasm);
  ASSERT_EQ(m.body.memory.size(), 1u);
  EXPECT_EQ(m.body.memory[0].describe(), "store pointer weak 4xf32");
}

TEST(TileIrParse, BadTextNamesTheLine) {
  try {
    (void)tile_ir::parse("entry @k(%a: tile<i32>) {\n  %0 = addi %a, %a : tile<i32>\n", "k.tileir.txt");
    FAIL() << "an unclosed region parsed";
  } catch (const tile_ir::parse_error& e) {
    EXPECT_NE(std::string(e.what()).find("k.tileir.txt:"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("still open"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)tile_ir::parse("}\n", "x.txt"), tile_ir::parse_error);
  EXPECT_THROW((void)tile_ir::parse("entry @k() {\n  = addi\n}\n", "x.txt"), tile_ir::parse_error);
}

}  // namespace
}  // namespace portbench::diagnose
