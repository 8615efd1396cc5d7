// SPDX-License-Identifier: Apache-2.0
// attention_sink_decode: the split-KV decode form of attention_sink for one query token (the
// sink folded into split 0's LSE, then splitk_reduce upstream). Same tensors with
// num_queries = 1; start_q defaults to num_keys - 1, the newest token, so the query sees every
// key (or the last `sliding_window`). The math lives in attention_sink.cpp.
#include "ops.hpp"

namespace portbench::reference::detail {

std::unique_ptr<operator_spec> make_attention_sink_decode_impl();
std::unique_ptr<operator_spec> make_attention_sink_decode() { return make_attention_sink_decode_impl(); }

}  // namespace portbench::reference::detail
