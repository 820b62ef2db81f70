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
constexpr int kMaxLoops = kMaxLevels * kMaxDims * 2;
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

struct Loop {
  std::int8_t dim;
  std::int8_t level;
  bool spatial;
  Axis axis;
  i64 factor;
  i64 stride;  // product of the factors of the same dimension inside this loop
};

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

i64 tile_size(const Tensor& t, const Extents& ext) noexcept {
  i64 n = 1;
  for (int r = 0; r < t.num_ranks; ++r) n *= rank_size(t.ranks[static_cast<std::size_t>(r)], ext);
  return n;
}

i64 ceil_div(i64 a, i64 b) noexcept { return b <= 1 ? a : (a + b - 1) / b; }

struct Nest {
  std::array<Loop, kMaxLoops> loops;
  int num = 0;
  std::array<int, kMaxLevels + 1> level_start;    // first (temporal) loop of level l
  std::array<int, kMaxLevels + 1> spatial_start;  // first spatial loop of level l
  std::array<Extents, kMaxLevels + 1> ext_level;  // extents inside level_start[l]
  std::array<Extents, kMaxLevels + 1> ext_spatial;
  Extents padded;
};

}  // namespace

NestCost evaluate(const Architecture& arch, const Problem& prob, const Mapping& map) noexcept {
  NestCost out;
  const int nl = static_cast<int>(arch.levels.size());
  out.num_levels = nl;
  out.macs = macs(prob);
  auto fail = [&out](Infeasible r, int level) {
    out.feasible = false;
    out.reason = r;
    out.reason_level = level;
  };
  if (nl < 1 || nl > kMaxLevels || map.num_levels != nl || prob.num_dims < 1 || prob.num_dims > kMaxDims ||
      prob.num_tensors < 1) {
    {
      fail(Infeasible::bad_shape, -1);
      return out;
    }
  }
  const int nd = prob.num_dims;
  const int nt = prob.num_tensors;

  // Extents inside every level boundary, straight from the factors: inside
  // level l's spatial loops, and inside all of level l's loops.
  Nest nest;
  {
    Extents run;
    run.fill(1);
    nest.ext_level[static_cast<std::size_t>(nl)] = run;
    nest.ext_spatial[static_cast<std::size_t>(nl)] = run;
    for (int l = nl - 1; l >= 0; --l) {
      const LevelMapping& lm = map.levels[static_cast<std::size_t>(l)];
      Extents& es = nest.ext_spatial[static_cast<std::size_t>(l)];
      Extents& el = nest.ext_level[static_cast<std::size_t>(l)];
      const Extents& inner = nest.ext_level[static_cast<std::size_t>(l + 1)];
      for (int d = 0; d < kMaxDims; ++d) {
        const i64 sf = d < nd ? lm.spatial[static_cast<std::size_t>(d)] : 1;
        const i64 tf = d < nd ? lm.temporal[static_cast<std::size_t>(d)] : 1;
        es[static_cast<std::size_t>(d)] = inner[static_cast<std::size_t>(d)] * sf;
        el[static_cast<std::size_t>(d)] = es[static_cast<std::size_t>(d)] * tf;
        if (sf < 1 || tf < 1) {
          fail(Infeasible::bad_factors, l);
          return out;
        }
      }
    }
    nest.padded = nest.ext_level[0];
  }
  // Flatten the nest, outermost loop first; unit loops are dropped. A loop's
  // stride is the extent of its dimension inside it (one loop per dimension,
  // level and kind).
  for (int l = 0; l < nl; ++l) {
    const LevelMapping& lm = map.levels[static_cast<std::size_t>(l)];
    nest.level_start[static_cast<std::size_t>(l)] = nest.num;
    unsigned seen = 0;
    for (int i = 0; i < nd; ++i) {
      const int d = lm.order[static_cast<std::size_t>(i)];
      if (d < 0 || d >= nd || ((seen >> d) & 1u) != 0) {
        fail(Infeasible::bad_shape, l);
        return out;
      }
      seen |= 1u << d;
      const i64 f = lm.temporal[static_cast<std::size_t>(d)];
      if (f > 1) {
        nest.loops[static_cast<std::size_t>(nest.num++)] =
            Loop{static_cast<std::int8_t>(d), static_cast<std::int8_t>(l), false, Axis::x, f,
                 nest.ext_spatial[static_cast<std::size_t>(l)][static_cast<std::size_t>(d)]};
      }
    }
    nest.spatial_start[static_cast<std::size_t>(l)] = nest.num;
    for (int d = 0; d < nd; ++d) {
      const i64 f = lm.spatial[static_cast<std::size_t>(d)];
      if (f > 1) {
        nest.loops[static_cast<std::size_t>(nest.num++)] =
            Loop{static_cast<std::int8_t>(d), static_cast<std::int8_t>(l), true, lm.axis[static_cast<std::size_t>(d)], f,
                 nest.ext_level[static_cast<std::size_t>(l + 1)][static_cast<std::size_t>(d)]};
      }
    }
  }
  nest.level_start[static_cast<std::size_t>(nl)] = nest.num;
  nest.spatial_start[static_cast<std::size_t>(nl)] = nest.num;
  double padded_points = 1.0;
  for (int d = 0; d < nd; ++d) {
    if (nest.padded[static_cast<std::size_t>(d)] < prob.dim_sizes[static_cast<std::size_t>(d)]) {
      {
      fail(Infeasible::bad_factors, -1);
      return out;
    }
    }
    padded_points *= static_cast<double>(nest.padded[static_cast<std::size_t>(d)]);
  }
  out.padded_macs = padded_points * prob.macs_per_point;

  // Spatial fan-out per level and utilised instances.
  std::array<i64, kMaxLevels + 1> used_above{};  // spatial product of levels < l
  used_above[0] = 1;
  for (int l = 0; l < nl; ++l) {
    const StorageLevel& lv = arch.levels[static_cast<std::size_t>(l)];
    const i64 next_x = l + 1 < nl ? arch.levels[static_cast<std::size_t>(l + 1)].mesh_x : arch.compute.mesh_x;
    const i64 next_y = l + 1 < nl ? arch.levels[static_cast<std::size_t>(l + 1)].mesh_y : arch.compute.mesh_y;
    const i64 fan_x = lv.mesh_x > 0 ? next_x / lv.mesh_x : 0;
    const i64 fan_y = lv.mesh_y > 0 ? next_y / lv.mesh_y : 0;
    i64 sx = 1, sy = 1;
    for (int i = nest.spatial_start[static_cast<std::size_t>(l)]; i < nest.level_start[static_cast<std::size_t>(l + 1)]; ++i) {
      const Loop& lp = nest.loops[static_cast<std::size_t>(i)];
      (lp.axis == Axis::x ? sx : sy) *= lp.factor;
    }
    if (sx > fan_x || sy > fan_y) {
      fail(Infeasible::fanout_exceeded, l);
      return out;
    }
    used_above[static_cast<std::size_t>(l + 1)] = used_above[static_cast<std::size_t>(l)] * sx * sy;
  }
  out.compute_instances_used = used_above[static_cast<std::size_t>(nl)];

  // Compute rate for the operand precision.
  const int bits = prob.tensors[0].precision_bits;
  const PrecisionRate* rate = nullptr;
  for (int i = 0; i < arch.compute.num_rates && i < 4; ++i) {
    const PrecisionRate& r = arch.compute.rates[static_cast<std::size_t>(i)];
    if (r.bits == 0 || r.bits == bits) {
      rate = &r;
      break;
    }
  }
  if (rate == nullptr || rate->macs_per_cycle <= 0.0) {
      fail(Infeasible::unsupported_precision, -1);
      return out;
    }

  // Temporal loops in nest order with the product of the factors outside each,
  // and how many of them sit above every level.
  std::array<int, kMaxLoops> tl_idx;
  std::array<i64, kMaxLoops> outer_prod;
  std::array<int, kMaxLevels + 1> temporal_above;
  i64 iterations = 1;  // temporal iterations of one compute instance
  {
    int m = 0;
    int l = 0;
    for (int i = 0; i < nest.num; ++i) {
      while (l <= nl && nest.level_start[static_cast<std::size_t>(l)] <= i) temporal_above[static_cast<std::size_t>(l++)] = m;
      const Loop& lp = nest.loops[static_cast<std::size_t>(i)];
      if (lp.spatial) continue;
      tl_idx[static_cast<std::size_t>(m)] = i;
      outer_prod[static_cast<std::size_t>(m++)] = iterations;
      iterations *= lp.factor;
    }
    while (l <= nl) temporal_above[static_cast<std::size_t>(l++)] = m;
  }

  for (int l = 0; l < nl; ++l) {
    LevelCost& lc = out.levels[static_cast<std::size_t>(l)];
    lc.instances = arch.levels[static_cast<std::size_t>(l)].instances();
    lc.utilized_instances = used_above[static_cast<std::size_t>(l)];
  }

  // Per tensor: walk the keeping levels from the innermost outwards.
  for (int t = 0; t < nt; ++t) {
    const Tensor& ten = prob.tensors[static_cast<std::size_t>(t)];
    const std::uint32_t bit = 1u << t;
    std::array<int, kMaxLevels> keepers{};
    int nk = 0;
    for (int l = 0; l < nl; ++l) {
      if ((map.levels[static_cast<std::size_t>(l)].keep & bit) == 0) continue;
      if ((arch.levels[static_cast<std::size_t>(l)].may_keep & bit) == 0) {
      fail(Infeasible::keep_not_allowed, l);
      return out;
    }
      keepers[static_cast<std::size_t>(nk++)] = l;
    }
    std::array<int, kMaxDims> rank_of{-1, -1, -1, -1, -1, -1, -1, -1};
    std::array<i64, kMaxDims> coef_of{};
    for (int r = 0; r < ten.num_ranks; ++r) {
      const Rank& rank = ten.ranks[static_cast<std::size_t>(r)];
      for (int q = 0; q < rank.num_terms; ++q) {
        rank_of[static_cast<std::size_t>(rank.terms[static_cast<std::size_t>(q)].dim)] = r;
        coef_of[static_cast<std::size_t>(rank.terms[static_cast<std::size_t>(q)].dim)] = rank.terms[static_cast<std::size_t>(q)].coef;
      }
    }
    bool simple = true;  // every coordinate is a single term
    std::array<int, kMaxRanks> used_dims;
    int nused = 0;
    for (int r = 0; r < ten.num_ranks; ++r) {
      const Rank& rank = ten.ranks[static_cast<std::size_t>(r)];
      simple = simple && rank.num_terms == 1 && rank.terms[0].coef > 0;
      if (rank.num_terms >= 1) used_dims[static_cast<std::size_t>(nused++)] = rank.terms[0].dim;
    }
    // `child_fills` is what the next inner keeper (or the MACs) pulls per instance.
    i64 child_fills = iterations;
    int child_level = nl;  // nl stands for the compute level
    for (int k = nk - 1; k >= 0; --k) {
      const int lvl = keepers[static_cast<std::size_t>(k)];
      TensorStats& ts = out.levels[static_cast<std::size_t>(lvl)].tensors[static_cast<std::size_t>(t)];
      ts.kept = true;

      // Tile.
      const Extents& ext = nest.ext_level[static_cast<std::size_t>(lvl)];
      i64 tile = 1;
      if (simple) {
        for (int q = 0; q < nused; ++q) tile *= ext[static_cast<std::size_t>(used_dims[static_cast<std::size_t>(q)])];
      } else {
        tile = tile_size(ten, ext);
      }
      ts.utilized_capacity = tile;

      // Fills of this level: the first tile, then the delta at every step of the
      // temporal loops above it.
      i64 fills = tile;
      if (simple && map.reuse == ReusePolicy::timeloop) {
        // Single-term coordinates never cancel a move, so with Timeloop's rule
        // every step of a loop outside the innermost relevant loop J refetches
        // the whole tile (these steps telescope to outer_prod[J] - 1), and J's
        // own steps keep the overlap only when J is the innermost loop.
        const int m = temporal_above[static_cast<std::size_t>(lvl)];
        int jr = m - 1;
        while (jr >= 0 && rank_of[static_cast<std::size_t>(nest.loops[static_cast<std::size_t>(tl_idx[static_cast<std::size_t>(jr)])].dim)] < 0) --jr;
        if (jr >= 0) {
          const Loop& lp = nest.loops[static_cast<std::size_t>(tl_idx[static_cast<std::size_t>(jr)])];
          i64 delta = tile;
          if (jr == m - 1) {
            const int r = rank_of[static_cast<std::size_t>(lp.dim)];
            delta = tile / ext[static_cast<std::size_t>(lp.dim)] *
                    (ext[static_cast<std::size_t>(lp.dim)] - rank_overlap(ten.ranks[static_cast<std::size_t>(r)], ext, coef_of[static_cast<std::size_t>(lp.dim)] * lp.stride));
          }
          const i64 op = outer_prod[static_cast<std::size_t>(jr)];
          fills = tile * op + op * (lp.factor - 1) * delta;
        }
      } else {
        // Walk the temporal loops above the level from the innermost out,
        // tracking the offset (per coordinate) the inner loops' wrap-around adds.
        std::array<i64, kMaxRanks> wrap{};
        int nonzero = 0;
        const int m = temporal_above[static_cast<std::size_t>(lvl)];
        for (int j = m - 1; j >= 0; --j) {
          const Loop& lp = nest.loops[static_cast<std::size_t>(tl_idx[static_cast<std::size_t>(j)])];
          const int r = rank_of[static_cast<std::size_t>(lp.dim)];
          if (r < 0 && nonzero == 0) continue;  // the tile does not move
          const i64 step = r >= 0 ? coef_of[static_cast<std::size_t>(lp.dim)] * lp.stride : 0;
          i64 delta = 0;
          if (r >= 0 || nonzero > 0) {
            const i64 dr = r >= 0 ? wrap[static_cast<std::size_t>(r)] + step : 0;
            const int others = nonzero - (r >= 0 && wrap[static_cast<std::size_t>(r)] != 0 ? 1 : 0);
            if (dr != 0 || others > 0) {
              if (map.reuse == ReusePolicy::exact || j == m - 1) {
                i64 kept_points = 1;
                for (int q = 0; q < ten.num_ranks && kept_points != 0; ++q) {
                  kept_points *= rank_overlap(ten.ranks[static_cast<std::size_t>(q)], ext, q == r ? dr : wrap[static_cast<std::size_t>(q)]);
                }
                delta = tile - kept_points;
              } else {
                delta = tile;
              }
            }
          }
          fills += outer_prod[static_cast<std::size_t>(j)] * (lp.factor - 1) * delta;
          if (r >= 0) {
            const bool was = wrap[static_cast<std::size_t>(r)] != 0;
            wrap[static_cast<std::size_t>(r)] -= (lp.factor - 1) * step;
            nonzero += (wrap[static_cast<std::size_t>(r)] != 0 ? 1 : 0) - (was ? 1 : 0);
          }
        }
      }

      // Accesses from the children: distinct deliveries across the spatial
      // fan-out between this level and the child (identical deltas multicast,
      // identical partial sums reduced).
      i64 distinct = 1, fan = 1;
      for (int g = lvl; g < child_level; ++g) {
        const int s0 = nest.spatial_start[static_cast<std::size_t>(g)], s1 = nest.level_start[static_cast<std::size_t>(g + 1)];
        if (s0 == s1) continue;
        for (int i = s0; i < s1; ++i) {
          const Loop& lp = nest.loops[static_cast<std::size_t>(i)];
          fan *= lp.factor;
          if (simple && rank_of[static_cast<std::size_t>(lp.dim)] >= 0) distinct *= lp.factor;
        }
        if (simple) continue;
        for (int r = 0; r < ten.num_ranks; ++r) {
          const Rank& rank = ten.ranks[static_cast<std::size_t>(r)];
          SumSet s;
          for (int q = 0; q < rank.num_terms; ++q) {
            const Term& term = rank.terms[static_cast<std::size_t>(q)];
            for (int i = s0; i < s1; ++i) {
              const Loop& lp = nest.loops[static_cast<std::size_t>(i)];
              if (lp.dim == term.dim) add_pair(s, term.coef * lp.stride, lp.factor);
            }
          }
          finish(s);
          distinct *= s.size;
        }
      }
      const i64 content = child_fills * distinct;
      ts.fanout_per_access = static_cast<double>(fan) / static_cast<double>(distinct);
      const bool outermost = (k == 0);

      if (ten.read_write) {
        // Partition: the share of the output this instance ever holds.
        auto tsize = [&](const Extents& e) {
          if (!simple) return tile_size(ten, e);
          i64 n = 1;
          for (int q = 0; q < nused; ++q) n *= e[static_cast<std::size_t>(used_dims[static_cast<std::size_t>(q)])];
          return n;
        };
        i64 part = tsize(nest.ext_level[0]);
        for (int g = 0; g < lvl; ++g) {
          if (nest.spatial_start[static_cast<std::size_t>(g)] == nest.level_start[static_cast<std::size_t>(g + 1)]) continue;
          const i64 uni = tsize(nest.ext_spatial[static_cast<std::size_t>(g)]);
          const i64 sub = tsize(nest.ext_level[static_cast<std::size_t>(g + 1)]);
          part = uni > 0 ? part * sub / uni : part;
        }
        ts.partition = part;
        ts.updates = content;
        ts.reads = std::max<i64>(0, content - part);
        ts.fills = outermost ? 0 : std::max<i64>(0, fills - part);
      } else {
        ts.partition = 0;
        ts.reads = content;
        ts.updates = 0;
        ts.fills = outermost ? 0 : fills;
      }
      child_fills = fills;
      child_level = lvl;
    }
  }

  // Capacity.
  for (int l = 0; l < nl; ++l) {
    const StorageLevel& lv = arch.levels[static_cast<std::size_t>(l)];
    LevelCost& lc = out.levels[static_cast<std::size_t>(l)];
    i64 used = 0;
    for (int t = 0; t < nt; ++t) {
      const TensorStats& ts = lc.tensors[static_cast<std::size_t>(t)];
      if (ts.kept) used += ts.utilized_capacity * (map.levels[static_cast<std::size_t>(l)].double_buffer ? 2 : 1);
    }
    lc.capacity_used_words = used;
    if (lv.capacity_words > 0 && used > lv.capacity_words) {
      out.feasible = false;
      out.reason = Infeasible::capacity_exceeded;
      out.reason_level = l;
    }
  }

  // Timing.
  out.compute_cycles = static_cast<double>(iterations) / rate->macs_per_cycle;
  double cycles = out.compute_cycles;
  for (int l = 0; l < nl; ++l) {
    const StorageLevel& lv = arch.levels[static_cast<std::size_t>(l)];
    LevelCost& lc = out.levels[static_cast<std::size_t>(l)];
    i64 rd = 0, wr = 0;
    for (int t = 0; t < nt; ++t) {
      const TensorStats& ts = lc.tensors[static_cast<std::size_t>(t)];
      rd += ts.reads;
      wr += ts.fills + ts.updates;
    }
    double c = 0.0;
    if (lv.read_bandwidth_words_per_cycle > 0.0) c = std::max(c, static_cast<double>(rd) / lv.read_bandwidth_words_per_cycle);
    if (lv.write_bandwidth_words_per_cycle > 0.0) c = std::max(c, static_cast<double>(wr) / lv.write_bandwidth_words_per_cycle);
    lc.cycles = c;
    cycles = std::max(cycles, c);
  }
  out.cycles = cycles;
  out.latency_s = arch.clock_hz > 0.0 ? cycles / arch.clock_hz : 0.0;
  const double peak = static_cast<double>(arch.compute.instances()) * rate->macs_per_cycle;
  out.utilization = cycles > 0.0 && peak > 0.0 ? out.macs / (cycles * peak) : 0.0;

  // Energy: whole access vectors per tensor and action, on the utilised instances.
  double total = 0.0;
  for (int l = 0; l < nl; ++l) {
    const StorageLevel& lv = arch.levels[static_cast<std::size_t>(l)];
    LevelCost& lc = out.levels[static_cast<std::size_t>(l)];
    i64 rv = 0, fv = 0, uv = 0;
    for (int t = 0; t < nt; ++t) {
      const TensorStats& ts = lc.tensors[static_cast<std::size_t>(t)];
      rv += ceil_div(ts.reads, lv.block_words);
      fv += ceil_div(ts.fills, lv.block_words);
      uv += ceil_div(ts.updates, lv.block_words);
    }
    const double inst = static_cast<double>(lc.utilized_instances);
    lc.read_energy_j = static_cast<double>(rv) * lv.read_energy_j * inst;
    lc.fill_energy_j = static_cast<double>(fv) * lv.fill_energy_j * inst;
    lc.update_energy_j = static_cast<double>(uv) * lv.update_energy_j * inst;
    lc.leak_energy_j = lv.leak_energy_j_per_cycle * cycles * static_cast<double>(lc.instances);
    lc.energy_j = lc.read_energy_j + lc.fill_energy_j + lc.update_energy_j + lc.leak_energy_j;
    total += lc.energy_j;
  }
  out.compute_energy_j = out.padded_macs * rate->energy_per_mac_j;
  out.energy_j = total + out.compute_energy_j;
  return out;
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
