// SPDX-License-Identifier: Apache-2.0
// The bundle manifest (docs/bundle-manifest.md, schema "portbench.bundle/1"), parsed and
// validated field by field: every error names the file and the JSON path of the bad field.
#pragma once
#include <array>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "portbench/reference/config.hpp"

namespace portbench::bundle {

inline constexpr const char* k_manifest_schema = "portbench.bundle/1";

enum class param_kind { ptr, extent, stride, literal, scratch, null };
enum class scalar_type { i32, i64, u32, u64, f32, f64 };

[[nodiscard]] std::size_t size_of(scalar_type t) noexcept;
[[nodiscard]] const char* to_string(scalar_type t) noexcept;
[[nodiscard]] const char* to_string(param_kind k) noexcept;

struct param_binding {
  param_kind kind = param_kind::null;
  std::string tensor;                        ///< ptr, extent, stride
  int dim = 0;                               ///< extent, stride
  scalar_type type = scalar_type::u64;       ///< C type of the value (pointers: u64)
  std::variant<std::int64_t, double> value;  ///< literal
  std::string scratch;                       ///< scratch

  [[nodiscard]] std::size_t size() const noexcept { return size_of(type); }
};

using dim3 = std::array<unsigned, 3>;

struct launch_spec {
  std::string cubin;
  std::string entry;
  dim3 grid{1, 1, 1}, block{1, 1, 1}, cluster{1, 1, 1};
  unsigned shared_bytes = 0;
  std::vector<param_binding> params;
};

struct scratch_spec {
  std::string name;
  std::uint64_t bytes = 0;
};

struct config_plan {
  reference::config config;   ///< operator + params, as the suite names them
  std::string tuning_json;    ///< the exporter's choices, kept verbatim
  std::vector<scratch_spec> scratch;
  std::vector<launch_spec> launches;
};

struct cubin_ref {
  std::string file;
  std::string sha256;
  std::vector<std::string> ir;
};

struct manifest {
  std::filesystem::path path;   ///< the manifest.json this came from
  std::string schema, frontend, op, arch;
  std::map<std::string, std::string> toolchain;
  std::vector<cubin_ref> cubins;
  std::vector<config_plan> configs;

  /// The plan whose params equal `c`'s, or nullptr.
  [[nodiscard]] const config_plan* find(const reference::config& c) const noexcept;
};

/// Reads and validates a manifest; throws bundle_error("<file>: <json path>: <problem>").
[[nodiscard]] manifest parse_manifest(const std::filesystem::path& file);

/// Byte offsets of a launch's parameters when packed in order at natural alignment.
[[nodiscard]] std::vector<std::size_t> param_offsets(const launch_spec& l);

}  // namespace portbench::bundle
