// SPDX-License-Identifier: Apache-2.0
// The routing table and the caps. The rows follow upstream's port pipeline (docs/agent.md):
// analyze -> translate -> ir_diff -> verify -> benchmark; a kernel failure in verify and a
// benchmark below the gate go to diagnose (once), whose findings go back to translate.
#include "portbench/agent/routing.hpp"

#include <algorithm>
#include <string>

#include "portbench/agent/verdicts.hpp"

namespace portbench::agent {
namespace {

namespace v = verdict;
namespace s = stage;
constexpr std::string_view stop = pipeline::stopped;
constexpr std::string_view complete = pipeline::complete;

constexpr route k_routes[] = {
    {s::analyze, v::pass, "", s::translate, "reference analysed: translate the port"},
    {s::analyze, v::fail_fixable, "", s::analyze, "analysis incomplete: analyse again"},
    {s::analyze, v::blocked, "", stop, "the reference cannot be analysed"},
    {s::translate, v::compiled, "", s::ir_diff, "port exported: compare its Tile IR"},
    {s::translate, v::fail_compile, "", s::translate, "the port did not compile: translate again"},
    {s::translate, v::fail_fixable, "", s::translate, "translate found a fixable problem: translate again"},
    {s::translate, v::blocked, "", stop, "translate cannot go on"},
    {s::ir_diff, v::pass, "", s::verify, "IR matches: verify numerics and proof"},
    {s::ir_diff, v::pass_with_notes, "", s::verify, "IR differs in allowed ways: verify"},
    {s::ir_diff, v::fail_fixable, "", s::translate, "structural IR difference: back to translate"},
    {s::ir_diff, v::blocked, "", stop, "the IR cannot be compared"},
    {s::verify, v::all_pass, "", s::benchmark, "every configuration correct and executed: time it"},
    {s::verify, v::fail, fail_class::host, s::verify, "host-side failure: a second verify"},
    {s::verify, v::fail, fail_class::kernel, s::diagnose, "kernel failure: diagnose it"},
    {s::verify, v::fail, fail_class::env, stop, "the environment fails: nothing a stage can fix"},
    {s::verify, v::blocked, "", stop, "verify cannot run"},
    {s::benchmark, v::done, "", complete, "at the gate"},
    {s::benchmark, v::investigate, "", s::diagnose, "below the gate: diagnose once"},
    {s::benchmark, v::blocked, "", s::diagnose, "no usable timing: diagnose once"},
    {s::diagnose, v::fixable, "", s::translate, "findings to act on: back to translate"},
    {s::diagnose, v::aligned, "", stop, "nothing left that a translation could change"},
    {s::diagnose, v::blocked, "", stop, "diagnose cannot run"},
};

constexpr stage_cap k_caps[] = {
    {s::analyze, 1}, {s::translate, 2}, {s::ir_diff, 2}, {s::verify, 2}, {s::benchmark, 2}, {s::diagnose, 1},
};

std::string state_name(std::string_view name) {
  return name == "" ? "[*]" : std::string(name);
}

}  // namespace

std::span<const route> routes() noexcept { return k_routes; }
std::span<const stage_cap> caps() noexcept { return k_caps; }
std::string_view first_stage() noexcept { return s::analyze; }

int cap_of(std::string_view stage_name) noexcept {
  for (const auto& c : k_caps) {
    if (c.stage == stage_name) return c.max_runs;
  }
  return 0;
}

decision decide(std::string_view stage_name, std::string_view verdict_text, std::string_view klass,
                const std::map<std::string, int>& runs) {
  const route* row = nullptr;
  for (const auto& r : k_routes) {
    if (r.stage == stage_name && r.verdict == verdict_text && (r.fail_class.empty() || r.fail_class == klass)) {
      row = &r;
      break;
    }
  }
  decision d;
  std::string what = std::string(stage_name) + " " + std::string(verdict_text) +
                     (klass.empty() ? "" : " (" + std::string(klass) + ")");
  if (row == nullptr) {
    d.end = stop;
    d.stage = stage_name;
    d.reason = "no route for " + what;
    return d;
  }
  if (row->next == complete) {
    d.end = complete;
    d.stage = stage_name;
    d.reason = what + ": " + std::string(row->why);
    return d;
  }
  if (row->next == stop) {
    d.end = stop;
    d.stage = stage_name;
    d.reason = what + ": " + std::string(row->why);
    return d;
  }
  auto it = runs.find(std::string(row->next));
  int done = it == runs.end() ? 0 : it->second;
  int cap = cap_of(row->next);
  if (done >= cap) {
    d.end = stop;
    d.stage = row->next;
    d.reason = "cap: " + std::string(row->next) + " has run " + std::to_string(done) + " of " +
               std::to_string(cap) + " times; " + what + " routes to it";
    return d;
  }
  d.next = row->next;
  d.reason = what + ": " + std::string(row->why);
  return d;
}

std::string routes_mermaid() {
  std::string out = "stateDiagram-v2\n    [*] --> " + std::string(first_stage()) + "\n";
  for (const auto& r : k_routes) {
    std::string label(r.verdict);
    if (!r.fail_class.empty()) label += " (" + std::string(r.fail_class) + ")";
    out += "    " + state_name(r.stage) + " --> " + state_name(r.next) + " : " + label + "\n";
  }
  out += "    " + std::string(complete) + " --> [*]\n    " + std::string(stop) + " --> [*]\n";
  for (const auto& c : k_caps) {
    out += "    note right of " + std::string(c.stage) + " : cap " + std::to_string(c.max_runs) +
           " runs; one more is PIPELINE_STOPPED\n";
  }
  return out;
}

std::string routes_markdown() {
  std::string out = "| stage | verdict | fail_class | next | why |\n|---|---|---|---|---|\n";
  for (const auto& r : k_routes) {
    out += "| " + std::string(r.stage) + " | `" + std::string(r.verdict) + "` | " +
           (r.fail_class.empty() ? std::string("any") : std::string(r.fail_class)) + " | " +
           (r.next == complete || r.next == stop ? "`" + std::string(r.next) + "`" : std::string(r.next)) +
           " | " + std::string(r.why) + " |\n";
  }
  out += "\n| stage | cap (runs) |\n|---|---|\n";
  for (const auto& c : k_caps) out += "| " + std::string(c.stage) + " | " + std::to_string(c.max_runs) + " |\n";
  return out;
}

}  // namespace portbench::agent
