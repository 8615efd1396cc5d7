// SPDX-License-Identifier: Apache-2.0
// Factories of the operators the registry holds (one source file each).
#pragma once
#include <memory>

#include "portbench/reference/spec.hpp"

namespace portbench::reference::detail {

std::unique_ptr<operator_spec> make_vector_add();
std::unique_ptr<operator_spec> make_rms_norm();
std::unique_ptr<operator_spec> make_layer_norm(bool persistent_default);
std::unique_ptr<operator_spec> make_softmax();
std::unique_ptr<operator_spec> make_rope();
std::unique_ptr<operator_spec> make_silu_and_mul();
std::unique_ptr<operator_spec> make_swiglu();
std::unique_ptr<operator_spec> make_dropout();
std::unique_ptr<operator_spec> make_matmul();
std::unique_ptr<operator_spec> make_bmm();
std::unique_ptr<operator_spec> make_group_gemm();
std::unique_ptr<operator_spec> make_splitk_reduce();
std::unique_ptr<operator_spec> make_fmha();
std::unique_ptr<operator_spec> make_flash_decode();
std::unique_ptr<operator_spec> make_attention_sink();
std::unique_ptr<operator_spec> make_attention_sink_decode();
std::unique_ptr<operator_spec> make_gemma_attention();
std::unique_ptr<operator_spec> make_gemma_attention_decode();
std::unique_ptr<operator_spec> make_mla();
std::unique_ptr<operator_spec> make_mla_decoding();
std::unique_ptr<operator_spec> make_mla_decoding_split_kv();
std::unique_ptr<operator_spec> make_moe();
std::unique_ptr<operator_spec> make_moe_align_block();
std::unique_ptr<operator_spec> make_recurrent_gated_delta_rule();
std::unique_ptr<operator_spec> make_chunk_gated_delta_rule();

}  // namespace portbench::reference::detail
