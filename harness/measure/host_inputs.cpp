// SPDX-License-Identifier: Apache-2.0
#include "portbench/measure/host_inputs.hpp"

#include <algorithm>
#include <chrono>

#include "portbench/error.hpp"
#include "portbench/reference/random.hpp"
#include "portbench/verify/output_digest.hpp"

namespace portbench::measure {
namespace {

using steady = std::chrono::steady_clock;

double seconds_since(steady::time_point t0) { return std::chrono::duration<double>(steady::now() - t0).count(); }

// "name:hex;name:hex" split at ';'.
std::vector<std::string> parts_of(const std::string& joined) {
  std::vector<std::string> out;
  std::size_t b = 0;
  while (b <= joined.size() && !joined.empty()) {
    const std::size_t e = joined.find(';', b);
    out.push_back(joined.substr(b, e == std::string::npos ? std::string::npos : e - b));
    if (e == std::string::npos) break;
    b = e + 1;
  }
  return out;
}

}  // namespace

host_inputs::host_inputs(const reference::operator_spec& op, const reference::config& c, std::uint64_t seed,
                         bool declared_on_device)
    : m_seed(seed) {
  const auto t0 = steady::now();
  if (declared_on_device) {
    m_device_fills = op.uniform_fills(c);
    m_tensors = reference::make_undeclared_inputs(op, c, seed);
    m_complete = m_device_fills.empty();
  } else {
    // Output storage comes with the first download: a reused verification never needs it.
    m_tensors = reference::make_inputs(op, c, seed, false);
  }
  m_in_place = std::any_of(m_tensors.begin(), m_tensors.end(),
                           [](const reference::host_tensor& t) { return t.spec.role == reference::tensor_role::inout; });
  if (m_in_place) m_pristine = m_tensors;
  m_seconds = seconds_since(t0);
}

void host_inputs::complete(const std::string& device_digest) {
  if (m_complete) return;
  const auto t0 = steady::now();
  const auto device = parts_of(device_digest);
  std::size_t k = 0;
  for (auto& t : m_in_place ? m_pristine : m_tensors) {
    const auto fill = std::find_if(m_device_fills.begin(), m_device_fills.end(),
                                   [&](const reference::uniform_fill& f) { return f.tensor == t.spec.name; });
    if (fill == m_device_fills.end()) continue;
    t.bytes.resize(t.spec.storage_bytes());
    reference::fill_uniform(t, m_seed, fill->lo, fill->hi);
    const std::string host = verify::host_digest(t.spec.name, t.bytes);
    if (k >= device.size() || device[k] != host) {
      throw portbench::error("input '" + t.spec.name + "' (" + std::string(reference::to_string(t.spec.type)) +
                                 ", seed " + std::to_string(m_seed) + ") generated on the device differs from the host's (" +
                                 (k < device.size() ? device[k] : std::string("no device digest")) + " vs " + host +
                                 "): the input generator is wrong; run with --host-inputs",
                             {.call = "input generator"});
    }
    ++k;
  }
  // The working copy gets the inputs too; inout tensors there are overwritten by each download.
  if (m_in_place) {
    for (std::size_t i = 0; i < m_tensors.size(); ++i) {
      if (m_tensors[i].spec.role == reference::tensor_role::in && m_tensors[i].bytes.empty()) {
        m_tensors[i].bytes = m_pristine[i].bytes;
      }
    }
  }
  m_complete = true;
  m_seconds += seconds_since(t0);
}

}  // namespace portbench::measure
