// A mapping of a loop nest onto an Architecture: for every storage level,
// temporal factors with their loop order, spatial factors with the mesh axis
// they use, which tensors the level keeps, and double buffering. The loops of
// level l sit outside those of level l+1; at one level the spatial loops sit
// inside the temporal ones (Timeloop's convention). Factors may be imperfect:
// their product per dimension may exceed the dimension (padding), and the
// waste shows up in the utilisation.
#pragma once

#include <array>
#include <cstdint>

#include "costmodel/loopnest/architecture.hpp"
#include "costmodel/loopnest/problem.hpp"

namespace dse::costmodel::loopnest {

enum class Axis : std::uint8_t { x, y };

struct LevelMapping {
  std::array<std::int64_t, kMaxDims> temporal{1, 1, 1, 1, 1, 1, 1, 1};
  std::array<std::int8_t, kMaxDims> order{0, 1, 2, 3, 4, 5, 6, 7};  // dims, outermost loop first
  std::array<std::int64_t, kMaxDims> spatial{1, 1, 1, 1, 1, 1, 1, 1};
  std::array<Axis, kMaxDims> axis{};  // mesh axis of each spatial factor
  std::uint32_t keep = 0;             // bit t: the level keeps tensor t
  bool double_buffer = false;
};

// How a tile that slides (partially overlaps its predecessor) is refilled.
enum class ReusePolicy : std::uint8_t {
  // Timeloop v3 (loop-analysis/nest-analysis.cpp): a tile is the bounding box of its
  // points; each loop above the level runs its iteration 0 and one iteration 1 standing
  // for the rest, so when an outer loop steps the tile moves from the inner loops' index 1
  // back to 0; the overlap with the previous box is kept while the box moves as the
  // innermost loop moves it and along one coordinate only, otherwise the tile is fetched
  // whole.
  timeloop,
  // Every overlap with the previous tile (its exact points) is reused.
  exact,
};

struct Mapping {
  std::array<LevelMapping, kMaxLevels> levels{};
  int num_levels = 0;
  ReusePolicy reuse = ReusePolicy::timeloop;
};

// A mapping with num_levels levels, all factors 1, keeping every tensor a level may keep.
Mapping make_empty_mapping(const Architecture& a, const Problem& p);

}  // namespace dse::costmodel::loopnest
