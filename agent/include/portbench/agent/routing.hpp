// SPDX-License-Identifier: Apache-2.0
// The routing and the retry caps of the pipeline, as one table that the router interprets.
// A stage's verdict (and verify's fail_class) picks the row; the row names the next stage or
// the end. Before a stage runs, its cap is checked: a stage that has run as often as its cap
// allows stops the pipeline instead. docs/agent.md draws this table (`portbench agent routes`).
#pragma once
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace portbench::agent {

/// One row: after `stage` ends with `verdict` (and `fail_class`, "" = any), go to `next`: a
/// stage name, or pipeline::complete / pipeline::stopped.
struct route {
  std::string_view stage;
  std::string_view verdict;
  std::string_view fail_class;
  std::string_view next;
  std::string_view why;  ///< one line for the docs and the event log
};

/// The most runs of a stage in one pipeline (schema repairs and runs a kill interrupted are
/// not counted).
struct stage_cap {
  std::string_view stage;
  int max_runs;
};

[[nodiscard]] std::span<const route> routes() noexcept;
[[nodiscard]] std::span<const stage_cap> caps() noexcept;
[[nodiscard]] int cap_of(std::string_view stage) noexcept;  ///< 0 for an unknown stage
/// The stage a pipeline starts with.
[[nodiscard]] std::string_view first_stage() noexcept;

/// What the router decided after a stage run.
struct decision {
  std::string next;      ///< a stage to run next, or "" when the pipeline ends
  std::string end;       ///< pipeline::complete or pipeline::stopped when it ends
  std::string stage;     ///< the stage named by a stop (the stage that stopped or whose cap ran out)
  std::string reason;    ///< one line
};

/// Applies the table to a stage's verdict, then the cap of the stage it leads to.
/// `runs` counts the completed runs per stage so far (this one included).
[[nodiscard]] decision decide(std::string_view stage, std::string_view verdict, std::string_view fail_class,
                              const std::map<std::string, int>& runs);

/// The table as a Mermaid state diagram (docs/agent.md holds exactly this text).
[[nodiscard]] std::string routes_mermaid();
/// The table as a Markdown table (stage, verdict, class, next, why) and the caps.
[[nodiscard]] std::string routes_markdown();

}  // namespace portbench::agent
