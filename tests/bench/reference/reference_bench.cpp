// SPDX-License-Identifier: Apache-2.0
// Time to verify one output of the largest upstream (TileGym test_perf) configuration of each
// operator. Setup (allocation, seeded inputs) is outside the timed region; the output holds
// arbitrary values, which cost the same to check as a kernel's. "cold" computes the fp64
// expectations; "cached" repeats with the expectations cached (sampled operators only).
//
//   portbench_reference_bench --threads=2,16 [--benchmark_filter=fmha] [--with-cache]
//
// Suite mode: one cold verify() of every configuration of a suite file, in suite order, to
// compare the CPU time a sweep spends verifying with the time it spends timing on the GPU.
//
//   portbench_reference_bench --suite=configs/tilegym.json --threads=16 [--suite-filter=REGEX]
//                             [--suite-out=FILE.jsonl] [--suite-outputs=pattern|reference]
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <new>
#include <nlohmann/json.hpp>
#include <regex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "portbench/reference/cache.hpp"
#include "portbench/reference/config_json.hpp"
#include "portbench/reference/spec.hpp"
#include "portbench/reference/tensor_access.hpp"

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

struct options {
  std::vector<int> threads;
  bool with_cache = false;
  std::string suite, suite_filter, suite_out;   ///< suite mode when `suite` is set
  /// Suite mode: outputs the fp64 reference rounded (`reference`, what a correct kernel leaves:
  /// the realistic cost of a passing check) instead of an arbitrary pattern (`pattern`).
  bool reference_outputs = false;
};

// Takes our flags out of argv; what is left goes to Google Benchmark.
options parse_args(int& argc, char** argv) {
  options opt;
  int out = 1;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--threads=", 10) == 0) {
      for (const char* p = argv[i] + 10; *p != '\0';) {
        char* end = nullptr;
        opt.threads.push_back(static_cast<int>(std::strtol(p, &end, 10)));
        p = *end == ',' ? end + 1 : end;
        if (end == p && *p != '\0') break;
      }
    } else if (std::strcmp(argv[i], "--with-cache") == 0) {
      opt.with_cache = true;
    } else if (std::strncmp(argv[i], "--suite=", 8) == 0) {
      opt.suite = argv[i] + 8;
    } else if (std::strncmp(argv[i], "--suite-filter=", 15) == 0) {
      opt.suite_filter = argv[i] + 15;
    } else if (std::strncmp(argv[i], "--suite-out=", 12) == 0) {
      opt.suite_out = argv[i] + 12;
    } else if (std::strcmp(argv[i], "--suite-outputs=reference") == 0) {
      opt.reference_outputs = true;
    } else if (std::strcmp(argv[i], "--suite-outputs=pattern") == 0) {
      opt.reference_outputs = false;
    } else {
      argv[out++] = argv[i];
    }
  }
  argc = out;
  if (opt.threads.empty()) opt.threads.push_back(2);
  return opt;
}

// --- suite mode ---------------------------------------------------------------------------

using json = nlohmann::json;
using steady = std::chrono::steady_clock;

double seconds_since(steady::time_point t0) {
  return std::chrono::duration<double>(steady::now() - t0).count();
}

// Arbitrary non-zero finite values in every output, as a kernel would leave (make_inputs zeroes
// them). A short pattern is encoded once and repeated, so filling 10 GB costs a memcpy. inout
// tensors keep their seeded inputs, which are non-zero and unrelated to the expected values.
void fill_outputs(std::vector<pr::host_tensor>& ts) {
  constexpr std::int64_t k_pattern = 4096;
  for (auto& t : ts) {
    if (t.spec.role != pr::tensor_role::out || t.bytes.empty()) continue;
    std::vector<double> v(k_pattern);
    for (std::int64_t i = 0; i < k_pattern; ++i) {
      v[static_cast<std::size_t>(i)] = pr::is_floating(t.spec.type) ? 0.5 + 0.0625 * static_cast<double>(i % 13)
                                                                    : static_cast<double>(1 + i % 3);
    }
    std::vector<std::byte> enc(static_cast<std::size_t>(k_pattern) * pr::size_of(t.spec.type));
    pr::store_span(enc.data(), t.spec.type, 0, k_pattern, v.data());
    for (std::size_t off = 0; off < t.bytes.size(); off += enc.size()) {
      std::memcpy(t.bytes.data() + off, enc.data(), std::min(enc.size(), t.bytes.size() - off));
    }
  }
}

struct op_totals {
  int configs = 0, skipped = 0;
  double setup_s = 0, verify_s = 0;
};

int run_suite(const options& opt) {
  if (opt.threads.size() != 1) {
    std::fprintf(stderr, "suite mode takes one thread count (--threads=N)\n");
    return 2;
  }
  if (opt.with_cache) {
    std::fprintf(stderr, "suite mode times cold checks only; drop --with-cache\n");
    return 2;
  }
  const unsigned threads = opt.threads.front() > 0 ? static_cast<unsigned>(opt.threads.front())
                                                   : std::max(1u, std::thread::hardware_concurrency());
  std::regex filter;
  try {
    filter = std::regex(opt.suite_filter);
  } catch (const std::regex_error& e) {
    std::fprintf(stderr, "--suite-filter: not a regular expression: %s\n", e.what());
    return 2;
  }
  json doc;
  try {
    std::ifstream in(opt.suite);
    if (!in) throw std::runtime_error("cannot open suite");
    doc = json::parse(in);
    if (!doc.contains("configs") || !doc["configs"].is_array()) throw std::runtime_error("configs: missing or not an array");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", opt.suite.c_str(), e.what());
    return 1;
  }
  const std::string suite_name = doc.value("suite", std::filesystem::path(opt.suite).stem().string());
  std::ofstream jsonl;
  if (!opt.suite_out.empty()) {
    jsonl.open(opt.suite_out);
    if (!jsonl) {
      std::fprintf(stderr, "%s: cannot write\n", opt.suite_out.c_str());
      return 1;
    }
  }

  const auto& entries = doc["configs"];
  const std::size_t n = entries.size();
  std::vector<std::string> op_order;   // per-operator totals in suite order
  std::map<std::string, op_totals> per_op;
  op_totals all;
  std::size_t matched = 0;
  constexpr std::uint64_t k_seed = 1;
  std::printf("suite %s: %zu configurations in %s, %u threads\n", suite_name.c_str(), n, opt.suite.c_str(), threads);
  for (std::size_t i = 0; i < n; ++i) {
    const json& e = entries[i];
    const bool has_op = e.is_object() && e.contains("op") && e["op"].is_string();
    const bool has_params = e.is_object() && e.contains("params") && e["params"].is_object();
    pr::config c;
    c.op = has_op ? e["op"].get<std::string>() : std::string("?");
    json line = {{"suite", suite_name}, {"index", i}, {"op", c.op},
                 {"params", has_params ? e["params"] : json(nullptr)}, {"threads", threads}};
    std::string reason;
    try {
      if (!has_op) throw pr::spec_error("op: missing or not a string");
      if (!has_params) throw pr::spec_error("params: missing or not an object");
      c = pr::config_from_json(c.op, e["params"]);
    } catch (const std::exception& ex) {
      reason = ex.what();
    }
    const std::string id = reason.empty() ? c.id() : c.op + "/?";
    if (!std::regex_search(id, filter)) continue;
    ++matched;
    line["id"] = id;
    if (per_op.find(c.op) == per_op.end()) op_order.push_back(c.op);
    op_totals& tot = per_op[c.op];

    // The tensors live in this scope only: some configurations need more than 10 GB, so each
    // is freed before the next is allocated.
    double setup_s = 0, verify_s = 0;
    std::size_t bytes = 0;
    std::int64_t checked = 0;
    json reports = json::array();
    if (reason.empty()) {
      try {
        const auto t0 = steady::now();
        const auto& op = pr::find_operator(c.op);
        for (const auto& t : op.tensors(c)) bytes += t.storage_bytes();
        auto ts = pr::make_inputs(op, c, k_seed);
        std::vector<pr::host_tensor> pristine;   // the inputs, when outputs overwrite inout tensors
        if (opt.reference_outputs) {
          for (const auto& t : ts) {
            if (t.spec.role == pr::tensor_role::inout) pristine = ts;
          }
          op.write_reference(c, ts, threads);
        } else {
          fill_outputs(ts);
        }
        setup_s = seconds_since(t0);
        pr::reference_cache cache;
        pr::verify_options o;
        o.seed = k_seed;
        o.threads = threads;
        o.cache = &cache;
        // in-place operators: the inout tensors still hold the inputs, unless overwritten above
        o.original_inputs = pristine.empty() ? &ts : &pristine;
        const auto t1 = steady::now();
        const auto rs = op.verify(c, ts, o);
        verify_s = seconds_since(t1);
        for (const auto& r : rs) {
          checked += r.checked;
          reports.push_back({{"tensor", r.tensor}, {"method", r.method}, {"checked", r.checked}, {"total", r.total}});
        }
      } catch (const std::bad_alloc&) {
        reason = "out of memory for " + std::to_string(bytes / 1000000) + " MB of tensors";
      } catch (const std::exception& ex) {
        reason = ex.what();  // unknown operator or params the spec rejects (spec_error)
      }
    }
    if (reason.empty()) {
      std::printf("[%4zu/%zu] setup %9.3f s  verify %9.3f s  checked %13lld  %7.2f GB  %s\n", i + 1, n, setup_s,
                  verify_s, static_cast<long long>(checked), static_cast<double>(bytes) / 1e9, id.c_str());
      ++tot.configs, ++all.configs;
      tot.setup_s += setup_s, all.setup_s += setup_s;
      tot.verify_s += verify_s, all.verify_s += verify_s;
      line.update({{"status", "verified"}, {"setup_s", setup_s}, {"verify_s", verify_s}, {"bytes", bytes},
                   {"checked", checked}, {"reports", reports}});
    } else {
      std::printf("[%4zu/%zu] skipped: %s  %s\n", i + 1, n, reason.c_str(), id.c_str());
      ++tot.skipped, ++all.skipped;
      line.update({{"status", "skipped"}, {"reason", reason}});
    }
    std::fflush(stdout);
    if (jsonl.is_open()) jsonl << line.dump() << '\n' << std::flush;  // a partial run keeps its lines
  }

  std::printf("\n%-28s %7s %7s %10s %10s\n", "operator", "configs", "skipped", "setup s", "verify s");
  for (const auto& op : op_order) {
    const auto& t = per_op[op];
    std::printf("%-28s %7d %7d %10.3f %10.3f\n", op.c_str(), t.configs, t.skipped, t.setup_s, t.verify_s);
  }
  std::printf("suite %s: %d configurations, verify %.1f s, setup %.1f s (%u threads)", suite_name.c_str(), all.configs,
              all.verify_s, all.setup_s, threads);
  if (all.skipped > 0) std::printf("; %d skipped", all.skipped);
  if (!opt.suite_filter.empty()) std::printf("; filter '%s' matched %zu of %zu", opt.suite_filter.c_str(), matched, n);
  std::printf("\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const auto opt = parse_args(argc, argv);
  if (!opt.suite.empty()) {
    if (argc > 1) {
      std::fprintf(stderr, "suite mode: unknown argument %s\n", argv[1]);
      return 2;
    }
    return run_suite(opt);
  }
  if (!opt.suite_filter.empty() || !opt.suite_out.empty()) {
    std::fprintf(stderr, "--suite-filter and --suite-out need --suite\n");
    return 2;
  }
  const auto& threads = opt.threads;
  const bool with_cache = opt.with_cache;
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
