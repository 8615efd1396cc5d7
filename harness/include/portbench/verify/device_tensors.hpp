// SPDX-License-Identifier: Apache-2.0
// An operator's tensors on the device: allocated from the operator spec (never from a bundle's
// word), inputs uploaded from seeded host data or generated on the device from the operator's
// declared fills, outputs poisoned before each launch so that an element the kernel did not
// write is caught.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "portbench/bundle/launcher.hpp"
#include "portbench/cuda/memory.hpp"
#include "portbench/cuda/stream.hpp"
#include "portbench/reference/spec.hpp"
#include "portbench/verify/input_generator.hpp"

namespace portbench::verify {

/// Inputs generated on the device instead of uploaded: the operator's declared uniform fills
/// and the seed they draw from. The host tensors of these carry a spec and no bytes.
struct generated_inputs {
  const input_generator& generator;
  std::vector<reference::uniform_fill> fills;
  std::uint64_t seed = 0;
};

class device_tensors {
 public:
  /// Allocates every tensor of `host` and every scratch buffer of `plan`, uploads the inputs
  /// (role in and inout; outputs are poisoned before each launch instead), and builds the
  /// address table of every ptr_table parameter and the descriptor table of every array_table
  /// parameter of its launches.
  device_tensors(cuda::context_ptr ctx, const std::vector<reference::host_tensor>& host,
                 const bundle::config_plan& plan);
  /// Same, for several plans sharing the tensors (reference and port): every scratch buffer
  /// any of them declares, at the largest size declared under its name.
  device_tensors(cuda::context_ptr ctx, const std::vector<reference::host_tensor>& host,
                 const std::vector<const bundle::config_plan*>& plans);
  /// Same, with the inputs `generated` names made on the device (inout ones into a pristine
  /// copy that restores them before each numerics launch); the rest are uploaded from `host`.
  device_tensors(cuda::context_ptr ctx, const std::vector<reference::host_tensor>& host,
                 const std::vector<const bundle::config_plan*>& plans, const generated_inputs& generated);

  /// Fills every output (role out) with a 32-bit pattern (slack outputs with one fixed fill, so
  /// that two passes agree where a kernel may leave them alone); inout tensors are restored (from
  /// the device's pristine copy if generated there, else uploaded from `host`).
  void poison_outputs(std::uint32_t pattern, const std::vector<reference::host_tensor>& host) const;
  /// Stream-ordered poison of every output, for timed samples.
  void poison_outputs_async(const cuda::stream& s, std::uint32_t pattern) const;

  struct output_view {
    std::string name;
    CUdeviceptr address;
    std::size_t bytes;
    int element_size;
  };
  /// The outputs (role out) a launch must write whole, as raw device ranges, for poison checks
  /// (slack outputs are not among them).
  [[nodiscard]] std::vector<output_view> outputs() const;
  /// Every tensor a launch writes (role out and inout), for output digests.
  [[nodiscard]] std::vector<output_view> written() const;
  /// The inputs generated on the device, as generated (inout ones: their pristine copies).
  [[nodiscard]] std::vector<output_view> generated() const;

  /// Copies the outputs (role out and inout) back into `host`, leaving its inputs untouched;
  /// outputs without host storage (make_inputs(..., false)) get it here.
  void download_outputs(std::vector<reference::host_tensor>& host) const;
  /// Copies every tensor back into `host` (inputs too, so a kernel writing its inputs shows).
  void download(std::vector<reference::host_tensor>& host) const;

  [[nodiscard]] const bundle::tensor_bindings& tensors() const noexcept { return m_bindings; }
  [[nodiscard]] const bundle::scratch_bindings& scratch() const noexcept { return m_scratch_bindings; }

 private:
  device_tensors(cuda::context_ptr ctx, const std::vector<reference::host_tensor>& host,
                 const std::vector<const bundle::config_plan*>& plans, const generated_inputs* generated);

  cuda::context_ptr m_ctx;
  std::vector<output_view> m_outputs;
  std::vector<output_view> m_written;
  std::map<std::string, cuda::device_buffer> m_buffers;
  std::map<std::string, cuda::device_buffer> m_scratch;
  std::map<std::string, cuda::device_buffer> m_pristine;   ///< generated inout tensors, as generated
  std::vector<output_view> m_generated;
  std::vector<cuda::device_buffer> m_tables;   ///< ptr_table address arrays, array_table descriptor arrays
  bundle::tensor_bindings m_bindings;
  bundle::scratch_bindings m_scratch_bindings;
};

}  // namespace portbench::verify
