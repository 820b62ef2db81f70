// Property tests of the loop-nest model: for random small problems and random
// valid mappings, every access count equals that of a brute-force simulator
// (written here, independently of evaluate.cpp) that walks every loop
// iteration, builds every tile as an explicit point set and compares sets.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <vector>

#include "costmodel/loopnest/evaluate.hpp"

namespace lp = dse::costmodel::loopnest;
using i64 = std::int64_t;

namespace {

struct BLoop {
  int dim;
  int level;
  bool spatial;
  i64 f;
  i64 stride;
};

struct BNest {
  std::vector<BLoop> loops;
  std::vector<int> level_start;  // size nl + 1
};

BNest flatten(const lp::Mapping& m, int nl, int nd) {
  BNest n;
  for (int l = 0; l < nl; ++l) {
    n.level_start.push_back(static_cast<int>(n.loops.size()));
    const auto& lm = m.levels[l];
    for (int i = 0; i < nd; ++i) {
      const int d = lm.order[i];
      n.loops.push_back({d, l, false, lm.temporal[d], 1});
    }
    for (int d = 0; d < nd; ++d) n.loops.push_back({d, l, true, lm.spatial[d], 1});
  }
  n.level_start.push_back(static_cast<int>(n.loops.size()));
  std::vector<i64> run(nd, 1);
  for (int i = static_cast<int>(n.loops.size()) - 1; i >= 0; --i) {
    n.loops[i].stride = run[n.loops[i].dim];
    run[n.loops[i].dim] *= n.loops[i].f;
  }
  return n;
}

using Pt = std::vector<i64>;
using PSet = std::set<Pt>;

Pt project(const lp::Tensor& t, const std::vector<i64>& dv) {
  Pt p;
  for (int r = 0; r < t.num_ranks; ++r) {
    i64 v = 0;
    for (int q = 0; q < t.ranks[r].num_terms; ++q) v += t.ranks[r].terms[q].coef * dv[t.ranks[r].terms[q].dim];
    p.push_back(v);
  }
  return p;
}

// Every point touched by loops >= pos, the outer loops at `digits`.
PSet tile(const BNest& n, int pos, std::vector<i64> digits, const lp::Tensor& t, int nd) {
  PSet s;
  const int total = static_cast<int>(n.loops.size());
  for (int i = pos; i < total; ++i) digits[i] = 0;
  while (true) {
    std::vector<i64> dv(nd, 0);
    for (int i = 0; i < total; ++i) dv[n.loops[i].dim] += digits[i] * n.loops[i].stride;
    s.insert(project(t, dv));
    int i = total - 1;
    for (; i >= pos; --i) {
      if (++digits[i] < n.loops[i].f) break;
      digits[i] = 0;
    }
    if (i < pos) break;
  }
  return s;
}

PSet minus(const PSet& a, const PSet& b) {
  PSet r;
  for (const auto& p : a) {
    if (b.count(p) == 0) r.insert(p);
  }
  return r;
}

// Timeloop's tiles are boxes: every point between the least and the greatest value of each
// coordinate (loop-analysis/point-set-aahr.cpp, axis-aligned hyper-rectangles).
PSet box_of(const PSet& s) {
  if (s.empty()) return s;
  Pt lo = *s.begin(), hi = *s.begin();
  for (const auto& p : s) {
    for (std::size_t r = 0; r < p.size(); ++r) {
      lo[r] = std::min(lo[r], p[r]);
      hi[r] = std::max(hi[r], p[r]);
    }
  }
  PSet out;
  Pt p = lo;
  while (true) {
    out.insert(p);
    std::size_t r = 0;
    for (; r < p.size(); ++r) {
      if (++p[r] <= hi[r]) break;
      p[r] = lo[r];
    }
    if (r == p.size()) break;
  }
  return out;
}

Pt least(const PSet& s) {
  Pt lo = *s.begin();
  for (const auto& p : s) {
    for (std::size_t r = 0; r < p.size(); ++r) lo[r] = std::min(lo[r], p[r]);
  }
  return lo;
}

// One level's (one instance's) state under Timeloop's rule: the last box and the last move
// recorded (workload/shape-models/operation-space.cpp, SaveAndSubtractIfSameStride).
struct TimeloopState {
  PSet prev;
  bool moved = false;  // a move is recorded
  Pt move;
};

// What box `cur` fetches after the state's box, written from Timeloop's code: the overlap is
// kept while the box moves as it last moved (or no move is recorded), and two boxes share
// points only when they differ along one coordinate (AxisAlignedHyperRectangle::Subtract).
PSet timeloop_delta(const PSet& cur, TimeloopState& st) {
  const bool has_move = !st.prev.empty();
  Pt move;
  if (has_move) {
    move = least(cur);
    const Pt from = least(st.prev);
    for (std::size_t r = 0; r < move.size(); ++r) move[r] -= from[r];
  }
  auto subtract = [&] {
    if (st.prev.empty()) return cur;
    int differing = 0;
    for (std::size_t r = 0; r < move.size(); ++r) differing += move[r] != 0 ? 1 : 0;
    return differing > 1 ? cur : minus(cur, st.prev);
  };
  PSet out;
  if (!st.moved) {
    out = subtract();
    st.moved = has_move;
    st.move = move;
  } else if (has_move && move == st.move) {
    out = subtract();
  } else {
    out = cur;
    st.moved = false;
  }
  st.prev = cur;
  return out;
}

struct Group {
  PSet uni;
  i64 count = 0;
};

struct Brute {
  const BNest& n;
  const lp::Problem& p;
  lp::ReusePolicy policy;
  int nl;

  // Every iteration of the temporal loops above `pos`; calls visit(digits, first).
  template <class F>
  void walk_time(int pos, F visit) const {
    std::vector<int> tl;
    for (int i = 0; i < pos; ++i) {
      if (!n.loops[i].spatial && n.loops[i].f > 1) tl.push_back(i);
    }
    std::vector<i64> digits(n.loops.size(), 0);
    bool first = true;
    while (true) {
      visit(digits, first);
      first = false;
      int k = static_cast<int>(tl.size()) - 1;
      for (; k >= 0; --k) {
        if (++digits[tl[k]] < n.loops[tl[k]].f) break;
        digits[tl[k]] = 0;
      }
      if (k < 0) break;
    }
  }

  // Timeloop's walk above `pos` (loop-analysis/nest-analysis.cpp, ComputeTemporalWorkingSet):
  // every loop runs its iteration 0 and its iteration 1, which stands for the other f - 1, so
  // the visits are the 0/1 digit vectors in nest order, each weighing the product of f - 1 over
  // its digits at 1; calls visit(digits, weight).
  template <class F>
  void walk_timeloop(int pos, F visit) const {
    std::vector<int> tl;
    for (int i = 0; i < pos; ++i) {
      if (!n.loops[i].spatial && n.loops[i].f > 1) tl.push_back(i);
    }
    const int m = static_cast<int>(tl.size());
    std::vector<i64> digits(n.loops.size(), 0);
    for (i64 c = 0; c < (i64{1} << m); ++c) {
      i64 weight = 1;
      for (int k = 0; k < m; ++k) {
        const i64 bit = (c >> (m - 1 - k)) & 1;
        digits[tl[k]] = bit;
        if (bit != 0) weight *= n.loops[tl[k]].f - 1;
      }
      visit(digits, weight);
    }
  }

  PSet delta(const PSet& cur, const PSet& prev, bool first) const {
    if (first) return cur;
    return minus(cur, prev);
  }

  // A level's tile under the policy: the points (exact) or their box (Timeloop).
  PSet held(int pos, const std::vector<i64>& d, const lp::Tensor& t) const {
    PSet s = tile(n, pos, d, t, p.num_dims);
    return policy == lp::ReusePolicy::timeloop ? box_of(s) : s;
  }

  // Fills of one instance of keeping level `lvl` (or the MACs when lvl == nl).
  i64 fills(int lvl, const lp::Tensor& t) const {
    const int pos = n.level_start[lvl];
    i64 total = 0;
    if (policy == lp::ReusePolicy::timeloop) {
      TimeloopState st;
      walk_timeloop(pos, [&](const std::vector<i64>& d, i64 weight) {
        total += weight * (lvl == nl ? 1 : static_cast<i64>(timeloop_delta(held(pos, d, t), st).size()));
      });
      return total;
    }
    PSet prev;
    walk_time(pos, [&](std::vector<i64> d, bool first) {
      const PSet cur = tile(n, pos, d, t, p.num_dims);
      total += lvl == nl ? 1 : static_cast<i64>(delta(cur, prev, first).size());
      prev = cur;
    });
    return total;
  }

  i64 partition(int lvl, const lp::Tensor& t) const {
    const int pos = n.level_start[lvl];
    PSet all;
    walk_time(pos, [&](std::vector<i64> d, bool) {
      const PSet cur = tile(n, pos, d, t, p.num_dims);
      all.insert(cur.begin(), cur.end());
    });
    return static_cast<i64>(all.size());
  }

  // Words the parent (instance 0) delivers to / receives from its children:
  // at every step, identical child deltas count once per spatial level.
  i64 content(int parent, int child, const lp::Tensor& t) const {
    const int pos = n.level_start[child];
    std::vector<std::vector<int>> groups;  // spatial loops per level between
    for (int g = parent; g < child; ++g) {
      std::vector<int> s;
      for (int i = n.level_start[g]; i < n.level_start[g + 1]; ++i) {
        if (n.loops[i].spatial && n.loops[i].f > 1) s.push_back(i);
      }
      if (!s.empty()) groups.push_back(s);
    }
    std::map<std::vector<i64>, PSet> prev;
    std::map<std::vector<i64>, TimeloopState> states;
    bool first = true;
    auto step = [&](std::vector<i64> d) -> i64 {
      std::function<Group(std::size_t, std::vector<i64>&)> rec = [&](std::size_t gi, std::vector<i64>& dig) -> Group {
        if (gi == groups.size()) {
          std::vector<i64> key;
          for (const auto& grp : groups) {
            for (auto i : grp) key.push_back(dig[i]);
          }
          Group g;
          if (child == nl) {
            g.uni = tile(n, pos, dig, t, p.num_dims);
          } else if (policy == lp::ReusePolicy::timeloop) {
            g.uni = timeloop_delta(held(pos, dig, t), states[key]);
          } else {
            const PSet cur = tile(n, pos, dig, t, p.num_dims);
            PSet& pv = prev[key];
            g.uni = delta(cur, pv, first);
            pv = cur;
          }
          g.count = static_cast<i64>(g.uni.size());
          return g;
        }
        std::vector<Group> kids;
        const auto& s = groups[gi];
        i64 combos = 1;
        for (auto i : s) combos *= n.loops[i].f;
        for (i64 c = 0; c < combos; ++c) {
          i64 rest = c;
          for (auto i : s) {
            dig[i] = rest % n.loops[i].f;
            rest /= n.loops[i].f;
          }
          kids.push_back(rec(gi + 1, dig));
        }
        for (auto i : s) dig[i] = 0;
        Group out;
        std::vector<const PSet*> seen;
        for (const auto& kid : kids) {
          bool dup = false;
          for (const PSet* q : seen) dup = dup || (*q == kid.uni);
          if (!dup) {
            seen.push_back(&kid.uni);
            out.count += kid.count;
          }
          out.uni.insert(kid.uni.begin(), kid.uni.end());
        }
        return out;
      };
      return rec(0, d).count;
    };
    i64 total = 0;
    if (policy == lp::ReusePolicy::timeloop) {
      walk_timeloop(pos, [&](const std::vector<i64>& d, i64 weight) { total += weight * step(d); });
    } else {
      walk_time(pos, [&](std::vector<i64> d, bool f) {
        first = f;
        total += step(d);
      });
    }
    return total;
  }
};

struct Case {
  lp::Architecture arch;
  lp::Problem prob;
  lp::Mapping map;
};

// Random operator: 3-4 dims, two inputs (some coordinates sums like conv
// windows, with coefficients 1..3) and an output with plain coordinates.
lp::Problem random_problem(std::mt19937& rng) {
  std::uniform_int_distribution<int> nd_d(3, 4), size_d(0, 4), coin(0, 1), coef_d(1, 3);
  const i64 sizes[] = {1, 2, 2, 3, 4};
  lp::Problem p;
  const int nd = nd_d(rng);
  for (int d = 0; d < nd; ++d) p.add_dim(std::string(1, static_cast<char>('A' + d)), sizes[size_d(rng)]);
  for (int t = 0; t < 3; ++t) {
    const bool out = t == 2;
    p.add_tensor(out ? "O" : (t == 0 ? "X" : "Y"), out);
    std::vector<int> dims;
    for (int d = 0; d < nd; ++d) {
      if (coin(rng) == 1) dims.push_back(d);
    }
    if (dims.empty()) dims.push_back(static_cast<int>(rng() % nd));
    std::shuffle(dims.begin(), dims.end(), rng);
    for (std::size_t i = 0; i < dims.size(); ++i) {
      if (!out && i + 1 < dims.size() && coin(rng) == 1) {
        p.add_rank(t, {lp::Term{static_cast<std::int8_t>(dims[i]), coef_d(rng)},
                       lp::Term{static_cast<std::int8_t>(dims[i + 1]), coef_d(rng)}});
        ++i;
      } else {
        p.add_rank(t, {lp::Term{static_cast<std::int8_t>(dims[i]), 1}});
      }
    }
  }
  return p;
}

// Three storage levels (the middle one fans out to a 2x2 mesh) and random
// perfect factors, orders, spatial factors and keep masks.
Case random_case(std::mt19937& rng) {
  Case c;
  c.prob = random_problem(rng);
  for (int l = 0; l < 3; ++l) {
    lp::StorageLevel s;
    s.name = "L" + std::to_string(l);
    s.mesh_x = l == 2 ? 2 : 1;
    s.mesh_y = l == 2 ? 2 : 1;
    c.arch.levels.push_back(s);
  }
  c.arch.compute.mesh_x = 2;
  c.arch.compute.mesh_y = 2;
  c.map = lp::make_empty_mapping(c.arch, c.prob);
  c.map.reuse = rng() % 2 == 0 ? lp::ReusePolicy::timeloop : lp::ReusePolicy::exact;
  i64 sx = 1, sy = 1;
  for (int d = 0; d < c.prob.num_dims; ++d) {
    i64 rest = c.prob.dim_sizes[d];
    std::vector<i64> fs;  // prime factors
    for (i64 q = 2; rest > 1;) {
      if (rest % q == 0) {
        fs.push_back(q);
        rest /= q;
      } else {
        ++q;
      }
    }
    for (i64 f : fs) {
      const int slot = static_cast<int>(rng() % 4);  // 0,1,2 temporal at level; 3 spatial at L1
      if (slot == 3 && f == 2 && (sx == 1 || sy == 1) && c.map.levels[1].spatial[d] == 1) {
        const bool use_x = sx == 1;
        (use_x ? sx : sy) *= 2;
        c.map.levels[1].spatial[d] *= 2;
        c.map.levels[1].axis[d] = use_x ? lp::Axis::x : lp::Axis::y;
      } else {
        c.map.levels[slot % 3].temporal[d] *= f;
      }
    }
  }
  for (int l = 0; l < 3; ++l) {
    auto& o = c.map.levels[l].order;
    std::shuffle(o.begin(), o.begin() + c.prob.num_dims, rng);
    c.map.levels[l].keep = l == 0 ? 7u : static_cast<std::uint32_t>(rng() % 8);
  }
  return c;
}

}  // namespace

TEST(LoopNestProperty, AccessCountsEqualBruteForceSimulation) {
  std::mt19937 rng(12345);
  int checked = 0;
  for (int iter = 0; iter < 600; ++iter) {
    const Case c = random_case(rng);
    ASSERT_EQ(lp::validate(c.prob), "");
    const lp::NestCost r = lp::evaluate(c.arch, c.prob, c.map);
    ASSERT_TRUE(r.feasible) << lp::infeasible_name(r.reason);
    const int nl = 3;
    const BNest n = flatten(c.map, nl, c.prob.num_dims);
    const Brute b{n, c.prob, c.map.reuse, nl};
    for (int t = 0; t < c.prob.num_tensors; ++t) {
      const lp::Tensor& ten = c.prob.tensors[t];
      std::vector<int> keepers;
      for (int l = 0; l < nl; ++l) {
        if ((c.map.levels[l].keep >> t) & 1u) keepers.push_back(l);
      }
      for (std::size_t k = 0; k < keepers.size(); ++k) {
        const int lvl = keepers[k];
        const int child = k + 1 < keepers.size() ? keepers[k + 1] : nl;
        const auto& ts = r.levels[lvl].tensors[t];
        SCOPED_TRACE("iter " + std::to_string(iter) + " tensor " + ten.name + " level " + std::to_string(lvl));
        const i64 cap = static_cast<i64>(b.held(n.level_start[lvl], std::vector<i64>(n.loops.size(), 0), ten).size());
        EXPECT_EQ(ts.utilized_capacity, cap);
        const i64 content = b.content(lvl, child, ten);
        const i64 f = k == 0 ? 0 : b.fills(lvl, ten);
        if (ten.read_write) {
          const i64 part = b.partition(lvl, ten);
          EXPECT_EQ(ts.updates, content);
          EXPECT_EQ(ts.reads, content - part);
          EXPECT_EQ(ts.fills, k == 0 ? 0 : f - part);
        } else {
          EXPECT_EQ(ts.reads, content);
          EXPECT_EQ(ts.fills, f);
          EXPECT_EQ(ts.updates, 0);
        }
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 1000);
}

namespace {

// Every field of two results, doubles compared exactly (same arithmetic).
void expect_same_cost(const lp::NestCost& a, const lp::NestCost& b) {
  EXPECT_EQ(a.feasible, b.feasible);
  EXPECT_EQ(a.reason, b.reason);
  EXPECT_EQ(a.reason_level, b.reason_level);
  EXPECT_EQ(a.num_levels, b.num_levels);
  EXPECT_EQ(a.macs, b.macs);
  EXPECT_EQ(a.padded_macs, b.padded_macs);
  EXPECT_EQ(a.compute_instances_used, b.compute_instances_used);
  EXPECT_EQ(a.compute_cycles, b.compute_cycles);
  EXPECT_EQ(a.cycles, b.cycles);
  EXPECT_EQ(a.latency_s, b.latency_s);
  EXPECT_EQ(a.utilization, b.utilization);
  EXPECT_EQ(a.compute_energy_j, b.compute_energy_j);
  EXPECT_EQ(a.energy_j, b.energy_j);
  for (int l = 0; l < lp::kMaxLevels; ++l) {
    const auto& x = a.levels[l];
    const auto& y = b.levels[l];
    EXPECT_EQ(x.instances, y.instances);
    EXPECT_EQ(x.utilized_instances, y.utilized_instances);
    EXPECT_EQ(x.capacity_used_words, y.capacity_used_words);
    EXPECT_EQ(x.read_energy_j, y.read_energy_j);
    EXPECT_EQ(x.fill_energy_j, y.fill_energy_j);
    EXPECT_EQ(x.update_energy_j, y.update_energy_j);
    EXPECT_EQ(x.leak_energy_j, y.leak_energy_j);
    EXPECT_EQ(x.energy_j, y.energy_j);
    EXPECT_EQ(x.cycles, y.cycles);
    for (int t = 0; t < lp::kMaxTensors; ++t) {
      EXPECT_EQ(x.tensors[t].kept, y.tensors[t].kept);
      EXPECT_EQ(x.tensors[t].reads, y.tensors[t].reads);
      EXPECT_EQ(x.tensors[t].fills, y.tensors[t].fills);
      EXPECT_EQ(x.tensors[t].updates, y.tensors[t].updates);
      EXPECT_EQ(x.tensors[t].utilized_capacity, y.tensors[t].utilized_capacity);
      EXPECT_EQ(x.tensors[t].partition, y.tensors[t].partition);
      EXPECT_EQ(x.tensors[t].fanout_per_access, y.tensors[t].fanout_per_access);
    }
  }
}

}  // namespace

// The prepared form (prepare once, evaluate many mappings) gives the same
// result as evaluate(arch, problem, mapping) on the property cases, on
// capacity-limited copies of them, and when one prepared form serves several
// mappings; also for infeasible mappings (reason, level and partial counts).
TEST(LoopNestProperty, PreparedFormEqualsPlainEvaluate) {
  std::mt19937 rng(777);
  for (int iter = 0; iter < 600; ++iter) {
    SCOPED_TRACE("iter " + std::to_string(iter));
    Case c = random_case(rng);
    c.arch.levels[1].capacity_words = static_cast<i64>(rng() % 40);  // 0 = unbounded
    c.arch.levels[2].block_words = 1 + static_cast<int>(rng() % 3);
    c.arch.levels[1].read_bandwidth_words_per_cycle = 0.5 * static_cast<double>(rng() % 4);
    c.arch.levels[2].write_bandwidth_words_per_cycle = 0.25 * static_cast<double>(rng() % 4);
    c.arch.levels[1].leak_energy_j_per_cycle = 1e-13;
    c.arch.levels[2].fill_energy_j = 2e-12;
    const lp::PreparedNest pn = lp::prepare(c.arch, c.prob);
    expect_same_cost(lp::evaluate(pn, c.map), lp::evaluate(c.arch, c.prob, c.map));
    lp::Mapping m = c.map;
    m.reuse = m.reuse == lp::ReusePolicy::exact ? lp::ReusePolicy::timeloop : lp::ReusePolicy::exact;
    m.levels[1].double_buffer = true;
    expect_same_cost(lp::evaluate(pn, m), lp::evaluate(c.arch, c.prob, m));
    switch (iter % 4) {  // an infeasible variant
      case 0: m.levels[0].temporal[0] = 0; break;                        // bad factors
      case 1: m.levels[1].spatial[0] *= 8; break;                       // fan-out exceeded
      case 2: c.arch.levels[2].may_keep = 0b101; break;                 // keep not allowed (if kept)
      default: std::swap(m.levels[2].order[0], m.levels[2].order[c.prob.num_dims]); break;  // bad order
    }
    const lp::PreparedNest pn2 = lp::prepare(c.arch, c.prob);
    expect_same_cost(lp::evaluate(pn2, m), lp::evaluate(c.arch, c.prob, m));
    if (HasFailure()) return;
  }
}

TEST(LoopNest, GemmOnOneLevelCountsByHand) {
  // 4x4x4 GEMM, one buffer, K innermost: every MAC reads A and B once (64),
  // Z is updated 64 times and read 64 - 16 = 48 times (first update of each
  // of the 16 outputs needs no read).
  const lp::Problem p = lp::make_gemm(4, 4, 4);
  lp::Architecture a;
  a.levels.push_back(lp::StorageLevel{});
  lp::Mapping m = lp::make_empty_mapping(a, p);
  m.levels[0].temporal = {4, 4, 4, 1, 1, 1, 1, 1};
  const auto r = lp::evaluate(a, p, m);
  ASSERT_TRUE(r.feasible);
  EXPECT_EQ(r.cycles, 64.0);
  EXPECT_EQ(r.levels[0].tensors[0].reads, 64);
  EXPECT_EQ(r.levels[0].tensors[2].updates, 64);
  EXPECT_EQ(r.levels[0].tensors[2].reads, 48);
  EXPECT_EQ(r.levels[0].tensors[2].utilized_capacity, 16);
  EXPECT_DOUBLE_EQ(r.utilization, 1.0);
}

TEST(LoopNest, InfeasibleResultsAreValuesWithReasons) {
  const lp::Problem p = lp::make_gemm(8, 8, 8);
  lp::Architecture a;
  lp::StorageLevel dram, buf;
  buf.capacity_words = 10;
  buf.mesh_x = 2;
  a.levels = {dram, buf};
  a.compute.mesh_x = 2;
  lp::Mapping m = lp::make_empty_mapping(a, p);
  m.levels[0].temporal = {8, 8, 1, 1, 1, 1, 1, 1};
  m.levels[1].temporal = {1, 1, 8, 1, 1, 1, 1, 1};
  auto r = lp::evaluate(a, p, m);  // buffer holds 8 A + 8 B + 1 Z = 17 > 10
  EXPECT_FALSE(r.feasible);
  EXPECT_EQ(r.reason, lp::Infeasible::capacity_exceeded);
  EXPECT_EQ(r.reason_level, 1);
  m.levels[0].spatial[0] = 4;  // fan-out 2 only
  m.levels[0].temporal[0] = 2;
  r = lp::evaluate(a, p, m);
  EXPECT_EQ(r.reason, lp::Infeasible::fanout_exceeded);
  EXPECT_EQ(r.reason_level, 0);
  m.levels[0].spatial[0] = 1;
  m.levels[0].temporal[0] = 4;  // covers only 4 of M = 8
  EXPECT_EQ(lp::evaluate(a, p, m).reason, lp::Infeasible::bad_factors);
  m.levels[0].temporal[0] = 8;
  a.compute.rates[0].bits = 16;  // only 16-bit MACs, operands are 8-bit
  EXPECT_EQ(lp::evaluate(a, p, m).reason, lp::Infeasible::unsupported_precision);
}

TEST(LoopNest, PaddingShowsInUtilization) {
  // M = 6 mapped with factor 8: 8*4*4 = 128 iterations for 96 MACs.
  const lp::Problem p = lp::make_gemm(6, 4, 4);
  lp::Architecture a;
  a.levels.push_back(lp::StorageLevel{});
  lp::Mapping m = lp::make_empty_mapping(a, p);
  m.levels[0].temporal = {8, 4, 4, 1, 1, 1, 1, 1};
  const auto r = lp::evaluate(a, p, m);
  ASSERT_TRUE(r.feasible);
  EXPECT_EQ(r.macs, 96.0);
  EXPECT_EQ(r.padded_macs, 128.0);
  EXPECT_DOUBLE_EQ(r.utilization, 96.0 / 128.0);
}

TEST(LoopNest, OperatorFactories) {
  const auto conv = lp::make_conv2d({.n = 1, .c = 4, .m = 8, .p = 5, .q = 5, .r = 3, .s = 3, .groups = 2, .stride_w = 2, .stride_h = 2});
  EXPECT_EQ(lp::validate(conv), "");
  EXPECT_EQ(lp::macs(conv), 1.0 * 2 * 4 * 8 * 25 * 9);
  // Inputs: 8 channels (2 groups x 4), (5-1)*2+3 = 11 columns and rows.
  EXPECT_EQ(lp::tensor_elements(conv, 1), 8 * 11 * 11);
  const auto dw = lp::make_depthwise_conv2d(1, 16, 7, 7, 3, 3);
  EXPECT_EQ(lp::validate(dw), "");
  EXPECT_EQ(lp::tensor_elements(dw, 0), 16 * 9);
  const auto qk = lp::make_attention_qk(2, 4, 16, 32, 8);
  EXPECT_EQ(lp::macs(qk), 2.0 * 4 * 16 * 32 * 8);
  EXPECT_EQ(lp::tensor_elements(qk, 2), 2 * 4 * 16 * 32);
  const auto sm = lp::make_softmax(4, 10);
  EXPECT_EQ(lp::macs(sm), 0.0);
  EXPECT_EQ(lp::flops(sm), 200.0);
  EXPECT_EQ(lp::tensor_bytes(sm, 0), 80.0);
  EXPECT_EQ(lp::validate(lp::make_batched_gemm(2, 3, 4, 5)), "");
  EXPECT_EQ(lp::validate(lp::make_attention_av(1, 2, 3, 4, 5)), "");
}
