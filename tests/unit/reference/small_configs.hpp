// SPDX-License-Identifier: Apache-2.0
// A small configuration of every operator, with the upstream parameter names, for tests that
// run the whole registry in well under a second each.
#pragma once
#include <vector>

#include "test_util.hpp"

namespace pb_test {

inline std::vector<pr::config> small_configs() {
  const pr::param_value f16 = std::string("float16"), bf16 = std::string("bfloat16"), f32 = std::string("float32");
  const pr::param_value yes = true, no = false;
  return {
      cfg("vector_add", {{"n", I(1000)}, {"dtype", f32}}),
      cfg("matmul", {{"m", I(48)}, {"n", I(40)}, {"k", I(72)}, {"dtype", f16}, {"transpose_a", yes}, {"transpose_b", no},
                     {"static_persistent", yes}, {"use_tma", yes}, {"offset_a", I(0)}, {"offset_b", I(0)}}),
      cfg("bmm", {{"batch", I(2)}, {"m", I(40)}, {"n", I(48)}, {"k", I(56)}, {"transpose_a", yes}, {"transpose_b", yes},
                  {"dtype", f16}}),
      cfg("group_gemm", {{"num_groups", I(3)}, {"m", I(32)}, {"n", I(24)}, {"k", I(40)}, {"transpose_b", yes}, {"dtype", f16}}),
      cfg("splitk_reduce", {{"batch", I(2)}, {"num_heads", I(3)}, {"head_dim", I(64)}, {"num_kv_splits", I(4)},
                            {"S_kv", I(100)}, {"dtype", f16}, {"lse_dtype", f32}}),
      cfg("fmha", {{"batch", I(2)}, {"heads", I(2)}, {"seq_len", I(37)}, {"head_dim", I(32)}, {"dtype", f16},
                   {"is_causal", yes}}),
      cfg("flash_decode", {{"batch", I(2)}, {"num_q_heads", I(8)}, {"num_kv_heads", I(2)}, {"seq_len", I(77)},
                           {"head_dim", I(32)}, {"group_size", I(4)}, {"dtype", f16}}),
      cfg("attention_sink", {{"batch", I(1)}, {"num_queries", I(9)}, {"num_keys", I(40)}, {"num_kv_heads", I(2)},
                             {"num_kv_groups", I(3)}, {"head_dim", I(16)}, {"sliding_window", I(8)}, {"dtype", bf16},
                             {"start_q", I(20)}}),
      cfg("attention_sink_decode", {{"batch", I(2)}, {"num_keys", I(50)}, {"num_kv_heads", I(2)}, {"num_kv_groups", I(2)},
                                    {"head_dim", I(16)}, {"sliding_window", std::monostate{}}, {"dtype", bf16}}),
      cfg("gemma_attention", {{"batch", I(1)}, {"heads", I(4)}, {"kv_heads", I(2)}, {"seq_len", I(33)}, {"head_dim", I(16)},
                              {"window", I(8)}, {"soft_cap", 50.0}, {"is_causal", yes}, {"dtype", bf16}}),
      cfg("gemma_attention_decode", {{"batch", I(2)}, {"heads", I(4)}, {"kv_heads", I(2)}, {"seq_len_kv", I(60)},
                                     {"head_dim", I(16)}, {"window", I(20)}, {"soft_cap", 50.0}, {"dtype", bf16}}),
      cfg("mla", {{"batch", I(1)}, {"heads", I(2)}, {"seq_len", I(20)}, {"d_model", I(16)}, {"d_pe", I(8)},
                  {"dtype", bf16}, {"is_causal", yes}, {"kpe_heads", I(1)}}),
      cfg("mla_decoding", {{"num_heads", I(4)}, {"transpose", yes}, {"dtype", f16}, {"BLOCK_D", I(32)},
                           {"BLOCK_KPE", I(8)}, {"batch", I(2)}, {"S_kv", I(40)}}),
      cfg("mla_decoding_split_kv", {{"batch", I(1)}, {"num_heads", I(4)}, {"head_dim", I(32)}, {"kpe_dim", I(8)},
                                    {"seq_len", I(45)}, {"dtype", f16}}),
      cfg("moe", {{"num_tokens", I(12)}, {"hidden_size", I(32)}, {"moe_intermediate_size", I(16)}, {"n_experts", I(4)},
                  {"top_k", I(2)}, {"dtype", f16}, {"call_type", std::string("e2e_fused")}}),
      cfg("moe_align_block", {{"num_tokens", I(40)}, {"top_k", I(3)}, {"n_experts", I(8)}, {"block_size", I(16)}}),
      cfg("rms_norm", {{"m", I(17)}, {"n", I(96)}, {"dtype", f16}, {"mode", std::string("static_persistent")}}),
      cfg("layer_norm_legacy", {{"variant", std::string("layer_norm_legacy")}, {"m", I(19)}, {"n", I(64)}, {"dtype", f16},
                                {"eps", 1e-5}, {"weight_shift", 0.0}}),
      cfg("layer_norm_legacy", {{"variant", std::string("persistent_layer_norm")}, {"m", I(21)}, {"n", I(48)},
                                {"dtype", bf16}, {"eps", 1e-6}}),
      cfg("softmax", {{"m", I(13)}, {"n", I(300)}, {"dtype", bf16}, {"variant", std::string("baseline")}}),
      cfg("rope", {{"bsz", I(2)}, {"seq_len", I(5)}, {"num_q_heads", I(4)}, {"num_kv_heads", I(2)}, {"head_dim", I(16)},
                   {"partial_rotary_factor", 0.5}, {"dtype", f16}}),
      cfg("silu_and_mul", {{"batch", I(2)}, {"seq_len", I(3)}, {"hidden_size", I(40)}, {"dtype", f16},
                           {"input_last_dim", I(80)}}),
      cfg("swiglu", {{"batch", I(2)}, {"seq_len", I(3)}, {"hidden_size", I(50)}, {"intermediate_size", I(100)},
                     {"dtype", f32}}),
      cfg("dropout", {{"m", I(20000)}, {"p", 0.5}, {"inplace", no}, {"dtype", f32}, {"training", yes}}),
      cfg("dropout", {{"m", I(20000)}, {"p", 0.3}, {"inplace", yes}, {"dtype", f16}, {"training", yes}}),
      cfg("recurrent_gated_delta_rule", {{"B", I(1)}, {"T", I(20)}, {"H", I(2)}, {"K", I(8)}, {"V", I(12)}, {"dtype", bf16}}),
      cfg("chunk_gated_delta_rule", {{"B", I(1)}, {"T", I(20)}, {"H", I(2)}, {"K", I(8)}, {"V", I(12)}, {"chunk_size", I(8)},
                                     {"dtype", bf16}, {"qkv_scale", 0.1}}),
  };
}

}  // namespace pb_test
