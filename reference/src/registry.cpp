// SPDX-License-Identifier: Apache-2.0
// The operator registry: an explicit list (static self-registration would be dropped by the
// linker from a static library), built once, plus upstream aliases.
#include <algorithm>
#include <map>
#include <mutex>

#include "ops/ops.hpp"
#include "portbench/reference/spec.hpp"

namespace portbench::reference {
namespace {

struct registry {
  std::map<std::string, std::unique_ptr<operator_spec>> ops;        // listed by operator_names()
  std::map<std::string, std::unique_ptr<operator_spec>> variants;   // other names, not listed
  std::map<std::string, std::string> aliases;                       // upstream spellings

  registry() {
    using namespace detail;
    for (auto* f : {make_vector_add, make_matmul, make_bmm, make_group_gemm, make_splitk_reduce, make_fmha,
                    make_flash_decode, make_attention_sink, make_attention_sink_decode, make_gemma_attention,
                    make_gemma_attention_decode, make_mla, make_mla_decoding, make_mla_decoding_split_kv, make_moe,
                    make_moe_align_block, make_rms_norm, make_softmax, make_rope, make_silu_and_mul, make_swiglu,
                    make_dropout, make_recurrent_gated_delta_rule, make_chunk_gated_delta_rule}) {
      add(f());
    }
    add(make_layer_norm(false));
    // The persistent variant is the same operator with another default for `variant`.
    auto persistent = make_layer_norm(true);
    variants.emplace(persistent->name(), std::move(persistent));
    aliases = {{"attention", "fmha"},           {"attention (fmha)", "fmha"},
               {"fused_moe", "moe"},            {"moe (fused_moe)", "moe"},
               {"fmha_decode", "flash_decode"}, {"moe_align_block_size", "moe_align_block"},
               {"get_swiglu", "swiglu"},        {"apply_rope_base", "rope"},
               {"layer_norm", "layer_norm_legacy"}};
  }

  void add(std::unique_ptr<operator_spec> op) {
    std::string n = op->name();
    ops.emplace(std::move(n), std::move(op));
  }
};

const registry& instance() {
  static const registry r;
  return r;
}

}  // namespace

const operator_spec& find_operator(const std::string& name) {
  const auto& r = instance();
  if (const auto it = r.ops.find(name); it != r.ops.end()) return *it->second;
  if (const auto it = r.variants.find(name); it != r.variants.end()) return *it->second;
  if (const auto a = r.aliases.find(name); a != r.aliases.end()) return *r.ops.at(a->second);
  std::string known;
  for (const auto& [n, op] : r.ops) known += (known.empty() ? "" : ", ") + n;
  throw spec_error("unknown operator '" + name + "' (known: " + known + ")");
}

std::vector<std::string> operator_names() {
  std::vector<std::string> out;
  for (const auto& [n, op] : instance().ops) out.push_back(n);
  return out;
}

}  // namespace portbench::reference
