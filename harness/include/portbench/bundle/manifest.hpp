// SPDX-License-Identifier: Apache-2.0
// The bundle manifest (docs/bundle-manifest.md, schema "portbench.bundle/1"), parsed and
// validated field by field: every error names the file and the JSON path of the bad field.
#pragma once
#include <array>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "portbench/reference/config.hpp"

namespace portbench::bundle {

inline constexpr const char* k_manifest_schema = "portbench.bundle/1";

enum class param_kind { ptr, extent, stride, literal, scratch, null, ptr_table, array_table };
enum class scalar_type { i32, i64, u32, u64, f32, f64 };

/// The largest tensor rank an array_table entry may describe (a bound against typos, not a
/// front end's limit).
inline constexpr std::size_t k_max_table_rank = 16;

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
  std::int64_t offset = 0;                   ///< ptr: the view starts this many elements in
  std::vector<std::string> tensors;          ///< ptr_table, array_table: the tensors the table lists, in order
  int rank = 0;                              ///< array_table: every listed tensor's rank (words per entry: 1 + 2 rank)
  scalar_type index_type = scalar_type::i64; ///< array_table: the kernel's index type (i32: extents and strides must fit)

  [[nodiscard]] std::size_t size() const noexcept { return size_of(type); }
};

using dim3 = std::array<unsigned, 3>;

struct launch_spec {
  std::string cubin;
  std::string entry;
  dim3 grid{1, 1, 1}, block{1, 1, 1}, cluster{1, 1, 1};
  unsigned shared_bytes = 0;
  std::vector<param_binding> params;
  /// Set by load_bundle from the cubin: the entry's grid counts clusters (a Tile IR cubin built
  /// with num_ctas > 1), so the driver runs, and CUPTI reports, grid x cluster CTAs.
  bool grid_counts_clusters = false;

  /// The grid in CTAs, as CUPTI reports it.
  [[nodiscard]] dim3 cta_grid() const noexcept;
};

/// Element type of a step's view (docs/bundle-manifest.md, "Fill, copy and sum steps").
enum class element_type { f64, f32, f16, bf16, i64, i32, i16, i8, u64, u32, u16, u8 };

[[nodiscard]] std::size_t size_of(element_type t) noexcept;
[[nodiscard]] const char* to_string(element_type t) noexcept;
[[nodiscard]] bool is_floating(element_type t) noexcept;
[[nodiscard]] std::optional<element_type> parse_element_type(const std::string& name) noexcept;

/// The largest rank a step's view may have.
inline constexpr std::size_t k_max_view_rank = 6;

/// Elements of a named tensor or a scratch buffer: element i of the view, at multi-index
/// (i_0, ..., i_{r-1}), is at base + offset + sum(i_k * strides[k]) elements of `type`, with
/// base the tensor's view start (as `ptr` binds it) or the scratch buffer's start.
struct view_spec {
  std::string tensor;    ///< the operator tensor it views, or
  std::string scratch;   ///< the plan's scratch buffer it views (exactly one of the two is set)
  element_type type = element_type::f32;
  std::int64_t offset = 0;
  std::vector<std::int64_t> shape;     ///< 1..6 extents, each >= 1
  std::vector<std::int64_t> strides;   ///< in elements, each >= 0

  [[nodiscard]] std::int64_t elements() const noexcept;
  /// "tensor 'x'" or "scratch 'ws'".
  [[nodiscard]] std::string describe() const;
};

/// A value of an element type, as the bit pattern a fill writes (low size_of(type) bytes).
struct fill_value {
  element_type type = element_type::i32;
  std::variant<std::int64_t, double> value;   ///< as written in the manifest
  std::uint64_t bits = 0;                     ///< the value encoded in `type` (floats rounded to nearest even)
};

/// `"step": "fill"`: every element of `target` gets `value` (the target's element type).
struct fill_step {
  view_spec target;
  fill_value value;
};

/// `"step": "copy"`: element i of `dst` = element i of `src` converted to dst's type; the
/// shapes are equal, the views may have any strides.
struct copy_step {
  view_spec src, dst;
};

/// `"step": "sum"`: element j of `dst` = the sum over axis `axis` of `src` at j: dst's shape is
/// src's without that axis ([1] where src has rank 1). Both types floating or both integer;
/// accumulated in index order in sum_accumulator(src, dst) (steps.hpp), rounded once to dst's
/// type (torch.sum of fp16/bf16: fp32 accumulation, one rounding; torch.add of two views of one
/// buffer is a sum over a stacked axis of extent 2).
struct sum_step {
  view_spec src, dst;
  std::size_t axis = 0;
};

/// The shape of a sum's dst: `shape` without axis `axis`, or [1] where nothing is left.
[[nodiscard]] std::vector<std::int64_t> sum_result_shape(const std::vector<std::int64_t>& shape, std::size_t axis);

enum class step_kind { kernel, fill, copy, sum };

/// One entry of a plan's `launches[]`, in plan order.
struct plan_step {
  step_kind kind = step_kind::kernel;
  std::size_t index = 0;    ///< position in the manifest's launches[] (for messages)
  std::size_t launch = 0;   ///< kernel: index into the plan's `launches`
  fill_step fill;           ///< fill
  copy_step copy;           ///< copy
  sum_step sum;             ///< sum
};

struct scratch_spec {
  std::string name;
  std::uint64_t bytes = 0;
  bool zero_init = false;   ///< "init": "zero": zero-filled before every execution of the plan
  /// "init": {"fill": V, "type": T}: every element filled with V before every execution
  std::optional<fill_value> fill_init;
};

/// An alternative launch plan for the same configuration (a tuning candidate).
struct plan_variant {
  std::string name;
  std::string tuning_json;
  std::vector<scratch_spec> scratch;
  std::vector<launch_spec> launches;   ///< the kernel launches, in order
  std::vector<plan_step> steps;        ///< launches[] in manifest order: kernels and steps
};

struct config_plan {
  reference::config config;   ///< operator + params, as the suite names them
  std::string tuning_json;    ///< the exporter's choices, kept verbatim
  std::vector<scratch_spec> scratch;
  std::vector<launch_spec> launches;   ///< the kernel launches (of the bundle's cubins), in order
  std::vector<plan_step> steps;        ///< launches[] in manifest order: kernels and steps
  std::vector<plan_variant> variants;   ///< tuning candidates besides the chosen plan
  std::string variant;                  ///< the chosen plan's variant name ("" if unnamed)

  /// The variant called `name` as a plan of its own ("" or the chosen variant's name: this
  /// plan); nullptr if there is none.
  [[nodiscard]] const plan_variant* find_variant(const std::string& name) const noexcept;
  /// This configuration with variant `name`'s scratch, launches and tuning; throws
  /// bundle_error naming the manifest when there is no such variant.
  [[nodiscard]] config_plan with_variant(const std::string& name, const std::string& manifest_file) const;
};

struct cubin_ref {
  std::string file;
  std::string sha256;
  std::vector<std::string> ir;
};

/// A configuration the exporter could not express, and why (manifest `unsupported[]`): it has
/// no plan, and the reason reaches the sweep's unpaired list instead of a bare "no plan".
struct unsupported_config {
  reference::config config;
  std::string reason;
};

struct manifest {
  std::filesystem::path path;   ///< the manifest.json this came from
  std::string schema, frontend, op, arch;
  std::map<std::string, std::string> toolchain;
  std::vector<cubin_ref> cubins;
  std::vector<config_plan> configs;
  std::string target_json;    ///< "target": the GPU description the exporter planned for ("" if absent)
  std::string sources_json;   ///< "sources": kernel source files and their hashes ("" if absent)
  std::vector<unsupported_config> unsupported;   ///< configurations without a plan, with the exporter's reason

  /// The plan whose params equal `c`'s, or nullptr.
  [[nodiscard]] const config_plan* find(const reference::config& c) const noexcept;
  /// The exporter's reason for having no plan for `c`, or nullptr if it gave none.
  [[nodiscard]] const std::string* unsupported_reason(const reference::config& c) const noexcept;
};

/// Reads and validates a manifest; throws bundle_error("<file>: <json path>: <problem>").
[[nodiscard]] manifest parse_manifest(const std::filesystem::path& file);
/// The same from the manifest's text; `file` names it in errors and anchors relative paths.
[[nodiscard]] manifest parse_manifest_text(std::string_view text, const std::filesystem::path& file);

/// `v` encoded in `t` (integers two's complement, floats rounded to nearest even); throws
/// std::invalid_argument naming the problem when an integer value is outside the type's range.
[[nodiscard]] fill_value make_fill_value(element_type t, std::variant<std::int64_t, double> v);

/// Byte offsets of a launch's parameters when packed in order at natural alignment.
[[nodiscard]] std::vector<std::size_t> param_offsets(const launch_spec& l);

}  // namespace portbench::bundle
