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

void Search::run_classic(Objective g) {
  Classic run;
  run.objective = g;
  run.pair_moves = false;
  classic_descend(run, start_mapping());
  run.pair_moves = true;
  classic_descend(run, run.best_map);
  for (int round = 0; round < 2; ++round) {
    const Score before = run.best;
    for (int l = 1; l < nl && !stop_heuristic(); ++l) {
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
      classic_descend(run, k);
    }
    if (!(run.best < before)) break;
  }
}

namespace {

constexpr std::array<i64, 4> kPrimes{2, 3, 5, 7};

// One step of that search from `cur`: every neighbour tried, the best kept (nb_best, nb_map).
struct ClassicStep {
  Search& s;
  const Classic& run;
  const lp::Mapping& cur;
  Score nb_best;
  lp::Mapping nb_map;

  void try_map(lp::Mapping& mm) {
    if (s.stop_heuristic()) return;
    s.canonical_orders(mm);
    if (nb_best.infeasible == 0 && s.classic_cannot_beat(run.objective, mm, nb_best.value)) return;
    const Score sc = plain(s.eval(mm, run.objective));
    if (sc < nb_best) {
      nb_best = sc;
      nb_map = mm;
    }
  }

  // Tries mm after a change to dimension d's factors: rederives the outermost factor,
  // checks the fan-outs of a changed spatial slot.
  void finish(lp::Mapping& mm, int d, int sl_changed) {
    const i64 dim = s.p.dim_sizes[sz(d)];
    if (s.c.levels[0].temporal[sz(d)] == 0) {
      i64 prod = 1;
      for (int l = 0; l < s.nl; ++l) prod *= mm.levels[sz(l)].spatial[sz(d)] * (l > 0 ? mm.levels[sz(l)].temporal[sz(d)] : 1);
      if (prod > dim || (!s.c.imperfect && dim % prod != 0)) return;
      mm.levels[0].temporal[sz(d)] = ceil_div(dim, prod);
    }
    if ((sl_changed % 2) == 1 && !s.fanout_ok(mm, sl_changed / 2)) return;
    try_map(mm);
  }

  // Spatial slot sl of dimension d set to v on each allowed axis.
  void set_spatial(int d, int sl, i64 v) {
    const int l = sl / 2;
    const int fa = forced_axis(s.c.levels[sz(l)], d);
    for (int ax = 0; ax < 2; ++ax) {
      if (fa >= 0 && fa != ax) continue;
      if ((ax == 0 ? fanout_x(s.a, l) : fanout_y(s.a, l)) < 2) continue;
      lp::Mapping mm = cur;
      slot_factor(mm, sl, d) = v;
      mm.levels[sz(l)].axis[sz(d)] = ax == 0 ? lp::Axis::x : lp::Axis::y;
      finish(mm, d, sl);
    }
  }

  // Slot sl of dimension d multiplied or divided by a small prime, given all or about
  // half of what the outermost level holds, reset to 1 or filled to its fan-out.
  void set_moves(int d, int sl) {
    const i64 dim = s.p.dim_sizes[sz(d)];
    const i64 f = slot_factor(cur, sl, d);
    std::array<i64, 16> vals{};
    int nv = 0;
    const i64 r0 = cur.levels[0].temporal[sz(d)];
    if (s.c.levels[0].temporal[sz(d)] == 0 && r0 > 1) nv += rest_values(f, r0, vals.data());
    for (const i64 q : kPrimes) {
      vals[sz(nv++)] = f * q;
      if (f % q == 0) vals[sz(nv++)] = f / q;
    }
    if (f > 1) vals[sz(nv++)] = 1;
    if ((sl % 2) == 1) {
      vals[sz(nv++)] = std::min(dim, fanout_x(s.a, sl / 2));
      vals[sz(nv++)] = std::min(dim, fanout_y(s.a, sl / 2));
    }
    for (int k = 0; k < nv; ++k) {
      const i64 v = vals[sz(k)];
      if (v == f || v < 1) continue;
      if ((sl % 2) == 1) {
        set_spatial(d, sl, v);
      } else {
        lp::Mapping mm = cur;
        slot_factor(mm, sl, d) = v;
        finish(mm, d, sl);
      }
    }
  }

  // A prime (or the whole factor) of slot sl moved to slot sl2.
  void transfer_moves(int d, int sl, int sl2) {
    const i64 f = slot_factor(cur, sl, d);
    for (int qi = 0; qi < 5; ++qi) {
      const i64 q = qi < 4 ? kPrimes[sz(qi)] : f;  // a prime, or the whole factor
      if (f % q != 0 || q == 1 || (qi == 4 && f <= 7)) continue;
      lp::Mapping mm = cur;
      slot_factor(mm, sl, d) = f / q;
      slot_factor(mm, sl2, d) *= q;
      if ((sl2 % 2) == 1 && forced_axis(s.c.levels[sz(sl2 / 2)], d) < 0 && slot_factor(cur, sl2, d) == 1) {
        // a new spatial factor: the free axis with room
        const int l2 = sl2 / 2;
        mm.levels[sz(l2)].axis[sz(d)] = fanout_x(s.a, l2) >= fanout_y(s.a, l2) ? lp::Axis::x : lp::Axis::y;
      }
      finish(mm, d, (sl2 % 2) == 1 ? sl2 : sl);
    }
  }

  // Factor moves on the slots below the outermost temporal one (that one takes the rest).
  void factor_moves(int d) {
    std::array<int, 2 * lp::kMaxLevels> slots{};
    int ns = 0;
    for (int sl = 0; sl < 2 * s.nl; ++sl) {
      const int l = sl / 2;
      if ((sl % 2) == 1 ? s.spatial_free(l, d) : (l > 0 && s.temporal_free(l, d))) slots[sz(ns++)] = sl;
    }
    for (int i = 0; i < ns; ++i) {
      set_moves(d, slots[sz(i)]);
      for (int j = 0; j < ns; ++j) {
        if (j != i) transfer_moves(d, slots[sz(i)], slots[sz(j)]);
      }
    }
  }

  // Every order of one level with at most 120 of them, one per class of equivalent
  // orders, not the current one's (prune.hpp, rule 1).
  void order_moves() {
    for (int l = 0; l < s.nl; ++l) {
      const auto ords = level_orders(s.p, s.c.levels[sz(l)], cur.levels[sz(l)].temporal);
      if (ords.size() < 2 || ords.size() > 120) continue;
      std::uint32_t below = 0;
      for (int q = l + 1; q < s.nl; ++q) below |= cur.levels[sz(q)].keep;
      const bool merge = cur.reuse == lp::ReusePolicy::timeloop;
      s.sig_buf.clear();
      if (merge) s.sig_buf.push_back(order_signature(cur.levels[sz(l)].order, cur.levels[sz(l)].temporal, s.nd, s.shapes, s.p.num_tensors, below));
      for (const auto& ord : ords) {
        if (ord == cur.levels[sz(l)].order) continue;
        if (merge) {
          const OrderSignature sg = order_signature(ord, cur.levels[sz(l)].temporal, s.nd, s.shapes, s.p.num_tensors, below);
          if (std::find(s.sig_buf.begin(), s.sig_buf.end(), sg) != s.sig_buf.end()) {
            ++s.orders_merged;
            continue;
          }
          s.sig_buf.push_back(sg);
        }
        lp::Mapping mm = cur;
        mm.levels[sz(l)].order = ord;
        try_map(mm);
      }
    }
  }
};

}  // namespace

void Search::classic_descend(Classic& run, lp::Mapping cur) {
  if (stop_heuristic()) return;
  Score cs = plain(eval(cur, run.objective));
  if (cs < run.best) {
    run.best = cs;
    run.best_map = cur;
  }
  while (!stop_heuristic()) {
    ClassicStep step{*this, run, cur, cs, cur};
    for (int d = 0; d < nd; ++d) step.factor_moves(d);
    if (run.pair_moves) {  // one mesh axis filled with two dimensions (a x b = fan-out)
      pair_buf.clear();
      gen_pair_moves(cur, pair_buf);
      lp::Mapping mm{};
      for (const Move& mv : pair_buf) {
        if (apply(cur, mv, mm)) step.try_map(mm);
      }
    }
    step.order_moves();
    for (int l = 1; l < nl; ++l) {  // keep/bypass of one level
      for (const std::uint32_t k : keeps[sz(l)]) {
        if (k == cur.levels[sz(l)].keep) continue;
        lp::Mapping mm = cur;
        mm.levels[sz(l)].keep = k;
        step.try_map(mm);
      }
    }
    if (!(step.nb_best < cs)) break;
    cur = step.nb_map;
    cs = step.nb_best;
    if (cs < run.best) {
      run.best = cs;
      run.best_map = cur;
    }
  }
}

}  // namespace dse::costmodel::mapper::detail
