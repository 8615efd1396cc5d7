// SPDX-License-Identifier: Apache-2.0
// Every upstream perf configuration (tilegym_perf_configs.json, with its own parameter names)
// builds tensors and a cost, so configs/tilegym.json can be generated from that file as is.
// Skipped, with the reason, when the data file is not found.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "portbench/reference/config_json.hpp"
#include "portbench/reference/spec.hpp"

namespace pr = portbench::reference;

namespace {

std::filesystem::path data_file() {
  if (const char* env = std::getenv("PORTBENCH_TILEGYM_CONFIGS")) return env;
  for (const auto& p : {std::filesystem::path(PORTBENCH_SOURCE_DIR) / "shared/data/tilegym_perf_configs.json",
                                        std::filesystem::path(PORTBENCH_SOURCE_DIR) / "../shared/data/tilegym_perf_configs.json",
                                        std::filesystem::path("/work/shared/data/tilegym_perf_configs.json")}) {
    if (std::filesystem::exists(p)) return p;
  }
  return {};
}

pr::config to_config(const std::string& op, const nlohmann::json& params) {
  return pr::config_from_json(op, params);
}

}  // namespace

TEST(upstream_configs, every_perf_config_builds_tensors_and_cost) {
  const auto path = data_file();
  if (path.empty()) GTEST_SKIP() << "tilegym_perf_configs.json not found (set PORTBENCH_TILEGYM_CONFIGS)";
  std::ifstream in(path);
  const auto doc = nlohmann::json::parse(in);
  std::int64_t perf = 0, llm = 0;
  for (const auto& o : doc.at("operators")) {
    const std::string name = o.at("operator").get<std::string>();
    const auto& op = pr::find_operator(name);  // upstream spellings resolve ("attention (fmha)")
    std::vector<nlohmann::json> all(o.at("configs").begin(), o.at("configs").end());
    perf += static_cast<std::int64_t>(all.size());
    if (o.contains("test_perf_llm")) {
      for (const auto& c : o.at("test_perf_llm").at("configs")) all.push_back(c), ++llm;
    }
    for (const auto& params : all) {
      const auto c = to_config(name, params);
      std::vector<pr::tensor_spec> ts;
      ASSERT_NO_THROW(ts = op.tensors(c)) << c.id();
      ASSERT_FALSE(ts.empty());
      for (const auto& t : ts) {
        EXPECT_GT(t.elements(), 0) << c.id() << " " << t.name;
        EXPECT_GE(t.storage_elements, t.elements()) << c.id() << " " << t.name;
      }
      if (params.contains("dtype")) {
        EXPECT_EQ(ts.front().type, *pr::parse_dtype(params.at("dtype").get<std::string>())) << c.id();
      }
      const auto cost = op.cost(c);
      EXPECT_GT(cost.bytes_moved, 0) << c.id();
      EXPECT_GT(cost.flops, 0) << c.id();
    }
  }
  EXPECT_EQ(perf, 381);  // 341 test_perf configs (operators.md section 5) + 40 softmax bench points
  EXPECT_EQ(llm, 18);
}

TEST(upstream_configs, largest_rms_norm_and_matmul_sizes) {
  const auto& mm = pr::find_operator("matmul");
  const pr::config c{"matmul", {{"m", std::int64_t{32768}}, {"n", std::int64_t{32768}}, {"k", std::int64_t{32768}},
                                {"dtype", std::string("float32")}}};
  EXPECT_DOUBLE_EQ(mm.cost(c).flops, 2.0 * 32768.0 * 32768.0 * 32768.0);
  EXPECT_DOUBLE_EQ(mm.cost(c).bytes_moved, 3.0 * 32768.0 * 32768.0 * 4.0);
}

TEST(upstream_configs, rope_moves_only_the_rotated_columns) {
  // In place with partial_rotary_factor 0.25: a quarter of each head is read and written, plus
  // the first half (32 of 64 columns) of each row of the cos and sin tables, which repeat their
  // halves; the untouched three quarters are no work.
  const auto& rope = pr::find_operator("rope");
  const pr::config c{"rope", {{"bsz", std::int64_t{8}}, {"seq_len", std::int64_t{128}}, {"num_q_heads", std::int64_t{32}},
                              {"num_kv_heads", std::int64_t{8}}, {"head_dim", std::int64_t{256}},
                              {"partial_rotary_factor", 0.25}, {"dtype", std::string("float16")}}};
  const double rotated = 8.0 * 128 * (32 + 8) * 64, tables = 2.0 * 8 * 128 * 32;
  EXPECT_DOUBLE_EQ(rope.cost(c).bytes_moved, 2.0 * (2 * rotated + tables));
}

TEST(upstream_configs, windowed_decode_reads_only_the_window) {
  // attention_sink_decode, 64 heads (8 kv heads x 8) of 64, bf16: q and o, the 64 sinks, and K
  // and V of the keys attended: all 31079 without a window, the last 128 with one.
  const auto& op = pr::find_operator("attention_sink_decode");
  pr::config c{"attention_sink_decode", {{"batch", std::int64_t{1}}, {"num_keys", std::int64_t{31079}}, {"num_kv_heads", std::int64_t{8}},
                                         {"num_kv_groups", std::int64_t{8}}, {"head_dim", std::int64_t{64}}, {"dtype", std::string("bfloat16")}}};
  const double qo_sinks = 2.0 * 64 * 64 + 64;
  EXPECT_DOUBLE_EQ(op.cost(c).bytes_moved, 2.0 * (qo_sinks + 2.0 * 31079 * 8 * 64));
  c.params["sliding_window"] = std::int64_t{128};
  EXPECT_DOUBLE_EQ(op.cost(c).bytes_moved, 2.0 * (qo_sinks + 2.0 * 128 * 8 * 64));
}

// configs/tilegym.json: every configuration builds tensors and a cost; only the two operators
// upstream never benchmarks carry portbench-defined configurations, each marked as such, and
// their references verify their own output (moe_align_block exactly, at every shape).
TEST(upstream_configs, tilegym_suite_builds_and_marks_portbench_defined_configs) {
  std::ifstream in(std::filesystem::path(PORTBENCH_SOURCE_DIR) / "configs/tilegym.json");
  ASSERT_TRUE(in) << "configs/tilegym.json";
  const auto doc = nlohmann::json::parse(in);
  std::map<std::string, int> defined;
  for (const auto& e : doc.at("configs")) {
    const auto c = to_config(e.at("op").get<std::string>(), e.at("params"));
    const auto& op = pr::find_operator(c.op);
    ASSERT_NO_THROW((void)op.tensors(c)) << c.id();
    EXPECT_GT(op.cost(c).bytes_moved, 0) << c.id();
    if (e.contains("defined_by")) {
      ++defined[c.op];
      EXPECT_NE(e.at("defined_by").get<std::string>().find("portbench"), std::string::npos) << c.id();
    }
  }
  EXPECT_EQ(defined, (std::map<std::string, int>{{"attention_sink_decode", 8}, {"moe_align_block", 8}}));
  for (const auto& e : doc.at("configs")) {
    if (e.at("op") != "moe_align_block") continue;
    const auto c = to_config("moe_align_block", e.at("params"));
    const auto& op = pr::find_operator(c.op);
    auto ts = pr::make_inputs(op, c, 5);
    op.write_reference(c, ts, 2);
    pr::verify_options vo;
    vo.seed = 5;
    vo.threads = 2;
    for (const auto& r : op.verify(c, ts, vo)) {
      EXPECT_GT(r.checked, 0) << c.id() << " " << r.tensor;
      EXPECT_EQ(r.bad, 0) << c.id() << " " << r.tensor;
    }
  }
}
