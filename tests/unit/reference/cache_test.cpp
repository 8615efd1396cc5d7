// SPDX-License-Identifier: Apache-2.0
// The cache: memory and folder round trips, fingerprint mismatch, and verify() using it.
#include <gtest/gtest.h>

#include <filesystem>

#include "portbench/reference/cache.hpp"
#include "portbench/reference/tolerance.hpp"
#include "test_util.hpp"

namespace pr = portbench::reference;
using pb_test::cfg;
using pb_test::I;
using pb_test::S;

TEST(cache, memory_and_disk_round_trip) {
  const auto dir = std::filesystem::temp_directory_path() / ("pbref_cache_test_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  auto e = std::make_shared<pr::cache_entry>();
  e->fingerprint = 42;
  e->blocks.push_back({"a", {1, 2, 3}, {0.5, -1.25}});
  {
    pr::reference_cache c(dir);
    c.store("k", e);
    EXPECT_NE(c.find("k", 42), nullptr);
    EXPECT_EQ(c.find("k", 43), nullptr);  // other inputs under the same key
    EXPECT_EQ(c.find("other", 42), nullptr);
  }
  pr::reference_cache fresh(dir);  // nothing in memory: read from the folder
  const auto got = fresh.find("k", 42);
  ASSERT_NE(got, nullptr);
  ASSERT_NE(got->find("a"), nullptr);
  EXPECT_EQ(got->find("a")->ints, (std::vector<std::int64_t>{1, 2, 3}));
  EXPECT_EQ(got->find("a")->reals, (std::vector<double>{0.5, -1.25}));
  EXPECT_EQ(fresh.hits(), 1);
  std::filesystem::remove_all(dir);
}

TEST(cache, key_has_operator_config_and_seed) {
  const auto c = cfg("fmha", {{"seq_len", I(9)}});
  EXPECT_NE(pr::cache_key("fmha", c, 1), pr::cache_key("fmha", c, 2));
  EXPECT_NE(pr::cache_key("fmha", c, 1).find("seq_len=9"), std::string::npos);
}
