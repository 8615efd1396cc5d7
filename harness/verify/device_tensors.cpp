// SPDX-License-Identifier: Apache-2.0
#include "portbench/verify/device_tensors.hpp"

namespace portbench::verify {

device_tensors::device_tensors(cuda::context_ptr ctx, const std::vector<reference::host_tensor>& host,
                               const bundle::config_plan& plan) {
  for (const auto& t : host) {
    cuda::device_buffer buf(ctx, t.bytes.size());
    buf.upload(t.bytes);
    m_bindings[t.spec.name] = bundle::tensor_binding{buf.address(), t.spec};
    m_buffers.emplace(t.spec.name, std::move(buf));
  }
  for (const auto& s : plan.scratch) {
    cuda::device_buffer buf(ctx, s.bytes);
    // Scratch starts from a known non-zero pattern, so a kernel that relies on zeroed scratch
    // fails the same way every time instead of by luck.
    buf.fill_u32(0xA5A5A5A5u);
    m_scratch_bindings[s.name] = buf.address();
    m_scratch.emplace(s.name, std::move(buf));
  }
}

void device_tensors::poison_outputs(std::uint32_t pattern, const std::vector<reference::host_tensor>& host) const {
  for (const auto& t : host) {
    const auto& buf = m_buffers.at(t.spec.name);
    if (t.spec.role == reference::tensor_role::out) buf.fill_u32(pattern);
    else if (t.spec.role == reference::tensor_role::inout) buf.upload(t.bytes);
  }
}

void device_tensors::download(std::vector<reference::host_tensor>& host) const {
  for (auto& t : host) m_buffers.at(t.spec.name).download(t.bytes);
}

}  // namespace portbench::verify
