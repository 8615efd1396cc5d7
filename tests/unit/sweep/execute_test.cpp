// SPDX-License-Identifier: Apache-2.0
// run_sweep against a real worker process that misbehaves on purpose (tests/support/
// misbehaving_worker.cpp): whatever one configuration's worker does, that configuration gets
// its recorded outcome, the sweep goes on, and nothing escapes (no std::terminate, no scratch
// folder left behind). Prints each misbehaviour's outcome for the record.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>

#include "portbench/sweep/execute.hpp"
#include "portbench/verdicts.hpp"
#include "test_support.hpp"

namespace ps = portbench::sweep;
namespace pm = portbench::measure;
namespace pt = portbench::testing;
namespace verdicts = portbench::verdicts;

namespace {

ps::planned_item fake_item(const std::string& behaviour, std::int64_t n) {
  ps::planned_item i;
  i.params = {{"n", n}, {"fake", behaviour}};
  i.config.op = "vector_add";
  i.config.params = {{"n", n}, {"fake", behaviour}};
  i.reference = {"/nonexistent/ref", "fake_ref"};
  i.port = {"/nonexistent/port", "fake_port"};
  return i;
}

ps::sweep_plan fake_plan(const std::vector<std::string>& behaviours) {
  ps::sweep_plan p;
  p.suite_name = "fake";
  std::int64_t n = 1;
  for (const auto& b : behaviours) p.items.push_back(fake_item(b, n++));
  return p;
}

ps::execute_options fake_options() {
  ps::execute_options o;
  o.runs = 1;
  o.item_timeout_s = 1.5;
  o.worker_exe = PORTBENCH_MISBEHAVING_WORKER;
  return o;
}

struct outcome {
  std::string status, error, port_numerics;
  int deliveries = 0;
};

// Collects what the sink was given, per (id, run).
struct collector {
  std::mutex lock;
  std::map<std::pair<std::string, int>, outcome> got;
  ps::result_sink sink() {
    return [this](const ps::planned_item& item, int run, const pm::item_report& r) {
      std::lock_guard g(lock);   // run_sweep serialises calls; the lock checks nothing else runs
      auto& o = got[{item.id(), run}];
      o.status = r.status;
      o.error = r.error;
      o.port_numerics = r.port.numerics;
      ++o.deliveries;
    };
  }
};

std::size_t scratch_folders() {
  std::size_t n = 0;
  const std::string prefix = "portbench-" + std::to_string(::getpid()) + "-";
  for (const auto& e : std::filesystem::directory_iterator(std::filesystem::temp_directory_path())) {
    n += e.path().filename().string().rfind(prefix, 0) == 0;
  }
  return n;
}

TEST(RunSweep, EveryMisbehaviourBecomesThatConfigurationsOutcome) {
  const std::map<std::string, std::string_view> expected = {
      {"ok", verdicts::status::ok},          {"fail", verdicts::status::ok},
      {"noise", verdicts::status::ok},       {"crash", verdicts::status::crash},
      {"segv", verdicts::status::crash},     {"hang", verdicts::status::hang},
      {"spam", verdicts::status::hang},      {"bad_report", verdicts::status::bad_report},
      {"bad_status", verdicts::status::bad_report}, {"exit_early", verdicts::status::error},
      {"exit_mid", verdicts::status::crash}, {"half_line", verdicts::status::crash},
      {"context_lost", verdicts::status::error}};
  // Each misbehaviour between two healthy configurations.
  std::vector<std::string> behaviours{"ok"};
  for (const auto& [b, s] : expected) {
    behaviours.push_back(b);
    behaviours.push_back("ok");
  }
  const auto plan = fake_plan(behaviours);
  collector c;
  const auto before = scratch_folders();
  const auto summary = ps::run_sweep(fake_options(), plan, c.sink());
  EXPECT_EQ(scratch_folders(), before) << "the scratch folder is removed";
  EXPECT_EQ(summary.items_run, static_cast<int>(plan.items.size()));
  ASSERT_EQ(c.got.size(), plan.items.size());
  std::printf("%-13s %-11s %s\n", "misbehaviour", "outcome", "recorded error");
  for (const auto& item : plan.items) {
    const std::string b = item.params["fake"].get<std::string>();
    const auto& o = c.got.at({item.id(), 0});
    EXPECT_EQ(o.deliveries, 1) << b;
    EXPECT_EQ(o.status, expected.at(b)) << b << ": " << o.error;
    if (o.status != verdicts::status::ok) {
      EXPECT_FALSE(o.error.empty()) << b;
    }
    if (b != "ok") std::printf("%-13s %-11s %.110s\n", b.c_str(), o.status.c_str(), o.error.c_str());
  }
  int failed = 0;
  for (const auto& [b, s] : expected) failed += s != verdicts::status::ok;
  EXPECT_EQ(summary.items_failed, failed);
  EXPECT_GE(summary.stray_lines, 3) << "noise and spam lines are counted";
  // Causes the user can act on.
  auto error_of = [&](const std::string& b) {
    for (const auto& item : plan.items) {
      if (item.params["fake"] == b) return c.got.at({item.id(), 0}).error;
    }
    return std::string();
  };
  auto numerics_of = [&](const std::string& b) {
    for (const auto& item : plan.items) {
      if (item.params["fake"] == b) return c.got.at({item.id(), 0}).port_numerics;
    }
    return std::string();
  };
  EXPECT_EQ(numerics_of("fail"), "FAIL") << "a failed check is a verdict, not a status";
  EXPECT_EQ(numerics_of("ok"), "PASS");
  EXPECT_NE(error_of("segv").find("signal 11"), std::string::npos) << error_of("segv");
  EXPECT_NE(error_of("crash").find("signal 6"), std::string::npos) << error_of("crash");
  EXPECT_NE(error_of("hang").find("no word from the worker for 1 s"), std::string::npos) << error_of("hang");
  EXPECT_NE(error_of("half_line").find("in the middle of its report line"), std::string::npos) << error_of("half_line");
  EXPECT_NE(error_of("exit_mid").find("worker died (exit 0)"), std::string::npos) << error_of("exit_mid");
  EXPECT_NE(error_of("exit_early").find("the worker ended before starting it (exit 0)"), std::string::npos);
  EXPECT_NE(error_of("bad_status").find("is not a verdict literal"), std::string::npos) << error_of("bad_status");
  EXPECT_NE(error_of("context_lost").find("CUDA_ERROR_ILLEGAL_ADDRESS"), std::string::npos);
}

TEST(RunSweep, ASinkThatThrowsCostsOnlyTheResultItWasGiven) {
  const auto plan = fake_plan({"ok", "ok", "ok", "ok"});
  collector c;
  auto inner = c.sink();
  int calls = 0;
  const auto summary = ps::run_sweep(fake_options(), plan, [&](const ps::planned_item& item, int run, const pm::item_report& r) {
    ++calls;
    if (item.config.params.at("n") == portbench::reference::param_value{std::int64_t{2}}) {
      throw std::runtime_error("disk full (a sink that fails)");
    }
    if (item.config.params.at("n") == portbench::reference::param_value{std::int64_t{3}}) throw 42;   // not even an exception
    inner(item, run, r);
  });
  EXPECT_EQ(calls, 4);
  EXPECT_EQ(c.got.size(), 2u);
  EXPECT_EQ(summary.not_recorded, 2);
  EXPECT_EQ(summary.items_failed, 2);
  EXPECT_NE(summary.first_not_recorded.find("vector_add/fake=ok,n=2 run 0: disk full"), std::string::npos)
      << summary.first_not_recorded;
}

TEST(RunSweep, AWorkerThatCannotStartFailsItsConfigurationsNotTheSweep) {
  const auto plan = fake_plan({"ok", "ok"});
  auto o = fake_options();
  o.runs = 2;
  o.worker_exe = "/nonexistent/portbench";
  collector c;
  const auto summary = ps::run_sweep(o, plan, c.sink());
  ASSERT_EQ(c.got.size(), 4u);
  for (const auto& [key, out] : c.got) {
    EXPECT_EQ(out.status, verdicts::status::error);
    EXPECT_NE(out.error.find("/nonexistent/portbench: cannot start the worker"), std::string::npos) << out.error;
  }
  EXPECT_EQ(summary.workers_started, 0);
  EXPECT_EQ(summary.items_failed, 4);
}

TEST(RunSweep, RunsAreIndependentWorkersAndDoneRunsAreSkipped) {
  const auto plan = fake_plan({"ok", "crash", "ok"});
  auto o = fake_options();
  o.runs = 3;
  o.devices = {0, 1};
  collector c;
  const auto summary = ps::run_sweep(o, plan, c.sink(), [&](const ps::planned_item& item, int run) {
    return run == 1 && item.id() == plan.items[0].id();   // on file already
  });
  EXPECT_EQ(c.got.size(), 8u);
  EXPECT_EQ(c.got.count({plan.items[0].id(), 1}), 0u);
  for (int run : {0, 1, 2}) EXPECT_EQ(c.got.at({plan.items[1].id(), run}).status, verdicts::status::crash);
  EXPECT_EQ(c.got.at({plan.items[2].id(), 2}).status, verdicts::status::ok);
  // Per device and run one worker, plus a fresh one after each crash that left work behind.
  EXPECT_GE(summary.workers_started, 6);
}

// A budget ends a sweep on time: what ran is delivered as measured, the worker is stopped after
// the report it was writing, and every run not started is NOT_RUN with the reason (none lost).
TEST(RunSweep, ABudgetStopsStartingRunsAndDeliversTheRestNotRun) {
  const auto plan = fake_plan({"slow", "slow", "slow", "slow", "slow", "slow"});
  auto o = fake_options();
  o.runs = 2;
  o.budget_s = 0.5;
  collector c;
  const auto summary = ps::run_sweep(o, plan, c.sink());
  ASSERT_EQ(c.got.size(), 12u) << "every (configuration, run) gets an outcome";
  int ok = 0, not_run = 0;
  for (const auto& [key, r] : c.got) {
    if (r.status == verdicts::status::ok) {
      ++ok;
    } else {
      EXPECT_EQ(r.status, verdicts::status::not_run) << key.first;
      EXPECT_EQ(r.error, "not started: the sweep's budget of 0.5 s was spent") << key.first;
      ++not_run;
    }
  }
  EXPECT_GE(ok, 1);
  EXPECT_LE(ok, 4) << "0.3 s per configuration run in a 0.5 s budget";
  EXPECT_EQ(summary.not_run_budget, not_run);
  EXPECT_LT(summary.wall_s, 3.0);
  o.budget_s = 0;   // no budget: everything runs
  collector all;
  (void)ps::run_sweep(o, fake_plan({"slow", "ok"}), all.sink());
  for (const auto& [key, r] : all.got) EXPECT_EQ(r.status, verdicts::status::ok) << key.first;
}

TEST(RunSweep, NoDeviceOrNoWorkerIsAnErrorBeforeAnythingRuns) {
  auto o = fake_options();
  o.devices.clear();
  EXPECT_THROW((void)ps::run_sweep(o, fake_plan({"ok"}), [](auto&&...) {}), ps::sweep_error);
  o = fake_options();
  o.worker_exe.clear();
  EXPECT_THROW((void)ps::run_sweep(o, fake_plan({"ok"}), [](auto&&...) {}), ps::sweep_error);
}

TEST(DescribeDevices, AWorkerDescribesEachDeviceOrSaysWhyNot) {
  const auto d = ps::describe_devices(PORTBENCH_MISBEHAVING_WORKER, {0, 3});
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[1].gpu_name(), "Fake GPU 3");
  ::setenv("PORTBENCH_FAKE_NO_DEVICE", "1", 1);
  std::string what;
  try {
    (void)ps::describe_devices(PORTBENCH_MISBEHAVING_WORKER, {0});
  } catch (const ps::sweep_error& e) {
    what = e.what();
  }
  ::unsetenv("PORTBENCH_FAKE_NO_DEVICE");
  EXPECT_EQ(what, "device 0: cannot run here: dlopen(libcuda.so.1): CUDA_ERROR_NO_DEVICE (100): no CUDA driver (fake) "
                  "(worker exit 2)");
}

}  // namespace
