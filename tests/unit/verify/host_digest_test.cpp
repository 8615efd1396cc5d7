// SPDX-License-Identifier: Apache-2.0
// host_digest, the CPU twin of the device's output digest (the GPU test compares the two on the
// same bytes): any changed byte, the tail of a length not a multiple of 4, and the tensor's name
// all change it; the thread count does not.
#include <gtest/gtest.h>

#include <cstddef>
#include <vector>

#include "portbench/verify/output_digest.hpp"

namespace pv = portbench::verify;

namespace {

std::vector<std::byte> pattern(std::size_t n) {
  std::vector<std::byte> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::byte>((i * 131 + 7) & 0xFF);
  return v;
}

}  // namespace

TEST(HostDigest, EveryByteTheTailAndTheNameCount) {
  // Large enough for several parallel blocks (2^20 words each), plus a 3-byte tail.
  const std::size_t n = (std::size_t{5} << 20) * 4 + 3;
  auto bytes = pattern(n);
  const std::string d = pv::host_digest("x", bytes);
  EXPECT_EQ(d.rfind("x:", 0), 0u);
  EXPECT_EQ(d.size(), 2u + 32u);
  EXPECT_EQ(pv::host_digest("x", bytes), d);
  EXPECT_NE(pv::host_digest("y", bytes), d);
  for (std::size_t at : {std::size_t{0}, std::size_t{4} << 20, n - 5, n - 1}) {
    auto changed = bytes;
    changed[at] ^= std::byte{0x10};
    EXPECT_NE(pv::host_digest("x", changed), d) << "byte " << at;
  }
  auto shorter = bytes;
  shorter.pop_back();
  EXPECT_NE(pv::host_digest("x", shorter), d);
  // Two words swapped: the position of a word counts, not only its value.
  auto swapped = bytes;
  std::swap_ranges(swapped.begin(), swapped.begin() + 4, swapped.begin() + 8);
  EXPECT_NE(pv::host_digest("x", swapped), d);
}
