#include "costmodel/mapper/mapper.hpp"

#include "costmodel/mapper/prune.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace dse::costmodel::mapper {

namespace lp = loopnest;
using i64 = std::int64_t;

namespace {

constexpr std::size_t sz(int i) noexcept { return static_cast<std::size_t>(i); }
i64 ceil_div(i64 a, i64 b) noexcept { return (a + b - 1) / b; }

bool pure_fanout(const lp::StorageLevel& lv) noexcept { return lv.may_keep == 0 && lv.capacity_words == 0; }

const lp::PrecisionRate* rate_for(const lp::Architecture& a, int bits) noexcept {
  for (int i = 0; i < a.compute.num_rates && i < 4; ++i) {
    const lp::PrecisionRate& r = a.compute.rates[sz(i)];
    if (r.bits == 0 || r.bits == bits) return &r;
  }
  return nullptr;
}

// Words of tensor t's tile for extents e, as evaluate() counts them (the
// distinct values of every coordinate, a sum of coef * index terms; terms with
// coef <= 0 or extent 1 add nothing), or a lower bound of that count where
// evaluate() enumerates the set (a non-contiguous, narrow one): then any one
// term's extent. Never above evaluate()'s count, so pruning on it is safe.
i64 tile_words(const lp::Tensor& t, const std::array<i64, lp::kMaxDims>& e) noexcept {
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

i64 level_words(const lp::Problem& p, std::uint32_t keep, bool db, const std::array<i64, lp::kMaxDims>& e) noexcept {
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

Score score_of(const lp::Architecture& a, const lp::NestCost& c, Objective obj) noexcept {
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

bool in_list(const std::array<std::int8_t, lp::kMaxDims>& list, int n, int d) noexcept {
  for (int i = 0; i < n; ++i) {
    if (list[sz(i)] == d) return true;
  }
  return false;
}

// Axis forced by the spatial split constraint: 0 = x, 1 = y, -1 = free.
int forced_axis(const LevelConstraint& c, int d) noexcept {
  if (c.spatial_split < 0) return -1;
  for (int i = 0; i < c.num_spatial_permutation; ++i) {
    if (c.spatial_permutation[sz(i)] == d) return i < c.spatial_split ? 0 : 1;
  }
  return 0;
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
    for (int t = 0; t < p.num_tensors; ++t) shapes[sz(t)] = tensor_shape(p.tensors[sz(t)]);
    fan_above[0] = 1;
    for (int l = 0; l < nl; ++l) fan_above[sz(l + 1)] = fan_above[sz(l)] * fanout_x(a, l) * fanout_y(a, l);
  }

  void consider(const lp::Mapping& mm) {
    if (evaluated >= budget) {
      aborted = true;
      return;
    }
    const lp::NestCost r = lp::evaluate(prep, mm);
    ++evaluated;
    const Score s = score_of(a, r, o.objective);
    if (s < best) {
      best = s;
      best_map = mm;
      best_cost = r;
    }
  }

  // ---------------- exhaustive: branch and bound ----------------
  // Lower bound (objective units) of every mapping that completes the partial
  // tiling whose levels l..nl-1 are decided (prune.hpp, rule 2); l = 0: a complete tiling.
  double partial_bound(int l) const noexcept {
    double decided = 1.0, rest = 1.0, padded = 1.0;
    for (int d = 0; d < nd; ++d) {
      const i64 inner = ext[sz(l)][sz(d)];
      const i64 r = l == 0 ? 1 : ceil_div(p.dim_sizes[sz(d)], inner);
      rest *= static_cast<double>(r);
      padded *= static_cast<double>(inner) * static_cast<double>(r);
    }
    for (int q = l; q < nl; ++q) {
      for (int d = 0; d < nd; ++d) decided *= static_cast<double>(m.levels[sz(q)].temporal[sz(d)]);
    }
    const double upper = std::max(1.0, std::ceil(rest / static_cast<double>(fan_above[sz(l)]) * (1.0 - 1e-12)));
    const double lat = decided * upper / macs_per_cycle;  // cycles, as objective_value()
    double en = padded * p.macs_per_point * e_mac + bound_fixed_energy;
    if (o.objective != Objective::latency) {
      for (int t = 0; t < p.num_tensors; ++t) {
        int k = nl - 1;  // innermost keeper among the decided levels (not the outermost)
        while (k >= std::max(l, 1) && ((m.levels[sz(k)].keep >> t) & 1u) == 0) --k;
        if (k < std::max(l, 1)) continue;
        const TensorShape& ts = shapes[sz(t)];
        double div = 1.0;  // spatial factors below k that multicast or reduce
        for (int g = k; g < nl; ++g) {
          for (int d = 0; d < nd; ++d) {
            if (!ts.simple || ((ts.relevant >> d) & 1u) == 0) div *= static_cast<double>(m.levels[sz(g)].spatial[sz(d)]);
          }
        }
        const lp::StorageLevel& lv = a.levels[sz(k)];
        const double e = p.tensors[sz(t)].read_write ? lv.update_energy_j : lv.read_energy_j;
        en += padded / div * e / static_cast<double>(std::max(1, lv.block_words));
      }
    }
    switch (o.objective) {
      case Objective::latency: return lat;
      case Objective::energy: return en;
      case Objective::edp: return lat * en;
    }
    return 0.0;
  }

  bool cut_by_bound(int l) noexcept {
    if (best.infeasible != 0 || partial_bound(l) * (1.0 - 1e-12) < best.value) return false;
    ++pruned_bound;
    return true;
  }

  void orders_rec(int l, const std::vector<std::vector<std::array<std::int8_t, lp::kMaxDims>>>& ords) {
    if (l == nl) {
      consider(m);
      return;
    }
    for (const auto& ord : ords[sz(l)]) {
      if (aborted) return;
      m.levels[sz(l)].order = ord;
      orders_rec(l + 1, ords);
    }
  }

  // The admitted orders of level l, one per class of equivalent orders (prune.hpp, rule 1).
  void distinct_orders(int l, std::uint32_t below, std::vector<std::array<std::int8_t, lp::kMaxDims>>& out) {
    out = level_orders(p, c.levels[sz(l)], m.levels[sz(l)].temporal);
    if (m.reuse != lp::ReusePolicy::timeloop || out.size() < 2) return;
    sig_buf.clear();
    std::size_t kept = 0;
    for (std::size_t i = 0; i < out.size(); ++i) {
      const OrderSignature sg = order_signature(out[i], m.levels[sz(l)].temporal, nd, shapes, p.num_tensors, below);
      if (std::find(sig_buf.begin(), sig_buf.end(), sg) != sig_buf.end()) continue;
      sig_buf.push_back(sg);
      out[kept++] = out[i];
    }
    orders_merged += static_cast<std::int64_t>(out.size() - kept);
    out.resize(kept);
  }

  void complete_tiling() {
    ++tilings;
    if (cut_by_bound(0)) return;
    ords_buf.resize(sz(nl));
    std::uint32_t below = 0;  // tensors kept below the level
    for (int l = nl - 1; l >= 0; --l) {
      distinct_orders(l, below, ords_buf[sz(l)]);
      below |= m.levels[sz(l)].keep;
    }
    orders_rec(0, ords_buf);
  }

  bool fits(int l) const noexcept {
    const i64 cap = a.levels[sz(l)].capacity_words;
    if (cap <= 0) return true;
    return level_words(p, m.levels[sz(l)].keep, m.levels[sz(l)].double_buffer, ext[sz(l)]) <= cap;
  }

  void level_rec(int l) {
    if (l < 0) {
      complete_tiling();
      return;
    }
    for (const std::uint32_t k : keeps[sz(l)]) {
      if (aborted) return;
      m.levels[sz(l)].keep = k;
      ext[sz(l)] = ext[sz(l + 1)];
      if (!fits(l)) continue;
      dim_rec(l, 0, 1, 1);
    }
  }

  void dim_rec(int l, int d, i64 sx, i64 sy) {
    if (d == nd) {
      if (l > 0 && cut_by_bound(l)) return;
      level_rec(l - 1);
      return;
    }
    const LevelConstraint& lc = c.levels[sz(l)];
    lp::LevelMapping& lm = m.levels[sz(l)];
    const i64 inner = ext[sz(l + 1)][sz(d)];
    const i64 r = ceil_div(p.dim_sizes[sz(d)], inner);
    const i64 fx = fanout_x(a, l), fy = fanout_y(a, l);
    std::vector<i64> scand;
    if (lc.spatial[sz(d)] > 0) {
      scand = {lc.spatial[sz(d)]};
    } else if (fx * fy > 1) {
      scand = factor_candidates(r, c.imperfect, std::max(fx, fy));
    } else {
      scand = {1};
    }
    const int fa = forced_axis(lc, d);
    for (const i64 s : scand) {
      for (int ax = 0; ax < 2; ++ax) {
        if (s == 1 && ax == 1) continue;
        if (s > 1 && fa >= 0 && fa != ax) continue;
        if (s > 1 && (ax == 0 ? sx * s > fx : sy * s > fy)) continue;
        lm.spatial[sz(d)] = s;
        lm.axis[sz(d)] = ax == 0 ? lp::Axis::x : lp::Axis::y;
        const i64 r2 = ceil_div(r, s);
        std::vector<i64> tcand;
        if (lc.temporal[sz(d)] > 0) {
          tcand = {lc.temporal[sz(d)]};
        } else if (l == 0) {
          tcand = {r2};
        } else if (pure_fanout(a.levels[sz(l)])) {
          tcand = {1};
        } else {
          tcand = factor_candidates(r2, c.imperfect, 0);
        }
        for (const i64 t : tcand) {
          if (aborted) break;
          lm.temporal[sz(d)] = t;
          ext[sz(l)][sz(d)] = inner * s * t;
          if (!fits(l)) break;  // tiles only grow with t
          dim_rec(l, d + 1, ax == 0 ? sx * s : sx, ax == 1 ? sy * s : sy);
        }
        ext[sz(l)][sz(d)] = inner;
      }
    }
    lm.spatial[sz(d)] = 1;
    lm.temporal[sz(d)] = 1;
  }

  void run_exhaustive() {
    for (int d = 0; d < lp::kMaxDims; ++d) ext[sz(nl)][sz(d)] = 1;
    level_rec(nl - 1);
  }

  // ---------------- heuristic: steepest local search ----------------
  void canonical_orders(lp::Mapping& mm) const {
    for (int l = 0; l < nl; ++l) {
      const LevelConstraint& lc = c.levels[sz(l)];
      if (lc.num_permutation == 0) continue;
      lp::LevelMapping& lm = mm.levels[sz(l)];
      std::array<std::int8_t, lp::kMaxDims> ord{};
      int k = 0;
      for (int i = 0; i < nd; ++i) {
        if (!in_list(lc.permutation, lc.num_permutation, lm.order[sz(i)])) ord[sz(k++)] = lm.order[sz(i)];
      }
      for (int i = lc.num_permutation - 1; i >= 0; --i) ord[sz(k++)] = lc.permutation[sz(i)];
      for (int i = k; i < lp::kMaxDims; ++i) ord[sz(i)] = static_cast<std::int8_t>(i);
      lm.order = ord;
    }
  }

  lp::Mapping start_mapping() const {
    lp::Mapping s = m;
    for (int d = 0; d < nd; ++d) {
      i64 fixed = 1;
      for (int l = 0; l < nl; ++l) {
        const LevelConstraint& lc = c.levels[sz(l)];
        lp::LevelMapping& lm = s.levels[sz(l)];
        lm.temporal[sz(d)] = l > 0 && lc.temporal[sz(d)] > 0 ? lc.temporal[sz(d)] : 1;
        lm.spatial[sz(d)] = lc.spatial[sz(d)] > 0 ? lc.spatial[sz(d)] : 1;
        const int fa = forced_axis(lc, d);
        lm.axis[sz(d)] = fa == 1 ? lp::Axis::y : lp::Axis::x;
        fixed *= lm.temporal[sz(d)] * lm.spatial[sz(d)];
      }
      const LevelConstraint& c0 = c.levels[0];
      s.levels[0].temporal[sz(d)] = c0.temporal[sz(d)] > 0 ? c0.temporal[sz(d)] : ceil_div(p.dim_sizes[sz(d)], fixed);
    }
    for (int l = 0; l < nl; ++l) s.levels[sz(l)].keep = keeps[sz(l)].back();
    canonical_orders(s);
    return s;
  }

  bool temporal_free(int l, int d) const noexcept {
    return c.levels[sz(l)].temporal[sz(d)] == 0 && !pure_fanout(a.levels[sz(l)]);
  }
  bool spatial_free(int l, int d) const noexcept {
    return c.levels[sz(l)].spatial[sz(d)] == 0 && fanout_x(a, l) * fanout_y(a, l) > 1;
  }

  // Local-search restarts ("kicks"): from the best mapping, clear the free
  // factors of one level (they return to the outermost level) and descend again.
  void run_heuristic(i64 evals) {
    const i64 stop = evaluated + evals;
    // First descent with single-slot moves only, then with spatial pair moves too.
    pair_moves = false;
    descend(best.infeasible == 0 ? best_map : start_mapping(), stop);
    pair_moves = true;
    descend(best_map, stop);
    for (int round = 0; round < 2; ++round) {
      const Score before = best;
      for (int l = 1; l < nl && evaluated < stop; ++l) {
        lp::Mapping k = best_map;
        for (int d = 0; d < nd; ++d) {
          if (temporal_free(l, d)) k.levels[sz(l)].temporal[sz(d)] = 1;
          if (spatial_free(l, d)) k.levels[sz(l)].spatial[sz(d)] = 1;
          if (c.levels[0].temporal[sz(d)] == 0) {
            i64 prod = 1;
            for (int q = 0; q < nl; ++q) prod *= k.levels[sz(q)].spatial[sz(d)] * (q > 0 ? k.levels[sz(q)].temporal[sz(d)] : 1);
            k.levels[0].temporal[sz(d)] = ceil_div(p.dim_sizes[sz(d)], prod);
          }
        }
        descend(k, stop);
      }
      if (!(best < before)) break;
    }
  }

  // True when mm provably scores no better than a feasible `value` without
  // evaluating it: a kept tile set overflows a level (then mm is infeasible:
  // tile_words() never exceeds evaluate()'s tile), or, for latency,
  // its compute cycles alone (temporal iterations / MACs per cycle, the same
  // arithmetic as evaluate()) already reach `value`.
  bool cannot_beat(const lp::Mapping& mm, double value) noexcept {
    if (o.objective == Objective::latency) {
      double iters = 1.0;
      for (int l = 0; l < nl; ++l) {
        i64 it = 1;
        for (int d = 0; d < nd; ++d) it *= mm.levels[sz(l)].temporal[sz(d)];
        iters *= static_cast<double>(it);
      }
      if (iters / macs_per_cycle >= value) {
        ++pruned_bound;
        return true;
      }
    }
    std::array<i64, lp::kMaxDims> e{};
    e.fill(1);
    for (int l = nl - 1; l >= 0; --l) {
      const lp::LevelMapping& lm = mm.levels[sz(l)];
      for (int d = 0; d < nd; ++d) e[sz(d)] *= lm.spatial[sz(d)] * lm.temporal[sz(d)];
      const i64 cap = a.levels[sz(l)].capacity_words;
      if (cap <= 0) continue;
      if (level_words(p, lm.keep, lm.double_buffer, e) > cap) {
        ++pruned_bound;
        return true;
      }
    }
    return false;
  }

  void descend(lp::Mapping cur, i64 stop) {
    lp::NestCost cc = lp::evaluate(prep, cur);
    ++evaluated;
    Score cs = score_of(a, cc, o.objective);
    if (cs < best) {
      best = cs;
      best_map = cur;
      best_cost = cc;
    }
    while (evaluated < stop) {
      Score nb_best = cs;
      lp::Mapping nb_map = cur;
      lp::NestCost nb_cost{};
      auto try_map = [&](lp::Mapping& mm) {
        canonical_orders(mm);
        if (nb_best.infeasible == 0 && cannot_beat(mm, nb_best.value)) return;
        const lp::NestCost r = lp::evaluate(prep, mm);
        ++evaluated;
        const Score s = score_of(a, r, o.objective);
        if (s < nb_best) {
          nb_best = s;
          nb_map = mm;
          nb_cost = r;
        }
      };
      // Factor moves on the slots below the outermost temporal one (that one
      // takes the rest, ceil-divided): multiply or divide a slot by a small
      // prime, fill a spatial slot to its fan-out (imperfect), or transfer a
      // prime between two slots.
      for (int d = 0; d < nd; ++d) {
        const i64 dim = p.dim_sizes[sz(d)];
        std::array<int, 2 * lp::kMaxLevels> slots{};
        int ns = 0;
        for (int sl = 0; sl < 2 * nl; ++sl) {
          const int l = sl / 2;
          const bool sp = (sl % 2) == 1;
          if (sp ? spatial_free(l, d) : (l > 0 && temporal_free(l, d))) slots[sz(ns++)] = sl;
        }
        auto factor = [&](lp::Mapping& mm, int sl) -> i64& {
          lp::LevelMapping& lm = mm.levels[sz(sl / 2)];
          return (sl % 2) == 1 ? lm.spatial[sz(d)] : lm.temporal[sz(d)];
        };
        // Try mm after changing dim d's factors: rederive the outermost factor, check fan-outs.
        auto finish = [&](lp::Mapping& mm, int sl_changed) {
          if (c.levels[0].temporal[sz(d)] == 0) {
            i64 prod = 1;
            for (int l = 0; l < nl; ++l) {
              prod *= mm.levels[sz(l)].spatial[sz(d)] * (l > 0 ? mm.levels[sz(l)].temporal[sz(d)] : 1);
            }
            if (prod > dim) return;
            mm.levels[0].temporal[sz(d)] = ceil_div(dim, prod);
          }
          if ((sl_changed % 2) == 1) {
            const int l = sl_changed / 2;
            const lp::LevelMapping& lm = mm.levels[sz(l)];
            i64 px = 1, py = 1;
            for (int e = 0; e < nd; ++e) {
              if (lm.spatial[sz(e)] > 1) (lm.axis[sz(e)] == lp::Axis::x ? px : py) *= lm.spatial[sz(e)];
            }
            if (px > fanout_x(a, l) || py > fanout_y(a, l)) return;
          }
          try_map(mm);
        };
        // Spatial slot set to value v on the allowed axes.
        auto set_spatial = [&](int sl, i64 v) {
          const int l = sl / 2;
          const int fa = forced_axis(c.levels[sz(l)], d);
          for (int ax = 0; ax < 2; ++ax) {
            if (fa >= 0 && fa != ax) continue;
            if ((ax == 0 ? fanout_x(a, l) : fanout_y(a, l)) < 2) continue;
            lp::Mapping mm = cur;
            factor(mm, sl) = v;
            mm.levels[sz(l)].axis[sz(d)] = ax == 0 ? lp::Axis::x : lp::Axis::y;
            finish(mm, sl);
          }
        };
        static constexpr std::array<i64, 4> kPrimes{2, 3, 5, 7};
        for (int i = 0; i < ns; ++i) {
          const int sl = slots[sz(i)];
          const i64 f = factor(cur, sl);
          std::array<i64, 16> vals{};
          int nv = 0;
          const i64 r0 = cur.levels[0].temporal[sz(d)];
          if (c.levels[0].temporal[sz(d)] == 0 && r0 > 1) {
            vals[sz(nv++)] = f * r0;  // everything left above moves here
            i64 sq = 1;
            while ((sq + 1) * (sq + 1) <= r0) ++sq;
            for (i64 g = sq; g > 1; --g) {
              if (r0 % g == 0) {  // about half of it
                vals[sz(nv++)] = f * g;
                vals[sz(nv++)] = f * (r0 / g);
                break;
              }
            }
          }
          for (const i64 q : kPrimes) {
            vals[sz(nv++)] = f * q;
            if (f % q == 0) vals[sz(nv++)] = f / q;
          }
          if (f > 1) vals[sz(nv++)] = 1;
          if ((sl % 2) == 1) {
            vals[sz(nv++)] = std::min(dim, fanout_x(a, sl / 2));
            vals[sz(nv++)] = std::min(dim, fanout_y(a, sl / 2));
          }
          for (int k = 0; k < nv; ++k) {
            const i64 v = vals[sz(k)];
            if (v == f || v < 1) continue;
            if ((sl % 2) == 1) {
              set_spatial(sl, v);
            } else {
              lp::Mapping mm = cur;
              factor(mm, sl) = v;
              finish(mm, sl);
            }
          }
          for (int j = 0; j < ns; ++j) {
            if (j == i) continue;
            const int sl2 = slots[sz(j)];
            for (int qi = 0; qi < 5; ++qi) {
              const i64 q = qi < 4 ? kPrimes[sz(qi)] : f;  // a prime, or the whole factor
              if (f % q != 0 || q == 1 || (qi == 4 && f <= 7)) continue;
              lp::Mapping mm = cur;
              factor(mm, sl) = f / q;
              factor(mm, sl2) *= q;
              if ((sl2 % 2) == 1 && forced_axis(c.levels[sz(sl2 / 2)], d) < 0 && factor(cur, sl2) == 1) {
                // a new spatial factor: the free axis with room
                const int l2 = sl2 / 2;
                mm.levels[sz(l2)].axis[sz(d)] = fanout_x(a, l2) >= fanout_y(a, l2) ? lp::Axis::x : lp::Axis::y;
              }
              finish(mm, (sl2 % 2) == 1 ? sl2 : sl);
            }
          }
        }
      }
      // Spatial pair moves: fill one mesh axis with two dimensions (a x b = fan-out).
      for (int l = 0; l < nl && pair_moves; ++l) {
        for (int ax = 0; ax < 2; ++ax) {
          const i64 fan = ax == 0 ? fanout_x(a, l) : fanout_y(a, l);
          if (fan < 4) continue;
          for (int d1 = 0; d1 < nd; ++d1) {
            for (int d2 = 0; d2 < nd; ++d2) {
              if (d1 == d2 || !spatial_free(l, d1) || !spatial_free(l, d2)) continue;
              const int f1 = forced_axis(c.levels[sz(l)], d1), f2 = forced_axis(c.levels[sz(l)], d2);
              if ((f1 >= 0 && f1 != ax) || (f2 >= 0 && f2 != ax)) continue;
              for (i64 q = 2; q * 2 <= fan; ++q) {
                if (fan % q != 0 || (d1 > d2 && q * q == fan)) continue;
                lp::Mapping mm = cur;
                lp::LevelMapping& lm = mm.levels[sz(l)];
                const lp::Axis axis = ax == 0 ? lp::Axis::x : lp::Axis::y;
                for (int e = 0; e < nd; ++e) {
                  if (lm.spatial[sz(e)] > 1 && lm.axis[sz(e)] == axis && spatial_free(l, e)) lm.spatial[sz(e)] = 1;
                }
                lm.spatial[sz(d1)] = std::min(q, p.dim_sizes[sz(d1)]);
                lm.spatial[sz(d2)] = std::min(fan / q, p.dim_sizes[sz(d2)]);
                lm.axis[sz(d1)] = axis;
                lm.axis[sz(d2)] = axis;
                bool ok = true;
                for (int e = 0; e < nd && ok; ++e) {
                  if (c.levels[0].temporal[sz(e)] > 0) continue;
                  i64 prod = 1;
                  for (int k = 0; k < nl; ++k) prod *= mm.levels[sz(k)].spatial[sz(e)] * (k > 0 ? mm.levels[sz(k)].temporal[sz(e)] : 1);
                  ok = prod <= p.dim_sizes[sz(e)];
                  mm.levels[0].temporal[sz(e)] = ceil_div(p.dim_sizes[sz(e)], prod);
                }
                if (ok) try_map(mm);
              }
            }
          }
        }
      }
      // Loop orders of one level.
      for (int l = 0; l < nl; ++l) {
        const auto ords = level_orders(p, c.levels[sz(l)], cur.levels[sz(l)].temporal);
        if (ords.size() < 2 || ords.size() > 120) continue;
        // Orders equivalent to the current one, or to one tried before, cost the
        // same and cannot be strictly better (prune.hpp, rule 1): skip them.
        std::uint32_t below = 0;
        for (int q = l + 1; q < nl; ++q) below |= cur.levels[sz(q)].keep;
        sig_buf.clear();
        if (cur.reuse == lp::ReusePolicy::timeloop) {
          sig_buf.push_back(order_signature(cur.levels[sz(l)].order, cur.levels[sz(l)].temporal, nd, shapes, p.num_tensors, below));
        }
        for (const auto& ord : ords) {
          if (ord == cur.levels[sz(l)].order) continue;
          if (cur.reuse == lp::ReusePolicy::timeloop) {
            const OrderSignature sg = order_signature(ord, cur.levels[sz(l)].temporal, nd, shapes, p.num_tensors, below);
            if (std::find(sig_buf.begin(), sig_buf.end(), sg) != sig_buf.end()) {
              ++orders_merged;
              continue;
            }
            sig_buf.push_back(sg);
          }
          lp::Mapping mm = cur;
          mm.levels[sz(l)].order = ord;
          try_map(mm);
        }
      }
      // Keep/bypass of one level.
      for (int l = 1; l < nl; ++l) {
        for (const std::uint32_t k : keeps[sz(l)]) {
          if (k == cur.levels[sz(l)].keep) continue;
          lp::Mapping mm = cur;
          mm.levels[sz(l)].keep = k;
          try_map(mm);
        }
      }
      if (!(nb_best < cs)) break;
      cur = nb_map;
      cs = nb_best;
      if (cs < best) {
        best = cs;
        best_map = cur;
        best_cost = nb_cost;
      }
    }
  }
};

double space_estimate(const lp::Architecture& a, const lp::Problem& p, const Constraints& c,
                      const std::vector<std::vector<std::uint32_t>>& keeps) {
  const int nl = static_cast<int>(a.levels.size());
  double est = 1.0;
  for (int l = 0; l < nl; ++l) est *= static_cast<double>(keeps[sz(l)].size());
  int slots = 0;  // free factor slots below the outermost temporal one
  for (int l = 0; l < nl; ++l) {
    const bool fan = fanout_x(a, l) * fanout_y(a, l) > 1;
    int free_t = 0;
    for (int d = 0; d < p.num_dims; ++d) {
      if (p.dim_sizes[sz(d)] > 1 && c.levels[sz(l)].temporal[sz(d)] == 0 && !pure_fanout(a.levels[sz(l)])) ++free_t;
    }
    if (fan) slots += 2;  // spatial factor and its axis
    if (l > 0 && !pure_fanout(a.levels[sz(l)])) ++slots;
    double perms = 1.0;
    for (int k = 2; k <= free_t; ++k) perms *= k;
    est *= perms;
  }
  for (int d = 0; d < p.num_dims; ++d) {
    const double n = static_cast<double>(factor_candidates(p.dim_sizes[sz(d)], c.imperfect, 1).size());
    est *= std::pow(n, slots);
  }
  return est;
}

}  // namespace

const char* objective_name(Objective o) noexcept {
  switch (o) {
    case Objective::latency: return "latency";
    case Objective::energy: return "energy";
    case Objective::edp: return "edp";
  }
  return "?";
}

bool parse_objective(const std::string& s, Objective& out) noexcept {
  if (s == "latency") out = Objective::latency;
  else if (s == "energy") out = Objective::energy;
  else if (s == "edp") out = Objective::edp;
  else return false;
  return true;
}

const char* strategy_name(Strategy s) noexcept {
  return s == Strategy::exhaustive ? "exhaustive (branch and bound)" : "heuristic (local search)";
}

double objective_value(Objective o, const lp::NestCost& c) noexcept {
  switch (o) {
    case Objective::latency: return c.cycles;
    case Objective::energy: return c.energy_j;
    case Objective::edp: return c.cycles * c.energy_j;
  }
  return 0.0;
}

std::int64_t fanout_x(const lp::Architecture& a, int l) noexcept {
  const int nl = static_cast<int>(a.levels.size());
  const i64 next = l + 1 < nl ? a.levels[sz(l + 1)].mesh_x : a.compute.mesh_x;
  return next / std::max<i64>(1, a.levels[sz(l)].mesh_x);
}
std::int64_t fanout_y(const lp::Architecture& a, int l) noexcept {
  const int nl = static_cast<int>(a.levels.size());
  const i64 next = l + 1 < nl ? a.levels[sz(l + 1)].mesh_y : a.compute.mesh_y;
  return next / std::max<i64>(1, a.levels[sz(l)].mesh_y);
}

std::vector<std::int64_t> factor_candidates(std::int64_t r, bool imperfect, std::int64_t fanout) {
  std::vector<i64> v;
  for (i64 q = 1; q * q <= r; ++q) {
    if (r % q == 0) {
      v.push_back(q);
      if (q != r / q) v.push_back(r / q);
    }
  }
  if (imperfect) {
    for (i64 q = 2; q < r; q *= 2) v.push_back(q);
    if (fanout > 1 && fanout < r) v.push_back(fanout);
  }
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

std::vector<std::array<std::int8_t, lp::kMaxDims>> level_orders(const lp::Problem& p, const LevelConstraint& c,
                                                                const std::array<std::int64_t, lp::kMaxDims>& temporal) {
  std::array<std::int8_t, lp::kMaxDims> nz{};
  int k = 0;
  std::array<std::int8_t, lp::kMaxDims> unit{};
  int u = 0;
  for (int d = 0; d < p.num_dims; ++d) {
    if (temporal[sz(d)] > 1) nz[sz(k++)] = static_cast<std::int8_t>(d);
    else unit[sz(u++)] = static_cast<std::int8_t>(d);
  }
  // Constrained dims (innermost first) that are non-unit.
  std::array<std::int8_t, lp::kMaxDims> fixed{};
  int nf = 0;
  for (int i = 0; i < c.num_permutation; ++i) {
    const int d = c.permutation[sz(i)];
    if (d >= 0 && d < p.num_dims && temporal[sz(d)] > 1) fixed[sz(nf++)] = static_cast<std::int8_t>(d);
  }
  std::vector<std::array<std::int8_t, lp::kMaxDims>> out;
  // nz is ascending already: the first permutation.
  do {
    bool ok = true;
    for (int i = 0; i < nf && ok; ++i) ok = nz[sz(k - 1 - i)] == fixed[sz(i)];
    if (!ok) continue;
    std::array<std::int8_t, lp::kMaxDims> ord{};
    int n = 0;
    for (int i = 0; i < u; ++i) ord[sz(n++)] = unit[sz(i)];
    for (int i = 0; i < k; ++i) ord[sz(n++)] = nz[sz(i)];
    for (int i = n; i < lp::kMaxDims; ++i) ord[sz(i)] = static_cast<std::int8_t>(i);
    out.push_back(ord);
  } while (std::next_permutation(nz.begin(), nz.begin() + k));
  return out;
}

std::vector<std::uint32_t> keep_choices(const lp::Architecture& a, const lp::Problem& p, const Constraints& c, int l) {
  const std::uint32_t all = (1u << p.num_tensors) - 1u;
  const std::uint32_t may = a.levels[sz(l)].may_keep & all & ~c.levels[sz(l)].bypass;
  const std::uint32_t must = c.levels[sz(l)].keep & may;
  if (l == 0) return {may};
  std::vector<std::uint32_t> v;
  for (std::uint32_t k = 0; k <= all; ++k) {
    if ((k & ~may) == 0 && (k & must) == must) v.push_back(k);
  }
  return v;  // ascending: the last keeps the most
}

LowerBound lower_bound(const lp::Architecture& a, const lp::Problem& p) {
  LowerBound b;
  const lp::PrecisionRate* r = rate_for(a, p.tensors[0].precision_bits);
  const double rate = r != nullptr ? r->macs_per_cycle : 1.0;
  b.compute_cycles = lp::macs(p) / (static_cast<double>(a.compute.instances()) * rate);
  double rd = 0.0, wr = 0.0;
  for (int t = 0; t < p.num_tensors; ++t) {
    (p.tensors[sz(t)].read_write ? wr : rd) += static_cast<double>(lp::tensor_elements(p, t));
  }
  if (!a.levels.empty()) {
    const lp::StorageLevel& lv = a.levels[0];
    if (lv.read_bandwidth_words_per_cycle > 0.0) b.memory_cycles = rd / lv.read_bandwidth_words_per_cycle;
    if (lv.write_bandwidth_words_per_cycle > 0.0) b.memory_cycles = std::max(b.memory_cycles, wr / lv.write_bandwidth_words_per_cycle);
    const double bw = static_cast<double>(std::max(1, lv.block_words));
    b.energy_j = std::floor(rd / bw) * lv.read_energy_j + std::floor(wr / bw) * lv.update_energy_j;
  }
  b.energy_j += lp::macs(p) * (r != nullptr ? r->energy_per_mac_j : 0.0);
  b.cycles = std::max(b.compute_cycles, b.memory_cycles);
  b.latency_s = a.clock_hz > 0.0 ? b.cycles / a.clock_hz : 0.0;
  return b;
}

MapResult map_operator(const lp::Architecture& a, const lp::Problem& p0, const Constraints& c, const MapperOptions& o) {
  MapResult best;
  best.objective = o.objective;
  std::vector<int> precisions;
  for (int i = 0; i < c.num_precisions && i < 4; ++i) precisions.push_back(c.precisions[sz(i)]);
  if (precisions.empty()) precisions.push_back(p0.tensors[0].precision_bits);
  Score best_score{};
  for (const int bits : precisions) {
    lp::Problem p = p0;
    for (int t = 0; t < p.num_tensors; ++t) p.tensors[sz(t)].precision_bits = bits;
    const lp::PrecisionRate* rate = rate_for(a, bits);
    if (rate == nullptr || rate->macs_per_cycle <= 0.0) {
      if (best_score.infeasible == 1 && !best.feasible) best.reason = lp::Infeasible::unsupported_precision;
      continue;
    }
    Search s(a, p, c, o);
    s.m = lp::make_empty_mapping(a, p);
    for (int l = 0; l < s.nl; ++l) s.m.levels[sz(l)].double_buffer = c.levels[sz(l)].double_buffer;
    s.e_mac = rate->energy_per_mac_j;
    s.macs_per_cycle = rate->macs_per_cycle;
    const LowerBound lb = lower_bound(a, p);
    s.bound_fixed_energy = lb.energy_j - lp::macs(p) * s.e_mac;
    for (int l = 0; l < s.nl; ++l) s.keeps.push_back(keep_choices(a, p, c, l));
    const double est = space_estimate(a, p, c, s.keeps);
    Strategy strat = Strategy::exhaustive;
    // The estimate is a loose upper bound: spaces up to 10^6 times the limit are
    // tried exhaustively with the limit as budget; the local search takes over
    // (from the best point found) when the budget runs out.
    if (est <= 1e6 * static_cast<double>(o.exhaustive_limit)) {
      s.budget = o.exhaustive_limit;
      s.run_exhaustive();
    }
    if (s.aborted || est > 1e6 * static_cast<double>(o.exhaustive_limit)) {
      strat = Strategy::heuristic;
      s.run_heuristic(o.heuristic_evaluations);
    }
    if (s.best < best_score || precisions.size() == 1) {
      best_score = s.best;
      best.feasible = s.best.infeasible == 0;
      best.reason = s.best_cost.reason;
      best.mapping = s.best_map;
      best.cost = s.best_cost;
      best.precision_bits = bits;
      best.objective_value = best.feasible ? s.best.value : 0.0;
      best.bound = lb;
      best.strategy = strat;
      best.space_estimate = est;
    }
    best.evaluated += s.evaluated;
    best.tilings += s.tilings;
    best.pruned_by_bound += s.pruned_bound;
    best.orders_merged += s.orders_merged;
  }
  switch (o.objective) {
    case Objective::latency: best.bound_value = best.bound.cycles; break;
    case Objective::energy: best.bound_value = best.bound.energy_j; break;
    case Objective::edp: best.bound_value = best.bound.cycles * best.bound.energy_j; break;
  }
  best.gap = best.feasible && best.bound_value > 0.0 ? best.objective_value / best.bound_value - 1.0 : 0.0;
  return best;
}

}  // namespace dse::costmodel::mapper
