// SPDX-License-Identifier: Apache-2.0
#include "portbench/verify/device_tensors.hpp"

#include <algorithm>
#include <span>

#include "portbench/cuda/error.hpp"

namespace portbench::verify {

device_tensors::device_tensors(cuda::context_ptr ctx, const std::vector<reference::host_tensor>& host,
                               const bundle::config_plan& plan)
    : device_tensors(std::move(ctx), host, std::vector<const bundle::config_plan*>{&plan}) {}

device_tensors::device_tensors(cuda::context_ptr ctx, const std::vector<reference::host_tensor>& host,
                               const std::vector<const bundle::config_plan*>& plans)
    : m_ctx(ctx) {
  for (const auto& t : host) {
    const std::size_t bytes = t.spec.storage_bytes();   // outputs may have no host storage yet
    cuda::device_buffer buf(ctx, bytes);
    // Outputs are poisoned before every launch: uploading them would only cost time.
    if (t.spec.role != reference::tensor_role::out) buf.upload(t.bytes);
    m_bindings[t.spec.name] = bundle::tensor_binding{buf.address(), t.spec};
    const output_view view{t.spec.name, buf.address(), bytes, static_cast<int>(reference::size_of(t.spec.type))};
    if (t.spec.role == reference::tensor_role::out) m_outputs.push_back(view);
    if (t.spec.role != reference::tensor_role::in) m_written.push_back(view);
    m_buffers.emplace(t.spec.name, std::move(buf));
  }
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
  }
}

void device_tensors::poison_outputs(std::uint32_t pattern, const std::vector<reference::host_tensor>& host) const {
  for (const auto& t : host) {
    const auto& buf = m_buffers.at(t.spec.name);
    if (t.spec.role == reference::tensor_role::out) buf.fill_u32(pattern);
    else if (t.spec.role == reference::tensor_role::inout) buf.upload(t.bytes);
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
