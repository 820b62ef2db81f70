// The local search's neighbourhood (search_state.hpp, Move): factor moves on every
// free slot of every dimension, factor transfers between slots, spatial pair moves,
// loop-order insertions and keep/bypass changes; and how a move is applied.
#include <algorithm>
#include <array>

#include "costmodel/mapper/search_state.hpp"

namespace dse::costmodel::mapper::detail {

namespace {

// The non-unit temporal loops of a level, outermost first.
int non_unit(const lp::LevelMapping& lm, int nd, std::array<std::int8_t, lp::kMaxDims>& out) noexcept {
  int k = 0;
  for (int i = 0; i < nd; ++i) {
    const int d = lm.order[sz(i)];
    if (lm.temporal[sz(d)] > 1) out[sz(k++)] = static_cast<std::int8_t>(d);
  }
  return k;
}

// Level order with dimension d moved to the outermost (pos 0) or innermost (pos 1) place.
void place(lp::LevelMapping& lm, int nd, int d, int pos) noexcept {
  std::array<std::int8_t, lp::kMaxDims> ord{};
  int k = 0;
  if (pos == 0) ord[sz(k++)] = static_cast<std::int8_t>(d);
  for (int i = 0; i < nd; ++i) {
    if (lm.order[sz(i)] != d) ord[sz(k++)] = lm.order[sz(i)];
  }
  if (pos == 1) ord[sz(k++)] = static_cast<std::int8_t>(d);
  for (int i = 0; i < nd; ++i) lm.order[sz(i)] = ord[sz(i)];
}

}  // namespace

bool Search::fanout_ok(const lp::Mapping& mm, int l) const noexcept {
  const lp::LevelMapping& lm = mm.levels[sz(l)];
  i64 px = 1, py = 1;
  for (int e = 0; e < nd; ++e) {
    if (lm.spatial[sz(e)] > 1) (lm.axis[sz(e)] == lp::Axis::x ? px : py) *= lm.spatial[sz(e)];
  }
  return px <= fanout_x(a, l) && py <= fanout_y(a, l);
}

bool Search::rederive(lp::Mapping& mm, int d) const {
  const i64 dim = p.dim_sizes[sz(d)];
  const int rl = rest_level[sz(d)];
  i64 prod = 1;
  for (int l = 0; l < nl; ++l) prod *= mm.levels[sz(l)].spatial[sz(d)] * (l != rl ? mm.levels[sz(l)].temporal[sz(d)] : 1);
  if (rl < 0) return c.imperfect ? prod >= dim : prod == dim;  // fixed factors only: they must cover it
  if (prod > dim || (!c.imperfect && dim % prod != 0)) return false;
  mm.levels[sz(rl)].temporal[sz(d)] = ceil_div(dim, prod);
  return true;
}

// Shrinks tiles until every kept tile set fits: while some level overflows, the largest
// free temporal factor at that level or below (innermost overflowing level first) gives
// its smallest prime to the outermost level. False when nothing is left to shrink.
bool Search::repair_capacity(lp::Mapping& mm) const {
  for (int iter = 0; iter < 64; ++iter) {
    std::array<i64, lp::kMaxDims> e{};
    e.fill(1);
    int over = -1;
    for (int l = nl - 1; l >= 0 && over < 0; --l) {
      const lp::LevelMapping& lm = mm.levels[sz(l)];
      for (int d = 0; d < nd; ++d) e[sz(d)] *= lm.spatial[sz(d)] * lm.temporal[sz(d)];
      const i64 cap = a.levels[sz(l)].capacity_words;
      if (cap > 0 && level_words(p, lm.keep, lm.double_buffer, e) > cap) over = l;
    }
    if (over < 0) return true;
    int bl = -1, bd = -1;
    i64 bf = 1;
    for (int l = std::max(over, 1); l < nl && bl < 0; ++l) {
      for (int d = 0; d < nd; ++d) {
        const i64 f = mm.levels[sz(l)].temporal[sz(d)];
        if (f > bf && temporal_free(l, d) && rest_level[sz(d)] >= 0 && rest_level[sz(d)] < over) {
          bf = f;
          bl = l;
          bd = d;
        }
      }
    }
    if (bl < 0) return false;
    i64 q = 2;
    while (bf % q != 0) ++q;
    mm.levels[sz(bl)].temporal[sz(bd)] = bf / q;
    if (!rederive(mm, bd)) return false;
  }
  return false;
}

bool Search::apply(const lp::Mapping& cur, const Move& mv, lp::Mapping& out) const {
  out = cur;
  const int d = mv.d;
  switch (mv.kind) {
    case Move::Kind::set:
    case Move::Kind::transfer: {
      const int to = mv.kind == Move::Kind::set ? mv.s1 : mv.s2;
      const bool fresh = slot_factor(cur, to, d) == 1;
      if (mv.kind == Move::Kind::set) {
        slot_factor(out, to, d) = mv.v;
      } else {
        slot_factor(out, mv.s1, d) /= mv.v;
        slot_factor(out, to, d) *= mv.v;
      }
      const int l = to / 2;
      if ((to % 2) == 1) {
        if (fresh || mv.kind == Move::Kind::set) out.levels[sz(l)].axis[sz(d)] = mv.axis == 0 ? lp::Axis::x : lp::Axis::y;
        if (!fanout_ok(out, l)) return false;
      } else if (fresh && mv.pos >= 0) {
        place(out.levels[sz(l)], nd, d, mv.pos);
      }
      if (!rederive(out, d)) return false;
      break;
    }
    case Move::Kind::pair: {
      lp::LevelMapping& lm = out.levels[sz(mv.s1)];
      const lp::Axis axis = mv.axis == 0 ? lp::Axis::x : lp::Axis::y;
      const i64 fan = mv.axis == 0 ? fanout_x(a, mv.s1) : fanout_y(a, mv.s1);
      for (int e = 0; e < nd; ++e) {
        if (lm.spatial[sz(e)] > 1 && lm.axis[sz(e)] == axis && spatial_free(mv.s1, e)) lm.spatial[sz(e)] = 1;
      }
      lm.spatial[sz(d)] = std::min(mv.v, p.dim_sizes[sz(d)]);
      lm.spatial[sz(mv.s2)] = std::min(fan / mv.v, p.dim_sizes[sz(mv.s2)]);
      lm.axis[sz(d)] = axis;
      lm.axis[sz(mv.s2)] = axis;
      for (int e = 0; e < nd; ++e) {
        if (!rederive(out, e)) return false;
      }
      break;
    }
    case Move::Kind::order: {
      lp::LevelMapping& lm = out.levels[sz(mv.s1)];
      std::array<std::int8_t, lp::kMaxDims> seq{};
      const int k = non_unit(lm, nd, seq);
      const std::int8_t moved = seq[sz(mv.s2)];
      if (mv.s2 < mv.pos) {
        for (int i = mv.s2; i < mv.pos; ++i) seq[sz(i)] = seq[sz(i + 1)];
      } else {
        for (int i = mv.s2; i > mv.pos; --i) seq[sz(i)] = seq[sz(i - 1)];
      }
      seq[sz(mv.pos)] = moved;
      int n = 0;
      for (int i = 0; i < nd; ++i) {  // unit loops (order-free) outermost, then the sequence
        if (lm.temporal[sz(lm.order[sz(i)])] <= 1) lm.order[sz(n++)] = lm.order[sz(i)];
      }
      for (int i = 0; i < k; ++i) lm.order[sz(n++)] = seq[sz(i)];
      break;
    }
    case Move::Kind::keep:
      out.levels[sz(mv.s1)].keep = static_cast<std::uint32_t>(mv.v);
      if (!repair_capacity(out)) return false;
      break;
  }
  canonical_orders(out);
  return !check_admission || factors_within(out);
}

bool Search::factors_within(const lp::Mapping& mm) const noexcept {
  for (int l = 0; l < nl; ++l) {
    const LevelConstraint& lc = c.levels[sz(l)];
    for (int d = 0; d < nd; ++d) {
      if (!within(mm.levels[sz(l)].temporal[sz(d)], lc.temporal_min[sz(d)], lc.temporal_max[sz(d)]) ||
          !within(mm.levels[sz(l)].spatial[sz(d)], lc.spatial_min[sz(d)], lc.spatial_max[sz(d)])) return false;
    }
  }
  return true;
}

// The values slot sl of dimension d is tried with, ascending and distinct: all or about
// half of what the outermost level holds moved here, the slot times or over each prime
// of qs, 1, and (spatial) its fan-out on either axis.
int Search::slot_values(const lp::Mapping& cur, int d, int sl, const std::array<i64, kMaxPrimes + 4>& qs, int nq,
                        std::array<i64, kMaxSlotValues>& vals) const {
  const i64 f = slot_factor(cur, sl, d);
  const int rl = rest_level[sz(d)];
  const i64 r0 = rl >= 0 ? cur.levels[sz(rl)].temporal[sz(d)] : 1;
  int nv = 0;
  if (r0 > 1) nv += rest_values(f, r0, vals.data());
  for (int k = 0; k < nq; ++k) {
    vals[sz(nv++)] = f * qs[sz(k)];
    if (f % qs[sz(k)] == 0) vals[sz(nv++)] = f / qs[sz(k)];
  }
  if (f > 1) vals[sz(nv++)] = 1;
  if ((sl % 2) == 1) {
    vals[sz(nv++)] = std::min(p.dim_sizes[sz(d)], fanout_x(a, sl / 2));
    vals[sz(nv++)] = std::min(p.dim_sizes[sz(d)], fanout_y(a, sl / 2));
  }
  std::sort(vals.begin(), vals.begin() + nv);
  return static_cast<int>(std::unique(vals.begin(), vals.begin() + nv) - vals.begin());
}

// Set and transfer moves of dimension d: each free slot multiplied or divided by a
// prime of the dimension (2, 3, 5, 7 too with imperfect factors), given all or about
// half of what the outermost level holds, reset to 1 or filled to its fan-out; and a
// prime (or the whole factor) moved between two slots. A temporal loop that appears
// at a level is tried where its dimension stands, outermost and innermost.
void Search::gen_factor_moves(const lp::Mapping& cur, int d, std::vector<Move>& out) const {
  std::array<int, 2 * lp::kMaxLevels> slots{};
  int ns = 0;
  for (int sl = 0; sl < 2 * nl; ++sl) {
    const int l = sl / 2;
    if ((sl % 2) == 1 ? spatial_free(l, d) : (l != rest_level[sz(d)] && temporal_free(l, d))) slots[sz(ns++)] = sl;
  }
  std::array<i64, kMaxPrimes + 4> qs{};
  int nq = 0;
  for (int i = 0; i < num_primes[sz(d)]; ++i) qs[sz(nq++)] = primes[sz(d)][sz(i)];
  if (c.imperfect) {
    for (const i64 q : {2, 3, 5, 7}) {
      if (std::find(qs.begin(), qs.begin() + nq, q) == qs.begin() + nq) qs[sz(nq++)] = q;
    }
  }
  auto push = [&](Move mv, int to, bool fresh) {
    const int l = to / 2;
    if ((to % 2) == 1) {
      const int fa = forced_axis(c.levels[sz(l)], d);
      for (int ax = 0; ax < 2; ++ax) {
        if ((fa >= 0 && fa != ax) || (ax == 0 ? fanout_x(a, l) : fanout_y(a, l)) < 2) continue;
        mv.axis = static_cast<std::int8_t>(ax);
        out.push_back(mv);
      }
      return;
    }
    out.push_back(mv);
    if (fresh && c.levels[sz(l)].num_permutation == 0) {
      for (std::int8_t pos = 0; pos < 2; ++pos) {
        mv.pos = pos;
        out.push_back(mv);
      }
    }
  };
  for (int i = 0; i < ns; ++i) {
    const int sl = slots[sz(i)];
    const i64 f = slot_factor(cur, sl, d);
    std::array<i64, kMaxSlotValues> vals{};
    const int nv = slot_values(cur, d, sl, qs, nq, vals);
    for (int k = 0; k < nv; ++k) {
      if (vals[sz(k)] == f || vals[sz(k)] < 1) continue;
      Move mv;
      mv.kind = Move::Kind::set;
      mv.d = static_cast<std::int8_t>(d);
      mv.s1 = static_cast<std::int8_t>(sl);
      mv.v = vals[sz(k)];
      push(mv, sl, f == 1);
    }
    for (int j = 0; j < ns; ++j) {
      const int sl2 = slots[sz(j)];
      if (j == i) continue;
      for (int k = 0; k <= nq; ++k) {
        const i64 q = k < nq ? qs[sz(k)] : f;  // a prime, or the whole factor
        if (q <= 1 || f % q != 0 || (k == nq && std::find(qs.begin(), qs.begin() + nq, f) != qs.begin() + nq)) continue;
        Move mv;
        mv.kind = Move::Kind::transfer;
        mv.d = static_cast<std::int8_t>(d);
        mv.s1 = static_cast<std::int8_t>(sl);
        mv.s2 = static_cast<std::int8_t>(sl2);
        mv.v = q;
        push(mv, sl2, slot_factor(cur, sl2, d) == 1);
      }
    }
  }
}

// Spatial pair moves: one mesh axis filled with two dimensions (a x b = its fan-out).
void Search::gen_pair_moves(const lp::Mapping& cur, std::vector<Move>& out) const {
  (void)cur;
  for (int l = 0; l < nl; ++l) {
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
            Move mv;
            mv.kind = Move::Kind::pair;
            mv.d = static_cast<std::int8_t>(d1);
            mv.s1 = static_cast<std::int8_t>(l);
            mv.s2 = static_cast<std::int8_t>(d2);
            mv.axis = static_cast<std::int8_t>(ax);
            mv.v = q;
            out.push_back(mv);
          }
        }
      }
    }
  }
}

void Search::gen_moves(const lp::Mapping& cur, std::vector<Move>& out) const {
  out.clear();
  for (int d = 0; d < nd; ++d) gen_factor_moves(cur, d, out);
  gen_pair_moves(cur, out);
  // Loop orders: one non-unit loop moved to another place among them (not the loops a
  // permutation constraint pins innermost or outermost).
  for (int l = 0; l < nl; ++l) {
    const LevelConstraint& lc = c.levels[sz(l)];
    std::array<std::int8_t, lp::kMaxDims> seq{};
    const int k = non_unit(cur.levels[sz(l)], nd, seq);
    auto pinned = [&lc](int d) {
      return in_list(lc.permutation, lc.num_permutation, d) || in_list(lc.outer_permutation, lc.num_outer_permutation, d);
    };
    for (int i = 0; i < k; ++i) {
      if (pinned(seq[sz(i)])) continue;
      for (int j = 0; j < k; ++j) {
        if (j == i || j == i - 1 || pinned(seq[sz(j)])) continue;
        Move mv;
        mv.kind = Move::Kind::order;
        mv.s1 = static_cast<std::int8_t>(l);
        mv.s2 = static_cast<std::int8_t>(i);
        mv.pos = static_cast<std::int8_t>(j);
        out.push_back(mv);
      }
    }
  }
  for (int l = 1; l < nl; ++l) {
    for (const std::uint32_t k : keeps[sz(l)]) {
      if (k == cur.levels[sz(l)].keep) continue;
      Move mv;
      mv.kind = Move::Kind::keep;
      mv.s1 = static_cast<std::int8_t>(l);
      mv.v = k;
      out.push_back(mv);
    }
  }
}

}  // namespace dse::costmodel::mapper::detail
