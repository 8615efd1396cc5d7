// SPDX-License-Identifier: Apache-2.0
#include "portbench/measure/job.hpp"

#include "portbench/error.hpp"

namespace portbench::measure {

using json = nlohmann::json;

json to_json(const job& j) {
  json items = json::array();
  for (const auto& it : j.items) {
    json item{{"index", it.index}, {"op", it.op}, {"params", it.params}, {"ref", it.ref_bundle}, {"port", it.port_bundle}};
    if (!it.ref_variant.empty()) item["ref_variant"] = it.ref_variant;
    if (!it.port_variant.empty()) item["port_variant"] = it.port_variant;
    items.push_back(std::move(item));
  }
  const auto& t = j.timing;
  return {{"mode", j.mode == job_mode::check ? "check" : "measure"}, {"device", j.device}, {"run", j.run}, {"seed", j.seed}, {"vary_inputs", j.vary_inputs}, {"host_inputs", j.host_inputs},
          {"verified_dir", j.verified_dir}, {"reference_id", j.reference_id},
          {"timing", {{"warmup_launches", t.warmup_launches}, {"min_samples", t.min_samples},
                      {"max_samples", t.max_samples}, {"target_rel_ci", t.target_rel_ci},
                      {"time_cap_s", t.time_cap_s}, {"cold_l2", t.cold_l2},
                      {"throttle_fraction", t.throttle_fraction}}},
          {"items", items}};
}

job job_from_json(const json& j) {
  job out;
  const std::string mode = j.value("mode", std::string("measure"));
  if (mode != "measure" && mode != "check") throw input_error("job", "mode", "unknown '" + mode + "'");
  out.mode = mode == "check" ? job_mode::check : job_mode::measure;
  out.device = j.at("device").get<int>();
  out.run = j.at("run").get<int>();
  out.seed = j.at("seed").get<std::uint64_t>();
  out.vary_inputs = j.value("vary_inputs", false);
  out.host_inputs = j.value("host_inputs", false);
  out.verified_dir = j.value("verified_dir", std::string{});
  out.reference_id = j.value("reference_id", std::string{});
  const auto& t = j.at("timing");
  out.timing.warmup_launches = t.at("warmup_launches").get<int>();
  out.timing.min_samples = t.at("min_samples").get<int>();
  out.timing.max_samples = t.at("max_samples").get<int>();
  out.timing.target_rel_ci = t.at("target_rel_ci").get<double>();
  out.timing.time_cap_s = t.at("time_cap_s").get<double>();
  out.timing.cold_l2 = t.at("cold_l2").get<bool>();
  out.timing.throttle_fraction = t.value("throttle_fraction", timing_options{}.throttle_fraction);
  for (const auto& it : j.at("items")) {
    out.items.push_back({it.at("index").get<std::size_t>(), it.at("op").get<std::string>(), it.at("params"),
                         it.at("ref").get<std::string>(), it.at("port").get<std::string>(),
                         it.value("ref_variant", std::string{}), it.value("port_variant", std::string{})});
  }
  return out;
}

namespace {

json side_to_json(const side_report& s) {
  json samples = json::array();
  for (const auto& x : s.samples) samples.push_back({x.device_ns, x.event_ns, x.sm_mhz, x.unwritten, x.problem, x.kernel_ns});
  return {{"frontend", s.frontend}, {"numerics", s.numerics}, {"numerics_detail", s.numerics_detail},
          {"proof", s.proof}, {"proof_detail", s.proof_detail}, {"timing", s.timing},
          {"timing_detail", s.timing_detail},
          {"median_ns", s.median_ns}, {"rel_ci", s.rel_ci}, {"check_s", s.check_s}, {"verify_s", s.verify_s},
          {"numerics_source", s.numerics_source}, {"output_digest", s.output_digest}, {"samples", samples},
          {"kernels", s.kernels}};
}

side_report side_from_json(const json& j) {
  side_report s;
  s.frontend = j.at("frontend").get<std::string>();
  s.numerics = j.at("numerics").get<std::string>();
  s.numerics_detail = j.at("numerics_detail").get<std::string>();
  s.proof = j.at("proof").get<std::string>();
  s.proof_detail = j.at("proof_detail").get<std::string>();
  s.check_s = j.value("check_s", 0.0);
  s.verify_s = j.value("verify_s", 0.0);
  s.numerics_source = j.value("numerics_source", std::string{});
  s.output_digest = j.value("output_digest", std::string{});
  s.timing = j.at("timing").get<std::string>();
  s.timing_detail = j.value("timing_detail", std::string{});
  s.median_ns = j.at("median_ns").get<double>();
  s.kernels = j.value("kernels", std::vector<std::string>{});
  s.rel_ci = j.at("rel_ci").get<double>();
  for (const auto& x : j.at("samples")) {
    sample smp;
    smp.device_ns = x.at(0).get<std::int64_t>();
    smp.event_ns = x.at(1).get<std::int64_t>();
    smp.sm_mhz = x.at(2).get<int>();
    smp.unwritten = x.at(3).get<std::uint64_t>();
    smp.problem = x.at(4).get<std::string>();
    if (x.size() > 5) smp.kernel_ns = x.at(5).get<std::vector<std::int64_t>>();
    s.samples.push_back(smp);
  }
  return s;
}

}  // namespace

json to_json(const item_report& r) {
  return {{"event", "result"}, {"index", r.index}, {"status", r.status}, {"error", r.error},
          {"wall_s", r.wall_s}, {"timed_device_s", r.timed_device_s}, {"inputs_s", r.inputs_s},
          {"sampling_s", r.sampling_s},
          {"reference", side_to_json(r.ref)}, {"port", side_to_json(r.port)}};
}

item_report item_report_from_json(const json& j) {
  item_report r;
  r.index = j.at("index").get<std::size_t>();
  r.status = j.at("status").get<std::string>();
  r.error = j.at("error").get<std::string>();
  r.wall_s = j.at("wall_s").get<double>();
  r.timed_device_s = j.at("timed_device_s").get<double>();
  r.inputs_s = j.value("inputs_s", 0.0);
  r.sampling_s = j.value("sampling_s", 0.0);
  r.ref = side_from_json(j.at("reference"));
  r.port = side_from_json(j.at("port"));
  return r;
}

std::uint64_t item_seed(std::uint64_t base, const std::string& config_id, int run) noexcept {
  // FNV-1a over the id, mixed with the base seed and the run (splitmix64 finaliser).
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : config_id) h = (h ^ c) * 1099511628211ull;
  std::uint64_t z = h ^ base ^ (static_cast<std::uint64_t>(run) * 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

std::uint64_t inputs_seed(const job& j, const std::string& config_id) noexcept {
  return item_seed(j.seed, config_id, j.vary_inputs ? j.run : 0);
}

}  // namespace portbench::measure
