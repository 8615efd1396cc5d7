// SPDX-License-Identifier: Apache-2.0
// Sampling of attention query rows.
#include <algorithm>

#include "attention_common.hpp"
#include "portbench/reference/random.hpp"

namespace portbench::reference::detail {

std::optional<std::vector<std::int64_t>> sample_query_rows(std::int64_t heads, std::int64_t rows, std::int64_t budget,
                                                           sample_rng& rng) {
  const std::int64_t n = heads * rows;
  if (n <= budget) return std::nullopt;
  std::vector<std::int64_t> out;
  // The first and last row of up to 8 heads, including the first and the last head.
  for (std::int64_t k = 0; k < std::min<std::int64_t>(8, heads); ++k) {
    const std::int64_t h = k == 0 ? 0 : k == 1 ? heads - 1 : rng.below(heads);
    out.push_back(h * rows);
    out.push_back(h * rows + rows - 1);
  }
  while (static_cast<std::int64_t>(out.size()) < budget) out.push_back(rng.below(n));
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace portbench::reference::detail
