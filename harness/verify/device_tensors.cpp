// SPDX-License-Identifier: Apache-2.0
#include "portbench/verify/device_tensors.hpp"

#include <algorithm>
#include <optional>
#include <span>
#include <stdexcept>

#include "portbench/bundle/error.hpp"
#include "portbench/cuda/error.hpp"
#include "portbench/reference/random.hpp"

namespace portbench::verify {
namespace {
// One fill of slack outputs for every pass: a kernel that leaves their unspecified part alone
// then gives the same digest each time.
constexpr std::uint32_t k_slack_fill = 0x5A5A5A5Au;
}  // namespace

device_tensors::device_tensors(cuda::context_ptr ctx, const std::vector<reference::host_tensor>& host,
                               const bundle::config_plan& plan)
    : device_tensors(std::move(ctx), host, std::vector<const bundle::config_plan*>{&plan}) {}

device_tensors::device_tensors(cuda::context_ptr ctx, const std::vector<reference::host_tensor>& host,
                               const std::vector<const bundle::config_plan*>& plans)
    : device_tensors(std::move(ctx), host, plans, nullptr) {}

device_tensors::device_tensors(cuda::context_ptr ctx, const std::vector<reference::host_tensor>& host,
                               const std::vector<const bundle::config_plan*>& plans, const generated_inputs& generated)
    : device_tensors(std::move(ctx), host, plans, &generated) {}

device_tensors::device_tensors(cuda::context_ptr ctx, const std::vector<reference::host_tensor>& host,
                               const std::vector<const bundle::config_plan*>& plans, const generated_inputs* generated)
    : m_ctx(ctx) {
  std::optional<cuda::stream> fill_stream;
  for (const auto& t : host) {
    const std::size_t bytes = t.spec.storage_bytes();   // outputs may have no host storage yet
    cuda::device_buffer buf(ctx, bytes);
    const reference::uniform_fill* fill = nullptr;
    if (generated) {
      for (const auto& f : generated->fills) {
        if (f.tensor == t.spec.name) fill = &f;
      }
    }
    if (fill && t.spec.role != reference::tensor_role::out) {
      if (!fill_stream) fill_stream.emplace(ctx);
      const bool inout = t.spec.role == reference::tensor_role::inout;
      const cuda::device_buffer* target = &buf;
      if (inout) target = &m_pristine.emplace(t.spec.name, cuda::device_buffer(ctx, bytes)).first->second;
      generated->generator.enqueue(*fill_stream, {target->address(), t.spec.type, t.spec.storage_elements,
                                                  reference::stream_key(generated->seed, t.spec.name), fill->lo, fill->hi});
      if (inout && bytes > 0) {
        PB_CU(ctx->api().cuMemcpyDtoDAsync(buf.address(), target->address(), bytes, fill_stream->native()));
      }
      m_generated.push_back({t.spec.name, target->address(), bytes, static_cast<int>(reference::size_of(t.spec.type))});
    } else if (t.spec.role != reference::tensor_role::out) {
      // Outputs are poisoned before every launch: uploading them would only cost time.
      if (t.bytes.size() != bytes) {
        throw std::invalid_argument("device_tensors: input '" + t.spec.name + "' has " + std::to_string(t.bytes.size()) +
                                    " host bytes, its spec " + std::to_string(bytes));
      }
      buf.upload(t.bytes);
    }
    m_bindings[t.spec.name] = bundle::tensor_binding{buf.address(), t.spec};
    const output_view view{t.spec.name, buf.address(), bytes, static_cast<int>(reference::size_of(t.spec.type))};
    if (t.spec.role == reference::tensor_role::out && !t.spec.slack) m_outputs.push_back(view);
    if (t.spec.role != reference::tensor_role::in) m_written.push_back(view);
    m_buffers.emplace(t.spec.name, std::move(buf));
  }
  if (fill_stream) fill_stream->synchronize();
  std::map<std::string, std::uint64_t> scratch_bytes;
  for (const auto* plan : plans) {
    for (const auto& s : plan->scratch) scratch_bytes[s.name] = std::max(scratch_bytes[s.name], s.bytes);
  }
  for (const auto& [name, bytes] : scratch_bytes) {
    cuda::device_buffer buf(ctx, bytes);
    // Scratch starts from a known non-zero pattern, so a kernel that relies on zeroed scratch
    // fails the same way every time instead of by luck.
    buf.fill_u32(0xA5A5A5A5u);
    m_scratch_bindings.buffers[name] = buf.address();
    m_scratch.emplace(name, std::move(buf));
  }
  // The address tables of ptr_table parameters: one device array per distinct tensor list, built
  // once from the bindings above (the tensors never move). A list naming a tensor the operator
  // lacks builds no table; packing the launch then names the parameter and the tensor.
  for (const auto* plan : plans) {
    for (const auto& names : bundle::address_tables(plan->launches)) {
      const bool bound = std::all_of(names.begin(), names.end(), [&](const std::string& n) { return m_bindings.count(n) > 0; });
      if (!bound || m_scratch_bindings.tables.count(names)) continue;
      const std::vector<std::uint64_t> addresses = bundle::table_addresses(names, m_bindings, "address table");
      cuda::device_buffer buf(ctx, addresses.size() * sizeof(std::uint64_t));
      buf.upload(std::as_bytes(std::span<const std::uint64_t>(addresses)));
      m_scratch_bindings.tables[names] = buf.address();
      m_tables.push_back(std::move(buf));
    }
    // The descriptor tables of array_table parameters, likewise (an unbound tensor, a rank or a
    // value that does not fit builds none; packing the launch names the parameter and why).
    for (const auto& p : bundle::descriptor_tables(plan->launches)) {
      const bool bound = std::all_of(p.tensors.begin(), p.tensors.end(), [&](const std::string& n) { return m_bindings.count(n) > 0; });
      if (!bound || m_scratch_bindings.array_tables.count(p.tensors)) continue;
      std::vector<std::uint64_t> words;
      try {
        words = bundle::table_descriptors(p, m_bindings, "descriptor table");
      } catch (const bundle::bundle_error&) {
        continue;
      }
      cuda::device_buffer buf(ctx, words.size() * sizeof(std::uint64_t));
      buf.upload(std::as_bytes(std::span<const std::uint64_t>(words)));
      m_scratch_bindings.array_tables[p.tensors] = buf.address();
      m_tables.push_back(std::move(buf));
    }
  }
}

void device_tensors::poison_outputs(std::uint32_t pattern, const std::vector<reference::host_tensor>& host) const {
  for (const auto& t : host) {
    const auto& buf = m_buffers.at(t.spec.name);
    if (t.spec.role == reference::tensor_role::out) {
      buf.fill_u32(t.spec.slack ? k_slack_fill : pattern);
    } else if (t.spec.role == reference::tensor_role::inout) {
      auto pristine = m_pristine.find(t.spec.name);
      if (pristine == m_pristine.end()) {
        buf.upload(t.bytes);
      } else {
        buf.copy_from(pristine->second);
      }
    }
  }
}

void device_tensors::poison_outputs_async(const cuda::stream& s, std::uint32_t pattern) const {
  for (const auto& o : m_outputs) {
    std::size_t words = o.bytes / 4;
    if (words != 0) PB_CU(m_ctx->api().cuMemsetD32Async(o.address, pattern, words, s.native()));
    if (o.bytes % 4 != 0) {
      PB_CU(m_ctx->api().cuMemsetD8Async(o.address + words * 4, static_cast<unsigned char>(pattern & 0xff),
                                         o.bytes % 4, s.native()));
    }
  }
}

std::vector<device_tensors::output_view> device_tensors::outputs() const { return m_outputs; }
std::vector<device_tensors::output_view> device_tensors::written() const { return m_written; }
std::vector<device_tensors::output_view> device_tensors::generated() const { return m_generated; }

void device_tensors::download_outputs(std::vector<reference::host_tensor>& host) const {
  for (auto& t : host) {
    if (t.spec.role == reference::tensor_role::in) continue;
    t.bytes.resize(t.spec.storage_bytes());
    m_buffers.at(t.spec.name).download(t.bytes);
  }
}

void device_tensors::download(std::vector<reference::host_tensor>& host) const {
  for (auto& t : host) {
    t.bytes.resize(t.spec.storage_bytes());
    m_buffers.at(t.spec.name).download(t.bytes);
  }
}

}  // namespace portbench::verify
