// SPDX-License-Identifier: Apache-2.0
// A stand-in for `portbench worker` that misbehaves on purpose, so CPU tests can drive the
// sweep layer with real processes: `misbehaving_worker worker --job FILE` and
// `misbehaving_worker worker --describe-device N`, as the orchestrator calls the real one.
//
// The behaviour for each job item is its params' "fake" value, or else the first entry of
// $PORTBENCH_FAKE_WORKER ("SUBSTRING=behaviour;...") whose substring is in the configuration
// id, or else "ok":
//   ok            a well-formed result: PASS, EXECUTED, VALID, eight samples
//   fail          a well-formed result whose port numerics are FAIL
//   noise         junk lines on stdout around a good result
//   crash         abort() after "begin"           segv       SIGSEGV after "begin"
//   hang          silent after "begin"            spam       junk lines forever after "begin"
//   bad_report    a result line missing fields    bad_status a result whose status is no literal
//   exit_early    exit 0 before "begin"           exit_mid   exit 0 after "begin"
//   half_line     half a result line, then exit 1
//   context_lost  an ERROR result, then exit 3 (a poisoned context)
// $PORTBENCH_FAKE_NO_DEVICE makes --describe-device fail as on a machine without a driver.
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "portbench/measure/job.hpp"
#include "portbench/reference/config_json.hpp"

namespace pm = portbench::measure;
using json = nlohmann::json;

namespace {

std::string behaviour_of(const pm::job_item& item) {
  if (item.params.contains("fake")) return item.params["fake"].get<std::string>();
  const std::string id = portbench::reference::config_from_json(item.op, item.params).id();
  if (const char* env = std::getenv("PORTBENCH_FAKE_WORKER")) {
    std::string spec = env;
    std::size_t at = 0;
    while (at < spec.size()) {
      std::size_t end = spec.find(';', at);
      if (end == std::string::npos) end = spec.size();
      const std::string entry = spec.substr(at, end - at);
      const auto eq = entry.rfind('=');
      if (eq != std::string::npos && id.find(entry.substr(0, eq)) != std::string::npos) return entry.substr(eq + 1);
      at = end + 1;
    }
  }
  return "ok";
}

pm::item_report good_report(const pm::job_item& item) {
  pm::item_report r;
  r.index = item.index;
  for (auto* side : {&r.ref, &r.port}) {
    side->frontend = side == &r.ref ? "fake_ref" : "fake_port";
    side->numerics = "PASS";
    side->proof = "EXECUTED";
    side->timing = "VALID";
    side->numerics_source = "VERIFIED";
    for (int i = 0; i < 8; ++i) side->samples.push_back({1000 + 10 * i + (side == &r.ref ? 0 : 5), 1200, 1980, 0, 0, ""});
    side->median_ns = side == &r.ref ? 1035 : 1040;
    side->rel_ci = 0.01;
  }
  r.wall_s = 0.01;
  return r;
}

void emit(const json& j) { std::cout << j.dump() << "\n" << std::flush; }

int describe(int device) {
  if (std::getenv("PORTBENCH_FAKE_NO_DEVICE")) {
    std::fprintf(stderr, "portbench: error: dlopen(libcuda.so.1): CUDA_ERROR_NO_DEVICE (100): no CUDA driver (fake)\n");
    return 2;
  }
  emit({{"gpu_name", "Fake GPU " + std::to_string(device)}, {"driver_version", "0.0"}, {"max_sm_clock_mhz", 1980},
        {"memory_clock_mhz", 2619}, {"driver_api_version", 13000}, {"cupti_version", 26},
        {"compute_capability", "9.0"}, {"l2_bytes", 52428800}});
  return 0;
}

int run_job(const pm::job& j) {
  for (const auto& item : j.items) {
    const std::string b = behaviour_of(item);
    if (b == "exit_early") std::exit(0);
    if (b == "noise") std::cout << "a library chatting on stdout\n{not json\n" << std::flush;
    emit({{"event", "begin"}, {"index", item.index}});
    if (b == "crash") std::abort();
    if (b == "segv") {
      // The default action, not a sanitizer's handler (which would turn the signal into abort):
      // the harness must see the worker die of SIGSEGV, as an uninstrumented worker would.
      std::signal(SIGSEGV, SIG_DFL);
      std::raise(SIGSEGV);
    }
    if (b == "exit_mid") std::exit(0);
    if (b == "hang") {
      for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
    }
    if (b == "spam") {
      for (;;) {
        std::cout << "still busy, honest\n" << std::flush;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    }
    if (b == "slow") std::this_thread::sleep_for(std::chrono::milliseconds(300));
    pm::item_report r = good_report(item);
    if (j.mode == pm::job_mode::check) r.port = {};
    if (b == "bad_report") {
      emit({{"event", "result"}, {"index", item.index}, {"status", "OK"}});
      continue;
    }
    if (b == "bad_status") r.status = "weird status";
    if (b == "fail") r.port.numerics = "FAIL";
    if (b == "half_line") {
      const std::string line = pm::to_json(r).dump();
      std::cout << line.substr(0, line.size() / 2) << std::flush;
      std::_Exit(1);
    }
    if (b == "context_lost") {
      r.status = "ERROR";
      r.error = "port fake: cuLaunchKernel: CUDA_ERROR_ILLEGAL_ADDRESS (700)";
      r.ref.samples.clear();
      r.port.samples.clear();
      r.ref.timing = r.port.timing = "NOT_MEASURED";
      emit(pm::to_json(r));
      return 3;
    }
    if (b == "noise") std::cout << "more chatter\n" << std::flush;
    emit(pm::to_json(r));
  }
  emit({{"event", "done"}});
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 4 && std::string(argv[1]) == "worker" && std::string(argv[2]) == "--describe-device") {
    return describe(std::atoi(argv[3]));
  }
  if (argc == 4 && std::string(argv[1]) == "worker" && std::string(argv[2]) == "--job") {
    std::ifstream in(argv[3]);
    return run_job(pm::job_from_json(json::parse(in)));
  }
  std::fprintf(stderr, "usage: %s worker (--job FILE | --describe-device N)\n", argv[0]);
  return 2;
}
