// The search plan of a run, as a scenario states it and the driver follows it: which
// sampler, how many points, and what a run stores. Plain value types, shared by the
// scenario reader (dse/io) and the driver (dse/driver).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace dse {

enum class Store { all, archive, none };
std::string_view to_string(Store s);
Store parse_store(const std::string& s);  // throws InputError

enum class SamplerKind { exhaustive, random, nsga2 };
std::string_view to_string(SamplerKind k);

struct SearchPlan {
  SamplerKind sampler = SamplerKind::exhaustive;
  std::uint64_t samples = 0;        // random: number of draws
  std::size_t population = 0;       // nsga2
  std::size_t generations = 0;      // nsga2
  std::size_t islands = 1;          // nsga2: populations evolved side by side (search/nsga2.hpp)
  std::size_t migration_interval = 1;  // nsga2 with islands: generations between migrations
  std::size_t migration_size = 0;      // nsga2 with islands: members each island sends (0: a fifth)
  std::uint64_t seed = 0;
};

}  // namespace dse
