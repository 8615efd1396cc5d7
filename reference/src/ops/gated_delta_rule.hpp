// SPDX-License-Identifier: Apache-2.0
// The gated delta rule (Qwen3-Next) shared by recurrent_gated_delta_rule and
// chunk_gated_delta_rule: the chunked form is an exact rewrite of the recurrence, so both check
// against the fp64 recurrence. Per (batch, head), state S[K, V] (fp32 upstream):
//   optional l2norm of q_t, k_t (eps 1e-6); q_t *= 1/sqrt(K); S *= exp(g_t);
//   delta = (v_t - S^T k_t) * beta_t; S += k_t delta^T; o_t = S^T q_t.
// Tensors: q, k [B, T, H, K], v [B, T, H, V], g, beta [B, T, H], optional initial_state
// [B, H, K, V] fp32; outputs o [B, T, H, V] and (out_final, default on) final_state fp32.
// Verification: sampled heads (whole sequence and final state per head).
#pragma once
#include <memory>

#include "portbench/reference/spec.hpp"

namespace portbench::reference::detail {

std::unique_ptr<operator_spec> make_gated_delta_rule(bool chunked);

}  // namespace portbench::reference::detail
