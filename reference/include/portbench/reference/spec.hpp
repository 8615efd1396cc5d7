// SPDX-License-Identifier: Apache-2.0
// Operator specs: what tensors a configuration needs, how inputs are drawn, and the fp64
// reference. The harness allocates and binds tensors from this, never from a bundle's word.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "portbench/reference/config.hpp"
#include "portbench/reference/dtype.hpp"

namespace portbench::reference {

/// Bad configuration or unknown operator; the message names the operator and the field.
class spec_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class tensor_role { in, out, inout };

struct tensor_spec {
  std::string name;
  dtype type;
  std::vector<std::int64_t> shape;
  std::vector<std::int64_t> strides;   ///< in elements; may describe a non-contiguous view
  std::int64_t storage_elements = 0;   ///< elements of the backing allocation (>= the view's span)
  tensor_role role = tensor_role::in;

  [[nodiscard]] std::int64_t elements() const;   ///< product of shape
  [[nodiscard]] std::size_t storage_bytes() const;
};

/// Host copy of one tensor's backing storage, as raw bytes in the tensor's dtype.
struct host_tensor {
  tensor_spec spec;
  std::vector<std::byte> bytes;
};

struct cost_model {
  double bytes_moved = 0;   ///< fewest bytes the operator must read plus write
  double flops = 0;
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
};

/// An operator: tensors from a configuration, seeded inputs, fp64 reference and check.
class operator_spec {
 public:
  virtual ~operator_spec() = default;
  [[nodiscard]] virtual std::string name() const = 0;
  [[nodiscard]] virtual std::vector<tensor_spec> tensors(const config& c) const = 0;
  /// Fills every input (role in/inout) of `ts` with seeded data; never all zeros.
  virtual void fill_inputs(const config& c, std::uint64_t seed, std::vector<host_tensor>& ts) const = 0;
  /// Checks the outputs in `ts` (filled by a kernel) against the fp64 reference of the inputs.
  [[nodiscard]] virtual std::vector<compare_report> verify(const config& c,
                                                           const std::vector<host_tensor>& ts) const = 0;
  [[nodiscard]] virtual cost_model cost(const config& c) const = 0;
};

/// The operator registry; throws spec_error naming the operator if it is unknown.
[[nodiscard]] const operator_spec& find_operator(const std::string& name);
[[nodiscard]] std::vector<std::string> operator_names();

/// Allocates host storage for every tensor of `c` and fills the inputs from `seed`.
[[nodiscard]] std::vector<host_tensor> make_inputs(const operator_spec& op, const config& c,
                                                   std::uint64_t seed);

}  // namespace portbench::reference
