#include "costmodel/loopnest/evaluate.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <numeric>

namespace dse::costmodel::loopnest {

const char* infeasible_name(Infeasible r) noexcept {
  switch (r) {
    case Infeasible::none: return "none";
    case Infeasible::capacity_exceeded: return "capacity_exceeded";
    case Infeasible::fanout_exceeded: return "fanout_exceeded";
    case Infeasible::unsupported_precision: return "unsupported_precision";
    case Infeasible::bad_factors: return "bad_factors";
    case Infeasible::keep_not_allowed: return "keep_not_allowed";
    case Infeasible::bad_shape: return "bad_shape";
  }
  return "?";
}

namespace {

using i64 = std::int64_t;
constexpr int kMaxPairs = kMaxTerms;  // one loop per dimension and level
constexpr i64 kBitsetBits = 4096;

// The set {sum_j step_j * x_j : 0 <= x_j < n_j} of one tensor coordinate:
// its size, and the overlap with a shifted copy of itself.
struct Pair {
  i64 step;
  i64 n;
};

struct SumSet {
  std::array<Pair, kMaxPairs> pairs;  // normalised by g, sorted by step
  int num = 0;
  i64 g = 1;
  i64 reach = 0;  // max element / g
  i64 size = 1;
  bool interval = true;
};

using Bits = std::array<std::uint64_t, kBitsetBits / 64>;

void build_bits(const SumSet& s, Bits& out) noexcept {
  out.fill(0);
  out[0] = 1;
  for (int p = 0; p < s.num; ++p) {
    Bits acc = out;
    for (i64 x = 1; x < s.pairs[p].n; ++x) {
      const i64 shift = x * s.pairs[p].step;
      const i64 word = shift / 64, bit = shift % 64;
      for (i64 w = kBitsetBits / 64 - 1; w >= word; --w) {
        std::uint64_t v = out[static_cast<std::size_t>(w - word)] << bit;
        if (bit != 0 && w - word - 1 >= 0) v |= out[static_cast<std::size_t>(w - word - 1)] >> (64 - bit);
        acc[static_cast<std::size_t>(w)] |= v;
      }
    }
    out = acc;
  }
}

i64 popcount(const Bits& b) noexcept {
  i64 n = 0;
  for (auto w : b) n += std::popcount(w);
  return n;
}

void finish(SumSet& s) noexcept {
  if (s.num == 0) return;
  if (s.num == 1) {  // one arithmetic progression
    s.g = s.pairs[0].step;
    s.pairs[0].step = 1;
    s.reach = s.pairs[0].n - 1;
    s.size = s.pairs[0].n;
    return;
  }
  i64 g = 0;
  for (int i = 0; i < s.num; ++i) g = std::gcd(g, s.pairs[i].step);
  s.g = g;
  for (int i = 0; i < s.num; ++i) s.pairs[i].step /= g;
  std::sort(s.pairs.begin(), s.pairs.begin() + s.num, [](const Pair& a, const Pair& b) { return a.step < b.step; });
  for (int i = 0; i < s.num; ++i) {
    if (s.pairs[i].step > s.reach + 1) s.interval = false;
    s.reach += (s.pairs[i].n - 1) * s.pairs[i].step;
  }
  if (s.interval || s.reach >= kBitsetBits) {
    s.size = s.reach + 1;  // a bounding interval when too wide to enumerate
    return;
  }
  Bits b;
  build_bits(s, b);
  s.size = popcount(b);
}

void add_pair(SumSet& s, i64 step, i64 n) noexcept {
  if (n > 1 && step > 0 && s.num < kMaxPairs) s.pairs[s.num++] = Pair{step, n};
}

// |S ∩ (S + d)|
i64 overlap(const SumSet& s, i64 d) noexcept {
  if (d == 0) return s.size;
  if (d < 0) d = -d;
  if (s.g != 1) {
    if (d % s.g != 0) return 0;
    d /= s.g;
  }
  if (d > s.reach) return 0;
  if (s.interval || s.reach >= kBitsetBits) return std::max<i64>(0, s.size - d);
  Bits b;
  build_bits(s, b);
  const i64 word = d / 64, bit = d % 64;
  i64 n = 0;
  for (i64 w = 0; w < kBitsetBits / 64; ++w) {
    std::uint64_t shifted = 0;
    if (w + word < kBitsetBits / 64) {
      shifted = b[static_cast<std::size_t>(w + word)] >> bit;
      if (bit != 0 && w + word + 1 < kBitsetBits / 64) shifted |= b[static_cast<std::size_t>(w + word + 1)] << (64 - bit);
    }
    n += std::popcount(b[static_cast<std::size_t>(w)] & shifted);
  }
  return n;
}

using Extents = std::array<i64, kMaxDims>;

// Per tensor coordinate sets of the tile spanned by `ext`.
SumSet rank_set(const Rank& rank, const Extents& ext) noexcept {
  SumSet s;
  for (int i = 0; i < rank.num_terms; ++i) {
    const Term& term = rank.terms[static_cast<std::size_t>(i)];
    add_pair(s, term.coef, ext[static_cast<std::size_t>(term.dim)]);
  }
  finish(s);
  return s;
}

// Distinct values of one coordinate over the extents (one term: the extent).
inline i64 rank_size(const Rank& rank, const Extents& ext) noexcept {
  if (rank.num_terms == 1) return rank.terms[0].coef > 0 ? ext[static_cast<std::size_t>(rank.terms[0].dim)] : 1;
  return rank_set(rank, ext).size;
}

// Points of one coordinate's set kept after shifting it by d.
inline i64 rank_overlap(const Rank& rank, const Extents& ext, i64 d) noexcept {
  if (rank.num_terms == 1) {
    const i64 n = ext[static_cast<std::size_t>(rank.terms[0].dim)];
    if (d == 0) return n;
    const i64 c = rank.terms[0].coef;
    if (d < 0) d = -d;
    if (c != 1) {
      if (c <= 0 || d % c != 0) return 0;
      d /= c;
    }
    return d >= n ? 0 : n - d;
  }
  return overlap(rank_set(rank, ext), d);
}

[[gnu::noinline]] i64 tile_size(const PreparedTensor& t, const Extents& ext) noexcept {
  i64 n = 1;
  for (int r = 0; r < t.num_ranks; ++r) n *= rank_size(t.ranks[static_cast<std::size_t>(r)], ext);
  return n;
}

// Timeloop's tile: per coordinate the bounding interval of its values (its point sets are
// axis-aligned hyper-rectangles, loop-analysis/point-set-aahr.cpp), so a strided or dilated
// window counts the gaps between the points it reads.
inline i64 rank_span(const Rank& rank, const Extents& ext) noexcept {
  i64 span = 1;
  for (int i = 0; i < rank.num_terms; ++i) {
    const Term& term = rank.terms[static_cast<std::size_t>(i)];
    if (term.coef > 0) span += term.coef * (ext[static_cast<std::size_t>(term.dim)] - 1);
  }
  return span;
}

[[gnu::noinline]] i64 bounding_tile(const PreparedTensor& t, const Extents& ext) noexcept {
  i64 n = 1;
  for (int r = 0; r < t.num_ranks; ++r) n *= rank_span(t.ranks[static_cast<std::size_t>(r)], ext);
  return n;
}

// Tile of a simple tensor (one dimension per coordinate): product of extents.
inline i64 simple_size(const PreparedTensor& t, const Extents& ext) noexcept {
  i64 n = 1;
  for (int q = 0; q < t.num_used; ++q) n *= ext[static_cast<std::size_t>(t.used_dims[static_cast<std::size_t>(q)])];
  return n;
}

inline i64 ceil_div(i64 a, i64 b) noexcept { return b <= 1 ? a : (a + b - 1) / b; }

template <class T>
inline auto& at(T& a, int i) noexcept {
  return a[static_cast<std::size_t>(i)];
}

}  // namespace

PreparedNest prepare(const Architecture& arch, const Problem& prob) noexcept {
  PreparedNest pn;
  const int nl = static_cast<int>(arch.levels.size());
  pn.num_levels = nl;
  pn.num_dims = prob.num_dims;
  pn.num_tensors = prob.num_tensors;
  pn.dim_sizes = prob.dim_sizes;
  pn.macs = macs(prob);
  pn.macs_per_point = prob.macs_per_point;
  pn.clock_hz = arch.clock_hz;
  pn.shape_ok = nl >= 1 && nl <= kMaxLevels && prob.num_dims >= 1 && prob.num_dims <= kMaxDims &&
                prob.num_tensors >= 1 && prob.num_tensors <= kMaxTensors;
  if (!pn.shape_ok) return pn;
  pn.ext_dims = prob.num_dims;
  for (int l = 0; l < nl; ++l) {
    const StorageLevel& lv = at(arch.levels, l);
    PreparedLevel& pl = at(pn.levels, l);
    const i64 next_x = l + 1 < nl ? at(arch.levels, l + 1).mesh_x : arch.compute.mesh_x;
    const i64 next_y = l + 1 < nl ? at(arch.levels, l + 1).mesh_y : arch.compute.mesh_y;
    pl.fan_x = lv.mesh_x > 0 ? next_x / lv.mesh_x : 0;
    pl.fan_y = lv.mesh_y > 0 ? next_y / lv.mesh_y : 0;
    pl.capacity_words = lv.capacity_words;
    pl.instances = lv.instances();
    pl.block_words = lv.block_words;
    pl.read_bandwidth_words_per_cycle = lv.read_bandwidth_words_per_cycle;
    pl.write_bandwidth_words_per_cycle = lv.write_bandwidth_words_per_cycle;
    pl.shared_bandwidth_words_per_cycle = lv.shared_bandwidth_words_per_cycle;
    pl.read_energy_j = lv.read_energy_j;
    pl.fill_energy_j = lv.fill_energy_j;
    pl.update_energy_j = lv.update_energy_j;
    pl.leak_energy_j_per_cycle = lv.leak_energy_j_per_cycle;
    pl.power_gated = lv.power_gated;
    pl.may_keep = lv.may_keep;
  }
  // Compute rate for the operand precision.
  const int bits = prob.tensors[0].precision_bits;
  for (int i = 0; i < arch.compute.num_rates && i < 4; ++i) {
    const PrecisionRate& r = at(arch.compute.rates, i);
    if (r.bits == 0 || r.bits == bits) {
      pn.rate_ok = r.macs_per_cycle > 0.0;
      pn.macs_per_cycle = r.macs_per_cycle;
      pn.energy_per_mac_j = r.energy_per_mac_j;
      pn.peak_macs_per_cycle = static_cast<double>(arch.compute.instances()) * r.macs_per_cycle;
      break;
    }
  }
  for (int t = 0; t < prob.num_tensors; ++t) {
    const Tensor& ten = at(prob.tensors, t);
    PreparedTensor& pt = at(pn.tensors, t);
    pt.ranks = ten.ranks;
    pt.num_ranks = ten.num_ranks;
    pt.read_write = ten.read_write;
    pt.rank_of.fill(-1);
    for (int r = 0; r < ten.num_ranks; ++r) {
      const Rank& rank = at(ten.ranks, r);
      for (int q = 0; q < rank.num_terms; ++q) {
        const Term& term = at(rank.terms, q);
        at(pt.rank_of, term.dim) = static_cast<std::int8_t>(r);
        at(pt.coef_of, term.dim) = term.coef;
      }
      pt.simple = pt.simple && rank.num_terms == 1 && rank.terms[0].coef > 0;
      if (rank.num_terms >= 1) at(pt.used_dims, pt.num_used++) = rank.terms[0].dim;
    }
    for (int d = 0; d < kMaxDims; ++d) {
      if (at(pt.rank_of, d) >= 0) {
        pt.dim_mask |= 1u << d;
        pn.ext_dims = std::max(pn.ext_dims, d + 1);
      }
    }
  }
  return pn;
}

NestCost evaluate(const Architecture& arch, const Problem& prob, const Mapping& map) noexcept {
  return evaluate(prepare(arch, prob), map);
}

namespace {

// A loop of the flattened nest (unit loops are dropped); its stride is the
// extent of its dimension inside it (one loop per dimension, level and kind).
struct Loop {
  std::int8_t dim;
  i64 factor;
  i64 stride;
};

using LevelExtents = std::array<Extents, kMaxLevels + 1>;
using Loops = std::array<Loop, kMaxLevels * kMaxDims>;

// The explicit nest the general analysis (multi-term coordinates, or exact
// reuse) walks; the fast path needs none of it, so it is built on demand.
struct Nest {
  LevelExtents es;  // extents inside level l's spatial loops
  Loops tloops;     // temporal loops, outermost first
  Loops sloops;     // spatial loops, level by level
  std::array<int, kMaxLevels + 1> temporal_above;
  std::array<int, kMaxLevels + 1> spatial_start;  // first spatial loop of level l
};

// From the (validated) mapping and the extents el inside every level.
[[gnu::noinline]] void build_nest(const Mapping& map, int nl, int nd, int nx, const LevelExtents& el,
                                  Nest& n) noexcept {
  for (int d = 0; d < nx; ++d) at(at(n.es, nl), d) = 1;
  int nm = 0, ns = 0;
  for (int l = 0; l < nl; ++l) {
    const LevelMapping& lm = at(map.levels, l);
    Extents& es = at(n.es, l);
    for (int d = 0; d < nd; ++d) at(es, d) = at(at(el, l + 1), d) * at(lm.spatial, d);
    for (int d = nd; d < nx; ++d) at(es, d) = 1;
    at(n.temporal_above, l) = nm;
    at(n.spatial_start, l) = ns;
    for (int i = 0; i < nd; ++i) {
      const int d = at(lm.order, i);
      const i64 f = at(lm.temporal, d);
      if (f > 1) at(n.tloops, nm++) = Loop{static_cast<std::int8_t>(d), f, at(es, d)};
    }
    for (int d = 0; d < nd; ++d) {
      const i64 f = at(lm.spatial, d);
      if (f > 1) at(n.sloops, ns++) = Loop{static_cast<std::int8_t>(d), f, at(at(el, l + 1), d)};
    }
  }
  at(n.temporal_above, nl) = nm;
  at(n.spatial_start, nl) = ns;
}

// Fills of a tile with extents `ext` under the m temporal loops above it when every overlap with
// the previous tile is kept (ReusePolicy::exact): walk them from the innermost out, tracking the
// offset (per coordinate) the inner loops' wrap-around adds.
[[gnu::noinline]] i64 exact_fills(const PreparedTensor& pt, const Extents& ext, i64 tile, const Loops& tloops,
                                  const std::array<i64, kMaxLevels * kMaxDims + 1>& outer_prod, int m) noexcept {
  i64 fills = tile;
  // Walk the temporal loops above the level from the innermost out,
  // tracking the offset (per coordinate) the inner loops' wrap-around adds.
  std::array<i64, kMaxRanks> wrap{};
  int nonzero = 0;
  for (int j = m - 1; j >= 0; --j) {
    const Loop& lp = at(tloops, j);
    const int r = at(pt.rank_of, lp.dim);
    if (r < 0 && nonzero == 0) continue;  // the tile does not move
    const i64 step = r >= 0 ? at(pt.coef_of, lp.dim) * lp.stride : 0;
    i64 delta = 0;
    if (r >= 0 || nonzero > 0) {
      const i64 dr = r >= 0 ? at(wrap, r) + step : 0;
      const int others = nonzero - (r >= 0 && at(wrap, r) != 0 ? 1 : 0);
      if (dr != 0 || others > 0) {
        i64 kept_points = 1;
        for (int q = 0; q < pt.num_ranks && kept_points != 0; ++q) {
          kept_points *= rank_overlap(at(pt.ranks, q), ext, q == r ? dr : at(wrap, q));
        }
        delta = tile - kept_points;
      }
    }
    fills += at(outer_prod, j) * (lp.factor - 1) * delta;
    if (r >= 0) {
      const bool was = at(wrap, r) != 0;
      at(wrap, r) -= (lp.factor - 1) * step;
      nonzero += (at(wrap, r) != 0 ? 1 : 0) - (was ? 1 : 0);
    }
  }
  return fills;
}

// Fills of a tile with extents `ext` (bounding box, `tile` words) under the m temporal loops above
// it, as Timeloop v3 counts them (loop-analysis/nest-analysis.cpp, ComputeTemporalWorkingSet and
// ComputeDeltas; workload/shape-models/operation-space.cpp, SaveAndSubtractIfSameStride):
//  - each loop runs its iteration 0 and one iteration 1 standing for the other n - 1, so after a
//    loop's iterations the tile sits at its index 1; when loop j steps, the inner loops go back
//    from index 1 to 0 and the tile moves by T_j = s_j - sum_{i>j} s_i (s_i: loop i's step);
//  - the tile keeps what it shares with the previous one (the delta is fetched) only while the
//    move repeats the last move recorded; the innermost loop's moves are always recorded, so a
//    step of an outer loop j keeps its overlap only if T_j equals the innermost loop's step, and
//    otherwise fetches the whole tile;
//  - the overlap of two boxes is kept only when they differ along one coordinate.
[[gnu::noinline]] i64 timeloop_fills(const PreparedTensor& pt, const Extents& ext, i64 tile, const Loops& tloops,
                                     const std::array<i64, kMaxLevels * kMaxDims + 1>& outer_prod, int m) noexcept {
  if (m == 0) return tile;
  // The innermost loop's move s (one coordinate at most) and the words it fetches.
  const Loop& in = at(tloops, m - 1);
  const int ri = at(pt.rank_of, in.dim);
  const i64 step_in = ri >= 0 ? at(pt.coef_of, in.dim) * in.stride : 0;
  i64 moved_in = 0;
  if (ri >= 0) {
    const i64 e = rank_span(at(pt.ranks, ri), ext);
    moved_in = step_in >= e ? tile : tile / e * step_in;
  }
  i64 fills = tile + at(outer_prod, m - 1) * (in.factor - 1) * moved_in;
  // Loop j keeps the overlap when T_j = s_j - sum_{i>j} s_i equals s, i.e. s_j equals
  // target = s + sum_{i>j} s_i; the target's coordinates that are not zero are counted.
  std::array<i64, kMaxRanks> target{};
  int nonzero = 0;
  auto add = [&](int r, i64 v) {
    if (r < 0 || v == 0) return;
    const bool was = at(target, r) != 0;
    at(target, r) += v;
    nonzero += (at(target, r) != 0 ? 1 : 0) - (was ? 1 : 0);
  };
  add(ri, 2 * step_in);
  for (int j = m - 2; j >= 0; --j) {
    const Loop& lp = at(tloops, j);
    const int r = at(pt.rank_of, lp.dim);
    const i64 step = r >= 0 ? at(pt.coef_of, lp.dim) * lp.stride : 0;
    const bool same = r < 0 || step == 0 ? nonzero == 0
                                         : nonzero == (at(target, r) != 0 ? 1 : 0) && at(target, r) == step;
    fills += at(outer_prod, j) * (lp.factor - 1) * (same ? moved_in : tile);
    add(r, step);
  }
  return fills;
}

// Distinct coordinate tuples the spatial loops sloops[s0, s1) deliver.
[[gnu::noinline]] i64 coordinate_spread(const PreparedTensor& pt, const Loops& sloops, int s0, int s1) noexcept {
  i64 distinct = 1;
  for (int r = 0; r < pt.num_ranks; ++r) {
    const Rank& rank = at(pt.ranks, r);
    SumSet s;
    for (int q = 0; q < rank.num_terms; ++q) {
      const Term& term = at(rank.terms, q);
      for (int i = s0; i < s1; ++i) {
        const Loop& lp = at(sloops, i);
        if (lp.dim == term.dim) add_pair(s, term.coef * lp.stride, lp.factor);
      }
    }
    finish(s);
    distinct *= s.size;
  }
  return distinct;
}

// The share of the output one instance of level lvl ever holds: the whole
// output, narrowed by every spatial fan-out above the level.
[[gnu::noinline]] i64 general_partition(const PreparedTensor& pt, const LevelExtents& el, const LevelExtents& es,
                                        const std::array<int, kMaxLevels + 1>& spatial_start, int lvl) noexcept {
  i64 part = tile_size(pt, el[0]);
  for (int g = 0; g < lvl; ++g) {
    if (at(spatial_start, g) == at(spatial_start, g + 1)) continue;
    const i64 uni = tile_size(pt, at(es, g));
    const i64 sub = tile_size(pt, at(el, g + 1));
    part = uni > 0 ? part * sub / uni : part;
  }
  return part;
}

// A stage's verdict on the mapping: feasible so far (reason none), or why and at which level not.
struct Verdict {
  Infeasible reason = Infeasible::none;
  int level = -1;
};

// The nest walked outermost loop first (unit loops do not count): the temporal loops in nest
// order with the product of the factors outside each (outer_prod[M] = all of them), the set of
// them above every level and over every dimension; per level the dimensions it splits
// spatially with the span per mesh axis, the temporal factors of the levels above it, and the
// compute instances its spatial loops and those above it use.
struct LoopWalk {
  std::array<i64, kMaxLevels * kMaxDims + 1> outer_prod;
  std::array<std::uint64_t, kMaxLevels> loops_above;  // bit m: temporal loop m sits above level l
  std::array<std::uint64_t, kMaxDims> tpos{};  // bit m: temporal loop m is over dimension d
  std::array<std::uint32_t, kMaxLevels> spatial_dims;  // bit d: level l has a spatial loop over d
  std::array<i64, kMaxLevels> span_x;
  std::array<i64, kMaxLevels> span_y;
  std::array<Extents, kMaxLevels + 1> t_above;
  std::array<i64, kMaxLevels + 1> used_above;  // spatial product of levels < l
};

// Per tensor state while the levels are walked from the innermost out: what the next inner
// keeper (or the MACs) pulls per instance, and the spatial fan-out (all of it, and its distinct
// deliveries) since that keeper.
struct TensorWalk {
  std::array<i64, kMaxTensors> child_fills;
  std::array<i64, kMaxTensors> pending_fan;
  std::array<i64, kMaxTensors> pending_distinct;
  std::array<std::uint64_t, kMaxTensors> relevant;  // temporal loops over a dimension of the tensor
  std::array<std::uint32_t, kMaxLevels> kept_above;  // bit t: a level above l keeps tensor t
};

// Extents inside all of level l's loops, straight from the factors.
inline Verdict factor_extents(const PreparedNest& pn, const Mapping& map, LevelExtents& el) noexcept {
  const int nl = pn.num_levels, nd = pn.num_dims, nx = pn.ext_dims;
  for (int d = 0; d < nx; ++d) at(at(el, nl), d) = 1;
  for (int l = nl - 1; l >= 0; --l) {
    const LevelMapping& lm = at(map.levels, l);
    Extents& e = at(el, l);
    const Extents& inner = at(el, l + 1);
    i64 least = 1;
    for (int d = 0; d < nd; ++d) {
      const i64 sf = at(lm.spatial, d);
      const i64 tf = at(lm.temporal, d);
      at(e, d) = at(inner, d) * sf * tf;
      least = std::min(least, std::min(sf, tf));
    }
    if (least < 1) return {Infeasible::bad_factors, l};
    for (int d = nd; d < nx; ++d) at(e, d) = 1;
  }
  return {};
}

// The loops of the nest (LoopWalk), refusing a loop order that is not a permutation.
inline Verdict walk_loops(const PreparedNest& pn, const Mapping& map, LoopWalk& w, i64& iterations) noexcept {
  const int nl = pn.num_levels, nd = pn.num_dims, nx = pn.ext_dims;
  for (int d = 0; d < nx; ++d) at(at(w.t_above, 0), d) = 1;
  int nm = 0;
  for (int l = 0; l < nl; ++l) {
    const LevelMapping& lm = at(map.levels, l);
    at(w.loops_above, l) = (std::uint64_t{1} << nm) - 1;  // nm < 64: at most 7 levels above
    const Extents& ta = at(w.t_above, l);
    Extents& tb = at(w.t_above, l + 1);
    unsigned seen = 0;
    for (int i = 0; i < nd; ++i) {
      const int d = at(lm.order, i);
      if (static_cast<unsigned>(d) >= static_cast<unsigned>(nd) || ((seen >> d) & 1u) != 0) {
        return {Infeasible::bad_shape, l};
      }
      seen |= 1u << d;
      const i64 f = at(lm.temporal, d);
      at(tb, d) = at(ta, d) * f;
      if (f > 1) {
        at(w.outer_prod, nm) = iterations;
        iterations *= f;
        at(w.tpos, d) |= std::uint64_t{1} << nm;
        ++nm;
      }
    }
    i64 sx = 1, sy = 1;
    std::uint32_t sd = 0;
    for (int d = 0; d < nd; ++d) {
      const i64 f = at(lm.spatial, d);
      if (f > 1) {
        sd |= 1u << d;
        (at(lm.axis, d) == Axis::x ? sx : sy) *= f;
      }
    }
    at(w.span_x, l) = sx;
    at(w.span_y, l) = sy;
    at(w.spatial_dims, l) = sd;
    for (int d = nd; d < nx; ++d) at(tb, d) = 1;
  }
  at(w.outer_prod, nm) = iterations;
  return {};
}

// Spatial fan-out per level within its mesh, and the utilised instances.
inline Verdict fan_out(const PreparedNest& pn, LoopWalk& w) noexcept {
  const int nl = pn.num_levels;
  w.used_above[0] = 1;
  for (int l = 0; l < nl; ++l) {
    const PreparedLevel& pl = at(pn.levels, l);
    if (at(w.span_x, l) > pl.fan_x || at(w.span_y, l) > pl.fan_y) return {Infeasible::fanout_exceeded, l};
    at(w.used_above, l + 1) = at(w.used_above, l) * at(w.span_x, l) * at(w.span_y, l);
  }
  return {};
}

// A tensor kept where its level may not hold it: the first such tensor (at its outermost
// offending level, bad_level) is the reason, and the tensors before it are still analysed.
// Returns how many are (all of them when no keep is refused).
inline int tensors_analysed(const PreparedNest& pn, const Mapping& map, int& bad_level) noexcept {
  const int nl = pn.num_levels;
  std::uint32_t violation = 0;
  for (int l = 0; l < nl; ++l) violation |= at(map.levels, l).keep & ~at(pn.levels, l).may_keep;
  violation &= (1u << pn.num_tensors) - 1u;
  if (violation == 0) return pn.num_tensors;
  const int nt_ok = std::countr_zero(violation);
  for (int l = 0; l < nl && bad_level < 0; ++l) {
    if (((at(map.levels, l).keep & ~at(pn.levels, l).may_keep) >> nt_ok & 1u) != 0) bad_level = l;
  }
  return nt_ok;
}

// The tensors' state before the innermost level (TensorWalk). Returns whether some tensor has
// a coordinate of several terms and so needs the explicit nest.
inline bool start_tensors(const PreparedNest& pn, const LoopWalk& w, i64 iterations, int nt_ok,
                          TensorWalk& tw) noexcept {
  bool general = false;
  for (int t = 0; t < nt_ok; ++t) {
    const PreparedTensor& pt = at(pn.tensors, t);
    at(tw.child_fills, t) = iterations;
    at(tw.pending_fan, t) = 1;
    at(tw.pending_distinct, t) = 1;
    std::uint64_t rel = 0;
    for (std::uint32_t mk = pt.dim_mask; mk != 0; mk &= mk - 1) rel |= at(w.tpos, std::countr_zero(mk));
    at(tw.relevant, t) = rel;
    general = general || !pt.simple;
  }
  return general;
}

// The spatial loops of level lvl sit between it and the levels below: every tensor's pending
// fan-out grows by their span, its distinct deliveries by the spread of its coordinates.
inline void add_spatial_loops(const PreparedNest& pn, const LevelMapping& lm, const LoopWalk& w, const Nest& nest,
                              int lvl, int nt_ok, TensorWalk& tw) noexcept {
  const i64 span = at(w.span_x, lvl) * at(w.span_y, lvl);
  for (int t = 0; t < nt_ok; ++t) {
    const PreparedTensor& pt = at(pn.tensors, t);
    at(tw.pending_fan, t) *= span;
    if (pt.simple) {
      i64 distinct = 1;
      for (std::uint32_t dm = pt.dim_mask & at(w.spatial_dims, lvl); dm != 0; dm &= dm - 1) distinct *= at(lm.spatial, std::countr_zero(dm));
      at(tw.pending_distinct, t) *= distinct;
    } else {
      at(tw.pending_distinct, t) *= coordinate_spread(pt, nest.sloops, at(nest.spatial_start, lvl), at(nest.spatial_start, lvl + 1));
    }
  }
}

// Fills of a level keeping a tensor: the first tile, then the delta at every step of the
// temporal loops above it (simple_timeloop: single-term coordinates under Timeloop's rule).
inline i64 tile_fills(const PreparedTensor& pt, bool simple_timeloop, const Extents& ext, i64 tile, const LoopWalk& w,
                      const Nest& nest, std::uint64_t relevant, int lvl, ReusePolicy reuse) noexcept {
  if (!simple_timeloop) {
    const int m = at(nest.temporal_above, lvl);
    return reuse == ReusePolicy::timeloop ? timeloop_fills(pt, ext, tile, nest.tloops, w.outer_prod, m)
                                          : exact_fills(pt, ext, tile, nest.tloops, w.outer_prod, m);
  }
  // Single-term coordinates never cancel a move, so with Timeloop's rule every step of a loop
  // outside the innermost relevant loop J refetches the whole tile (these steps telescope to
  // outer_prod[J] - 1). J's own steps move the tile by at least its extent (a loop above the
  // level strides by at least the level's extent), so they refetch it whole too:
  // fills = tile * outer_prod[J + 1].
  const std::uint64_t above = relevant & at(w.loops_above, lvl);
  return above != 0 ? tile * at(w.outer_prod, static_cast<int>(std::bit_width(above))) : tile;
}

// Partition of an output kept at level lvl: the share of the output this instance ever holds,
// the whole output divided by the spatial fan-out above the level.
inline i64 output_partition(const PreparedTensor& pt, bool simple, const LevelExtents& el, const LoopWalk& w,
                            const Nest& nest, int lvl) noexcept {
  if (!simple) return general_partition(pt, el, nest.es, nest.spatial_start, lvl);
  // = tile of (temporal factors above the level) x (extents inside it).
  const Extents& above = at(w.t_above, lvl);
  const Extents& ext = at(el, lvl);
  i64 part = 1;
  for (int q = 0; q < pt.num_used; ++q) {
    const int d = at(pt.used_dims, q);
    part *= at(above, d) * at(ext, d);
  }
  return part;
}

// A bandwidth-limited level's cycles in Timeloop's floating-point order (model/buffer.cpp,
// BufferLevel::ComputePerformance): per data space, in order, its accesses over the compute
// cycles, summed; the slowdown is the bandwidth over that sum; the cycles ceil(compute / slowdown).
[[gnu::noinline]] double timeloop_level_cycles(const PreparedLevel& pl, const LevelCost& lc, int nt_ok,
                                               double compute_cycles) noexcept {
  double read_rate = 0.0, write_rate = 0.0;
  for (int t = 0; t < nt_ok; ++t) {
    const TensorStats& ts = at(lc.tensors, t);
    if (!ts.kept) continue;
    read_rate += static_cast<double>(ts.reads) / compute_cycles;
    write_rate += static_cast<double>(ts.fills + ts.updates) / compute_cycles;
  }
  double slowdown = 1.0;
  if (pl.read_bandwidth_words_per_cycle > 0.0 && pl.read_bandwidth_words_per_cycle < read_rate) {
    slowdown = std::min(slowdown, pl.read_bandwidth_words_per_cycle / read_rate);
  }
  if (pl.write_bandwidth_words_per_cycle > 0.0 && pl.write_bandwidth_words_per_cycle < write_rate) {
    slowdown = std::min(slowdown, pl.write_bandwidth_words_per_cycle / write_rate);
  }
  if (pl.shared_bandwidth_words_per_cycle > 0.0 && pl.shared_bandwidth_words_per_cycle < write_rate + read_rate) {
    slowdown = std::min(slowdown, pl.shared_bandwidth_words_per_cycle / (write_rate + read_rate));
  }
  return slowdown < 1.0 ? std::ceil(compute_cycles / slowdown) : compute_cycles;
}

// Level lvl's accesses per tensor it keeps (its tile; fills from above, the first tile then
// the delta at every step of the temporal loops above it; accesses from the children, which
// for an output are updates), and when every tensor could be analysed (all_ok) its capacity,
// bandwidth-limited cycles, and energy of whole access vectors per tensor and action on the
// utilised instances. The reason names the innermost level over capacity.
inline void cost_level(const PreparedNest& pn, const Mapping& map, const LevelExtents& el, const LoopWalk& w,
                       const Nest& nest, int lvl, int nt_ok, int nt, TensorWalk& tw, NestCost& out,
                       double& cycles) noexcept {
  const LevelMapping& lm = at(map.levels, lvl);
  const PreparedLevel& pl = at(pn.levels, lvl);
  LevelCost& lc = at(out.levels, lvl);
  const Extents& ext = at(el, lvl);
  if (at(w.spatial_dims, lvl) != 0) add_spatial_loops(pn, lm, w, nest, lvl, nt_ok, tw);
  const bool timeloop = map.reuse == ReusePolicy::timeloop;
  const i64 copies = lm.double_buffer ? 2 : 1;
  const i64 bw = pl.block_words;
  i64 used = 0, rd = 0, wr = 0, rv = 0, fv = 0, uv = 0;
  for (int t = 0; t < nt_ok; ++t) {
    if ((lm.keep >> t & 1u) == 0) continue;
    const PreparedTensor& pt = at(pn.tensors, t);
    const bool simple = pt.simple;
    TensorStats& ts = at(lc.tensors, t);
    ts.kept = true;
    const i64 tile = simple ? simple_size(pt, ext) : timeloop ? bounding_tile(pt, ext) : tile_size(pt, ext);
    ts.utilized_capacity = tile;
    used += tile * copies;
    const i64 fills = tile_fills(pt, simple && timeloop, ext, tile, w, nest, at(tw.relevant, t), lvl, map.reuse);
    // Accesses from the children: distinct deliveries across the spatial fan-out between this
    // level and the child (identical deltas multicast, identical partial sums reduced).
    const i64 fan = at(tw.pending_fan, t), distinct = at(tw.pending_distinct, t);
    at(tw.pending_fan, t) = 1;
    at(tw.pending_distinct, t) = 1;
    const i64 content = at(tw.child_fills, t) * distinct;
    at(tw.child_fills, t) = fills;
    if (fan != 1 || distinct != 1) ts.fanout_per_access = static_cast<double>(fan) / static_cast<double>(distinct);
    const bool outermost = (at(tw.kept_above, lvl) >> t & 1u) == 0;
    i64 reads = content, filled = outermost ? 0 : fills, updates = 0;
    if (pt.read_write) {
      const i64 part = output_partition(pt, simple, el, w, nest, lvl);
      ts.partition = part;
      updates = content;
      reads = std::max<i64>(0, content - part);
      filled = outermost ? 0 : std::max<i64>(0, fills - part);
    }
    ts.reads = reads;
    ts.fills = filled;
    ts.updates = updates;
    rd += reads;
    wr += filled + updates;
    if (bw <= 1) {
      rv += reads;
      fv += filled;
      uv += updates;
    } else {
      rv += ceil_div(reads, bw);
      fv += ceil_div(filled, bw);
      uv += ceil_div(updates, bw);
    }
  }
  lc.instances = pl.instances;
  lc.utilized_instances = at(w.used_above, lvl);
  if (nt_ok < nt) return;  // infeasible below; the counts above are all it reports
  lc.capacity_used_words = used;
  if (pl.capacity_words > 0 && used > pl.capacity_words && out.feasible) {
    out.feasible = false;
    out.reason = Infeasible::capacity_exceeded;
    out.reason_level = lvl;
  }
  // A level slower than the compute stretches the nest to the cycles its accesses take, in whole
  // cycles as Timeloop counts them (model/buffer.cpp, ComputePerformance): ceil(compute cycles /
  // slowdown). Where that lands within rounding of a whole cycle (or of the compute's cycles),
  // Timeloop's own floating-point order decides (timeloop_level_cycles).
  double c = 0.0;
  if (pl.read_bandwidth_words_per_cycle > 0.0) c = std::max(c, static_cast<double>(rd) / pl.read_bandwidth_words_per_cycle);
  if (pl.write_bandwidth_words_per_cycle > 0.0) c = std::max(c, static_cast<double>(wr) / pl.write_bandwidth_words_per_cycle);
  if (pl.shared_bandwidth_words_per_cycle > 0.0) c = std::max(c, static_cast<double>(rd + wr) / pl.shared_bandwidth_words_per_cycle);
  if (c > out.compute_cycles * (1.0 - 1e-9) && c < 9007199254740992.0) {  // from 2^53 on, whole already
    const double tol = 1e-9 * c;
    const double below = static_cast<double>(static_cast<i64>(c));  // c > 0: its floor
    const bool clear = c - below > tol && below + 1.0 - c > tol && std::abs(c - out.compute_cycles) > tol;
    c = clear ? below + 1.0 : timeloop_level_cycles(pl, lc, nt_ok, out.compute_cycles);
  }
  lc.cycles = c;
  const double inst = static_cast<double>(at(w.used_above, lvl));
  lc.read_energy_j = static_cast<double>(rv) * pl.read_energy_j * inst;
  lc.fill_energy_j = static_cast<double>(fv) * pl.fill_energy_j * inst;
  lc.update_energy_j = static_cast<double>(uv) * pl.update_energy_j * inst;
  cycles = std::max(cycles, c);
}

// The nest's cycles (the slowest of compute and every level), utilisation, and energy with
// leakage: power-gated levels leak on the instances that hold data (at least one).
inline void finish_cost(const PreparedNest& pn, double cycles, NestCost& out) noexcept {
  const int nl = pn.num_levels, nt = pn.num_tensors;
  out.cycles = cycles;
  out.latency_s = pn.clock_hz > 0.0 ? cycles / pn.clock_hz : 0.0;
  const double peak = pn.peak_macs_per_cycle;
  out.utilization = cycles > 0.0 && peak > 0.0 ? out.macs / (cycles * peak) : 0.0;
  double total = 0.0;
  for (int l = 0; l < nl; ++l) {
    LevelCost& lc = at(out.levels, l);
    const PreparedLevel& pl = at(pn.levels, l);
    bool holds = false;
    for (int t = 0; t < nt; ++t) holds = holds || at(lc.tensors, t).kept;
    const i64 leaking = !pl.power_gated ? lc.instances : holds ? lc.utilized_instances : 1;
    lc.leak_energy_j = pl.leak_energy_j_per_cycle * cycles * static_cast<double>(leaking);
    lc.energy_j = lc.read_energy_j + lc.fill_energy_j + lc.update_energy_j + lc.leak_energy_j;
    total += lc.energy_j;
  }
  out.compute_energy_j = out.padded_macs * pn.energy_per_mac_j;
  out.energy_j = total + out.compute_energy_j;
}

}  // namespace

NestCost evaluate(const PreparedNest& pn, const Mapping& map) noexcept {
  NestCost out;
  const int nl = pn.num_levels;
  out.num_levels = nl;
  out.macs = pn.macs;
  auto fail = [&out](Verdict v) {
    out.feasible = false;
    out.reason = v.reason;
    out.reason_level = v.level;
  };
  if (!pn.shape_ok || map.num_levels != nl) {
    fail({Infeasible::bad_shape, -1});
    return out;
  }
  const int nd = pn.num_dims;
  const int nt = pn.num_tensors;
  LevelExtents el;
  LoopWalk w;
  i64 iterations = 1;
  {
    Verdict v = factor_extents(pn, map, el);
    if (v.reason == Infeasible::none) v = walk_loops(pn, map, w, iterations);
    if (v.reason != Infeasible::none) {
      fail(v);
      return out;
    }
  }
  double padded_points = 1.0;
  for (int d = 0; d < nd; ++d) {
    if (at(el[0], d) < at(pn.dim_sizes, d)) {
      fail({Infeasible::bad_factors, -1});
      return out;
    }
    padded_points *= static_cast<double>(at(el[0], d));
  }
  out.padded_macs = padded_points * pn.macs_per_point;
  if (const Verdict v = fan_out(pn, w); v.reason != Infeasible::none) {
    fail(v);
    return out;
  }
  out.compute_instances_used = at(w.used_above, nl);
  if (!pn.rate_ok) {
    fail({Infeasible::unsupported_precision, -1});
    return out;
  }

  int bad_level = -1;
  const int nt_ok = tensors_analysed(pn, map, bad_level);
  TensorWalk tw;
  Nest nest;
  // The explicit nest, when some tensor needs it (a coordinate of several terms, or exact reuse).
  const bool general = start_tensors(pn, w, iterations, nt_ok, tw) || map.reuse != ReusePolicy::timeloop;
  if (general) build_nest(map, nl, nd, pn.ext_dims, el, nest);
  for (std::uint32_t l = 0, k = 0; l < static_cast<std::uint32_t>(nl); k |= at(map.levels, l).keep, ++l)
    at(tw.kept_above, l) = k;

  out.compute_cycles = static_cast<double>(iterations) / pn.macs_per_cycle;
  double cycles = out.compute_cycles;
  for (int lvl = nl - 1; lvl >= 0; --lvl) cost_level(pn, map, el, w, nest, lvl, nt_ok, nt, tw, out, cycles);
  if (nt_ok < nt) {
    out.compute_cycles = 0.0;
    fail({Infeasible::keep_not_allowed, bad_level});
    return out;
  }
  finish_cost(pn, cycles, out);
  return out;
}

Architecture bind_keep_roles(Architecture a, const Problem& p) {
  for (auto& lv : a.levels) {
    if (lv.keep_roles == StorageLevel::kKeepAll) continue;
    std::uint32_t mask = 0;
    for (int t = 0; t < p.num_tensors; ++t) {
      const Tensor& x = p.tensors[static_cast<std::size_t>(t)];
      const std::uint8_t role = x.read_write ? StorageLevel::kKeepOutputs
                                : x.weights  ? StorageLevel::kKeepWeights
                                             : StorageLevel::kKeepInputs;
      if ((lv.keep_roles & role) != 0) mask |= 1u << t;
    }
    lv.may_keep &= mask;
  }
  return a;
}

std::string validate(const Architecture& a) {
  if (a.levels.empty()) return "no storage levels";
  if (static_cast<int>(a.levels.size()) > kMaxLevels) return "more than " + std::to_string(kMaxLevels) + " storage levels";
  i64 px = 1, py = 1;
  for (const auto& l : a.levels) {
    if (l.mesh_x < 1 || l.mesh_y < 1) return "level " + l.name + " has a mesh < 1";
    if (l.mesh_x % px != 0 || l.mesh_y % py != 0) return "level " + l.name + " mesh does not divide by the level above";
    if (l.block_words < 1) return "level " + l.name + " has block_words < 1";
    px = l.mesh_x;
    py = l.mesh_y;
  }
  if (a.compute.mesh_x % px != 0 || a.compute.mesh_y % py != 0) return "compute mesh does not divide by the level above";
  return "";
}

Mapping make_empty_mapping(const Architecture& a, const Problem& p) {
  Mapping m;
  m.num_levels = static_cast<int>(a.levels.size());
  const std::uint32_t all = p.num_tensors >= 32 ? 0xFFFFFFFFu : ((1u << p.num_tensors) - 1u);
  for (int l = 0; l < m.num_levels && l < kMaxLevels; ++l) {
    m.levels[static_cast<std::size_t>(l)].keep = a.levels[static_cast<std::size_t>(l)].may_keep & all;
  }
  return m;
}

}  // namespace dse::costmodel::loopnest
