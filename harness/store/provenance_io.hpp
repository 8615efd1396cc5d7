// SPDX-License-Identifier: Apache-2.0
// Private: provenance <-> root attributes.
#pragma once
#include <hdf5.h>

#include "portbench/store/results.hpp"

namespace portbench::store::detail {

/// Writes every provenance field as a root attribute; `extra` keys must not shadow them.
void write_provenance(hid_t root, const provenance& p);
/// Reads the root attributes back; unknown string attributes land in `extra`.
[[nodiscard]] provenance read_provenance(hid_t root);
/// True for the attribute names that write_provenance owns.
[[nodiscard]] bool is_provenance_attribute(const std::string& name);

}  // namespace portbench::store::detail
