// The mapper's heuristic strategy: steepest local search over factor, spatial
// pair, loop-order and keep/bypass moves, with restarts (search_state.hpp).
#include <algorithm>
#include <array>

#include "costmodel/mapper/search_state.hpp"

namespace dse::costmodel::mapper::detail {

void Search::canonical_orders(lp::Mapping& mm) const {
  for (int l = 0; l < nl; ++l) {
    const LevelConstraint& lc = c.levels[sz(l)];
    if (lc.num_permutation == 0 && lc.num_outer_permutation == 0) continue;
    lp::LevelMapping& lm = mm.levels[sz(l)];
    std::array<std::int8_t, lp::kMaxDims> ord{};
    int k = 0;
    for (int i = lc.num_outer_permutation - 1; i >= 0; --i) ord[sz(k++)] = lc.outer_permutation[sz(i)];
    for (int i = 0; i < nd; ++i) {
      const int d = lm.order[sz(i)];
      if (!in_list(lc.permutation, lc.num_permutation, d) && !in_list(lc.outer_permutation, lc.num_outer_permutation, d)) ord[sz(k++)] = lm.order[sz(i)];
    }
    for (int i = lc.num_permutation - 1; i >= 0; --i) ord[sz(k++)] = lc.permutation[sz(i)];
    for (int i = k; i < lp::kMaxDims; ++i) ord[sz(i)] = static_cast<std::int8_t>(i);
    lm.order = ord;
  }
}

lp::Mapping Search::start_mapping() const {
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

bool Search::temporal_free(int l, int d) const noexcept {
  return c.levels[sz(l)].temporal[sz(d)] == 0 && !pure_fanout(a.levels[sz(l)]);
}

bool Search::spatial_free(int l, int d) const noexcept {
  return c.levels[sz(l)].spatial[sz(d)] == 0 && fanout_x(a, l) * fanout_y(a, l) > 1;
}

// Local-search restarts ("kicks"): from the best mapping, clear the free
// factors of one level (they return to the outermost level) and descend again.
void Search::run_heuristic(i64 evals) {
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
bool Search::cannot_beat(const lp::Mapping& mm, double value) noexcept {
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

void Search::descend(lp::Mapping cur, i64 stop) {
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
      offer(mm, nb_best, nb_map, nb_cost);
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

}  // namespace dse::costmodel::mapper::detail
