// The memo of mapped operators for design-space sweeps: one (architecture, operator
// shape, constraint source, mapper budget) is mapped once, and a hit returns what
// the mapping gave, figure for figure. The mapper's search does not depend on the
// objective (mapper::map_all_objectives), so an entry holds the answers for all three
// objectives and a change of objective is a hit. Compact where mapper::MapperCache keeps whole
// MapResults: a sweep maps tens of thousands of operators per rank. The key interns
// each architecture (all of its numbers, not its names) as a small id, so that an
// operator's key is the id, the problem's numbers, the constraint source's id and the
// options. Safe under concurrent use (sharded, a mutex each); two threads missing on
// one key may both map it (the same answer: the mapper is deterministic under an
// evaluation budget). A shard past its share of kMaxEntries is emptied: the memo only
// saves time, never changes an answer. Pure: standard library only.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>

#include "costmodel/loopnest/architecture.hpp"
#include "costmodel/loopnest/problem.hpp"
#include "costmodel/mapper/mapper.hpp"
#include "costmodel/roofline.hpp"

namespace dse::costmodel::lowering {

// What a point keeps of one mapped operator.
struct MappedOperator {
  bool feasible = false;
  std::string reason;  // loopnest::infeasible_name when infeasible
  double latency_s = 0.0;
  double energy_j = 0.0;
  double cycles = 0.0;
  double compute_cycles = 0.0;
  double utilization = 0.0;  // MACs / (cycles x peak MACs per cycle)
  double macs = 0.0;
  double dram_words = 0.0;  // outermost level: reads + fills + updates of every tensor
  double dram_bytes = 0.0;
  Bottleneck bottleneck = Bottleneck::compute;
  std::string loop_nest;  // per level, outermost first: temporal factors [order], spatial factors
};

// The loop nest of a mapping in one line: "DRAM: M2 C4 [C M] | shared_glb: P7 Q7 x: Q14 y: M12 | ..."
// (levels with no factor left out; spatial factors with their mesh axis).
std::string loop_nest_text(const loopnest::Architecture& a, const loopnest::Problem& p, const loopnest::Mapping& m);

// The figures a point keeps of a MapResult on architecture a.
MappedOperator summarize(const loopnest::Architecture& a, const loopnest::Problem& p, const mapper::MapResult& r);

class OperatorMemo {
 public:
  static constexpr std::size_t kMaxEntries = std::size_t{1} << 20;
  using Answers = std::array<MappedOperator, 3>;
  // The architecture's id (interned on first sight).
  std::uint32_t architecture_id(const loopnest::Architecture& a);
  // The key of one operator on architecture `arch_id` (see the header comment); o.objective
  // is not part of it.
  static std::string key(std::uint32_t arch_id, const loopnest::Problem& p, std::uint64_t constraints_id,
                         const mapper::MapperOptions& o);
  // The answers (by mapper::Objective) stored for `key`, or map()'s (then stored).
  template <class Map>
  Answers get(const std::string& key, Map map) {
    Shard& sh = shard(key);
    {
      const std::lock_guard<std::mutex> lock(sh.mu);
      const auto it = sh.table.find(key);
      if (it != sh.table.end()) {
        hits_.fetch_add(1, std::memory_order_relaxed);
        return it->second;
      }
    }
    misses_.fetch_add(1, std::memory_order_relaxed);
    Answers m = map();
    const std::lock_guard<std::mutex> lock(sh.mu);
    if (sh.table.size() >= kMaxEntries / kShards) sh.table.clear();
    sh.table.emplace(key, m);
    return m;
  }
  [[nodiscard]] std::int64_t hits() const noexcept { return hits_.load(std::memory_order_relaxed); }
  [[nodiscard]] std::int64_t misses() const noexcept { return misses_.load(std::memory_order_relaxed); }

 private:
  static constexpr std::size_t kShards = 16;
  struct Shard {
    std::mutex mu;
    std::unordered_map<std::string, Answers> table;
  };
  Shard& shard(const std::string& key);
  std::array<Shard, kShards> shards_;
  std::mutex arch_mu_;
  std::unordered_map<std::string, std::uint32_t> arch_ids_;
  std::atomic<std::int64_t> hits_{0};
  std::atomic<std::int64_t> misses_{0};
};

}  // namespace dse::costmodel::lowering
