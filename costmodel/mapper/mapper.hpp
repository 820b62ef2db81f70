// Mapper: the best mapping of one operator (loopnest::Problem) onto a
// loop-nest hardware (loopnest::Architecture) under user constraints.
//
// The mapspace (exactly what the exhaustive search walks; tests re-enumerate it):
// - tile factors: for every level, innermost first, and every dimension d with
//   r_d iterations still to cover (r_d = D_d at the innermost level), a spatial
//   factor s (levels with a fan-out only) and a temporal factor t, both drawn
//   from factor_candidates(); r_d then becomes ceil(r_d / (s t)). The outermost
//   level's temporal factor takes the rest: t = ceil(r_d / s). Imperfect
//   candidates pad the dimension (the padding is paid in the cost).
// - spatial axes: each spatial factor > 1 goes on mesh axis x or y (the fan-out
//   product per axis is bounded by the mesh below the level).
// - keep/bypass: the outermost level keeps every tensor; any other level keeps
//   any subset of what it may hold (forced keeps and bypasses honoured).
// - loop orders: at each level, every relative order of the dimensions whose
//   temporal factor is > 1 (orders that differ only in unit loops are the same
//   mapping and are not enumerated).
// - double buffering and precision as the constraints say.
// Pure: standard library only.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "costmodel/loopnest/evaluate.hpp"

namespace dse::costmodel::mapper {

enum class Objective : std::uint8_t { latency, energy, edp };
const char* objective_name(Objective o) noexcept;
bool parse_objective(const std::string& s, Objective& out) noexcept;

enum class Strategy : std::uint8_t {
  exhaustive,  // branch and bound over the whole mapspace: the optimum
  heuristic,   // space too large: iterated local search (local_search.cpp)
};
const char* strategy_name(Strategy s) noexcept;

// Constraints of one storage level (Timeloop's constraint vocabulary).
struct LevelConstraint {
  std::array<std::int64_t, loopnest::kMaxDims> temporal{};  // 0 = free, k > 0 = fixed to k
  std::array<std::int64_t, loopnest::kMaxDims> spatial{};   // 0 = free, k > 0 = fixed to k
  // Temporal loop order, innermost first (Timeloop's convention): the listed
  // dimensions sit innermost in this order; unlisted ones are free outside them.
  std::array<std::int8_t, loopnest::kMaxDims> permutation{};
  int num_permutation = 0;
  // Spatial axes: dims at index < spatial_split of spatial_permutation go on x,
  // the others on y; spatial_split < 0 leaves the axes to the mapper.
  std::array<std::int8_t, loopnest::kMaxDims> spatial_permutation{};
  int num_spatial_permutation = 0;
  int spatial_split = -1;
  std::uint32_t keep = 0;    // bit t: must keep tensor t
  std::uint32_t bypass = 0;  // bit t: must not keep tensor t
  bool double_buffer = false;
  // Bounds on free factors (Timeloop's "K<=8", "K>=2", default_max_factor): 0 = none.
  std::array<std::int64_t, loopnest::kMaxDims> temporal_max{};
  std::array<std::int64_t, loopnest::kMaxDims> temporal_min{};
  std::array<std::int64_t, loopnest::kMaxDims> spatial_max{};
  std::array<std::int64_t, loopnest::kMaxDims> spatial_min{};
  // Outermost temporal loops (Timeloop's permutation after '_'), innermost first: the
  // listed dimensions sit outside every other non-unit loop of the level, in this order.
  std::array<std::int8_t, loopnest::kMaxDims> outer_permutation{};
  int num_outer_permutation = 0;
};

struct Constraints {
  std::array<LevelConstraint, loopnest::kMaxLevels> levels{};
  std::array<int, 4> precisions{};  // allowed operand precisions (bits); none = the problem's own
  int num_precisions = 0;
  bool imperfect = true;  // allow imperfect (padding) factors
  // Least share of the compute instances a mapping must use (Timeloop's utilization /
  // parallelism constraint, "min"); 0 = any.
  double min_utilization = 0.0;
};

// Whether mapping m (with its cost) lies in the constrained mapspace: fixed factors,
// factor bounds, loop-order prefix and suffix, keeps and bypasses, spatial axes forced
// by a split, and the least compute utilisation. The search never returns a mapping
// that fails it; tests use it to check that.
bool admitted(const Constraints& c, const loopnest::Architecture& a, const loopnest::Problem& p,
              const loopnest::Mapping& m, const loopnest::NestCost& cost) noexcept;

// The search's budget. Deterministic by default: the evaluation caps and the seed alone
// decide where each phase stops, so one (hardware, operator, constraints, options)
// always gives the same mapping; a larger local-search cap never gives a worse one
// unless a branch and bound runs out (the smaller cap's evaluations are the first of the
// larger's). time_budget_ms > 0 also stops the whole call after that much wall time
// (the clock is read every 64 evaluations): a search it cuts (MapResult::time_limited)
// depends on the machine's speed and load, so results that must be reproducible (dse
// run, dse validate) leave it 0. The objective does not steer the search (map_operator).
struct MapperOptions {
  Objective objective = Objective::energy;
  // Exhaustive budget (evaluations): spaces whose size estimate is at most 10^6 times
  // this are searched exhaustively (first with at most kQuickExhaustive evaluations,
  // then, after the local search, with this many and the local search's incumbents);
  // one that runs out leaves the best mapping found, not proven optimal.
  std::int64_t exhaustive_limit = 3'000'000;
  std::int64_t heuristic_evaluations = 100'000;  // cap on evaluations of the local search
  double time_budget_ms = 0.0;  // wall-clock cap on the whole call (ms); 0 = none
  std::uint64_t seed = 1;       // the local search's random moves and kicks
};

// The branch and bound's first try: spaces it finishes within this many evaluations
// are mapped exactly before any local search.
inline constexpr std::int64_t kQuickExhaustive = 50'000;

// Per-operator lower bound: compute bound and compulsory traffic of the
// outermost level over its bandwidth; energy of the MACs plus that traffic.
// With constraints, keeper_energy_j adds, per tensor, the least energy the
// innermost level that keeps it (as the constraints allow) spends feeding the
// MACs (reads; updates for the output): one access per point of the iteration
// space, shared only by the spatial instances below that level which the tensor
// does not index (multicast or reduction), at least a whole access vector's
// energy per block_words words.
struct LowerBound {
  double compute_cycles = 0.0;
  double memory_cycles = 0.0;
  double cycles = 0.0;
  double latency_s = 0.0;
  double energy_j = 0.0;
  double keeper_energy_j = 0.0;
};
LowerBound lower_bound(const loopnest::Architecture& a, const loopnest::Problem& p);
LowerBound lower_bound(const loopnest::Architecture& a, const loopnest::Problem& p, const Constraints& c);

struct MapResult {
  bool feasible = false;
  loopnest::Infeasible reason = loopnest::Infeasible::none;
  loopnest::Mapping mapping{};
  loopnest::NestCost cost{};
  int precision_bits = 0;
  Objective objective = Objective::energy;
  double objective_value = 0.0;  // latency_s, energy_j or J*s
  LowerBound bound{};
  double bound_value = 0.0;      // the bound in objective units (energy: energy_j + keeper_energy_j)
  double gap = 0.0;              // objective_value / bound_value - 1
  // The mapping is optimal on the objective: the branch and bound finished, or the
  // objective reaches the lower bound.
  bool proven_optimal = false;
  bool time_limited = false;        // the time budget stopped the search (the result depends on the clock)
  bool evaluation_limited = false;  // an evaluation cap stopped the local search before it converged
  Strategy strategy = Strategy::exhaustive;
  std::int64_t evaluated = 0;    // evaluate() calls
  std::int64_t tilings = 0;      // complete tilings (with keeps) that passed capacity pruning
  std::int64_t pruned_by_bound = 0;  // branches (partial or complete tilings, local-search moves) cut by a bound
  std::int64_t orders_merged = 0;    // loop orders not evaluated: equivalent to one that was (prune.hpp)
  double space_estimate = 0.0;   // size estimate used to choose the strategy
};

double objective_value(Objective o, const loopnest::NestCost& c) noexcept;

// Candidate factors for r iterations still to cover: the divisors of r and,
// when imperfect, the powers of two below r and `fanout` (if < r).
std::vector<std::int64_t> factor_candidates(std::int64_t r, bool imperfect, std::int64_t fanout);

// Fan-out below storage level l along each mesh axis.
std::int64_t fanout_x(const loopnest::Architecture& a, int l) noexcept;
std::int64_t fanout_y(const loopnest::Architecture& a, int l) noexcept;

// Loop orders (outermost first, as LevelMapping::order) admitted at level l for
// the given temporal factors: every order of the non-unit dims, filtered by the
// permutation constraint.
std::vector<std::array<std::int8_t, loopnest::kMaxDims>> level_orders(
    const loopnest::Problem& p, const LevelConstraint& c,
    const std::array<std::int64_t, loopnest::kMaxDims>& temporal);

// Keep masks admitted at level l.
std::vector<std::uint32_t> keep_choices(const loopnest::Architecture& a, const loopnest::Problem& p,
                                        const Constraints& c, int l);

// The best mapping for o.objective. The search does not depend on the objective: it
// finds the answers for all three at once (map_all_objectives, index: Objective), each
// the best on its objective of one set of evaluated mappings, so no objective's answer
// is beaten on that objective by another's.
MapResult map_operator(const loopnest::Architecture& a, const loopnest::Problem& p, const Constraints& c,
                       const MapperOptions& o);
std::array<MapResult, 3> map_all_objectives(const loopnest::Architecture& a, const loopnest::Problem& p,
                                            const Constraints& c, const MapperOptions& o);

}  // namespace dse::costmodel::mapper
