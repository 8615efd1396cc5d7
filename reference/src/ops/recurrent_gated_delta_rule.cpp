// SPDX-License-Identifier: Apache-2.0
// recurrent_gated_delta_rule: one step per token (the fwd, persistent and decode_vstream
// kernels upstream). Parameters B, T, H, K, V, dtype, use_l2, use_init, out_final, qkv_scale;
// the math and its check live in gated_delta_rule.cpp.
#include "gated_delta_rule.hpp"
#include "ops.hpp"

namespace portbench::reference::detail {

std::unique_ptr<operator_spec> make_recurrent_gated_delta_rule() { return make_gated_delta_rule(false); }

}  // namespace portbench::reference::detail
