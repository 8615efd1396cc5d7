// SPDX-License-Identifier: Apache-2.0
// The fixed schema of each stage's output file: `{"verdict": <literal>, "stage": <name>, ...}`,
// the verdict first. Each schema is data (fields, types, the verdicts that require a field);
// validate() checks a parsed file against it, and that every path field stays inside the work
// directory. The router reads nothing else of a stage's output.
#pragma once
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace portbench::agent {

enum class field_kind {
  text,      ///< a string
  number,    ///< a finite number, or null where `nullable`
  integer,
  boolean,
  path,      ///< a string naming a file or folder inside the work directory, which must exist
  bundle,    ///< a path to a folder holding manifest.json
  object,    ///< an object whose `fields` are checked
  list,      ///< an array; items are objects checked against `fields`, or texts/paths per `item`
};

struct field_rule {
  std::string_view name;
  field_kind kind;
  bool required = false;
  std::span<const std::string_view> one_of = {};  ///< allowed texts (empty: any)
  std::span<const field_rule> fields = {};         ///< for objects and lists of objects
  field_kind item = field_kind::object;            ///< item kind of a list
  std::string_view required_for = {};              ///< verdict that makes this field required
  bool nullable = false;
};

struct stage_schema {
  std::string_view stage;
  std::span<const std::string_view> verdicts;
  std::string_view pass_verdict;     ///< the verdict that claims success (needs something checked)
  std::span<const field_rule> fields;  ///< besides verdict and stage
};

[[nodiscard]] const stage_schema& schema_of(std::string_view stage);
[[nodiscard]] std::span<const stage_schema> schemas() noexcept;

/// Parses a stage output file, keeping its field order (the verdict must come first).
/// Throws agent_error naming the file on unreadable or non-JSON text.
[[nodiscard]] nlohmann::ordered_json read_output(const std::filesystem::path& file);

/// Checks `doc` against the stage's schema. Returns "" when valid, else one line naming the
/// field and the problem. Paths are resolved against `workdir` and must not leave it.
[[nodiscard]] std::string validate(std::string_view stage, const nlohmann::ordered_json& doc,
                                   const std::filesystem::path& workdir);

/// The schemas as Markdown (docs/agent.md's stage output section is this text).
[[nodiscard]] std::string schemas_markdown();

}  // namespace portbench::agent
