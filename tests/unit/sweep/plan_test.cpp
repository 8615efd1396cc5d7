// SPDX-License-Identifier: Apache-2.0
// The sweep layer without workers: suites, pairing and selection on the real exported bundles,
// the estimate, provenance, run records and the resume rules.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <regex>
#include <set>

#include <nlohmann/json.hpp>

#include "portbench/bundle/error.hpp"
#include "portbench/reference/config_json.hpp"
#include "portbench/sweep/plan.hpp"
#include "portbench/sweep/record.hpp"
#include "portbench/sweep/suite.hpp"
#include "portbench/sweep/summary.hpp"
#include "portbench/verdicts.hpp"
#include "test_support.hpp"

namespace ps = portbench::sweep;
namespace pt = portbench::testing;
namespace pr = portbench::reference;
namespace pm = portbench::measure;
namespace verdicts = portbench::verdicts;

namespace {

std::string smoke() { return std::string(PORTBENCH_SOURCE_DIR) + "/configs/smoke.json"; }

ps::plan_options python_to_rust() {
  ps::plan_options o;
  o.suite_file = smoke();
  o.ref_dirs = {(pt::bundle_root() / "cutile_python").string()};
  o.port_dirs = {(pt::bundle_root() / "cutile_rust").string()};
  return o;
}

template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const portbench::error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Suite, BadSuitesNameTheFileAndField) {
  EXPECT_EQ(error_of([] { (void)ps::parse_suite(R"({"suite": "x", "configs": [{"op": "rms_norm"}]})", "s.json"); }),
            "s.json: configs[0].params: missing or not an object");
  EXPECT_EQ(error_of([] { (void)ps::parse_suite(R"({"configs": [{"op": "a", "params": {"m": [1]}}]})", "s.json"); }),
            "s.json: configs[0].params.m: expected null, a boolean, a number or a string");
  EXPECT_EQ(error_of([] { (void)ps::parse_suite(R"({"configs": 3})", "s.json"); }), "s.json: configs: missing or not an array");
  EXPECT_EQ(error_of([] { (void)ps::parse_suite("[1", "s.json"); }).rfind("s.json: not valid JSON: ", 0), 0u);
  // nlohmann's out_of_range, not a parse_error (once an unknown exception; tests/fuzz/fuzz_suite's kind).
  EXPECT_EQ(error_of([] { (void)ps::parse_suite(R"({"configs": [{"op": "a", "params": {"m": 1e999}}]})", "s.json"); }),
            "s.json: not valid JSON: [json.exception.out_of_range.406] number overflow parsing '1e999'");
  pt::temp_dir tmp;
  const auto missing = (tmp.path() / "none.json").string();
  EXPECT_EQ(error_of([&] { (void)ps::load_suite(missing); }), missing + ": cannot open suite (missing file?)");
}

TEST(Suite, SmokeSuiteReadsEveryConfigurationWithTypedParameters) {
  const auto s = ps::load_suite(smoke());
  EXPECT_EQ(s.name, "smoke");
  ASSERT_FALSE(s.entries.empty());
  for (const auto& e : s.entries) {
    EXPECT_EQ(pr::config_from_json(e.config.op, e.params).params, e.config.params) << e.config.id();
    EXPECT_EQ(pr::config_from_json(e.config.op, pr::params_to_json(e.config)).id(), e.config.id());
  }
  EXPECT_TRUE(std::holds_alternative<std::int64_t>(s.entries.front().config.params.at("n")));
}

TEST(Pairing, SmokeSuitePairsEveryConfigurationBothSidesSupport) {
  auto plan = ps::plan_sweep(python_to_rust());
  const auto suite = ps::load_suite(smoke());
  EXPECT_EQ(plan.items.size() + plan.unpaired.size(), suite.entries.size());
  EXPECT_GE(plan.items.size(), 7u);
  EXPECT_EQ(plan.suite_name, "smoke");
  for (const auto& p : plan.items) {
    EXPECT_EQ(p.reference.frontend, "cutile_python");
    EXPECT_EQ(p.port.frontend, "cutile_rust");
    EXPECT_NE(p.reference.bundle.find("cutile_python/" + p.config.op), std::string::npos) << p.reference.bundle;
  }
  for (const auto& b : plan.bundles) {
    EXPECT_EQ(b.reference_side, b.loaded.plan.frontend == "cutile_python");
  }
}

TEST(Pairing, TwoBundlesOfOneOperatorOnOneSideAreRefused) {
  auto o = python_to_rust();
  o.ref_dirs.push_back((pt::bundle_root() / "triton").string());
  const auto what = error_of([&] { (void)ps::plan_sweep(o); });
  EXPECT_NE(what.find("--ref: two bundles for operator '"), std::string::npos) << what;
}

TEST(Pairing, AMissingBundleFolderIsNamed) {
  auto o = python_to_rust();
  o.port_dirs = {(pt::bundle_root() / "no_such_frontend").string()};
  EXPECT_EQ(error_of([&] { (void)ps::plan_sweep(o); }), o.port_dirs.front() + ": no such folder");
}

TEST(Pairing, AnUnsupportedConfigurationIsUnpairedWithTheExportersReason) {
  // A copy of the cuTile Rust rms_norm bundle whose first configuration the exporter "could not
  // express": unpaired, and the list says why in the exporter's words.
  pt::temp_dir tmp;
  const auto src = pt::bundle_root() / "cutile_rust" / "rms_norm";
  const auto dst = tmp.path() / "port" / "rms_norm";
  std::filesystem::create_directories(dst.parent_path());
  std::filesystem::copy(src, dst, std::filesystem::copy_options::recursive);
  auto m = nlohmann::json::parse(pt::read_text(dst / "manifest.json"));
  const auto params = m["configs"][0]["params"];
  m["configs"].erase(0);
  m["unsupported"] = nlohmann::json::array({{{"params", params}, {"reason", "a reason only the exporter knows"}}});
  pt::write_text(dst / "manifest.json", m.dump(1));
  auto o = python_to_rust();
  o.port_dirs = {(tmp.path() / "port").string()};
  o.select.ops = {"rms_norm"};
  const auto plan = ps::plan_sweep(o);
  const std::string id = pr::config_from_json("rms_norm", params).id();
  std::string why;
  for (const auto& [uid, w] : plan.unpaired) {
    if (uid == id) why = w;
  }
  EXPECT_EQ(why, "the port bundle has no plan for it (cutile_rust: a reason only the exporter knows)");
  EXPECT_FALSE(plan.items.empty());
  for (const auto& item : plan.items) EXPECT_NE(item.config.id(), id);
}

TEST(Selection, OpAndFilterKeepWhatTheyName) {
  auto o = python_to_rust();
  const auto all = ps::plan_sweep(o);
  o.select.ops = {"rms_norm"};
  const auto rms = ps::plan_sweep(o);
  ASSERT_FALSE(rms.items.empty());
  for (const auto& i : rms.items) EXPECT_EQ(i.config.op, "rms_norm");
  EXPECT_EQ(rms.items.size() + rms.deselected + rms.unpaired.size(), all.items.size() + all.unpaired.size());
  o.select.filter = "dtype=float16";
  const auto half = ps::plan_sweep(o);
  ASSERT_FALSE(half.items.empty());
  EXPECT_LT(half.items.size(), rms.items.size());
  for (const auto& i : half.items) EXPECT_NE(i.id().find("dtype=float16"), std::string::npos) << i.id();
  o.select.filter = "(";
  EXPECT_NE(error_of([&] { (void)ps::plan_sweep(o); }).find("--filter: invalid regular expression '('"), std::string::npos);
}

TEST(Selection, CheckPlansEveryConfigurationOfEveryBundle) {
  const auto plan = ps::plan_check({(pt::bundle_root() / "triton").string()}, {});
  std::size_t configs = 0;
  for (const auto& b : plan.bundles) configs += b.loaded.plan.configs.size();
  EXPECT_EQ(plan.items.size(), configs);
  EXPECT_EQ(plan.kind, ps::plan_kind::check);
  for (const auto& i : plan.items) {
    EXPECT_EQ(i.reference.frontend, "triton");
    EXPECT_TRUE(i.port.bundle.empty());
  }
  const auto some = ps::plan_check({(pt::bundle_root() / "triton").string()}, {.filter = "^vector_add/"});
  EXPECT_EQ(some.items.size() + some.deselected, configs);
  for (const auto& i : some.items) EXPECT_EQ(i.config.op, "vector_add");
}


pm::item_report report(std::string_view status, double ref_ns, double port_ns) {
  pm::item_report r;
  r.status = status;
  for (auto* side : {&r.ref, &r.port}) {
    const double ns = side == &r.ref ? ref_ns : port_ns;
    side->numerics = "PASS";
    side->proof = "EXECUTED";
    side->timing = status == verdicts::status::ok ? "VALID" : "NOT_MEASURED";
    if (status == verdicts::status::ok) {
      for (int i = 0; i < 7; ++i) side->samples.push_back({static_cast<std::int64_t>(ns) + i - 3, 0, 1980, 0, 0, ""});
      side->samples.push_back({-1, 0, 1980, 0, 0, "MISSING_RECORD"});
      side->median_ns = ns;
    }
  }
  if (status != verdicts::status::ok) r.error = "worker died (signal 11)";
  return r;
}

ps::planned_item item(const std::string& op, std::int64_t n) {
  ps::planned_item i;
  i.config = {op, {{"n", n}}};
  i.params = {{"n", n}};
  i.reference = {"r", "ref_fe"};
  i.port = {"p", "port_fe"};
  return i;
}

TEST(Tally, BestOfNRatioWorstVerdictsAndExitCode) {
  ps::sweep_tally t;
  const auto a = item("op", 1), b = item("op", 2);
  t.add(a, 0, report(verdicts::status::ok, 2000, 1000));
  t.add(a, 1, report(verdicts::status::ok, 1900, 1100));   // best of 2: 1900 / 1000
  t.add(b, 0, report(verdicts::status::ok, 1000, 1000));
  ps::sweep_summary s;
  EXPECT_EQ(t.exit_code({}, s), 0);
  EXPECT_NEAR(t.geomean(), std::sqrt(1.9 * 1.0), 1e-12);
  const auto rows = t.rows();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_NEAR(rows[0].ratio, 1.9, 1e-12);
  EXPECT_NEAR(rows[0].spread, 0.1, 1e-12);
  EXPECT_EQ(rows[0].numerics, "PASS");
  // One crashed run makes the configuration fail and leave the geomean.
  t.add(b, 1, report(verdicts::status::crash, 0, 0));
  EXPECT_EQ(t.rows()[1].status, "CRASH");
  EXPECT_EQ(t.rows()[1].error, "worker died (signal 11)");
  EXPECT_EQ(t.geomean_count(), 1u);
  EXPECT_EQ(t.exit_code({}, s), 1);
  // A failed numerics verdict on one side is the row's verdict.
  ps::sweep_tally u;
  auto r = report(verdicts::status::ok, 1000, 1000);
  r.port.numerics = "FAIL";
  u.add(a, 0, r);
  EXPECT_EQ(u.rows()[0].numerics, "FAIL");
  EXPECT_EQ(u.exit_code({}, s), 1);
  // A result that could not be recorded fails the run.
  ps::sweep_tally v;
  v.add(a, 0, report(verdicts::status::ok, 1000, 1000));
  EXPECT_EQ(v.exit_code({}, s), 0);
  v.not_recorded(a, "disk full");
  EXPECT_EQ(v.rows()[0].status, "NOT_RECORDED");
  EXPECT_EQ(v.exit_code({}, s), 1);
}

TEST(Record, ARunRecordKeepsValidSamplesAndTheFailureCause) {
  const auto i = item("op", 1);
  const auto ok = ps::to_record(i, 3, report(verdicts::status::ok, 1000, 1200), portbench::store::role::port);
  EXPECT_EQ(ok.frontend, "port_fe");
  EXPECT_EQ(ok.run, 3);
  EXPECT_EQ(ok.time_ns.size(), 7u);
  EXPECT_EQ(ok.dropped_samples, 1);
  EXPECT_EQ(ok.time_ns.front(), 1197);
  EXPECT_EQ(ok.verdicts.timing, "VALID");
  EXPECT_TRUE(ok.error.empty());
  const auto crashed = ps::to_record(i, 0, report(verdicts::status::crash, 0, 0), portbench::store::role::reference);
  EXPECT_EQ(crashed.error, "CRASH: worker died (signal 11)");
  EXPECT_TRUE(crashed.time_ns.empty());
  auto hot = report(verdicts::status::ok, 1000, 1000);
  hot.port.samples[0].problem = verdicts::sample_problem::clock_throttled;
  hot.port.timing = verdicts::timing::invalid_below_floor;
  hot.port.timing_detail = "median 1000 ns is below the physical floor of 2000 ns: x";
  const auto hr = ps::to_record(i, 0, hot, portbench::store::role::port);
  EXPECT_EQ(hr.dropped_samples, 2);
  EXPECT_EQ(hr.throttled_samples, 1);
  EXPECT_EQ(hr.time_ns.size(), 6u);
  EXPECT_EQ(hr.verdicts.timing, "INVALID_BELOW_FLOOR");
  EXPECT_EQ(hr.timing_detail, hot.port.timing_detail);
  auto odd = report(verdicts::status::ok, 1000, 1000);
  odd.ref.samples.clear();   // VALID without a sample would be refused by the store
  EXPECT_EQ(ps::to_record(i, 0, odd, portbench::store::role::reference).verdicts.timing, "INVALID_NO_SAMPLES");
}

TEST(Record, PerKernelTimesGoWithTheKeptSamplesOnly) {
  const auto i = item("op", 1);
  auto two = report(verdicts::status::ok, 1000, 1200);
  two.port.kernels = {"pass", "reduce"};
  for (auto& x : two.port.samples) {
    if (x.problem.empty()) x.kernel_ns = {x.device_ns - 200, 200};
  }
  const auto rec = ps::to_record(i, 0, two, portbench::store::role::port);
  EXPECT_EQ(rec.kernel_entries, two.port.kernels);
  ASSERT_EQ(rec.kernel_time_ns.size(), 2 * rec.time_ns.size());   // the dropped sample's row is not kept
  EXPECT_EQ(rec.kernel_time_ns[0] + rec.kernel_time_ns[1], rec.time_ns[0]);
  // A kept sample without its split: no per-kernel times for the run (the store wants whole rows).
  two.port.samples[2].kernel_ns.clear();
  const auto partial = ps::to_record(i, 0, two, portbench::store::role::port);
  EXPECT_TRUE(partial.kernel_entries.empty());
  EXPECT_TRUE(partial.kernel_time_ns.empty());
  EXPECT_EQ(partial.time_ns.size(), rec.time_ns.size());
}


TEST(Resume, ConflictsNameEachDifferenceAndAllowMoreRunsAndFewerOperators) {
  auto plan = ps::plan_sweep(python_to_rust());
  ps::execute_options e;
  ps::device_description d{0, {{"gpu_name", "NVIDIA H200"}}};
  const auto file = ps::make_provenance(plan, e, &d, "portbench run");
  EXPECT_TRUE(ps::resume_conflicts(file, file).empty());
  auto more_runs = e;
  more_runs.runs = 8;
  EXPECT_TRUE(ps::resume_conflicts(file, ps::make_provenance(plan, more_runs, &d, "x")).empty());
  auto o = python_to_rust();
  o.select.ops = {"rms_norm"};
  EXPECT_TRUE(ps::resume_conflicts(file, ps::make_provenance(ps::plan_sweep(o), e, &d, "x")).empty())
      << "a call covering fewer operators may resume";
  auto call = file;
  ASSERT_FALSE(call.bundles.empty());
  auto& b = call.bundles.front();
  ASSERT_FALSE(b.cubin_sha256.empty());
  const std::string cubin = b.cubin_sha256.begin()->first;
  b.cubin_sha256.begin()->second = std::string(64, 'a');
  const auto c = ps::resume_conflicts(file, call);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].rfind("cubin hashes: " + b.role + " " + b.frontend + "/" + b.op + " " + cubin + " differs (file ", 0), 0u)
      << c[0];
  EXPECT_NE(c[0].find(", this call aaaaaaaaaaaa)"), std::string::npos) << c[0];
  call = file;
  call.bundles.push_back({"port", "triton", "matmul", "x", {}});
  EXPECT_EQ(ps::resume_conflicts(file, call).at(0), "bundles: the file has no port bundle for operator 'matmul'");
}

TEST(Resume, AFileFlushedTheOldWayIsRefused) {
  // Files written before the clean L2 flush have no l2_flush timing option: their times include
  // the write-back of the flush's dirty lines, so this call's samples must not join them.
  auto plan = ps::plan_sweep(python_to_rust());
  ps::execute_options e;
  ps::device_description d{0, {{"gpu_name", "NVIDIA H200"}}};
  const auto call = ps::make_provenance(plan, e, &d, "portbench run");
  auto timing = nlohmann::json::parse(call.extra.at("timing"));
  ASSERT_EQ(timing.at("l2_flush"), "read twice the L2 size (clean)");
  auto file = call;
  timing.erase("l2_flush");
  file.extra["timing"] = timing.dump();
  const auto c = ps::resume_conflicts(file, call);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0], "timing option l2_flush: the file records none (its L2 was flushed by overwriting), this call "
                  "\"read twice the L2 size (clean)\"");
  auto warm = e;
  warm.timing.cold_l2 = false;
  EXPECT_EQ(nlohmann::json::parse(ps::make_provenance(plan, warm, &d, "x").extra.at("timing")).at("l2_flush"), "none");
}

TEST(Estimate, GrowsWithBytesRunsAndTheTimeCap) {
  auto plan = ps::plan_sweep(python_to_rust());
  const auto one = ps::estimate(plan, {.runs = 1});
  std::map<std::string, double> est;
  for (const auto& i : plan.items) {
    EXPECT_GT(i.estimated_s, 0) << i.id();
    est[i.id()] = i.estimated_s;
  }
  EXPECT_GT(est.at("vector_add/dtype=float32,n=67108864"), est.at("vector_add/dtype=float32,n=1048576"));
  const auto four = ps::estimate(plan, {.runs = 4});
  EXPECT_NEAR(four.wall_seconds - four.startup_seconds, 4 * (one.wall_seconds - one.startup_seconds), 1e-9);
  EXPECT_EQ(four.workers, 4u);
  const auto two_gpus = ps::estimate(plan, {.runs = 4, .devices = 2});
  EXPECT_LT(two_gpus.wall_seconds, four.wall_seconds);
  ps::estimate_options capped{.runs = 1};
  capped.timing.time_cap_s = 0.01;
  capped.timing.max_samples = 100000;
  capped.timing.min_samples = 100000;
  EXPECT_LT(ps::estimate(plan, capped).item_seconds, ps::estimate(plan, {.runs = 1, .timing = {.min_samples = 100000, .max_samples = 100000, .time_cap_s = 100}}).item_seconds);
}

TEST(Shard, ParseAcceptsKOfNAndNamesWhatIsWrong) {
  const auto s = ps::parse_shard("2/5");
  EXPECT_EQ(s.index, 2);
  EXPECT_EQ(s.count, 5);
  EXPECT_EQ(s.text(), "2/5");
  EXPECT_TRUE(ps::parse_shard("0/1").whole());
  EXPECT_EQ(error_of([] { (void)ps::parse_shard("5/5"); }),
            "--shard: '5/5': K must be below N (expected K/N with 0 <= K < N, e.g. 0/4)");
  EXPECT_EQ(error_of([] { (void)ps::parse_shard("1/0"); }),
            "--shard: '1/0': N must be at least 1 (expected K/N with 0 <= K < N, e.g. 0/4)");
  EXPECT_EQ(error_of([] { (void)ps::parse_shard("3"); }), "--shard: '3': no '/' (expected K/N with 0 <= K < N, e.g. 0/4)");
  EXPECT_EQ(error_of([] { (void)ps::parse_shard("-1/4"); }),
            "--shard: '-1/4': '-1' is not a non-negative integer (expected K/N with 0 <= K < N, e.g. 0/4)");
}

// The slices of a real plan (the smoke suite on the exported bundles): each item in exactly one
// slice, each slice in plan order, and the estimated time spread evenly (the longest-first
// greedy split is within the largest item of the mean).
TEST(Shard, SlicesCoverThePlanOnceInPlanOrderAndBalanceTheEstimate) {
  auto whole = ps::plan_sweep(python_to_rust());
  (void)ps::estimate(whole, {.runs = 4});
  std::map<std::string, std::size_t> position;
  double total = 0, largest = 0;
  for (std::size_t i = 0; i < whole.items.size(); ++i) {
    position[whole.items[i].id()] = i;
    total += whole.items[i].estimated_s;
    largest = std::max(largest, whole.items[i].estimated_s);
  }
  ASSERT_GE(whole.items.size(), 6u);
  for (int n : {1, 2, 3, static_cast<int>(whole.items.size()) + 2}) {
    std::map<std::string, int> owner;
    for (int k = 0; k < n; ++k) {
      auto plan = ps::plan_sweep(python_to_rust());
      (void)ps::estimate(plan, {.runs = 4});
      ps::keep_shard(plan, {k, n});
      EXPECT_EQ(plan.all_shards_items, whole.items.size());
      double load = 0;
      std::size_t last = 0;
      for (std::size_t i = 0; i < plan.items.size(); ++i) {
        const auto id = plan.items[i].id();
        EXPECT_TRUE(owner.emplace(id, k).second) << id << " in shards " << owner[id] << " and " << k << " of " << n;
        if (i > 0) {
          EXPECT_GT(position.at(id), last) << "shard " << k << "/" << n << " is out of plan order";
        }
        last = position.at(id);
        load += plan.items[i].estimated_s;
      }
      if (n <= static_cast<int>(whole.items.size())) {
        EXPECT_FALSE(plan.items.empty()) << "shard " << k << "/" << n;
        EXPECT_LE(load, total / n + largest + 1e-9) << "shard " << k << "/" << n;
      }
      for (const auto& b : plan.bundles) {
        if (!b.used) continue;
        const bool runs_it = std::any_of(plan.items.begin(), plan.items.end(), [&](const ps::planned_item& it) {
          return (b.reference_side ? it.reference.bundle : it.port.bundle) == b.loaded.dir.string();
        });
        EXPECT_TRUE(runs_it) << b.loaded.dir << " marked used by shard " << k << "/" << n;
      }
    }
    EXPECT_EQ(owner.size(), whole.items.size()) << n << " shards";
  }
}

TEST(Shard, AShardIsPartOfTheProvenanceAndOfTheResumeRules) {
  auto plan = ps::plan_sweep(python_to_rust());
  (void)ps::estimate(plan, {});
  ps::execute_options exec;
  const auto whole = ps::make_provenance(plan, exec, nullptr, "x");
  EXPECT_EQ(whole.extra.count("shard"), 0u);
  ps::keep_shard(plan, {1, 3});
  const auto part = ps::make_provenance(plan, exec, nullptr, "x");
  EXPECT_EQ(part.extra.at("shard"), "1/3");
  EXPECT_EQ(part.extra.at("shard_plan_configs"), std::to_string(plan.all_shards_items));
  const auto conflicts = ps::resume_conflicts(part, whole);
  ASSERT_FALSE(conflicts.empty());
  EXPECT_NE(std::find(conflicts.begin(), conflicts.end(), "shard: the file has '1/3', this call ''"), conflicts.end());
}

}  // namespace

TEST(Tally, RunsTheBudgetDidNotStartLeaveMeasuredRowsAloneButFailTheSweep) {
  // The H200's first corpus call: 380 runs measured, 1000 left to --resume; its table said
  // NOT_RUN for every row and "geomean ... 0 configurations" although one run of each was in.
  ps::sweep_tally t;
  const auto a = item("op", 1), b = item("op", 2);
  auto unstarted = report(verdicts::status::not_run, 0, 0);
  unstarted.error = "not started: the sweep's budget of 470 s was spent";
  t.add(a, 0, report(verdicts::status::ok, 2000, 1000));
  t.add(a, 1, unstarted);
  t.add(b, 0, unstarted);
  const auto rows = t.rows();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].status, "OK");
  EXPECT_EQ(rows[0].runs, 1);
  EXPECT_NEAR(rows[0].ratio, 2.0, 1e-12);
  EXPECT_EQ(rows[1].status, "NOT_RUN");
  EXPECT_EQ(rows[1].error, unstarted.error);
  EXPECT_EQ(t.geomean_count(), 1u);
  ps::sweep_summary s;
  EXPECT_EQ(t.exit_code({}, s), 1) << "row b never ran";
  ps::sweep_tally u;
  u.add(a, 0, report(verdicts::status::ok, 2000, 1000));
  u.add(a, 1, unstarted);
  EXPECT_EQ(u.exit_code({}, s), 0);
  s.not_run_budget = 1;
  EXPECT_EQ(u.exit_code({}, s), 1) << "runs left for --resume: the sweep is not complete";
}
