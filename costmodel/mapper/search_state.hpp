// Internal to the mapper (mapper.cpp: branch and bound; local_search.cpp: the
// steepest local search): the search state both strategies share and the
// helpers they use. Not part of the public interface (mapper.hpp). Pure.
#pragma once

#include <algorithm>
#include <array>
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

// Lexicographic score: feasible first, then the objective (or the overflow).
struct Score {
  int infeasible = 1;
  double value = std::numeric_limits<double>::infinity();
  bool operator<(const Score& o) const noexcept {
    return infeasible != o.infeasible ? infeasible < o.infeasible : value < o.value;
  }
};

inline Score score_of(const lp::Architecture& a, const lp::NestCost& c, Objective obj) noexcept {
  if (c.feasible) return Score{0, objective_value(obj, c)};
  if (c.reason == lp::Infeasible::capacity_exceeded) {
    double over = 0.0;
    for (int l = 0; l < c.num_levels; ++l) {
      const i64 cap = a.levels[sz(l)].capacity_words;
      if (cap > 0) over += static_cast<double>(std::max<i64>(0, c.levels[sz(l)].capacity_used_words - cap));
    }
    return Score{1, over};
  }
  return Score{2, 0.0};
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
  lp::Mapping m{};
  std::array<std::array<i64, lp::kMaxDims>, lp::kMaxLevels + 1> ext{};
  Score best{};
  lp::Mapping best_map{};
  lp::NestCost best_cost{};
  std::int64_t evaluated = 0;
  std::int64_t tilings = 0;
  std::int64_t budget = std::numeric_limits<std::int64_t>::max();  // exhaustive: evaluations allowed
  bool aborted = false;  // the exhaustive search ran out of budget
  bool pair_moves = false;  // local search: also try two-dimension spatial splits
  bool check_admission = false;  // needs_admission_check(c)
  lp::PreparedNest prep{};  // evaluate()'s per-(hardware, operator) constants, computed once
  std::array<TensorShape, lp::kMaxTensors> shapes{};
  std::array<i64, lp::kMaxLevels + 1> fan_above{};  // product of the fan-outs of levels < l
  std::int64_t pruned_bound = 0;   // branches cut by the lower bound (partial or complete tilings)
  std::int64_t orders_merged = 0;  // loop orders skipped as equivalent to one evaluated
  // Reused buffers (no allocation per tiling once warm).
  std::vector<std::vector<std::array<std::int8_t, lp::kMaxDims>>> ords_buf;
  std::vector<OrderSignature> sig_buf;

  Search(const lp::Architecture& aa, const lp::Problem& pp, const Constraints& cc, const MapperOptions& oo)
      : a(aa), p(pp), c(cc), o(oo), nl(static_cast<int>(aa.levels.size())), nd(pp.num_dims) {
    prep = lp::prepare(aa, pp);
    check_admission = needs_admission_check(cc);
    for (int t = 0; t < p.num_tensors; ++t) shapes[sz(t)] = tensor_shape(p.tensors[sz(t)]);
    fan_above[0] = 1;
    for (int l = 0; l < nl; ++l) fan_above[sz(l + 1)] = fan_above[sz(l)] * fanout_x(a, l) * fanout_y(a, l);
  }

  // Evaluates mm and keeps it in (inc, inc_map, inc_cost) when it scores better.
  void offer(const lp::Mapping& mm, Score& inc, lp::Mapping& inc_map, lp::NestCost& inc_cost) {
    const lp::NestCost r = lp::evaluate(prep, mm);
    ++evaluated;
    const Score s = check_admission && !admitted(c, a, p, mm, r) ? Score{3, 0.0} : score_of(a, r, o.objective);
    if (s < inc) {
      inc = s;
      inc_map = mm;
      inc_cost = r;
    }
  }

  void consider(const lp::Mapping& mm) {
    if (evaluated >= budget) {
      aborted = true;
      return;
    }
    offer(mm, best, best_map, best_cost);
  }

  // ---------------- exhaustive: branch and bound (mapper.cpp) ----------------
  // Lower bound (objective units) of every mapping that completes the partial
  // tiling whose levels l..nl-1 are decided (prune.hpp, rule 2); l = 0: a complete tiling.
  double partial_bound(int l) const noexcept;
  bool cut_by_bound(int l) noexcept;
  void orders_rec(int l, const std::vector<std::vector<std::array<std::int8_t, lp::kMaxDims>>>& ords);
  // The admitted orders of level l, one per class of equivalent orders (prune.hpp, rule 1).
  void distinct_orders(int l, std::uint32_t below, std::vector<std::array<std::int8_t, lp::kMaxDims>>& out);
  void complete_tiling();
  bool fits(int l) const noexcept;
  void level_rec(int l);
  void dim_rec(int l, int d, i64 sx, i64 sy);
  void run_exhaustive();

  // ---------------- heuristic: steepest local search (local_search.cpp) ----------------
  void canonical_orders(lp::Mapping& mm) const;
  lp::Mapping start_mapping() const;
  bool temporal_free(int l, int d) const noexcept;
  bool spatial_free(int l, int d) const noexcept;
  // Local-search restarts ("kicks"): from the best mapping, clear the free
  // factors of one level (they return to the outermost level) and descend again.
  void run_heuristic(i64 evals);
  // True when mm provably scores no better than a feasible `value` without
  // evaluating it: a kept tile set overflows a level (then mm is infeasible:
  // tile_words() never exceeds evaluate()'s tile), or, for latency,
  // its compute cycles alone (temporal iterations / MACs per cycle, the same
  // arithmetic as evaluate()) already reach `value`.
  bool cannot_beat(const lp::Mapping& mm, double value) noexcept;
  void descend(lp::Mapping cur, i64 stop);
};

}  // namespace dse::costmodel::mapper::detail
