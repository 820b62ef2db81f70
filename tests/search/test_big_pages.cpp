// BigPageAllocator (search/big_pages.hpp): where its blocks come from, their alignment, and vectors on
// it that grow past the threshold, shrink, copy and move with their contents intact.
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cstdint>
#include <cstring>
#include <numeric>
#include <utility>
#include <vector>

#include "search/big_pages.hpp"

namespace dse {
namespace {

TEST(BigPages, BlocksFromTheThresholdUpAreMappedAtHugePageBoundaries) {
  EXPECT_FALSE(big_pages_mapped(0));
  EXPECT_FALSE(big_pages_mapped(kBigPageBlock - 1));
  for (const std::size_t bytes : {kBigPageBlock, kBigPageBlock + 1, 3 * kHugePage + 17, std::size_t{64} << 20}) {
    void* p = big_pages_allocate(bytes);
    ASSERT_NE(p, nullptr);
    if (big_pages_mapped(bytes)) {
      EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % kHugePage, 0U) << bytes;
      // The whole rounded-up length is one mapping of this process: mincore() fails with ENOMEM on
      // any page that is not mapped.
      const std::size_t len = (bytes + kHugePage - 1) / kHugePage * kHugePage;
      std::vector<unsigned char> resident(len / 4096);
      EXPECT_EQ(mincore(p, len, resident.data()), 0) << bytes;
    }
    // Every byte is writable and reads back.
    std::memset(p, 0x5a, bytes);
    const auto* b = static_cast<const unsigned char*>(p);
    EXPECT_EQ(b[0], 0x5a);
    EXPECT_EQ(b[bytes - 1], 0x5a);
    big_pages_deallocate(p, bytes);
  }
  // Small blocks come from operator new, and a null pointer is freed as nothing.
  void* small = big_pages_allocate(64);
  ASSERT_NE(small, nullptr);
  big_pages_deallocate(small, 64);
  big_pages_deallocate(nullptr, kBigPageBlock);
}

struct Row {
  std::uint64_t index = 0;
  double values[33] = {};  // 272 bytes a row, about a PointRecord's size
};

TEST(BigPages, AVectorGrowsPastTheThresholdAndKeepsItsRows) {
  BigVector<Row> rows;
  const std::size_t n = 3 * kBigPageBlock / sizeof(Row);  // grows from operator new into mappings
  for (std::size_t i = 0; i < n; ++i) {
    Row r;
    r.index = i;
    r.values[32] = static_cast<double>(i) * 0.5;
    rows.push_back(r);
  }
  ASSERT_EQ(rows.size(), n);
  for (std::size_t i = 0; i < n; i += 997) {
    EXPECT_EQ(rows[i].index, i);
    EXPECT_EQ(rows[i].values[32], static_cast<double>(i) * 0.5);
  }
  // Copies and moves keep the rows; shrinking and growing again too.
  BigVector<Row> copy = rows;
  BigVector<Row> moved = std::move(rows);
  ASSERT_EQ(copy.size(), n);
  ASSERT_EQ(moved.size(), n);
  EXPECT_EQ(copy.back().index, n - 1);
  EXPECT_EQ(moved.back().index, n - 1);
  moved.resize(10);
  moved.shrink_to_fit();
  moved.resize(n);
  EXPECT_EQ(moved[9].index, 9U);
  EXPECT_EQ(moved[n - 1].index, 0U);  // value-initialised
  BigVector<double> keys(kBigPageBlock / sizeof(double) * 2);
  std::iota(keys.begin(), keys.end(), 0.0);
  EXPECT_EQ(keys.back(), static_cast<double>(keys.size() - 1));
  EXPECT_EQ(std::accumulate(keys.begin(), keys.begin() + 4, 0.0), 6.0);
}

}  // namespace
}  // namespace dse
