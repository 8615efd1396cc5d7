// SPDX-License-Identifier: Apache-2.0
// tensor_spec helpers, make_inputs and tensor lookup.
#include <algorithm>
#include <numeric>

#include "portbench/reference/compare.hpp"
#include "portbench/reference/random.hpp"
#include "portbench/reference/spec.hpp"

namespace portbench::reference {

std::string_view to_string(tensor_role r) noexcept {
  switch (r) {
    case tensor_role::in: return "in";
    case tensor_role::out: return "out";
    case tensor_role::inout: return "inout";
  }
  return "?";
}

std::int64_t tensor_spec::elements() const {
  return std::accumulate(shape.begin(), shape.end(), std::int64_t{1},
                         [](std::int64_t a, std::int64_t b) { return a * b; });
}

std::size_t tensor_spec::storage_bytes() const {
  return static_cast<std::size_t>(storage_elements) * size_of(type);
}

std::int64_t tensor_spec::storage_index(std::span<const std::int64_t> index) const {
  std::int64_t s = offset;
  for (std::size_t d = 0; d < index.size() && d < strides.size(); ++d) s += index[d] * strides[d];
  return s;
}

bool tensor_spec::is_contiguous() const {
  if (offset != 0 || storage_elements != elements() || strides.size() != shape.size()) return false;
  std::int64_t expect = 1;
  for (std::size_t d = shape.size(); d-- > 0;) {
    if (shape[d] != 1 && strides[d] != expect) return false;
    expect *= shape[d];
  }
  return true;
}

tensor_spec make_tensor(std::string name, dtype type, std::vector<std::int64_t> shape,
                        tensor_role role) {
  tensor_spec t;
  t.name = std::move(name);
  t.type = type;
  t.strides.assign(shape.size(), 1);
  for (std::size_t d = shape.size(); d-- > 1;) t.strides[d - 1] = t.strides[d] * shape[d];
  t.shape = std::move(shape);
  t.storage_elements = t.elements();
  t.role = role;
  return t;
}

std::vector<host_tensor> make_inputs(const operator_spec& op, const config& c, std::uint64_t seed) {
  return make_inputs(op, c, seed, true);
}

std::vector<host_tensor> make_inputs(const operator_spec& op, const config& c, std::uint64_t seed,
                                     bool allocate_outputs) {
  std::vector<host_tensor> ts;
  for (auto& spec : op.tensors(c)) {
    host_tensor t;
    if (allocate_outputs || spec.role != tensor_role::out) t.bytes.resize(spec.storage_bytes());
    t.spec = std::move(spec);
    ts.push_back(std::move(t));
  }
  for (const auto& f : op.uniform_fills(c)) fill_uniform(find_tensor(ts, f.tensor), seed, f.lo, f.hi);
  op.fill_inputs(c, seed, ts);
  return ts;
}

std::vector<host_tensor> make_undeclared_inputs(const operator_spec& op, const config& c, std::uint64_t seed) {
  std::vector<std::string> declared;
  for (auto& f : op.uniform_fills(c)) declared.push_back(std::move(f.tensor));
  std::vector<host_tensor> ts;
  for (auto& spec : op.tensors(c)) {
    host_tensor t;
    const bool is_declared = std::find(declared.begin(), declared.end(), spec.name) != declared.end();
    if (spec.role != tensor_role::out && !is_declared) t.bytes.resize(spec.storage_bytes());
    t.spec = std::move(spec);
    ts.push_back(std::move(t));
  }
  for (const auto& name : declared) {
    if (find_tensor(ts, name).spec.role == tensor_role::out) {
      throw spec_error(op.name() + ": uniform fill of output '" + name + "'");
    }
  }
  op.fill_inputs(c, seed, ts);
  return ts;
}

const host_tensor& find_tensor(const std::vector<host_tensor>& ts, const std::string& name) {
  for (const auto& t : ts) {
    if (t.spec.name == name) return t;
  }
  throw spec_error("no tensor named '" + name + "'");
}

host_tensor& find_tensor(std::vector<host_tensor>& ts, const std::string& name) {
  for (auto& t : ts) {
    if (t.spec.name == name) return t;
  }
  throw spec_error("no tensor named '" + name + "'");
}

tolerance operator_spec::upstream_tolerance(const config& c, const std::string& tensor) const {
  for (const auto& t : tensors(c)) {
    if (t.name == tensor) return default_tolerance(t.type);
  }
  throw spec_error(name() + ": no tensor named '" + tensor + "'");
}

}  // namespace portbench::reference
