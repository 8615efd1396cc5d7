// SPDX-License-Identifier: Apache-2.0
// `portbench worker`: the GPU side of `portbench run`, started by the orchestrator as a child
// process. Not meant to be run by hand (hidden from --help).
#include <fstream>
#include <iostream>

#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "portbench/cuda/context.hpp"
#include "portbench/cuda/cupti.hpp"
#include "portbench/measure/sm_clock.hpp"
#include "portbench/measure/worker.hpp"

namespace portbench::cli {
namespace {

struct worker_cli_options {
  std::string job_file;
  int describe_device = -1;
};

// One JSON line describing the device, for the results file's provenance.
int describe(int device) {
  auto cupti = cuda::load_cupti();
  auto ctx = cuda::context::open(device);
  measure::sm_clock clock(ctx->info().pci_bus_id);
  const auto& i = ctx->info();
  nlohmann::json d = {{"gpu_name", i.name}, {"pci_bus_id", i.pci_bus_id},
                      {"compute_capability", std::to_string(i.cc_major) + "." + std::to_string(i.cc_minor)},
                      {"sm_count", i.sm_count}, {"l2_bytes", i.l2_bytes},
                      {"driver_api_version", i.driver_version}, {"driver_version", clock.driver_version()},
                      {"sm_clock_mhz", clock.sm_mhz()}, {"max_sm_clock_mhz", clock.max_sm_mhz()},
                      {"memory_clock_mhz", clock.memory_mhz()}, {"cupti_version", cupti->version},
                      {"cupti_library", cupti->path}, {"nvml", clock.why().empty() ? "ok" : clock.why()}};
  std::cout << d.dump() << std::endl;
  return 0;
}

}  // namespace

command_action add_worker_command(CLI::App& app) {
  auto o = std::make_shared<worker_cli_options>();
  auto* cmd = app.add_subcommand("worker", "");   // empty description: hidden from --help
  cmd->group("");
  cmd->add_option("--job", o->job_file, "Job file written by the orchestrator");
  cmd->add_option("--describe-device", o->describe_device, "Print the device's description as JSON");
  return [o]() {
    if (o->describe_device >= 0) return describe(o->describe_device);
    std::ifstream in(o->job_file);
    if (!in) throw std::runtime_error(o->job_file + ": cannot open job file");
    auto j = measure::job_from_json(nlohmann::json::parse(in));
    return measure::run_worker(j, std::cout);
  };
}

}  // namespace portbench::cli
