// SPDX-License-Identifier: Apache-2.0
#include "portbench/bundle/steps.hpp"

#include <algorithm>
#include <cstddef>
#include <numeric>

#include "portbench/bundle/error.hpp"

namespace portbench::bundle {
namespace {

std::optional<element_type> element_of(reference::dtype t) noexcept {
  switch (t) {
    case reference::dtype::f64: return element_type::f64;
    case reference::dtype::f32: return element_type::f32;
    case reference::dtype::f16: return element_type::f16;
    case reference::dtype::bf16: return element_type::bf16;
    case reference::dtype::i64: return element_type::i64;
    case reference::dtype::i32: return element_type::i32;
    case reference::dtype::i16: return element_type::i16;
    case reference::dtype::i8: return element_type::i8;
    case reference::dtype::u8: return element_type::u8;
    default: return std::nullopt;   // fp8 and bool: no step addresses them
  }
}

// Largest element index the view addresses, relative to its base.
std::int64_t last_index(const view_spec& v) noexcept {
  std::int64_t last = v.offset;
  for (std::size_t k = 0; k < v.shape.size(); ++k) last += (v.shape[k] - 1) * v.strides[k];
  return last;
}

// Dims of extent > 1, as (extent, stride), sorted by stride.
std::vector<std::pair<std::int64_t, std::int64_t>> moving_dims(const bound_view& v) {
  std::vector<std::pair<std::int64_t, std::int64_t>> d;
  for (std::size_t k = 0; k < v.shape.size(); ++k) {
    if (v.shape[k] > 1) d.emplace_back(v.shape[k], v.strides[k]);
  }
  std::sort(d.begin(), d.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
  return d;
}

// No two elements at one address: with dims sorted by stride, each stride clears the span of
// the dims below it (sufficient, and what a dense or transposed view satisfies).
bool overlaps_itself(const bound_view& v) {
  std::int64_t span = 1;
  for (const auto& [extent, stride] : moving_dims(v)) {
    if (stride < span) return true;
    span = stride * extent;
  }
  return false;
}

// One dense run of elements: row-major contiguous once size-1 dims are dropped.
bool dense(const view_spec& v) noexcept {
  std::int64_t want = 1;
  for (std::size_t k = v.shape.size(); k-- > 0;) {
    if (v.shape[k] == 1) continue;
    if (v.strides[k] != want) return false;
    want *= v.shape[k];
  }
  return true;
}

}  // namespace

std::int64_t bound_view::elements() const noexcept {
  return std::accumulate(shape.begin(), shape.end(), std::int64_t{1}, std::multiplies<>());
}
CUdeviceptr bound_view::first_byte() const noexcept {
  // The lowest address: offset itself (strides are never negative).
  return base + static_cast<CUdeviceptr>(offset) * size_of(type);
}
CUdeviceptr bound_view::end_byte() const noexcept {
  return base + static_cast<CUdeviceptr>(last + 1) * size_of(type);
}

bound_view bind_view(const view_spec& v, const tensor_bindings& tensors, const scratch_bindings& scratch,
                     const std::vector<scratch_spec>& scratch_specs, const std::string& where) {
  bound_view b;
  b.type = v.type;
  b.offset = v.offset;
  b.shape = v.shape;
  b.strides = v.strides;
  b.last = last_index(v);
  std::int64_t capacity = 0;
  if (!v.tensor.empty()) {
    auto it = tensors.find(v.tensor);
    if (it == tensors.end()) throw bundle_error(where, "views tensor '" + v.tensor + "', which the operator does not have");
    const auto& spec = it->second.spec;
    const auto et = element_of(spec.type);
    if (!et || *et != v.type) {
      throw bundle_error(where, "views tensor '" + v.tensor + "' as " + to_string(v.type) + ", but it is " +
                                    std::string(reference::to_string(spec.type)));
    }
    b.base = it->second.address;
    capacity = spec.storage_elements - spec.offset;
  } else {
    auto spec = std::find_if(scratch_specs.begin(), scratch_specs.end(), [&](const auto& s) { return s.name == v.scratch; });
    auto it = scratch.buffers.find(v.scratch);
    if (spec == scratch_specs.end() || it == scratch.buffers.end()) {
      throw bundle_error(where, "scratch buffer '" + v.scratch + "' was not allocated");
    }
    b.base = it->second;
    capacity = static_cast<std::int64_t>(spec->bytes / size_of(v.type));
  }
  if (b.last >= capacity) {
    throw bundle_error(where, "views element " + std::to_string(b.last) + " of " + v.describe() + ", which holds " +
                                  std::to_string(capacity) + " " + to_string(v.type) + " elements");
  }
  return b;
}

bound_copy bind_copy(const copy_step& c, const tensor_bindings& tensors, const scratch_bindings& scratch,
                     const std::vector<scratch_spec>& scratch_specs, const std::string& where) {
  bound_copy b{bind_view(c.src, tensors, scratch, scratch_specs, where + ".src"),
               bind_view(c.dst, tensors, scratch, scratch_specs, where + ".dst")};
  if (overlaps_itself(b.dst)) {
    throw bundle_error(where + ".dst", "the view of " + c.dst.describe() + " overlaps itself (two elements at one address)");
  }
  if (b.src.first_byte() < b.dst.end_byte() && b.dst.first_byte() < b.src.end_byte()) {
    throw bundle_error(where, "src (" + c.src.describe() + ") and dst (" + c.dst.describe() + ") overlap in memory");
  }
  return b;
}

bound_sum bind_sum(const sum_step& st, const tensor_bindings& tensors, const scratch_bindings& scratch,
                   const std::vector<scratch_spec>& scratch_specs, const std::string& where) {
  const bound_copy views = bind_copy({st.src, st.dst}, tensors, scratch, scratch_specs, where);
  return {views.src, views.dst, st.axis};
}

void check_steps(const std::vector<plan_step>& steps, const std::vector<scratch_spec>& scratch_specs,
                 const tensor_bindings& tensors, const scratch_bindings& scratch, const std::string& where) {
  for (const auto& st : steps) {
    const std::string at = where + ".launches[" + std::to_string(st.index) + "]";
    if (st.kind == step_kind::fill) (void)bind_view(st.fill.target, tensors, scratch, scratch_specs, at + ".target");
    if (st.kind == step_kind::copy) (void)bind_copy(st.copy, tensors, scratch, scratch_specs, at);
    if (st.kind == step_kind::sum) (void)bind_sum(st.sum, tensors, scratch, scratch_specs, at);
  }
}

std::string copy_entry(element_type src, element_type dst) {
  return std::string("portbench_copy_") + to_string(src) + "_" + to_string(dst);
}

std::string sum_entry(element_type src, element_type dst) {
  return std::string("portbench_sum_") + to_string(src) + "_" + to_string(dst);
}

element_type sum_accumulator(element_type src, element_type dst) noexcept {
  if (src == element_type::f64 || dst == element_type::f64) return element_type::f64;
  if (is_floating(src) || is_floating(dst)) return element_type::f32;
  return element_type::i64;
}

std::string fill_entry(std::size_t bytes) { return "portbench_fill_" + std::to_string(8 * bytes); }

dim3 step_grid(std::int64_t elements, unsigned sm_count) noexcept {
  const std::int64_t blocks = (elements + k_step_block - 1) / k_step_block;
  const std::int64_t cap = std::max<std::int64_t>(1, static_cast<std::int64_t>(sm_count) * 8);
  return {static_cast<unsigned>(std::clamp<std::int64_t>(blocks, 1, cap)), 1, 1};
}

fill_method choose_fill(const view_spec& target, const fill_value& value) noexcept {
  fill_method m;
  if (!dense(target)) return m;
  const std::size_t size = size_of(target.type);
  const auto n = static_cast<std::uint64_t>(target.elements());
  const std::uint64_t b = value.bits;
  if (size == 8 && (b >> 32) != (b & 0xffffffffu)) return m;   // no 4-byte unit repeats it
  m.memset = true;
  m.unit = size == 8 ? 4 : static_cast<unsigned>(size);
  m.pattern = static_cast<std::uint32_t>(b & (m.unit == 4 ? 0xffffffffu : m.unit == 2 ? 0xffffu : 0xffu));
  m.count = size == 8 ? 2 * n : n;
  return m;
}

std::vector<std::byte> fill_image(const fill_value& value, std::uint64_t elements) {
  const std::size_t size = size_of(value.type);
  std::vector<std::byte> out(size * elements);
  for (std::uint64_t i = 0; i < elements; ++i) {
    for (std::size_t b = 0; b < size; ++b) out[i * size + b] = static_cast<std::byte>((value.bits >> (8 * b)) & 0xffu);
  }
  return out;
}

view_spec whole_scratch(const scratch_spec& s, element_type t) {
  view_spec v;
  v.scratch = s.name;
  v.type = t;
  v.shape = {static_cast<std::int64_t>(s.bytes / size_of(t))};
  v.strides = {1};
  return v;
}

std::vector<expected_record> expected_records(const std::vector<launch_spec>& launches,
                                              const std::vector<plan_step>& steps, unsigned sm_count) {
  // Scratch inits are memsets or uploads (no kernel record); every step is a kernel.
  std::vector<expected_record> out;
  for (const auto& st : steps) {
    switch (st.kind) {
      case step_kind::kernel: {
        const launch_spec& l = launches.at(st.launch);
        out.push_back({l.entry, l.cta_grid(), false});
        break;
      }
      case step_kind::fill:
        out.push_back({fill_entry(size_of(st.fill.target.type)), step_grid(st.fill.target.elements(), sm_count), true});
        break;
      case step_kind::copy:
        out.push_back({copy_entry(st.copy.src.type, st.copy.dst.type), step_grid(st.copy.dst.elements(), sm_count), true});
        break;
      case step_kind::sum:
        out.push_back({sum_entry(st.sum.src.type, st.sum.dst.type), step_grid(st.sum.dst.elements(), sm_count), true});
        break;
    }
  }
  return out;
}

step_kernel_set needed_step_kernels(const std::vector<plan_step>& steps) {
  step_kernel_set k;
  for (const auto& st : steps) {
    if (st.kind == step_kind::fill) {
      const std::size_t size = size_of(st.fill.target.type);
      if (std::find(k.fill_sizes.begin(), k.fill_sizes.end(), size) == k.fill_sizes.end()) k.fill_sizes.push_back(size);
    }
    if (st.kind == step_kind::copy) {
      const std::pair<element_type, element_type> p{st.copy.src.type, st.copy.dst.type};
      if (std::find(k.copies.begin(), k.copies.end(), p) == k.copies.end()) k.copies.push_back(p);
    }
    if (st.kind == step_kind::sum) {
      const std::pair<element_type, element_type> p{st.sum.src.type, st.sum.dst.type};
      if (std::find(k.sums.begin(), k.sums.end(), p) == k.sums.end()) k.sums.push_back(p);
    }
  }
  return k;
}

}  // namespace portbench::bundle
