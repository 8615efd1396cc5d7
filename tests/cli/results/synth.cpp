// SPDX-License-Identifier: Apache-2.0
#include "synth.hpp"

#include <unistd.h>

#include <array>
#include <cmath>
#include <fstream>
#include <regex>
#include <sstream>
#include <map>
#include <string_view>
#include <variant>

#include <nlohmann/json.hpp>

#include "portbench/bundle/bundle.hpp"
#include "portbench/bundle/sha256.hpp"
#include "portbench/diagnose/roofline.hpp"
#include "portbench/stats/rng.hpp"
#include "portbench/store/writer.hpp"

namespace portbench::testing {
namespace {

constexpr std::array<std::string_view, 24> op_names = {
    "rms_norm", "layer_norm", "softmax",  "matmul",       "bmm",        "group_gemm",
    "attention", "flash_decode", "rope",  "swiglu",       "geglu",      "silu_and_mul",
    "dropout",  "cross_entropy", "add",   "mul",          "transpose",  "reduce_sum",
    "argmax",   "topk",       "gather",   "scatter",      "embedding",  "conv1d"};
constexpr std::array<std::string_view, 3> dtypes = {"float16", "bfloat16", "float32"};

double normal(stats::rng& g) {
  double u1 = std::max(g.uniform(), 1e-300);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * g.uniform());
}

struct truth {
  store::config_info info;
  double reference_ns;
  double port_ns;
};

truth make_truth(std::size_t i, const synth_options& o) {
  const std::size_t ops = std::max<std::size_t>(1, std::min<std::size_t>(o.operators, op_names.size()));
  std::string op(op_names[i % ops]);
  std::string dtype(dtypes[(i / 7) % dtypes.size()]);
  std::int64_t m = 256 << (i % 6);
  std::int64_t n = 1024 + 128 * static_cast<std::int64_t>(i % 11);
  truth t;
  t.info.op = op;
  t.info.id = op + "/dtype=" + dtype + ",idx=" + std::to_string(i) + ",m=" + std::to_string(m) +
              ",n=" + std::to_string(n);
  t.info.params_json = "{\"dtype\":\"" + dtype + "\",\"idx\":" + std::to_string(i) +
                       ",\"m\":" + std::to_string(m) + ",\"n\":" + std::to_string(n) + "}";
  stats::rng g(stats::hash_seed(o.truth_seed, t.info.id.c_str()));
  t.reference_ns = std::exp(std::log(2e4) + g.uniform() * (std::log(2e6) - std::log(2e4)));
  // Exact mode alternates +-sd within each operator, so an even count per operator has
  // geomean exactly port_speed.
  double log_speed = o.exact ? ((i / ops) % 2 == 0 ? 1.0 : -1.0) * o.port_speed_sd
                             : o.port_speed_sd * normal(g);
  t.port_ns = t.reference_ns / (o.port_speed * std::exp(log_speed));
  t.reference_ns *= o.scale_reference;
  t.port_ns *= o.scale_port;
  return t;
}

/// The configurations two front ends' real bundles share, with times from their bytes.
struct real_bundles {
  std::vector<truth> truths;
  std::vector<store::bundle_provenance> provenance;
};

std::string file_sha256(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  return bundle::sha256_hex(std::as_bytes(std::span(text.data(), text.size())));
}

std::string params_json(const reference::config& c) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [k, v] : c.params) {
    std::visit([&](const auto& x) {
      using T = std::decay_t<decltype(x)>;
      if constexpr (std::is_same_v<T, std::monostate>) j[k] = nullptr;
      else j[k] = x;
    }, v);
  }
  return j.dump();
}

real_bundles read_real_bundles(const synth_options& o) {
  real_bundles out;
  std::filesystem::path root(o.bundles);
  std::map<std::string, bundle::manifest> ports;
  for (const auto& dir : bundle::find_bundles(root / o.port_frontend)) {
    auto m = bundle::parse_manifest(dir / "manifest.json");
    ports.emplace(m.op, std::move(m));
  }
  std::regex slow(o.slow_regex.empty() ? std::string("$^") : o.slow_regex);
  for (const auto& dir : bundle::find_bundles(root / o.reference_frontend)) {
    auto ref = bundle::parse_manifest(dir / "manifest.json");
    auto p = ports.find(ref.op);
    if (p == ports.end()) continue;
    bool used = false;
    for (const auto& plan : ref.configs) {
      if (out.truths.size() >= o.configs || p->second.find(plan.config) == nullptr) continue;
      truth t;
      t.info.op = plan.config.op;
      t.info.id = plan.config.id();
      t.info.params_json = params_json(plan.config);
      auto w = diagnose::work_of(t.info);
      t.reference_ns = (w ? w->bytes / (0.75 * 4150.0) : 2e4) + 2000.0;
      stats::rng g(stats::hash_seed(o.truth_seed, t.info.id.c_str()));
      double speed = std::regex_search(t.info.id, slow) ? o.slow_speed : o.port_speed * std::exp(o.port_speed_sd * normal(g));
      t.port_ns = t.reference_ns / speed;
      out.truths.push_back(std::move(t));
      used = true;
    }
    if (!used) continue;
    for (const auto* m : {&ref, &p->second}) {
      store::bundle_provenance bp;
      bp.role = m == &ref ? "reference" : "port";
      bp.frontend = m->frontend;
      bp.op = m->op;
      bp.bundle_sha256 = file_sha256(m->path);
      for (const auto& c : m->cubins) bp.cubin_sha256[c.file] = c.sha256;
      out.provenance.push_back(std::move(bp));
    }
  }
  if (out.truths.empty()) throw std::runtime_error(o.bundles + ": no configuration both front ends' bundles support");
  return out;
}

store::run_record make_run(const truth& t, store::role r, int run, const synth_options& o) {
  store::run_record rec;
  rec.config_id = t.info.id;
  rec.role = r;
  rec.frontend = r == store::role::reference ? o.reference_frontend : o.port_frontend;
  rec.run = run;
  rec.verdicts = {o.numerics, o.proof, "VALID"};
  double true_ns = r == store::role::reference ? t.reference_ns : t.port_ns;
  std::string key = t.info.id + "/" + std::string(store::to_string(r)) + "/" + std::to_string(run);
  stats::rng g(stats::hash_seed(o.noise_seed, key.c_str()));
  int n = o.min_samples + static_cast<int>(g.index(static_cast<std::size_t>(o.max_samples - o.min_samples + 1)));
  if (o.exact) {
    for (int i = 0; i < n; ++i) {
      double v = true_ns * (1.0 + 0.001 * static_cast<double>((i * 7) % 13));
      rec.add_sample({std::llround(v), 1980, std::llround(v) + 3500});
    }
    return rec;
  }
  double run_factor = std::exp(o.run_sd * normal(g));
  if (g.uniform() < o.bimodal_prob) run_factor *= 1.0 + o.bimodal_shift;
  for (int i = 0; i < n; ++i) {
    double v = true_ns * run_factor * std::exp(o.sample_sd * normal(g));
    if (g.uniform() < o.outlier_prob) v *= 1.05 + 0.45 * g.uniform();
    std::int32_t clock = g.uniform() < 0.01 ? 1755 : 1980;
    auto device = std::max<std::int64_t>(1, std::llround(v));
    rec.add_sample({device, clock, device + 3000 + static_cast<std::int64_t>(2000 * g.uniform())});
  }
  return rec;
}

store::provenance make_provenance(const synth_options& o) {
  store::provenance p;
  p.portbench_version = "0.1.0";
  p.gpu_name = o.gpu;
  p.driver_version = "580.65.06";
  p.sm_clock_mhz = 1980;
  p.memory_clock_mhz = 3201;
  p.cuda_version = "13.0";
  p.cupti_version = "26";
  p.git_revision = "synthetic";
  p.command_line = "portbench_synth_results";
  p.suite = o.suite;
  p.seeds = {static_cast<std::int64_t>(o.truth_seed), static_cast<std::int64_t>(o.noise_seed)};
  p.reference_frontend = o.reference_frontend;
  p.port_frontend = o.port_frontend;
  p.extra["synthetic"] = "true";
  return p;
}

}  // namespace

synth_result write_synthetic(const std::filesystem::path& path, const synth_options& o) {
  synth_result result;
  real_bundles real;
  store::provenance prov = make_provenance(o);
  if (!o.bundles.empty()) {
    real = read_real_bundles(o);
    prov.bundles = real.provenance;
    auto root = std::filesystem::absolute(o.bundles);
    prov.command_line = "portbench run --ref " + (root / o.reference_frontend).string() + " --port " +
                        (root / o.port_frontend).string() + " --suite synthetic --runs " + std::to_string(o.runs);
    prov.extra["device"] = R"({"gpu_name":")" + o.gpu + R"(","sm_count":132,"compute_capability":"9.0"})";
  }
  store::results_writer w = o.resume ? store::results_writer::resume(path)
                                     : store::results_writer::create(path, prov, {.overwrite = o.overwrite});
  std::size_t count = o.bundles.empty() ? o.configs : real.truths.size();
  for (std::size_t i = 0; i < count; ++i) {
    truth t = o.bundles.empty() ? make_truth(i, o) : real.truths[i];
    w.add_config(t.info);
    for (int run = 0; run < o.runs; ++run) {
      for (store::role r : {store::role::reference, store::role::port}) {
        store::run_record rec = make_run(t, r, run, o);
        if (static_cast<long>(i) == o.fail_config && r == store::role::port && run == 0) {
          rec.time_ns.clear();
          rec.sm_clock_mhz.clear();
          rec.event_time_ns.clear();
          rec.verdicts = {"NOT_CHECKED", "NOT_EXECUTED", "INVALID_NO_SAMPLES"};
          rec.error = "CUDA_ERROR_ILLEGAL_ADDRESS (700): an illegal memory access was encountered";
        }
        if (w.contains(rec.key())) {
          ++result.skipped;
          continue;
        }
        w.append(rec);
        ++result.appended;
        if (o.exit_after >= 0 && static_cast<long>(result.appended) >= o.exit_after) _exit(0);
      }
    }
  }
  w.close();
  return result;
}

}  // namespace portbench::testing
