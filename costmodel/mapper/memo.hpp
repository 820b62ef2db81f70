// Memoised mapper: results keyed by a canonical form of (hardware, operator
// shape, precision, constraints, objective, search options), so a 32-layer
// transformer maps each distinct shape once. Names (of levels, dimensions,
// tensors) are not part of the key; every number the cost depends on is.
// Safe under concurrent use: the table is split into shards, each behind its
// own mutex; two threads missing on one key may both compute it (same result).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>

#include "costmodel/mapper/mapper.hpp"

namespace dse::costmodel::mapper {

// Appends the architecture's part of that key to `k`: every number of every storage level (names
// and keep_roles excepted), then the compute mesh and its rates. costmodel/lowering's memo keys
// its architectures with it too.
void put_architecture(std::string& k, const loopnest::Architecture& a);

// The canonical key (a byte string) of one mapping request.
std::string canonical_key(const loopnest::Architecture& a, const loopnest::Problem& p, const Constraints& c,
                          const MapperOptions& o);

class MapperCache {
 public:
  // The cached result, or map_operator()'s (then stored). `hit` says which.
  MapResult map(const loopnest::Architecture& a, const loopnest::Problem& p, const Constraints& c,
                const MapperOptions& o, bool* hit = nullptr);
  [[nodiscard]] std::int64_t hits() const noexcept { return hits_.load(std::memory_order_relaxed); }
  [[nodiscard]] std::int64_t misses() const noexcept { return misses_.load(std::memory_order_relaxed); }
  [[nodiscard]] std::size_t size() const;

 private:
  static constexpr std::size_t kShards = 16;
  struct Shard {
    mutable std::mutex mu;
    std::unordered_map<std::string, MapResult> table;
  };
  std::array<Shard, kShards> shards_;
  std::atomic<std::int64_t> hits_{0};
  std::atomic<std::int64_t> misses_{0};
};

}  // namespace dse::costmodel::mapper
