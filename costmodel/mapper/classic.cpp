// The mapper's first local search (before issue 59), kept as the first phase of the
// heuristic: a steepest descent from the greedy start, per objective, over factor
// moves (a slot multiplied or divided by 2, 3, 5 or 7, given what the outermost level
// holds or about half of it, filled to its fan-out; a prime or the whole factor moved
// between slots), spatial pair moves (second descent), loop orders of levels with at
// most 120 of them and keep/bypass; then restarts with one level's free factors
// cleared. Its trajectory is the one that mapper took (with perfect factors only, moves
// that break them are skipped), so the heuristic's answer is never worse than it was;
// every mapping it evaluates also counts for the other objectives (Search::eval).
#include <algorithm>
#include <array>

#include "costmodel/mapper/search_state.hpp"

namespace dse::costmodel::mapper::detail {

namespace {

Score plain(Score s) noexcept {  // the objective alone decides, as in that search
  s.tie = 0.0;
  return s;
}

}  // namespace

// True when mm provably scores no better than a feasible `value`: as cannot_beat(), but
// a latency equal to `value` is cut too (that search moved on strict improvements only).
bool Search::classic_cannot_beat(Objective g, const lp::Mapping& mm, double value) noexcept {
  if (g == Objective::latency) {
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
  return cannot_beat(mm, Objective::energy, value);  // the capacity test alone
}

void Search::run_classic(Objective g, i64 stop) {
  Classic run;
  run.objective = g;
  run.pair_moves = false;
  classic_descend(run, start_mapping(), stop);
  run.pair_moves = true;
  classic_descend(run, run.best_map, stop);
  for (int round = 0; round < 2; ++round) {
    const Score before = run.best;
    for (int l = 1; l < nl && evaluated < stop && !time_up(); ++l) {
      lp::Mapping k = run.best_map;
      for (int d = 0; d < nd; ++d) {
        if (temporal_free(l, d)) k.levels[sz(l)].temporal[sz(d)] = 1;
        if (spatial_free(l, d)) k.levels[sz(l)].spatial[sz(d)] = 1;
        if (c.levels[0].temporal[sz(d)] == 0) {
          i64 prod = 1;
          for (int q = 0; q < nl; ++q) prod *= k.levels[sz(q)].spatial[sz(d)] * (q > 0 ? k.levels[sz(q)].temporal[sz(d)] : 1);
          k.levels[0].temporal[sz(d)] = ceil_div(p.dim_sizes[sz(d)], prod);
        }
      }
      classic_descend(run, k, stop);
    }
    if (!(run.best < before)) break;
  }
}

void Search::classic_descend(Classic& run, lp::Mapping cur, i64 stop) {
  Score cs = plain(eval(cur, run.objective));
  if (cs < run.best) {
    run.best = cs;
    run.best_map = cur;
  }
  while (evaluated < stop && !time_up()) {
    Score nb_best = cs;
    lp::Mapping nb_map = cur;
    auto try_map = [&](lp::Mapping& mm) {
      canonical_orders(mm);
      if (nb_best.infeasible == 0 && classic_cannot_beat(run.objective, mm, nb_best.value)) return;
      const Score s = plain(eval(mm, run.objective));
      if (s < nb_best) {
        nb_best = s;
        nb_map = mm;
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
          if (prod > dim || (!c.imperfect && dim % prod != 0)) return;
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
    if (run.pair_moves) {
      pair_buf.clear();
      gen_pair_moves(cur, pair_buf);
      lp::Mapping mm{};
      for (const Move& mv : pair_buf) {
        if (apply(cur, mv, mm)) try_map(mm);
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
    if (cs < run.best) {
      run.best = cs;
      run.best_map = cur;
    }
  }
}

}  // namespace dse::costmodel::mapper::detail
