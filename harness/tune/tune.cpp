// SPDX-License-Identifier: Apache-2.0
#include "portbench/tune/tune.hpp"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <map>
#include <set>

#include "portbench/bundle/bundle.hpp"
#include "portbench/bundle/error.hpp"
#include "portbench/reference/config_json.hpp"
#include "portbench/sweep/suite.hpp"
#include "portbench/verdicts.hpp"

namespace portbench::tune {
namespace {

using json = nlohmann::json;

std::string tuning_source(const std::string& tuning_json) {
  if (tuning_json.empty()) return {};
  const json t = json::parse(tuning_json, nullptr, false);
  return t.is_object() ? t.value("tuning_source", std::string{}) : std::string{};
}

// The best (smallest) of the valid run medians; 0 when no run was timed.
double best_of(const std::vector<double>& medians) {
  return medians.empty() ? 0.0 : *std::min_element(medians.begin(), medians.end());
}

// A later run's worse verdict replaces an earlier pass: every run must pass.
void keep_worst(std::string& slot, const std::string& v, std::string_view good) {
  if (slot.empty() || slot == good) slot = v;
}

}  // namespace

bool is_gpu(const std::string& gpu_name, const std::string& expected) {
  return gpu_name.size() >= expected.size() && gpu_name.compare(0, expected.size(), expected) == 0 &&
         (gpu_name.size() == expected.size() || gpu_name[expected.size()] == ' ') && !expected.empty();
}

bool candidate_result::eligible() const {
  return numerics == verdicts::numerics::pass && proof == verdicts::proof::executed &&
         status == verdicts::status::ok && best_ns > 0;
}

sweep::sweep_plan plan_tune(const tune_options& opt, std::vector<std::pair<std::string, std::string>>& skipped) {
  sweep::sweep_plan plan;
  plan.suite_name = "tune";
  std::set<std::string> wanted;   // config ids of the suite, when one is given
  if (!opt.suite_file.empty()) {
    const auto s = sweep::load_suite(opt.suite_file);
    plan.suite_name = "tune:" + s.name;
    for (const auto& e : s.entries) wanted.insert(e.config.id());
  }
  std::vector<std::filesystem::path> dirs;
  for (const auto& d : opt.bundle_dirs) {
    auto found = bundle::find_bundles(d);
    if (found.empty()) throw bundle::bundle_error(d, "no bundle (no manifest.json) below this folder");
    dirs.insert(dirs.end(), found.begin(), found.end());
  }
  plan.bundles.reserve(dirs.size());
  for (const auto& d : dirs) plan.bundles.push_back({bundle::load_bundle(d), true});
  for (auto& pb : plan.bundles) {
    const bundle::bundle& b = pb.loaded;
    for (const auto& cp : b.plan.configs) {
      const std::string id = cp.config.id();
      if (!wanted.empty() && wanted.count(id) == 0) continue;
      if (cp.variants.empty()) {
        skipped.emplace_back(id, b.dir.string() + ": no tuning variants");
        continue;
      }
      for (const auto& v : cp.variants) {
        if (v.name == cp.variant) continue;   // the baseline itself
        sweep::planned_item p;
        p.config = cp.config;
        p.params = reference::params_to_json(cp.config);
        p.reference = {b.dir.string(), b.plan.frontend, ""};
        p.port = {b.dir.string(), b.plan.frontend, v.name};
        plan.items.push_back(std::move(p));
        pb.used = true;
      }
    }
  }
  return plan;
}

void config_runs::take(side_runs& s, const measure::side_report& side, const measure::item_report& r) {
  if (side.median_ns > 0 && verdicts::timing_valid(side.timing)) s.medians.push_back(side.median_ns);
  keep_worst(s.numerics, side.numerics, verdicts::numerics::pass);
  keep_worst(s.proof, side.proof, verdicts::proof::executed);
  keep_worst(s.status, r.status, verdicts::status::ok);
  if (!r.error.empty()) s.error = r.error;
}

void config_runs::add(const std::string& variant, const measure::item_report& r) {
  // Taking a NOT_RUN pair's reference side would fail a baseline that passed, and then any
  // candidate, however slow, would win.
  if (r.status != verdicts::status::not_run) take(m_baseline, r.ref, r);
  take(m_candidates[variant], r.port, r);
}

void config_runs::choose(config_choice& ch) const {
  ch.baseline_ns = best_of(m_baseline.medians);
  ch.chosen = ch.baseline;
  const bool baseline_ok = m_baseline.numerics == verdicts::numerics::pass &&
                           m_baseline.proof == verdicts::proof::executed && ch.baseline_ns > 0;
  for (const auto& [name, s] : m_candidates) {
    candidate_result cr{name, 0, best_of(s.medians), s.numerics, s.proof, s.status, s.error};
    if (cr.best_ns > 0 && ch.baseline_ns > 0) cr.speedup = ch.baseline_ns / cr.best_ns;
    ch.candidates.push_back(std::move(cr));
  }
  const candidate_result* winner = nullptr;
  for (const auto& cr : ch.candidates) {
    if (!cr.eligible()) continue;
    const bool better = baseline_ok ? cr.speedup > (winner != nullptr ? winner->speedup : 1.0)
                                    : winner == nullptr || cr.best_ns < winner->best_ns;
    if (better) winner = &cr;
  }
  if (winner != nullptr) {
    ch.chosen = winner->variant;
    ch.speedup_over_default = winner->speedup;
  }
}

tune_result run_tune(const tune_options& opt) {
  tune_result out;
  const auto plan = plan_tune(opt, out.skipped);
  if (plan.items.empty()) return out;

  // A record says which plan is fastest on one GPU: timings of another card must not reach it.
  for (const auto& d : sweep::describe_devices(opt.sweep.worker_exe, opt.sweep.devices)) {
    const std::string where = "device " + std::to_string(d.device);
    if (!opt.expect_gpu.empty() && !is_gpu(d.gpu_name(), opt.expect_gpu)) {
      throw sweep::sweep_error(where, "", "is \"" + d.gpu_name() + "\", not the record's GPU \"" + opt.expect_gpu +
                                              "\" (--gpu): its timings would choose plans for another card");
    }
    if (!out.gpu_name.empty() && d.gpu_name() != out.gpu_name) {
      throw sweep::sweep_error(where, "", "is \"" + d.gpu_name() + "\", another GPU than \"" + out.gpu_name +
                                              "\" of the first device: one record holds one GPU's choices");
    }
    out.gpu_name = d.gpu_name();
  }

  // Per (bundle, configuration): the baseline's and each candidate's runs.
  struct config_pairs {
    const sweep::planned_item* first = nullptr;
    config_runs runs;
  };
  std::map<std::string, config_pairs> runs;
  // run_sweep calls the sink one report at a time.
  auto sink = [&](const sweep::planned_item& pair, int, const measure::item_report& r) {
    auto& c = runs[pair.reference.bundle + "|" + pair.config.id()];
    if (c.first == nullptr) c.first = &pair;
    c.runs.add(pair.port.variant, r);
  };
  out.summary = sweep::run_sweep(opt.sweep, plan, sink);

  for (const auto& [key, c] : runs) {
    const auto& b = std::find_if(plan.bundles.begin(), plan.bundles.end(), [&](const sweep::plan_bundle& x) {
                       return x.loaded.dir.string() == c.first->reference.bundle;
                     })->loaded;
    const auto* cp = b.plan.find(c.first->config);
    config_choice ch;
    ch.bundle_dir = b.dir.string();
    ch.frontend = b.plan.frontend;
    ch.op = c.first->config.op;
    ch.config_id = c.first->config.id();
    ch.params = c.first->params;
    ch.baseline = cp != nullptr ? cp->variant : std::string{};
    ch.baseline_source = cp != nullptr ? tuning_source(cp->tuning_json) : std::string{};
    c.runs.choose(ch);
    out.choices.push_back(std::move(ch));
  }
  return out;
}

json to_record(const tune_result& r, const std::string& target, const std::string& made_by) {
  char date[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  std::set<std::string> frontends;
  json choices = json::array(), not_measured = json::array();
  for (const auto& c : r.choices) {
    frontends.insert(c.frontend);
    const bool any_timed = c.baseline_ns > 0 || std::any_of(c.candidates.begin(), c.candidates.end(),
                                                              [](const candidate_result& k) { return k.eligible(); });
    if (!any_timed) {
      // Nothing timed (a budget spent, every side failed): the exporter keeps its default and
      // the record does not claim a choice.
      not_measured.push_back({{"op", c.op}, {"params", c.params}});
      continue;
    }
    json cands = json::array();
    for (const auto& k : c.candidates) {
      cands.push_back({{"variant", k.variant}, {"speedup", k.speedup}, {"best_ns", k.best_ns},
                       {"numerics", k.numerics}, {"proof", k.proof}, {"status", k.status}});
    }
    choices.push_back({{"op", c.op}, {"params", c.params}, {"variant", c.chosen}, {"baseline", c.baseline},
                       {"baseline_source", c.baseline_source}, {"baseline_ns", c.baseline_ns},
                       {"speedup_over_default", c.speedup_over_default},
                       {"candidates", static_cast<int>(c.candidates.size()) + 1}, {"measured", cands}});
  }
  std::string fe;
  for (const auto& f : frontends) fe += (fe.empty() ? "" : ",") + f;
  return {{"schema", k_record_schema}, {"frontend", fe}, {"target", target}, {"gpu", r.gpu_name},
          {"made_by", made_by}, {"date", date}, {"choices", choices}, {"not_measured", not_measured}};
}

}  // namespace portbench::tune
