// Internal to the mapper (mapper.cpp: branch and bound; local_search.cpp: the
// steepest local search): the search state both strategies share and the
// helpers they use. Not part of the public interface (mapper.hpp). Pure.
#pragma once

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <limits>
#include <numeric>
#include <vector>

#include "costmodel/mapper/mapper.hpp"
#include "costmodel/mapper/prune.hpp"

namespace dse::costmodel::mapper::detail {

namespace lp = loopnest;
using i64 = std::int64_t;

constexpr std::size_t sz(int i) noexcept { return static_cast<std::size_t>(i); }
inline i64 ceil_div(i64 a, i64 b) noexcept { return (a + b - 1) / b; }

inline bool pure_fanout(const lp::StorageLevel& lv) noexcept { return lv.may_keep == 0 && lv.capacity_words == 0; }

// The factor of dimension d at slot sl: level sl / 2's spatial (sl odd) or temporal factor.
inline i64& slot_factor(lp::Mapping& mm, int sl, int d) noexcept {
  lp::LevelMapping& lm = mm.levels[sz(sl / 2)];
  return (sl % 2) == 1 ? lm.spatial[sz(d)] : lm.temporal[sz(d)];
}
inline i64 slot_factor(const lp::Mapping& mm, int sl, int d) noexcept {
  const lp::LevelMapping& lm = mm.levels[sz(sl / 2)];
  return (sl % 2) == 1 ? lm.spatial[sz(d)] : lm.temporal[sz(d)];
}


// The factors a slot holding f takes when what the outermost level holds (r0 > 1) moves
// in: all of it, and about half (r0's largest divisor up to its square root, and the
// cofactor). Writes 1 or 3 values to out, returns how many.
inline int rest_values(i64 f, i64 r0, i64* out) noexcept {
  int n = 0;
  out[n++] = f * r0;
  i64 sq = 1;
  while ((sq + 1) * (sq + 1) <= r0) ++sq;
  for (i64 g = sq; g > 1; --g) {
    if (r0 % g == 0) {
      out[n++] = f * g;
      out[n++] = f * (r0 / g);
      break;
    }
  }
  return n;
}

// Words of tensor t's tile for extents e, as evaluate() counts them (the
// distinct values of every coordinate, a sum of coef * index terms; terms with
// coef <= 0 or extent 1 add nothing), or a lower bound of that count where
// evaluate() enumerates the set (a non-contiguous, narrow one): then any one
// term's extent. Never above evaluate()'s count, so pruning on it is safe.
inline i64 tile_words(const lp::Tensor& t, const std::array<i64, lp::kMaxDims>& e) noexcept {
  i64 w = 1;
  for (int r = 0; r < t.num_ranks; ++r) {
    const lp::Rank& rk = t.ranks[sz(r)];
    if (rk.num_terms == 1) {  // the common case: one dimension
      w *= rk.terms[0].coef > 0 ? e[sz(rk.terms[0].dim)] : 1;
      continue;
    }
    std::array<std::array<i64, 2>, lp::kMaxTerms> pr{};  // (step, n)
    int np = 0;
    i64 g = 0, most = 1;
    for (int q = 0; q < rk.num_terms; ++q) {
      const lp::Term& tm = rk.terms[sz(q)];
      const i64 n = e[sz(tm.dim)];
      if (tm.coef <= 0 || n <= 1) continue;
      pr[sz(np++)] = {tm.coef, n};
      g = std::gcd(g, static_cast<i64>(tm.coef));
      most = std::max(most, n);
    }
    if (np <= 1) {
      w *= most;
      continue;
    }
    for (int i = 1; i < np; ++i) {  // by step (insertion: at most kMaxTerms)
      for (int j = i; j > 0 && pr[sz(j)][0] < pr[sz(j - 1)][0]; --j) std::swap(pr[sz(j)], pr[sz(j - 1)]);
    }
    i64 reach = 0;
    bool interval = true;
    for (int i = 0; i < np; ++i) {
      const i64 step = pr[sz(i)][0] / g;
      if (step > reach + 1) interval = false;
      reach += (pr[sz(i)][1] - 1) * step;
    }
    w *= interval || reach >= 4096 ? reach + 1 : most;
  }
  return w;
}

inline i64 level_words(const lp::Problem& p, std::uint32_t keep, bool db, const std::array<i64, lp::kMaxDims>& e) noexcept {
  i64 used = 0;
  for (int t = 0; t < p.num_tensors; ++t) {
    if ((keep >> t) & 1u) used += tile_words(p.tensors[sz(t)], e);
  }
  return db ? 2 * used : used;
}

// Lexicographic score: feasible first, then the objective (or the overflow), then
// a tie-break among mappings of equal objective: cycles for energy, energy for
// latency and edp (so that a search on a plateau still moves towards the better one).
struct Score {
  int infeasible = 1;
  double value = std::numeric_limits<double>::infinity();
  double tie = std::numeric_limits<double>::infinity();
  bool operator<(const Score& o) const noexcept {
    if (infeasible != o.infeasible) return infeasible < o.infeasible;
    if (value != o.value) return value < o.value;
    return tie < o.tie;
  }
};

inline Score score_of(const lp::Architecture& a, const lp::NestCost& c, Objective obj) noexcept {
  if (c.feasible) return Score{0, objective_value(obj, c), obj == Objective::energy ? c.cycles : c.energy_j};
  if (c.reason == lp::Infeasible::capacity_exceeded) {
    double over = 0.0;
    for (int l = 0; l < c.num_levels; ++l) {
      const i64 cap = a.levels[sz(l)].capacity_words;
      if (cap > 0) over += static_cast<double>(std::max<i64>(0, c.levels[sz(l)].capacity_used_words - cap));
    }
    return Score{1, over, 0.0};
  }
  return Score{2, 0.0, 0.0};
}

inline bool in_list(const std::array<std::int8_t, lp::kMaxDims>& list, int n, int d) noexcept {
  for (int i = 0; i < n; ++i) {
    if (list[sz(i)] == d) return true;
  }
  return false;
}

// Axis forced by the spatial split constraint: 0 = x, 1 = y, -1 = free (no split, or a
// dimension the spatial permutation does not list).
inline int forced_axis(const LevelConstraint& c, int d) noexcept {
  if (c.spatial_split < 0) return -1;
  for (int i = 0; i < c.num_spatial_permutation; ++i) {
    if (c.spatial_permutation[sz(i)] == d) return i < c.spatial_split ? 0 : 1;
  }
  return -1;
}

// Whether factor f lies within the bounds lo..hi (0 = unbounded).
inline bool within(i64 f, i64 lo, i64 hi) noexcept { return (lo <= 0 || f >= lo) && (hi <= 0 || f <= hi); }

// Constraints the enumeration alone does not enforce (bounds, outer permutations, least
// utilisation): the mappings offered are checked with admitted().
inline bool needs_admission_check(const Constraints& c) noexcept {
  if (c.min_utilization > 0.0) return true;
  for (const LevelConstraint& lc : c.levels) {
    if (lc.num_outer_permutation > 0) return true;
    for (int d = 0; d < lp::kMaxDims; ++d) {
      if (lc.temporal_max[sz(d)] > 0 || lc.temporal_min[sz(d)] > 0 || lc.spatial_max[sz(d)] > 0 || lc.spatial_min[sz(d)] > 0) return true;
    }
  }
  return false;
}

// One move of the local search (local_search.cpp), applied to a mapping by Search::apply.
// A factor slot is 2 * level + (1 for the spatial factor, 0 for the temporal one).
struct Move {
  enum class Kind : std::uint8_t {
    set,       // slot s1 of dimension d takes the factor v (the outermost temporal one takes the rest)
    transfer,  // the factor q = v moves from slot s1 to slot s2 of dimension d
    pair,      // level s1's mesh axis `axis` is filled by dimensions d and s2: v x (fan-out / v)
    order,     // level s1: the non-unit loop at position s2 moves to position pos (outermost first)
    keep,      // level s1 keeps the tensors of mask v
  };
  Kind kind = Kind::set;
  std::int8_t d = 0;
  std::int8_t s1 = 0;
  std::int8_t s2 = 0;
  std::int8_t axis = 0;  // spatial axis a new spatial factor goes on (0 = x, 1 = y)
  // set / transfer: where a loop that becomes non-unit goes in its level's order:
  // -1 where its dimension stands, 0 outermost, 1 innermost. order: the target position.
  std::int8_t pos = -1;
  std::int64_t v = 0;
};

// Lower bounds of a partial tiling's completions (Search::partial_bound).
struct PartialBound {
  double cycles = 0.0;
  double energy_j = 0.0;
};

// The best mapping seen for one objective.
struct Incumbent {
  Score score{};
  lp::Mapping map{};
  lp::NestCost cost{};
};

// The state of one run of the first local search (classic.cpp): its own incumbent,
// compared on the objective alone.
struct Classic {
  Objective objective = Objective::energy;
  Score best{};
  lp::Mapping best_map{};
  bool pair_moves = false;
};

// ----- search state shared by both strategies -----
struct Search {
  const lp::Architecture& a;
  const lp::Problem& p;
  const Constraints& c;
  const MapperOptions& o;
  int nl = 0;
  int nd = 0;
  double e_mac = 0.0;
  double macs_per_cycle = 1.0;
  double bound_fixed_energy = 0.0;  // compulsory outermost-level energy
  std::vector<std::vector<std::uint32_t>> keeps;
  lp::Mapping m{};      // the branch and bound's mapping under construction
  lp::Mapping blank{};  // every factor 1, identity orders, the constraints' double buffering
  std::array<std::array<i64, lp::kMaxDims>, lp::kMaxLevels + 1> ext{};
  // The incumbents, one per objective (index: Objective): every mapping either
  // strategy evaluates is scored on all three.
  std::array<Incumbent, 3> inc{};
  std::array<double, 3> bound{};  // per objective: the lower bound (mapper.hpp, LowerBound)
  std::int64_t evaluated = 0;
  std::int64_t tilings = 0;
  std::int64_t budget = std::numeric_limits<std::int64_t>::max();  // exhaustive: evaluations allowed
  bool aborted = false;    // the exhaustive search ran out of budget (evaluations or time)
  bool timed_out = false;  // the time budget ran out
  bool timed = false;      // a time budget applies (set by map_operator)
  std::chrono::steady_clock::time_point deadline{};
  std::int64_t heuristic_stop = 0;  // local search: evaluation count at which it stops
  std::uint64_t rng = 0;            // splitmix64 state (local search moves and kicks)
  bool check_admission = false;  // needs_admission_check(c)
  lp::PreparedNest prep{};  // evaluate()'s per-(hardware, operator) constants, computed once
  std::array<TensorShape, lp::kMaxTensors> shapes{};
  std::array<i64, lp::kMaxLevels + 1> fan_above{};  // product of the fan-outs of levels < l
  // Distinct prime factors of each dimension (a dimension below 2^63 has at most 15).
  static constexpr int kMaxPrimes = 15;
  static constexpr int kMaxSlotValues = 2 * (kMaxPrimes + 4) + 6;
  std::array<std::array<i64, kMaxPrimes>, lp::kMaxDims> primes{};
  std::array<int, lp::kMaxDims> num_primes{};
  // Per dimension, the level whose temporal factor takes what the others leave: the
  // outermost (level 0) unless a constraint fixes it, then the outermost free one; -1
  // when none is free (the fixed factors must cover the dimension).
  std::array<int, lp::kMaxDims> rest_level{};
  std::int64_t pruned_bound = 0;   // branches cut by the lower bound (partial or complete tilings)
  std::int64_t orders_merged = 0;  // loop orders skipped as equivalent to one evaluated
  // Reused buffers (no allocation per tiling once warm).
  std::vector<std::vector<std::array<std::int8_t, lp::kMaxDims>>> ords_buf;
  std::vector<OrderSignature> sig_buf;
  std::vector<std::vector<Move>> move_bufs;  // descent, kick
  std::vector<Move> pair_buf;                // classic.cpp

  // The search keeps references: a temporary for any of them would dangle (refused at compile time).
  Search(const lp::Architecture&&, const lp::Problem&, const Constraints&, const MapperOptions&) = delete;
  Search(const lp::Architecture&, const lp::Problem&&, const Constraints&, const MapperOptions&) = delete;
  Search(const lp::Architecture&, const lp::Problem&, const Constraints&&, const MapperOptions&) = delete;
  Search(const lp::Architecture&, const lp::Problem&, const Constraints&, const MapperOptions&&) = delete;
  Search(const lp::Architecture& aa, const lp::Problem& pp, const Constraints& cc, const MapperOptions& oo)
      : a(aa), p(pp), c(cc), o(oo), nl(static_cast<int>(aa.levels.size())), nd(pp.num_dims) {
    prep = lp::prepare(aa, pp);
    check_admission = needs_admission_check(cc);
    for (int t = 0; t < p.num_tensors; ++t) shapes[sz(t)] = tensor_shape(p.tensors[sz(t)]);
    fan_above[0] = 1;
    for (int l = 0; l < nl; ++l) fan_above[sz(l + 1)] = fan_above[sz(l)] * fanout_x(a, l) * fanout_y(a, l);
    for (int d = 0; d < nd; ++d) {
      i64 r = p.dim_sizes[sz(d)];
      for (i64 q = 2; q * q <= r; ++q) {
        if (r % q != 0) continue;
        primes[sz(d)][sz(num_primes[sz(d)]++)] = q;
        while (r % q == 0) r /= q;
      }
      if (r > 1) primes[sz(d)][sz(num_primes[sz(d)]++)] = r;
    }
    for (int d = 0; d < nd; ++d) {
      rest_level[sz(d)] = -1;
      for (int l = 0; l < nl && rest_level[sz(d)] < 0; ++l) {
        if (temporal_free(l, d)) rest_level[sz(d)] = l;
      }
    }
    rng = o.seed;
  }

  // True once the time budget is spent (the clock is read every 64 evaluations).
  bool time_up() noexcept {
    if (timed && !timed_out && (evaluated & 63) == 0 && std::chrono::steady_clock::now() >= deadline) timed_out = true;
    return timed_out;
  }

  std::uint64_t next_random() noexcept {  // splitmix64
    std::uint64_t z = (rng += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }

  void consider(const lp::Mapping& mm) {
    if (evaluated >= budget || time_up()) {
      aborted = true;
      return;
    }
    eval(mm, Objective::energy);
  }

  // ---------------- exhaustive: branch and bound (mapper.cpp) ----------------
  // Lower bounds of every mapping that completes the partial tiling whose levels
  // l..nl-1 are decided (prune.hpp, rule 2); l = 0: a complete tiling.
  PartialBound partial_bound(int l) const noexcept;
  bool cut_by_bound(int l) noexcept;
  void orders_rec(int l, const std::vector<std::vector<std::array<std::int8_t, lp::kMaxDims>>>& ords);
  // The admitted orders of level l, one per class of equivalent orders (prune.hpp, rule 1).
  void distinct_orders(int l, std::uint32_t below, std::vector<std::array<std::int8_t, lp::kMaxDims>>& out);
  void complete_tiling();
  bool fits(int l) const noexcept;
  void level_rec(int l);
  void dim_rec(int l, int d, i64 sx, i64 sy);
  void run_exhaustive();

  // ---------------- heuristic: iterated local search (local_search.cpp, moves.cpp, classic.cpp) ----------------
  void canonical_orders(lp::Mapping& mm) const;
  lp::Mapping start_mapping() const;
  bool temporal_free(int l, int d) const noexcept;
  bool spatial_free(int l, int d) const noexcept;
  // Every move of the neighbourhood of `cur` (moves.cpp).
  void gen_moves(const lp::Mapping& cur, std::vector<Move>& out) const;
  void gen_factor_moves(const lp::Mapping& cur, int d, std::vector<Move>& out) const;
  int slot_values(const lp::Mapping& cur, int d, int sl, const std::array<i64, kMaxPrimes + 4>& qs, int nq,
                  std::array<i64, kMaxSlotValues>& vals) const;
  void gen_pair_moves(const lp::Mapping& cur, std::vector<Move>& out) const;
  // `out` = `cur` after the move; false when the result leaves the mapspace.
  bool apply(const lp::Mapping& cur, const Move& mv, lp::Mapping& out) const;
  // The outermost temporal factor of dimension d takes what the others leave; false
  // when they cover more than the dimension or, with perfect factors only, do not divide it.
  bool rederive(lp::Mapping& mm, int d) const;
  bool fanout_ok(const lp::Mapping& mm, int l) const noexcept;
  bool repair_capacity(lp::Mapping& mm) const;
  bool factors_within(const lp::Mapping& mm) const noexcept;  // every factor within its constraint's bounds
  // Evaluates mm, updates the three incumbents, returns mm's score on `guide`.
  Score eval(const lp::Mapping& mm, Objective guide);
  bool stop_heuristic() noexcept { return evaluated >= heuristic_stop || time_up(); }
  // True when objective g's best reaches its lower bound: no search can improve it.
  bool at_bound(Objective g) const noexcept {
    const Incumbent& in = inc[static_cast<std::size_t>(g)];
    return in.score.infeasible == 0 && in.score.value <= bound[static_cast<std::size_t>(g)] * (1.0 + 1e-12);
  }
  // Steepest descent from `cur` under `guide` (the best neighbour while it improves);
  // ends in a local optimum or when the budget runs out.
  Score descend(Objective guide, lp::Mapping& cur);
  // With the tiling fixed, every class of equivalent loop orders of one level at a
  // time (levels with at most kMaxOrderPass admitted orders), the others fixed.
  bool order_pass(Objective guide, lp::Mapping& cur, Score& cs);
  Score descend_and_polish(Objective guide, lp::Mapping& cur);
  void kick(lp::Mapping& cur, int strength);
  void run_heuristic(i64 evals);
  void run_chains();
  // True when mm provably scores no better than a feasible `value` under `guide`
  // without evaluating it: a kept tile set overflows a level (then mm is infeasible:
  // tile_words() never exceeds evaluate()'s tile), or, for latency, its compute cycles
  // alone (temporal iterations / MACs per cycle, the same arithmetic as evaluate())
  // exceed `value`.
  bool cannot_beat(const lp::Mapping& mm, Objective guide, double value) noexcept;

  // ---------------- the first local search (classic.cpp) ----------------
  void run_classic(Objective g);
  void classic_descend(Classic& run, lp::Mapping cur);
  bool classic_cannot_beat(Objective g, const lp::Mapping& mm, double value) noexcept;
};

// Sets s up for its problem (whose precision `rate` serves) as map_all_objectives does:
// the blank mapping, the energy and rate constants, the bounds and the keep choices.
// Returns the operator's lower bound. Tests use it to run one phase alone.
LowerBound init_search(Search& s, const lp::PrecisionRate& rate);

}  // namespace dse::costmodel::mapper::detail
