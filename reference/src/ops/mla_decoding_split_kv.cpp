// SPDX-License-Identifier: Apache-2.0
// mla_decoding_split_kv: mla_decoding's math with KV split into kv_len_per_split chunks (partials
// and base-2 LSEs reduced by splitk_reduce upstream); it returns o only. Parameters batch,
// num_heads, head_dim (512), kpe_dim (64), seq_len, dtype; kv_len_per_split is the kernel's
// choice and does not change o. Every head is checked (batch 1 in the perf configs). The math
// lives in mla_decoding.cpp.
#include "ops.hpp"

namespace portbench::reference::detail {

std::unique_ptr<operator_spec> make_mla_decoding_split_kv_impl();
std::unique_ptr<operator_spec> make_mla_decoding_split_kv() { return make_mla_decoding_split_kv_impl(); }

}  // namespace portbench::reference::detail
