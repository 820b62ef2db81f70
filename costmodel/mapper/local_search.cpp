// The mapper's heuristic strategy (search_state.hpp): an iterated local search whose
// schedule does not depend on the objective asked for, so that one mapping set S is
// evaluated whatever the objective and each objective's answer is the best of S on it
// (Search::eval scores every mapping on all three):
// 1. the first local search of the mapper (classic.cpp) for energy, edp and latency;
// 2. steepest descents over the neighbourhood of moves.cpp, each guided by one
//    objective, from every objective's best so far; each local optimum is polished
//    by a pass over every class of loop orders of one level at a time (order_pass);
// 3. chains of kicks and descents (run_chains) until kIdleChains chains in a row
//    improve no objective's best.
// Every phase stops early when the evaluation cap or the time budget runs out.
#include <algorithm>
#include <array>
#include <vector>

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
  lp::Mapping s = blank;
  for (int d = 0; d < nd; ++d) {
    i64 fixed = 1;
    for (int l = 0; l < nl; ++l) {
      const LevelConstraint& lc = c.levels[sz(l)];
      lp::LevelMapping& lm = s.levels[sz(l)];
      lm.temporal[sz(d)] = lc.temporal[sz(d)] > 0 ? lc.temporal[sz(d)] : 1;
      lm.spatial[sz(d)] = lc.spatial[sz(d)] > 0 ? lc.spatial[sz(d)] : 1;
      const int fa = forced_axis(lc, d);
      lm.axis[sz(d)] = fa == 1 ? lp::Axis::y : lp::Axis::x;
      fixed *= lm.temporal[sz(d)] * lm.spatial[sz(d)];
    }
    // The rest of the dimension at its rest level (the outermost unless a constraint
    // fixes that one's factor, e.g. to 1).
    const int rl = rest_level[sz(d)];
    if (rl >= 0) s.levels[sz(rl)].temporal[sz(d)] = ceil_div(p.dim_sizes[sz(d)], fixed);
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

namespace {

constexpr std::array<Objective, 3> kGuides{Objective::energy, Objective::edp, Objective::latency};
constexpr int kStallRounds = 4;   // rounds of kicks without improvement that end a chain
constexpr int kIdleChains = 3;    // chains without a new best that end the search
constexpr int kChainKick = 8;     // random moves that start a new chain
constexpr std::size_t kMaxOrderPass = 720;  // orders of one level the order pass enumerates at most

}  // namespace

Score Search::eval(const lp::Mapping& mm, Objective guide) {
  const lp::NestCost r = lp::evaluate(prep, mm);
  ++evaluated;
  // Outside the constrained mapspace (bounds, outer orders, least utilisation): worse
  // than any mapping in it, and never an incumbent.
  if (check_admission && !admitted(c, a, p, mm, r)) return Score{3, 0.0, 0.0};
  Score g{};
  for (const Objective k : kGuides) {
    const Score sc = score_of(a, r, k);
    Incumbent& in = inc[static_cast<std::size_t>(k)];
    if (sc < in.score) {
      in.score = sc;
      in.map = mm;
      in.cost = r;
    }
    if (k == guide) g = sc;
  }
  return g;
}

bool Search::cannot_beat(const lp::Mapping& mm, Objective guide, double value) noexcept {
  if (guide == Objective::latency) {
    double iters = 1.0;
    for (int l = 0; l < nl; ++l) {
      i64 it = 1;
      for (int d = 0; d < nd; ++d) it *= mm.levels[sz(l)].temporal[sz(d)];
      iters *= static_cast<double>(it);
    }
    if (iters / macs_per_cycle > value) {
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

Score Search::descend(Objective guide, lp::Mapping& cur) {
  if (stop_heuristic()) return Score{};
  Score cs = eval(cur, guide);
  std::vector<Move>& moves = move_bufs[0];
  lp::Mapping mm{}, nb{};
  for (;;) {
    gen_moves(cur, moves);
    Score nb_score = cs;
    for (const Move& mv : moves) {
      if (stop_heuristic()) break;
      if (!apply(cur, mv, mm)) continue;
      if (nb_score.infeasible == 0 && cannot_beat(mm, guide, nb_score.value)) continue;
      const Score s = eval(mm, guide);
      if (s < nb_score) {
        nb_score = s;
        nb = mm;
      }
    }
    if (!(nb_score < cs)) return cs;
    cur = nb;
    cs = nb_score;
  }
}

bool Search::order_pass(Objective guide, lp::Mapping& cur, Score& cs) {
  bool improved = false;
  lp::Mapping mm{};
  for (int l = 0; l < nl; ++l) {
    const auto ords = level_orders(p, c.levels[sz(l)], cur.levels[sz(l)].temporal);
    if (ords.size() < 2 || ords.size() > kMaxOrderPass) continue;
    std::uint32_t below = 0;
    for (int q = l + 1; q < nl; ++q) below |= cur.levels[sz(q)].keep;
    const bool merge = cur.reuse == lp::ReusePolicy::timeloop;
    sig_buf.clear();
    if (merge) sig_buf.push_back(order_signature(cur.levels[sz(l)].order, cur.levels[sz(l)].temporal, nd, shapes, p.num_tensors, below));
    for (const auto& ord : ords) {
      if (stop_heuristic()) return improved;
      if (ord == cur.levels[sz(l)].order) continue;
      if (merge) {
        const OrderSignature sg = order_signature(ord, cur.levels[sz(l)].temporal, nd, shapes, p.num_tensors, below);
        if (std::find(sig_buf.begin(), sig_buf.end(), sg) != sig_buf.end()) {
          ++orders_merged;
          continue;
        }
        sig_buf.push_back(sg);
      }
      mm = cur;
      mm.levels[sz(l)].order = ord;
      canonical_orders(mm);
      const Score s = eval(mm, guide);
      if (s < cs) {
        cur = mm;
        cs = s;
        improved = true;
      }
    }
  }
  return improved;
}

Score Search::descend_and_polish(Objective guide, lp::Mapping& cur) {
  Score cs = descend(guide, cur);
  while (!stop_heuristic() && order_pass(guide, cur, cs)) cs = descend(guide, cur);
  return cs;
}

void Search::kick(lp::Mapping& cur, int strength) {
  std::vector<Move>& moves = move_bufs[1];
  lp::Mapping mm{};
  for (int i = 0; i < strength; ++i) {
    gen_moves(cur, moves);
    for (int tries = 0; tries < 16 && !moves.empty(); ++tries) {
      if (apply(cur, moves[next_random() % moves.size()], mm)) {
        cur = mm;
        break;
      }
    }
  }
}

void Search::run_heuristic(i64 evals) {
  heuristic_stop = evaluated + evals;
  move_bufs.resize(2);
  // The first local search for every objective (classic.cpp), each with the whole cap.
  // The start mapping is evaluated whatever the budget: the search always has an answer.
  if (stop_heuristic()) eval(start_mapping(), Objective::energy);
  for (const Objective g : kGuides) run_classic(g);
  auto from = [&](Objective k) { return inc[static_cast<std::size_t>(k)].map; };
  for (const Objective g : kGuides) {  // each objective's descent from every objective's best
    for (const Objective h : kGuides) {
      if (stop_heuristic() || at_bound(g)) break;
      lp::Mapping cur = from(h);
      descend_and_polish(g, cur);
    }
  }
  run_chains();
}

// Chains of kicks and descents, one current mapping per objective: the first chain
// starts from each objective's best, every later one from it kicked hard. A kick (a
// few random moves) and descent that ends better than the chain's current mapping
// replaces it; a chain ends after kStallRounds rounds without that, the search after
// kIdleChains chains that improved no objective's best.
void Search::run_chains() {
  int idle = 0;
  for (int chain = 0; !stop_heuristic() && idle < kIdleChains; ++chain) {
    std::array<Score, 3> before{};
    std::array<lp::Mapping, 3> cur{};
    std::array<Score, 3> cs{};
    for (std::size_t k = 0; k < 3; ++k) {
      before[k] = inc[k].score;
      cur[k] = inc[static_cast<std::size_t>(kGuides[k])].map;
      if (at_bound(kGuides[k])) continue;
      if (chain > 0) kick(cur[k], kChainKick);
      cs[k] = descend_and_polish(kGuides[k], cur[k]);
    }
    int stall = 0;
    while (!stop_heuristic() && stall < kStallRounds) {
      bool better = false;
      for (std::size_t k = 0; k < 3; ++k) {
        if (at_bound(kGuides[k])) continue;
        lp::Mapping y = cur[k];
        kick(y, 2 + static_cast<int>(next_random() % 3));
        const Score s = descend_and_polish(kGuides[k], y);
        if (s < cs[k]) {
          cur[k] = y;
          cs[k] = s;
          better = true;
        }
      }
      stall = better ? 0 : stall + 1;
    }
    bool improved = false;
    for (std::size_t k = 0; k < 3; ++k) improved = improved || inc[k].score < before[k];
    idle = improved ? 0 : idle + 1;
  }
}

}  // namespace dse::costmodel::mapper::detail
