#include <gtest/gtest.h>

#include "search/design_space.hpp"

namespace dse::search {
namespace {

TEST(DesignSpace, DecodeIsMixedRadixKnobZeroFastest) {
  const DesignSpace s({{"hw", 3}, {"wl", 2}, {"batch", 4}});
  EXPECT_EQ(s.size(), 24u);
  // 17 = 2 + 3 * (1 + 2 * 2): hw 2, wl 1, batch 2.
  EXPECT_EQ(s.decode(17), (std::vector<std::uint64_t>{2, 1, 2}));
  for (std::uint64_t i = 0; i < s.size(); ++i) EXPECT_EQ(s.encode(s.decode(i)), i);
  EXPECT_THROW((void)s.decode(24), std::out_of_range);
}

TEST(DesignSpace, RefusesSpacesBeyond2To63) {
  // 2^32 * 2^31 = 2^63 > 2^63 - 1.
  EXPECT_THROW(DesignSpace({{"a", 1ull << 32}, {"b", 1ull << 31}}), std::overflow_error);
  EXPECT_NO_THROW(DesignSpace({{"a", 1ull << 32}, {"b", (1ull << 31) - 1}}));
  EXPECT_THROW(DesignSpace({{"a", 0}}), std::invalid_argument);
}

}  // namespace
}  // namespace dse::search
