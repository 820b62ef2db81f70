// Exhaustive search: hands out the indices of [begin, end) in order. The driver
// may instead take whole ranges with ask_range() (no per-index vector) and give
// each rank a chunk; every index is handed out exactly once.
#pragma once

#include <cstdint>

#include "search/sampler.hpp"

namespace dse::search {

struct IndexRange {
  std::uint64_t begin = 0;
  std::uint64_t end = 0;  // one past the last
  [[nodiscard]] std::uint64_t size() const noexcept { return end - begin; }
  [[nodiscard]] bool empty() const noexcept { return begin == end; }
  friend bool operator==(const IndexRange&, const IndexRange&) = default;
};

class ExhaustiveSampler final : public Sampler {
 public:
  // Throws std::invalid_argument when end < begin.
  ExhaustiveSampler(std::uint64_t begin, std::uint64_t end);
  explicit ExhaustiveSampler(std::uint64_t size) : ExhaustiveSampler(0, size) {}

  std::vector<std::uint64_t> ask(std::size_t n) override;
  // The next up to n indices as a range (empty when done).
  IndexRange ask_range(std::uint64_t n);
  // Results carry nothing an exhaustive search needs; they are only counted.
  void tell(std::span<const Evaluation> results) override;
  [[nodiscard]] bool done() const override { return next_ == range_.end; }

  [[nodiscard]] IndexRange range() const noexcept { return range_; }
  // First index not handed out yet; seek() restarts from a checkpointed cursor.
  [[nodiscard]] std::uint64_t cursor() const noexcept { return next_; }
  void seek(std::uint64_t cursor);
  [[nodiscard]] std::uint64_t told() const noexcept { return told_; }

 private:
  IndexRange range_;
  std::uint64_t next_ = 0;
  std::uint64_t told_ = 0;
};

// Part `part` of `parts` near-equal contiguous slices of `range` (static partitioning,
// e.g. rank r of R): the first (size % parts) slices get one extra index.
IndexRange split_range(IndexRange range, std::uint64_t parts, std::uint64_t part);

}  // namespace dse::search
