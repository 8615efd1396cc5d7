// SPDX-License-Identifier: Apache-2.0
// Operator specs: what tensors a configuration needs, how inputs are drawn, and the fp64
// reference. The harness allocates and binds tensors from this, never from a bundle's word.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "portbench/reference/config.hpp"
#include "portbench/reference/dtype.hpp"
#include "portbench/error.hpp"

namespace portbench::reference {

class reference_cache;

/// Bad configuration or unknown operator; the message names the operator and the field.
class spec_error : public portbench::error {
 public:
  explicit spec_error(const std::string& what, code_location where = code_location::current())
      : portbench::error(what, {.where = where}) {}
};

enum class tensor_role { in, out, inout };

/// "in", "out", "inout".
[[nodiscard]] std::string_view to_string(tensor_role r) noexcept;

struct tensor_spec {
  std::string name;
  dtype type;
  std::vector<std::int64_t> shape;
  std::vector<std::int64_t> strides;   ///< in elements; may describe a non-contiguous view
  std::int64_t storage_elements = 0;   ///< elements of the backing allocation (>= the view's span)
  tensor_role role = tensor_role::in;
  std::int64_t offset = 0;             ///< elements from the allocation's start to element [0,...,0]
  /// An output whose result is a data-dependent part of it (the rest is unspecified and a kernel
  /// may leave it alone): its verify() checks the defined part, the harness neither counts its
  /// unwritten elements nor lets two numerics passes differ in it (one fill for both).
  bool slack = false;

  [[nodiscard]] std::int64_t elements() const;   ///< product of shape
  [[nodiscard]] std::size_t storage_bytes() const;
  /// Storage index of a logical multi-index (offset + sum of index * stride).
  [[nodiscard]] std::int64_t storage_index(std::span<const std::int64_t> index) const;
  /// Row-major, dense, offset 0 and storage_elements == elements().
  [[nodiscard]] bool is_contiguous() const;
};

/// A dense row-major tensor spec (strides from the shape, storage = elements).
[[nodiscard]] tensor_spec make_tensor(std::string name, dtype type, std::vector<std::int64_t> shape,
                                      tensor_role role);

/// Host copy of one tensor's backing storage, as raw bytes in the tensor's dtype.
struct host_tensor {
  tensor_spec spec;
  std::vector<std::byte> bytes;
};

struct cost_model {
  double bytes_moved = 0;   ///< fewest bytes the operator must read plus write
  double flops = 0;
};

/// Upstream allclose tolerance: |got - want| <= atol + rtol * |want|.
struct tolerance {
  double atol = 0;
  double rtol = 0;
  /// Unit roundoff of the computation behind the output (0: fp32's, 2^-23). Kernels that
  /// compute in lower precision by design (tf32 tensor cores for fp32 GEMMs) name theirs: the
  /// rounding rule (tolerance.hpp) allows accumulation error in these units.
  double compute_eps = 0;
  /// Roundoff per unit of sum_i |a_i b_i| allowed to an element that is a long product sum (0:
  /// none), never more than fp32 summation's worst case gamma_k = k 2^-24 / (1 - k 2^-24). Its
  /// absolute error follows the size of its terms, not of its result: an element that cancels
  /// near zero can be many output ulps from fp64 (docs/reference.md). Products compute the
  /// bound per element and pass it to error_accumulator::add.
  double accumulation_eps = 0;
};

/// Outcome of comparing one output against the fp64 reference.
struct compare_report {
  std::string tensor;
  std::int64_t checked = 0;          ///< elements compared (0 means nothing was checked)
  std::int64_t bad = 0;              ///< elements outside tolerance (NaN counts as bad)
  std::int64_t first_bad_index = -1;
  double max_abs_err = 0;
  double max_rel_err = 0;
  double atol = 0;
  double rtol = 0;

  /// How the checked elements were chosen: "all", "rows", "heads", "tokens", "tile",
  /// "freivalds" (checked counts rows of a randomized product check), "exact", "keep_ratio".
  std::string method;
  dtype type = dtype::f32;           ///< the output's dtype; sets the unit of the normalised error
  std::int64_t total = 0;            ///< elements of the output (coverage = checked / total)
  std::int64_t nonfinite = 0;        ///< NaN or inf where the reference is finite
  /// Elements outside upstream atol/rtol and also beyond what rounding explains: one ulp of the
  /// output dtype at the element plus 16 units of the computation's roundoff times
  /// (|want| + s), or plus a long product sum's accumulation bound. Judges an output when no
  /// reference front end ran (tolerance.hpp).
  std::int64_t beyond_rounding = 0;
  /// Of the elements outside upstream atol/rtol, those within rounding only through the
  /// accumulation bound of a long product sum (tolerance::accumulation_eps): said in the verdict.
  std::int64_t within_accumulation_only = 0;
  double ref_rms = 0;                ///< rms of the fp64 reference over the checked elements
  /// Normalised error: |got - want| / (eps(type) * (|want| + s) + min_subnormal(type) / 2), where
  /// s is the rms of the reference over the unit (row, head, tile) the element belongs to.
  /// A correctly rounded output scores at most 0.5.
  double max_norm_err = 0;
  double rms_norm_err = 0;
  std::string note;                  ///< why something was not checked, or sampling details
};

/// How to verify: the inputs' seed (enables the cache and the check of in-place outputs),
/// threads, cache and sample density.
struct verify_options {
  std::optional<std::uint64_t> seed;       ///< seed make_inputs was called with
  unsigned threads = 0;                    ///< 0: std::thread::hardware_concurrency()
  reference_cache* cache = nullptr;        ///< expected values of sampled checks (needs seed)
  double sample_scale = 1.0;               ///< multiplies sampled rows/heads/tiles (>= 1 is denser)
  /// Pristine inputs (as make_inputs returned them) for operators that overwrite an input
  /// (rope, in-place dropout); without it they are regenerated from `seed`.
  const std::vector<host_tensor>* original_inputs = nullptr;
};

/// A seeded uniform fill of one input, declared rather than coded so that the host and the
/// device generate the same bytes (random.hpp): element i is lo + (hi - lo) * uniform01(
/// stream_key(seed, tensor), i), floored for integer dtypes, rounded to nearest even.
struct uniform_fill {
  std::string tensor;
  double lo = 0;
  double hi = 1;
};

/// An operator: tensors from a configuration, seeded inputs, fp64 reference and check.
class operator_spec {
 public:
  virtual ~operator_spec() = default;
  [[nodiscard]] virtual std::string name() const = 0;
  [[nodiscard]] virtual std::vector<tensor_spec> tensors(const config& c) const = 0;
  /// The inputs filled by a declared uniform draw; make_inputs applies them before fill_inputs.
  [[nodiscard]] virtual std::vector<uniform_fill> uniform_fills(const config& c) const {
    (void)c;
    return {};
  }
  /// Fills the inputs (role in/inout) of `ts` that uniform_fills does not declare (routing
  /// tables, rope's angles); together they leave no input unfilled, and none all zeros.
  virtual void fill_inputs(const config& c, std::uint64_t seed, std::vector<host_tensor>& ts) const {
    (void)c, (void)seed, (void)ts;
  }
  /// Checks the outputs in `ts` (filled by a kernel) against the fp64 reference of the inputs.
  [[nodiscard]] virtual std::vector<compare_report> verify(const config& c,
                                                           const std::vector<host_tensor>& ts) const = 0;
  [[nodiscard]] virtual cost_model cost(const config& c) const = 0;

  /// verify() with a seed, threads and cache. The default ignores the options.
  [[nodiscard]] virtual std::vector<compare_report> verify(const config& c,
                                                           const std::vector<host_tensor>& ts,
                                                           const verify_options& options) const {
    (void)options;
    return verify(c, ts);
  }
  /// Writes the full fp64 reference, rounded to nearest even in each output's dtype, into the
  /// outputs of `ts` (inputs must be filled). A CPU "front end" for tests and smoke runs; it
  /// computes every element, so it can be slow on the largest configurations.
  virtual void write_reference(const config& c, std::vector<host_tensor>& ts,
                               unsigned threads = 0) const {
    (void)c, (void)ts, (void)threads;
    throw spec_error(name() + ": write_reference is not implemented");
  }
  /// Upstream atol/rtol for an output tensor (operators.md); informational next to judge().
  [[nodiscard]] virtual tolerance upstream_tolerance(const config& c, const std::string& tensor) const;
};

/// The operator registry; throws spec_error naming the operator if it is unknown.
/// Accepts upstream aliases ("attention", "fused_moe", "fmha_decode", "persistent_layer_norm").
[[nodiscard]] const operator_spec& find_operator(const std::string& name);
/// Canonical names, sorted (aliases are not listed).
[[nodiscard]] std::vector<std::string> operator_names();

/// Allocates host storage for every tensor of `c` and fills the inputs from `seed`.
[[nodiscard]] std::vector<host_tensor> make_inputs(const operator_spec& op, const config& c,
                                                   std::uint64_t seed);
/// Same; with `allocate_outputs` false the outputs (role out) get no host storage (a caller that
/// may never download them skips allocating and zeroing gigabytes).
[[nodiscard]] std::vector<host_tensor> make_inputs(const operator_spec& op, const config& c,
                                                   std::uint64_t seed, bool allocate_outputs);

/// Host storage and data only for the inputs uniform_fills does not declare (the rest get a
/// spec and no bytes): what a caller that generates the declared fills elsewhere must upload.
[[nodiscard]] std::vector<host_tensor> make_undeclared_inputs(const operator_spec& op, const config& c,
                                                              std::uint64_t seed);

/// The tensor called `name` in `ts`; throws spec_error if absent.
[[nodiscard]] const host_tensor& find_tensor(const std::vector<host_tensor>& ts, const std::string& name);
[[nodiscard]] host_tensor& find_tensor(std::vector<host_tensor>& ts, const std::string& name);

}  // namespace portbench::reference
