// IdTable (search/id_table.hpp) against std::unordered_map on the same operations: random keys
// (including 0 and 2^64 - 1), repeats, growth from empty and after reserve, clear and refill.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <map>
#include <random>
#include <stdexcept>
#include <unordered_map>
#include <vector>

#include "search/id_table.hpp"

namespace dse::search {
namespace {

TEST(IdTable, SameKeysAndValuesAsAnUnorderedMap) {
  std::mt19937_64 rng(59);
  IdTable<std::vector<double>> table;
  for (int round = 0; round < 6; ++round) {
    std::unordered_map<std::uint64_t, std::vector<double>> want;
    if (round % 2 == 1) table.reserve(3000);
    const std::uint64_t span = round < 3 ? 4000 : std::numeric_limits<std::uint64_t>::max();
    for (int i = 0; i < 5000; ++i) {
      std::uint64_t key = rng() % span;
      if (i == 7) key = 0;
      if (i == 11) key = std::numeric_limits<std::uint64_t>::max();
      const std::vector<double> value{static_cast<double>(i), static_cast<double>(key % 97)};
      const bool fresh = !want.contains(key);
      const auto [held, inserted] = table.try_emplace(key, value);
      if (fresh) want.emplace(key, value);
      ASSERT_EQ(inserted, fresh) << "key " << key;
      ASSERT_EQ(*held, want.at(key)) << "key " << key;  // the first value stays
    }
    ASSERT_EQ(table.size(), want.size());
    for (const auto& [key, value] : want) {
      ASSERT_TRUE(table.contains(key));
      ASSERT_EQ(table.at(key), value);
    }
    std::map<std::uint64_t, std::vector<double>> seen;
    table.for_each([&](std::uint64_t key, const std::vector<double>& value) { seen.emplace(key, value); });
    ASSERT_EQ(seen.size(), want.size());
    for (const auto& [key, value] : seen) ASSERT_EQ(want.at(key), value);
    for (int i = 0; i < 1000; ++i) {
      const std::uint64_t key = rng() % span;
      EXPECT_EQ(table.contains(key), want.contains(key));
      if (!want.contains(key)) {
        EXPECT_THROW((void)table.at(key), std::out_of_range);
      }
    }
    table.clear();
    EXPECT_EQ(table.size(), 0u);
    EXPECT_TRUE(table.empty());
    for (const auto& [key, value] : want) ASSERT_FALSE(table.contains(key));
  }
}

TEST(IdTable, SetInsertSaysWhetherTheKeyWasNew) {
  IdTable<std::uint8_t> set;
  EXPECT_FALSE(set.contains(5));
  EXPECT_TRUE(set.insert(5));
  EXPECT_FALSE(set.insert(5));
  EXPECT_TRUE(set.insert(6));
  EXPECT_EQ(set.size(), 2u);
  set.clear();
  EXPECT_TRUE(set.insert(5));
  EXPECT_EQ(set.size(), 1u);
}

}  // namespace
}  // namespace dse::search
