// SPDX-License-Identifier: Apache-2.0
// The host's copy of one configuration's inputs. Inputs the operator declares as uniform fills
// can be generated on the device (verify/input_generator.hpp); the host then makes them only
// when an output has to be verified against the fp64 reference, and checks them against the
// device's digest of what it generated, so a generator that drifted from the host's shows as
// itself and never as a port's numerics failure.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "portbench/reference/spec.hpp"

namespace portbench::measure {

class host_inputs {
 public:
  /// With `declared_on_device`, the declared fills are left to the device (no host bytes until
  /// complete()); otherwise every input is generated here now.
  host_inputs(const reference::operator_spec& op, const reference::config& c, std::uint64_t seed,
              bool declared_on_device);

  /// The inputs (complete once complete() ran); each side's outputs are downloaded into it.
  [[nodiscard]] std::vector<reference::host_tensor>& tensors() noexcept { return m_tensors; }
  /// The inputs as generated: the same tensors unless the operator overwrites an input.
  [[nodiscard]] const std::vector<reference::host_tensor>& pristine() const noexcept {
    return m_in_place ? m_pristine : m_tensors;
  }
  /// The fills the device must make (empty when everything was generated here).
  [[nodiscard]] const std::vector<reference::uniform_fill>& device_fills() const noexcept { return m_device_fills; }

  /// Generates the device's fills on the host (once) and compares them with `device_digest`,
  /// the device's output_digest of the generated tensors (in device_tensors::generated() order).
  /// Throws portbench::error naming the first tensor whose bytes differ.
  void complete(const std::string& device_digest);
  /// Seconds spent generating on the host so far.
  [[nodiscard]] double seconds() const noexcept { return m_seconds; }

 private:
  std::uint64_t m_seed;
  bool m_in_place = false;
  bool m_complete = true;
  std::vector<reference::uniform_fill> m_device_fills;
  std::vector<reference::host_tensor> m_tensors;
  std::vector<reference::host_tensor> m_pristine;   ///< only for operators that write an input
  double m_seconds = 0;
};

}  // namespace portbench::measure
