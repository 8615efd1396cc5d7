// SPDX-License-Identifier: Apache-2.0
// Time to verify one output of the largest upstream (TileGym test_perf) configuration of each
// operator. Setup (allocation, seeded inputs) is outside the timed region; the output holds
// arbitrary values, which cost the same to check as a kernel's. "cold" computes the fp64
// expectations; "cached" repeats with the expectations cached (sampled operators only).
//
//   portbench_reference_bench --threads=2,16 [--benchmark_filter=fmha] [--with-cache]
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "portbench/reference/cache.hpp"
#include "portbench/reference/spec.hpp"

namespace pr = portbench::reference;

namespace {

pr::param_value I(std::int64_t v) { return v; }
pr::param_value S(const char* v) { return std::string(v); }

// The largest configuration by bytes in tilegym_perf_configs.json per operator; the two
// operators without upstream configurations get a shape of the operator they serve.
std::vector<pr::config> largest() {
  const pr::param_value t = true, f = false, null = std::monostate{};
  return {
      {"matmul", {{"m", I(32768)}, {"n", I(32768)}, {"k", I(32768)}, {"dtype", S("float32")}, {"transpose_a", f},
                  {"transpose_b", f}, {"static_persistent", t}, {"use_tma", t}, {"offset_a", I(0)}, {"offset_b", I(0)}}},
      {"bmm", {{"batch", I(8)}, {"m", I(8192)}, {"n", I(8192)}, {"k", I(8192)}, {"transpose_a", f}, {"transpose_b", f},
               {"dtype", S("float16")}}},
      {"group_gemm", {{"num_groups", I(16)}, {"m", I(8192)}, {"n", I(8192)}, {"k", I(8192)}, {"transpose_b", f},
                      {"dtype", S("float16")}}},
      {"splitk_reduce", {{"batch", I(1)}, {"num_heads", I(32)}, {"head_dim", I(512)}, {"num_kv_splits", I(64)},
                         {"S_kv", I(8192)}, {"dtype", S("float16")}, {"lse_dtype", S("float32")}}},
      {"fmha", {{"batch", I(4)}, {"heads", I(32)}, {"seq_len", I(8192)}, {"head_dim", I(128)}, {"dtype", S("float16")},
                {"is_causal", f}}},
      {"flash_decode", {{"batch", I(1)}, {"num_q_heads", I(32)}, {"num_kv_heads", I(32)}, {"seq_len", I(31079)},
                        {"head_dim", I(128)}, {"group_size", I(1)}, {"dtype", S("float16")}}},
      {"attention_sink", {{"batch", I(1)}, {"num_queries", I(10820)}, {"num_keys", I(10820)}, {"num_kv_heads", I(8)},
                          {"num_kv_groups", I(8)}, {"head_dim", I(64)}, {"sliding_window", null}, {"dtype", S("bfloat16")},
                          {"start_q", I(0)}}},
      {"attention_sink_decode", {{"batch", I(1)}, {"num_keys", I(10919)}, {"num_kv_heads", I(8)}, {"num_kv_groups", I(8)},
                                 {"head_dim", I(64)}, {"sliding_window", null}, {"dtype", S("bfloat16")}}},
      {"gemma_attention", {{"batch", I(1)}, {"heads", I(16)}, {"kv_heads", I(8)}, {"seq_len", I(8192)}, {"head_dim", I(128)},
                           {"window", I(4096)}, {"soft_cap", 50.0}, {"is_causal", t}, {"dtype", S("bfloat16")}}},
      {"gemma_attention_decode", {{"batch", I(1)}, {"heads", I(32)}, {"kv_heads", I(8)}, {"seq_len_kv", I(16384)},
                                  {"head_dim", I(128)}, {"window", I(0)}, {"soft_cap", 50.0}, {"dtype", S("bfloat16")}}},
      {"mla", {{"batch", I(4)}, {"heads", I(32)}, {"seq_len", I(8192)}, {"d_model", I(128)}, {"d_pe", I(64)},
               {"dtype", S("bfloat16")}, {"is_causal", t}, {"kpe_heads", I(1)}}},
      {"mla_decoding", {{"num_heads", I(32)}, {"transpose", t}, {"dtype", S("float16")}, {"BLOCK_D", I(512)},
                        {"BLOCK_KPE", I(64)}, {"batch", I(1024)}, {"S_kv", I(8192)}}},
      {"mla_decoding_split_kv", {{"batch", I(1)}, {"num_heads", I(16)}, {"head_dim", I(512)}, {"kpe_dim", I(64)},
                                 {"seq_len", I(31079)}, {"dtype", S("float16")}}},
      {"moe", {{"num_tokens", I(512)}, {"hidden_size", I(2048)}, {"moe_intermediate_size", I(1408)}, {"n_experts", I(64)},
               {"top_k", I(6)}, {"dtype", S("float16")}, {"call_type", S("e2e_fused")}}},
      {"moe_align_block", {{"num_tokens", I(512)}, {"top_k", I(6)}, {"n_experts", I(64)}, {"block_size", I(128)}}},
      {"rms_norm", {{"m", I(262144)}, {"n", I(4096)}, {"dtype", S("float16")}, {"mode", S("static_persistent")}}},
      {"layer_norm_legacy", {{"variant", S("persistent_layer_norm")}, {"m", I(30000)}, {"n", I(10000)},
                             {"dtype", S("bfloat16")}, {"eps", 1e-6}}},
      {"softmax", {{"m", I(4096)}, {"n", I(16384)}, {"dtype", S("float32")}, {"variant", S("baseline")}}},
      {"rope", {{"bsz", I(8)}, {"seq_len", I(65536)}, {"num_q_heads", I(32)}, {"num_kv_heads", I(32)}, {"head_dim", I(128)},
                {"partial_rotary_factor", 1.0}, {"dtype", S("float16")}}},
      {"silu_and_mul", {{"batch", I(64)}, {"seq_len", I(1024)}, {"hidden_size", I(8192)}, {"dtype", S("float32")},
                        {"input_last_dim", I(16384)}}},
      {"swiglu", {{"batch", I(8)}, {"seq_len", I(1)}, {"hidden_size", I(4096)}, {"intermediate_size", I(14336)},
                  {"dtype", S("float32")}}},
      {"dropout", {{"m", I(67108864)}, {"p", 0.5}, {"inplace", f}, {"dtype", S("float32")}, {"training", t}}},
      {"recurrent_gated_delta_rule", {{"B", I(2)}, {"T", I(16384)}, {"H", I(4)}, {"K", I(128)}, {"V", I(128)},
                                      {"dtype", S("bfloat16")}}},
      {"chunk_gated_delta_rule", {{"B", I(16)}, {"T", I(16384)}, {"H", I(8)}, {"K", I(128)}, {"V", I(128)},
                                  {"chunk_size", I(64)}, {"dtype", S("bfloat16")}, {"qkv_scale", 0.1}}},
  };
}

void verify_one(benchmark::State& state, const pr::config& c, bool cached) {
  const auto threads = static_cast<unsigned>(state.range(0));
  const auto& op = pr::find_operator(c.op);
  const auto ts = pr::make_inputs(op, c, 1);
  pr::reference_cache cache;
  pr::verify_options o;
  o.seed = 1;
  o.threads = threads;
  o.original_inputs = &ts;  // in-place operators: the inputs are untouched here
  if (cached) {
    o.cache = &cache;
    (void)op.verify(c, ts, o);  // fill the cache outside the timed region
  }
  std::vector<pr::compare_report> reports;
  for (auto _ : state) {
    reports = op.verify(c, ts, o);
    benchmark::DoNotOptimize(reports.data());
  }
  double in_bytes = 0;
  for (const auto& t : ts) in_bytes += static_cast<double>(t.bytes.size());
  state.counters["GB_alloc"] = in_bytes / 1e9;
  if (!reports.empty()) {
    state.counters["checked"] = static_cast<double>(reports.front().checked);
    state.counters["coverage"] = reports.front().total > 0
                                     ? static_cast<double>(reports.front().checked) / static_cast<double>(reports.front().total)
                                     : 0.0;
    state.SetLabel(reports.front().tensor + ":" + reports.front().method);
  }
}

std::vector<int> parse_threads(int& argc, char** argv, bool& with_cache) {
  std::vector<int> threads;
  int out = 1;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--threads=", 10) == 0) {
      for (const char* p = argv[i] + 10; *p != '\0';) {
        char* end = nullptr;
        threads.push_back(static_cast<int>(std::strtol(p, &end, 10)));
        p = *end == ',' ? end + 1 : end;
        if (end == p && *p != '\0') break;
      }
    } else if (std::strcmp(argv[i], "--with-cache") == 0) {
      with_cache = true;
    } else {
      argv[out++] = argv[i];
    }
  }
  argc = out;
  if (threads.empty()) threads.push_back(2);
  return threads;
}

}  // namespace

int main(int argc, char** argv) {
  bool with_cache = false;
  const auto threads = parse_threads(argc, argv, with_cache);
  for (const auto& c : largest()) {
    for (bool cached : {false, true}) {
      if (cached && !with_cache) continue;
      auto* b = benchmark::RegisterBenchmark((c.op + (cached ? "/cached" : "/cold")).c_str(),
                                            [c, cached](benchmark::State& s) { verify_one(s, c, cached); });
      for (int t : threads) b->Arg(t);
      b->ArgName("threads")->Iterations(1)->UseRealTime()->Unit(benchmark::kMillisecond);
    }
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
