// SPDX-License-Identifier: Apache-2.0
// chunk_gated_delta_rule: the chunked rewrite (intra-chunk prepare with a unit-lower-triangular
// solve, then the inter-chunk state recurrence; sequences padded to chunk_size, default 64).
// It is exact algebra, so the reference is the fp64 recurrence (gated_delta_rule.cpp); a unit
// test checks an fp64 chunked implementation against it. chunk_size is validated and carried
// in the config id but does not change the expected values.
#include "gated_delta_rule.hpp"
#include "ops.hpp"

namespace portbench::reference::detail {

std::unique_ptr<operator_spec> make_chunk_gated_delta_rule() { return make_gated_delta_rule(true); }

}  // namespace portbench::reference::detail
