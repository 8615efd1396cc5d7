// SPDX-License-Identifier: Apache-2.0
#include "portbench/bundle/launcher.hpp"

#include <algorithm>
#include <cstring>
#include <limits>

#include "portbench/bundle/error.hpp"
#include "portbench/bundle/step_kernels.hpp"
#include "portbench/bundle/steps.hpp"
#include "portbench/cuda/error.hpp"

namespace portbench::bundle {
namespace {

template <typename T>
void put(std::vector<std::byte>& buf, std::size_t offset, T value) {
  std::memcpy(buf.data() + offset, &value, sizeof(T));
}

void put_integer(std::vector<std::byte>& buf, std::size_t offset, scalar_type t, std::int64_t v,
                 const std::string& where) {
  auto out_of_range = [&](const char* type) {
    throw bundle_error(where, "value " + std::to_string(v) + " does not fit " + type);
  };
  switch (t) {
    case scalar_type::i32:
      if (v < std::numeric_limits<std::int32_t>::min() || v > std::numeric_limits<std::int32_t>::max()) out_of_range("i32");
      put(buf, offset, static_cast<std::int32_t>(v));
      break;
    case scalar_type::u32:
      if (v < 0 || v > std::numeric_limits<std::uint32_t>::max()) out_of_range("u32");
      put(buf, offset, static_cast<std::uint32_t>(v));
      break;
    case scalar_type::i64:
      put(buf, offset, v);
      break;
    case scalar_type::u64:
      if (v < 0) out_of_range("u64");
      put(buf, offset, static_cast<std::uint64_t>(v));
      break;
    case scalar_type::f32:
      put(buf, offset, static_cast<float>(v));
      break;
    case scalar_type::f64:
      put(buf, offset, static_cast<double>(v));
      break;
  }
}

const tensor_binding& find_tensor(const tensor_bindings& tensors, const std::string& name, const std::string& where) {
  auto it = tensors.find(name);
  if (it == tensors.end()) throw bundle_error(where, "binds tensor '" + name + "', which the operator does not have");
  return it->second;
}

}  // namespace

packed_params::packed_params(std::vector<std::byte> storage, const std::vector<std::size_t>& offsets)
    : m_storage(std::move(storage)) {
  for (auto off : offsets) m_pointers.push_back(m_storage.data() + off);
}

std::vector<std::vector<std::string>> address_tables(const std::vector<launch_spec>& launches) {
  std::vector<std::vector<std::string>> out;
  for (const auto& l : launches) {
    for (const auto& p : l.params) {
      if (p.kind == param_kind::ptr_table && std::find(out.begin(), out.end(), p.tensors) == out.end()) {
        out.push_back(p.tensors);
      }
    }
  }
  return out;
}

std::vector<std::uint64_t> table_addresses(const std::vector<std::string>& names, const tensor_bindings& tensors,
                                           const std::string& where) {
  std::vector<std::uint64_t> out;
  out.reserve(names.size());
  for (const auto& name : names) out.push_back(static_cast<std::uint64_t>(find_tensor(tensors, name, where).address));
  return out;
}

std::vector<param_binding> descriptor_tables(const std::vector<launch_spec>& launches) {
  std::vector<param_binding> out;
  for (const auto& l : launches) {
    for (const auto& p : l.params) {
      if (p.kind != param_kind::array_table) continue;
      const bool seen = std::any_of(out.begin(), out.end(), [&](const param_binding& q) { return q.tensors == p.tensors; });
      if (!seen) out.push_back(p);
    }
  }
  return out;
}

std::vector<std::uint64_t> table_descriptors(const param_binding& p, const tensor_bindings& tensors,
                                             const std::string& where) {
  std::vector<std::uint64_t> out;
  out.reserve(p.tensors.size() * (1 + 2 * static_cast<std::size_t>(p.rank)));
  for (const auto& name : p.tensors) {
    const tensor_binding& t = find_tensor(tensors, name, where);
    const auto& spec = t.spec;
    if (spec.shape.size() != static_cast<std::size_t>(p.rank) || spec.strides.size() != spec.shape.size()) {
      throw bundle_error(where, "array table of rank " + std::to_string(p.rank) + " lists tensor '" + name +
                                    "' of rank " + std::to_string(spec.shape.size()));
    }
    out.push_back(static_cast<std::uint64_t>(t.address));
    // Extents, then strides, each a full 64-bit word whatever the index type: the kernel loads
    // the words and narrows them itself, so an i32 index type only bounds the values.
    for (const auto* values : {&spec.shape, &spec.strides}) {
      for (const std::int64_t v : *values) {
        if (p.index_type == scalar_type::i32 &&
            (v < std::numeric_limits<std::int32_t>::min() || v > std::numeric_limits<std::int32_t>::max())) {
          throw bundle_error(where, "tensor '" + name + "': " + (values == &spec.shape ? "extent " : "stride ") +
                                        std::to_string(v) + " does not fit the table's index type i32");
        }
        out.push_back(static_cast<std::uint64_t>(v));
      }
    }
  }
  return out;
}

packed_params pack_params(const launch_spec& l, const tensor_bindings& tensors, const scratch_bindings& scratch,
                          const std::string& where) {
  auto offsets = param_offsets(l);
  std::size_t total = l.params.empty() ? 0 : offsets.back() + l.params.back().size();
  std::vector<std::byte> buf(total);
  for (std::size_t i = 0; i < l.params.size(); ++i) {
    const param_binding& p = l.params[i];
    const std::string at = where + ".params[" + std::to_string(i) + "]";
    switch (p.kind) {
      case param_kind::ptr: {
        const tensor_binding& t = find_tensor(tensors, p.tensor, at);
        if (p.offset > 0 && t.spec.offset + p.offset >= t.spec.storage_elements) {
          throw bundle_error(at, "offset " + std::to_string(p.offset) + " is outside tensor '" + p.tensor + "' (" +
                                     std::to_string(t.spec.storage_elements) + " elements)");
        }
        const auto bytes = static_cast<std::uint64_t>(p.offset) * static_cast<std::uint64_t>(reference::size_of(t.spec.type));
        put(buf, offsets[i], static_cast<std::uint64_t>(t.address) + bytes);
        break;
      }
      case param_kind::extent:
      case param_kind::stride: {
        const auto& spec = find_tensor(tensors, p.tensor, at).spec;
        if (static_cast<std::size_t>(p.dim) >= spec.shape.size()) {
          throw bundle_error(at, "dimension " + std::to_string(p.dim) + " of tensor '" + p.tensor + "' of rank " +
                                     std::to_string(spec.shape.size()));
        }
        std::int64_t v = p.kind == param_kind::extent ? spec.shape[p.dim] : spec.strides[p.dim];
        put_integer(buf, offsets[i], p.type, v, at);
        break;
      }
      case param_kind::literal:
        if (std::holds_alternative<double>(p.value)) {
          double v = std::get<double>(p.value);
          if (p.type == scalar_type::f32) put(buf, offsets[i], static_cast<float>(v));
          else put(buf, offsets[i], v);
        } else {
          put_integer(buf, offsets[i], p.type, std::get<std::int64_t>(p.value), at);
        }
        break;
      case param_kind::scratch: {
        auto it = scratch.buffers.find(p.scratch);
        if (it == scratch.buffers.end()) throw bundle_error(at, "scratch buffer '" + p.scratch + "' was not allocated");
        put(buf, offsets[i], static_cast<std::uint64_t>(it->second));
        break;
      }
      case param_kind::null:
        put(buf, offsets[i], std::uint64_t{0});
        break;
      case param_kind::ptr_table: {
        for (const auto& name : p.tensors) (void)find_tensor(tensors, name, at);
        auto it = scratch.tables.find(p.tensors);
        if (it == scratch.tables.end()) throw bundle_error(at, "the address table of its " + std::to_string(p.tensors.size()) + " tensors was not built");
        put(buf, offsets[i], static_cast<std::uint64_t>(it->second));
        break;
      }
      case param_kind::array_table: {
        (void)table_descriptors(p, tensors, at);   // names an unbound tensor or a rank or value that does not fit
        auto it = scratch.array_tables.find(p.tensors);
        if (it == scratch.array_tables.end()) {
          throw bundle_error(at, "the descriptor table of its " + std::to_string(p.tensors.size()) + " tensors was not built");
        }
        put(buf, offsets[i], static_cast<std::uint64_t>(it->second));
        break;
      }
    }
  }
  return packed_params(std::move(buf), offsets);
}

loaded_plan::loaded_plan(cuda::context_ptr ctx, const bundle& b, const config_plan& plan)
    : m_ctx(std::move(ctx)), m_plan(&plan), m_manifest(b.plan.path.string()),
      m_where(m_manifest + ": " + plan.config.id() + (plan.variant.empty() ? "" : " variant " + plan.variant)) {
  std::map<std::string, cuda::module_ptr> modules;
  for (const auto& l : plan.launches) {
    auto& mod = modules[l.cubin];
    if (!mod) {
      const loaded_cubin& c = b.cubin(l.cubin);
      mod = cuda::module::load(m_ctx, c.image, c.path.string());
    }
    cuda::kernel k(mod, l.entry);
    k.allow_dynamic_shared(static_cast<int>(l.shared_bytes));
    m_kernels.push_back(std::move(k));
  }
  const step_kernel_set needed = needed_step_kernels(plan.steps);
  if (!needed.empty()) m_steps = std::make_unique<step_kernels>(m_ctx, needed);
  m_expected = expected_records(plan.launches, plan.steps, static_cast<unsigned>(m_ctx->info().sm_count));
  // Fill inits no memset can lay down are uploaded from these host images.
  for (const auto& sc : plan.scratch) {
    if (!sc.fill_init || sc.bytes == 0) continue;
    const view_spec whole = whole_scratch(sc, sc.fill_init->type);
    if (!choose_fill(whole, *sc.fill_init).memset) {
      m_init_images.emplace(sc.name, fill_image(*sc.fill_init, static_cast<std::uint64_t>(whole.elements())));
    }
  }
}

loaded_plan::~loaded_plan() = default;

void loaded_plan::launch(const plan_step& st, const cuda::stream& s, const tensor_bindings& tensors,
                         const scratch_bindings& scratch) const {
  const auto& api = m_ctx->api();
  const std::size_t i = st.launch;
  const launch_spec& l = m_plan->launches[i];
  packed_params params = pack_params(l, tensors, scratch, m_manifest + ": launches[" + std::to_string(st.index) + "]");
  CUlaunchConfig cfg{};
  cfg.gridDimX = l.grid[0];
  cfg.gridDimY = l.grid[1];
  cfg.gridDimZ = l.grid[2];
  cfg.blockDimX = l.block[0];
  cfg.blockDimY = l.block[1];
  cfg.blockDimZ = l.block[2];
  cfg.sharedMemBytes = l.shared_bytes;
  cfg.hStream = s.native();
  CUlaunchAttribute attrs[1]{};
  // A cubin that fixes its cluster (grid counted in clusters) takes no cluster attribute.
  if (l.cluster != dim3{1, 1, 1} && !l.grid_counts_clusters) {
    attrs[0].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attrs[0].value.clusterDim.x = l.cluster[0];
    attrs[0].value.clusterDim.y = l.cluster[1];
    attrs[0].value.clusterDim.z = l.cluster[2];
    cfg.attrs = attrs;
    cfg.numAttrs = 1;
  }
  CUresult rc = api.cuLaunchKernelEx(&cfg, m_kernels[i].native(), params.pointers(), nullptr);
  if (rc != CUDA_SUCCESS) {
    throw cuda::cuda_error(rc, "cuLaunchKernelEx", m_kernels[i].owner().origin() + ": entry '" + l.entry + "'");
  }
}

void loaded_plan::enqueue(const cuda::stream& s, const tensor_bindings& tensors, const scratch_bindings& scratch) const {
  const auto& api = m_ctx->api();
  // Every step is bound and checked before anything is enqueued: a bad view launches nothing.
  std::vector<bound_view> fills;
  std::vector<bound_copy> copies;
  std::vector<bound_sum> sums;
  for (const auto& st : m_plan->steps) {
    const std::string at = m_where + ": launches[" + std::to_string(st.index) + "]";
    if (st.kind == step_kind::fill) fills.push_back(bind_view(st.fill.target, tensors, scratch, m_plan->scratch, at + ".target"));
    if (st.kind == step_kind::copy) copies.push_back(bind_copy(st.copy, tensors, scratch, m_plan->scratch, at));
    if (st.kind == step_kind::sum) sums.push_back(bind_sum(st.sum, tensors, scratch, m_plan->scratch, at));
  }
  // Buffers the exporter declared initialised (a wrapper's torch.zeros, or torch.tensor of one
  // host value) hold that value at the start of every execution of the plan. These are memsets
  // or uploads, never kernels: preparation, outside the plan's device time.
  for (const auto& sc : m_plan->scratch) {
    if ((!sc.zero_init && !sc.fill_init) || sc.bytes == 0) continue;
    auto it = scratch.buffers.find(sc.name);
    if (it == scratch.buffers.end()) throw bundle_error(m_manifest, "scratch buffer '" + sc.name + "' was not allocated");
    if (sc.zero_init) {
      PB_CU(api.cuMemsetD8Async(it->second, 0, sc.bytes, s.native()));
      continue;
    }
    auto image = m_init_images.find(sc.name);
    if (image != m_init_images.end()) {
      PB_CU(api.cuMemcpyHtoDAsync(it->second, image->second.data(), image->second.size(), s.native()));
      continue;
    }
    const fill_method m = choose_fill(whole_scratch(sc, sc.fill_init->type), *sc.fill_init);
    if (m.unit == 1) PB_CU(api.cuMemsetD8Async(it->second, static_cast<unsigned char>(m.pattern), m.count, s.native()));
    else if (m.unit == 2) PB_CU(api.cuMemsetD16Async(it->second, static_cast<unsigned short>(m.pattern), m.count, s.native()));
    else PB_CU(api.cuMemsetD32Async(it->second, m.pattern, m.count, s.native()));
  }
  std::size_t next_fill = 0, next_copy = 0, next_sum = 0;
  for (const auto& st : m_plan->steps) {
    switch (st.kind) {
      case step_kind::kernel:
        launch(st, s, tensors, scratch);
        break;
      case step_kind::fill:
        m_steps->fill(s, fills[next_fill++], st.fill.value.bits);
        break;
      case step_kind::copy:
        m_steps->copy(s, copies[next_copy++]);
        break;
      case step_kind::sum:
        m_steps->sum(s, sums[next_sum++]);
        break;
    }
  }
}

}  // namespace portbench::bundle
