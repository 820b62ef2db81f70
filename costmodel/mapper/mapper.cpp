#include "costmodel/mapper/mapper.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <numeric>

#include "costmodel/mapper/search_state.hpp"

namespace dse::costmodel::mapper {

namespace lp = loopnest;
using detail::i64;
using detail::Incumbent;
using detail::pure_fanout;
using detail::Score;
using detail::Search;
using detail::sz;
using detail::forced_axis;
using detail::within;

namespace {

const lp::PrecisionRate* rate_for(const lp::Architecture& a, int bits) noexcept {
  for (int i = 0; i < a.compute.num_rates && i < 4; ++i) {
    const lp::PrecisionRate& r = a.compute.rates[sz(i)];
    if (r.bits == 0 || r.bits == bits) return &r;
  }
  return nullptr;
}

}  // namespace

// ---------------- exhaustive: branch and bound ----------------

namespace detail {

// Lower bounds of every mapping that completes the partial tiling whose levels
// l..nl-1 are decided (prune.hpp, rule 2); l = 0: a complete tiling.
PartialBound Search::partial_bound(int l) const noexcept {
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
  PartialBound b;
  b.cycles = decided * upper / macs_per_cycle;  // cycles, as objective_value()
  b.energy_j = padded * p.macs_per_point * e_mac + bound_fixed_energy;
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
    b.energy_j += padded / div * e / static_cast<double>(std::max(1, lv.block_words));
  }
  return b;
}

// A branch is cut when it can improve no objective: for each, its bound is not below
// that objective's incumbent (one tree serves all three: the answers do not depend on
// which objective was asked for).
bool Search::cut_by_bound(int l) noexcept {
  const PartialBound b = partial_bound(l);
  const std::array<double, 3> lbs{b.cycles, b.energy_j, b.cycles * b.energy_j};  // index: Objective
  for (std::size_t k = 0; k < 3; ++k) {
    if (inc[k].score.infeasible != 0 || lbs[k] * (1.0 - 1e-12) < inc[k].score.value) return false;
  }
  ++pruned_bound;
  return true;
}

void Search::orders_rec(int l, const std::vector<std::vector<std::array<std::int8_t, lp::kMaxDims>>>& ords) {
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
void Search::distinct_orders(int l, std::uint32_t below, std::vector<std::array<std::int8_t, lp::kMaxDims>>& out) {
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

void Search::complete_tiling() {
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

bool Search::fits(int l) const noexcept {
  const i64 cap = a.levels[sz(l)].capacity_words;
  if (cap <= 0) return true;
  return level_words(p, m.levels[sz(l)].keep, m.levels[sz(l)].double_buffer, ext[sz(l)]) <= cap;
}

void Search::level_rec(int l) {
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

void Search::dim_rec(int l, int d, i64 sx, i64 sy) {
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
  std::erase_if(scand, [&lc, d](i64 s) { return !within(s, lc.spatial_min[sz(d)], lc.spatial_max[sz(d)]); });
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
      std::erase_if(tcand, [&lc, d](i64 t) { return !within(t, lc.temporal_min[sz(d)], lc.temporal_max[sz(d)]); });
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

void Search::run_exhaustive() {
  for (int d = 0; d < lp::kMaxDims; ++d) ext[sz(nl)][sz(d)] = 1;
  level_rec(nl - 1);
}

}  // namespace detail

namespace {

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
  return s == Strategy::exhaustive ? "exhaustive (branch and bound)" : "heuristic (iterated local search)";
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
  std::array<std::int8_t, lp::kMaxDims> outer{};  // suffix dims (innermost first) that are non-unit
  int no = 0;
  for (int i = 0; i < c.num_outer_permutation; ++i) {
    const int d = c.outer_permutation[sz(i)];
    if (d >= 0 && d < p.num_dims && temporal[sz(d)] > 1) outer[sz(no++)] = static_cast<std::int8_t>(d);
  }
  std::vector<std::array<std::int8_t, lp::kMaxDims>> out;
  // nz is ascending already: the first permutation.
  do {
    bool ok = true;
    for (int i = 0; i < nf && ok; ++i) ok = nz[sz(k - 1 - i)] == fixed[sz(i)];
    for (int i = 0; i < no && ok; ++i) ok = nz[sz(no - 1 - i)] == outer[sz(i)];
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

namespace {

// The non-unit temporal loops of a level, innermost first.
int nonunit_inner_first(const lp::LevelMapping& lm, int nd, std::array<std::int8_t, lp::kMaxDims>& out) noexcept {
  int k = 0;
  for (int i = nd - 1; i >= 0; --i) {
    const int d = lm.order[sz(i)];
    if (d >= 0 && d < nd && lm.temporal[sz(d)] > 1) out[sz(k++)] = static_cast<std::int8_t>(d);
  }
  return k;
}

bool order_admitted(const LevelConstraint& lc, const lp::LevelMapping& lm, int nd) noexcept {
  std::array<std::int8_t, lp::kMaxDims> seq{};
  const int k = nonunit_inner_first(lm, nd, seq);
  int i = 0;
  for (int j = 0; j < lc.num_permutation; ++j) {  // prefix: the innermost non-unit loops
    const int d = lc.permutation[sz(j)];
    if (d < 0 || d >= nd || lm.temporal[sz(d)] <= 1) continue;
    if (i >= k || seq[sz(i++)] != d) return false;
  }
  int o = k;
  for (int j = lc.num_outer_permutation - 1; j >= 0; --j) {  // suffix: the outermost ones
    const int d = lc.outer_permutation[sz(j)];
    if (d < 0 || d >= nd || lm.temporal[sz(d)] <= 1) continue;
    if (o <= 0 || seq[sz(--o)] != d) return false;
  }
  return i <= o;
}

}  // namespace

bool admitted(const Constraints& c, const lp::Architecture& a, const lp::Problem& p, const lp::Mapping& m,
              const lp::NestCost& cost) noexcept {
  const int nd = p.num_dims;
  for (int l = 0; l < m.num_levels && l < lp::kMaxLevels; ++l) {
    const LevelConstraint& lc = c.levels[sz(l)];
    const lp::LevelMapping& lm = m.levels[sz(l)];
    for (int d = 0; d < nd; ++d) {
      const i64 t = lm.temporal[sz(d)], s = lm.spatial[sz(d)];
      if ((lc.temporal[sz(d)] > 0 && t != lc.temporal[sz(d)]) || (lc.spatial[sz(d)] > 0 && s != lc.spatial[sz(d)])) return false;
      if (!within(t, lc.temporal_min[sz(d)], lc.temporal_max[sz(d)]) || !within(s, lc.spatial_min[sz(d)], lc.spatial_max[sz(d)])) return false;
      const int fa = forced_axis(lc, d);
      if (s > 1 && fa >= 0 && (fa == 0) != (lm.axis[sz(d)] == lp::Axis::x)) return false;
    }
    const std::uint32_t must = l < static_cast<int>(a.levels.size()) ? lc.keep & a.levels[sz(l)].may_keep : lc.keep;
    if ((lm.keep & lc.bypass) != 0 || (lm.keep & must) != must) return false;
    if (!order_admitted(lc, lm, nd)) return false;
  }
  return c.min_utilization <= 0.0 ||
         static_cast<double>(cost.compute_instances_used) >= c.min_utilization * static_cast<double>(a.compute.instances());
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

namespace {

// The keeper term of LowerBound (mapper.hpp) for tensor t: the least, over the levels
// that may be its innermost keeper under the constraints, of the words that level
// exchanges with the MACs times its energy per word (prune.hpp, rule 2, with every
// spatial factor at its largest). The outermost level as innermost keeper counts only
// what exceeds its compulsory traffic (already in LowerBound::energy_j).
double keeper_energy(const lp::Architecture& a, const lp::Problem& p, const Constraints& c, int t) {
  const int nl = static_cast<int>(a.levels.size());
  const lp::Tensor& tn = p.tensors[sz(t)];
  const TensorShape ts = tensor_shape(tn);
  const double points = static_cast<double>(lp::points(p));
  int forced = 0;  // innermost level >= 1 that must keep t
  for (int l = 1; l < nl; ++l) {
    if (((c.levels[sz(l)].keep & a.levels[sz(l)].may_keep) >> t) & 1u) forced = l;
  }
  double irrelevant = 1.0;  // iteration points that share one element of t
  for (int d = 0; d < p.num_dims; ++d) {
    if (!ts.simple || ((ts.relevant >> d) & 1u) == 0) irrelevant *= static_cast<double>(p.dim_sizes[sz(d)]);
  }
  double best = std::numeric_limits<double>::infinity();
  for (int k = std::max(forced, 0); k < nl; ++k) {
    const lp::StorageLevel& lv = a.levels[sz(k)];
    const std::uint32_t may = lv.may_keep & ~c.levels[sz(k)].bypass;
    if (k > 0 && ((may >> t) & 1u) == 0) continue;
    double fan = 1.0;  // largest spatial sharing below k
    for (int g = k; g < nl; ++g) fan *= static_cast<double>(fanout_x(a, g) * fanout_y(a, g));
    const double words = points / std::min(fan, irrelevant);
    const double e = (tn.read_write ? lv.update_energy_j : lv.read_energy_j) / static_cast<double>(std::max(1, lv.block_words));
    double cost = words * e;
    if (k == 0) cost = std::max(0.0, cost - std::floor(static_cast<double>(lp::tensor_elements(p, t)) / std::max(1, lv.block_words)) *
                                               (tn.read_write ? lv.update_energy_j : lv.read_energy_j));
    best = std::min(best, cost);
  }
  return std::isfinite(best) ? best : 0.0;
}

}  // namespace

LowerBound lower_bound(const lp::Architecture& a, const lp::Problem& p, const Constraints& c) {
  LowerBound b = lower_bound(a, p);
  if (a.levels.empty()) return b;
  for (int t = 0; t < p.num_tensors; ++t) b.keeper_energy_j += keeper_energy(a, p, c, t);
  return b;
}

namespace {

// One precision's search, for all three objectives at once: the branch and bound when
// the space is small enough (first with at most kQuickExhaustive evaluations), otherwise
// or when it runs out the local search, then the branch and bound again with the local
// search's incumbents, to prove them optimal or find better. Every mapping any phase
// evaluates counts for every objective (Search::inc), and no phase depends on the
// objective asked for.
struct PrecisionRun {
  bool proven = false;  // the branch and bound finished: each incumbent is optimal
  bool heuristic = false;
  bool evaluation_limited = false;
};

PrecisionRun search_precision(Search& s, const MapperOptions& o, double est) {
  PrecisionRun run;
  const bool bb = est <= 1e6 * static_cast<double>(o.exhaustive_limit);
  if (bb) {
    s.budget = std::min(o.exhaustive_limit, kQuickExhaustive);
    s.run_exhaustive();
    if (!s.aborted) {
      run.proven = true;
      return run;
    }
  }
  run.heuristic = true;
  s.run_heuristic(o.heuristic_evaluations);
  run.evaluation_limited = s.evaluated >= s.heuristic_stop;
  bool feasible = true;
  for (const Incumbent& in : s.inc) feasible = feasible && in.score.infeasible == 0;
  if (!bb || s.timed_out || !feasible) return run;
  s.aborted = false;
  s.budget = s.evaluated + o.exhaustive_limit;
  s.run_exhaustive();
  run.proven = !s.aborted;
  return run;
}

double bound_in(Objective o, const LowerBound& b) noexcept {
  switch (o) {
    case Objective::latency: return b.cycles;
    case Objective::energy: return b.energy_j + b.keeper_energy_j;
    case Objective::edp: return b.cycles * (b.energy_j + b.keeper_energy_j);
  }
  return 0.0;
}

}  // namespace

LowerBound detail::init_search(Search& s, const lp::PrecisionRate& rate) {
  s.m = lp::make_empty_mapping(s.a, s.p);
  for (int l = 0; l < s.nl; ++l) s.m.levels[sz(l)].double_buffer = s.c.levels[sz(l)].double_buffer;
  s.blank = s.m;
  s.e_mac = rate.energy_per_mac_j;
  s.macs_per_cycle = rate.macs_per_cycle;
  const LowerBound lb = lower_bound(s.a, s.p, s.c);
  s.bound_fixed_energy = lb.energy_j - lp::macs(s.p) * s.e_mac;
  for (std::size_t k = 0; k < 3; ++k) s.bound[k] = bound_in(static_cast<Objective>(k), lb);
  s.keeps.clear();
  for (int l = 0; l < s.nl; ++l) s.keeps.push_back(keep_choices(s.a, s.p, s.c, l));
  return lb;
}

std::array<MapResult, 3> map_all_objectives(const lp::Architecture& a, const lp::Problem& p0, const Constraints& c,
                                            const MapperOptions& o) {
  std::array<MapResult, 3> best{};
  for (std::size_t k = 0; k < 3; ++k) best[k].objective = static_cast<Objective>(k);
  std::vector<int> precisions;
  for (int i = 0; i < c.num_precisions && i < 4; ++i) precisions.push_back(c.precisions[sz(i)]);
  if (precisions.empty()) precisions.push_back(p0.tensors[0].precision_bits);
  const bool timed = o.time_budget_ms > 0.0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::microseconds(static_cast<std::int64_t>(o.time_budget_ms * 1000.0));
  std::array<Score, 3> best_score{};
  bool all_proven = true, time_limited = false, evaluation_limited = false, none = true;
  std::int64_t evaluated = 0, tilings = 0, pruned = 0, merged = 0;
  for (const int bits : precisions) {
    lp::Problem p = p0;
    for (int t = 0; t < p.num_tensors; ++t) p.tensors[sz(t)].precision_bits = bits;
    const lp::PrecisionRate* rate = rate_for(a, bits);
    if (rate == nullptr || rate->macs_per_cycle <= 0.0) {
      for (std::size_t k = 0; k < 3; ++k) {
        if (best_score[k].infeasible == 1 && !best[k].feasible) best[k].reason = lp::Infeasible::unsupported_precision;
      }
      continue;
    }
    Search s(a, p, c, o);
    s.timed = timed;
    s.deadline = deadline;
    const LowerBound lb = detail::init_search(s, *rate);
    const double est = space_estimate(a, p, c, s.keeps);
    const PrecisionRun run = search_precision(s, o, est);
    for (std::size_t k = 0; k < 3; ++k) {
      const Incumbent& in = s.inc[k];
      if (!(in.score < best_score[k]) && !none) continue;
      best_score[k] = in.score;
      MapResult& r = best[k];
      r.feasible = in.score.infeasible == 0;
      r.reason = in.cost.reason;
      r.mapping = in.map;
      r.cost = in.cost;
      r.precision_bits = bits;
      r.objective_value = r.feasible ? in.score.value : 0.0;
      r.bound = lb;
      r.strategy = run.heuristic && !run.proven ? Strategy::heuristic : Strategy::exhaustive;
      r.space_estimate = est;
    }
    none = false;
    all_proven = all_proven && run.proven;
    evaluation_limited = evaluation_limited || run.evaluation_limited;
    time_limited = time_limited || s.timed_out;
    evaluated += s.evaluated;
    tilings += s.tilings;
    pruned += s.pruned_bound;
    merged += s.orders_merged;
  }
  for (std::size_t k = 0; k < 3; ++k) {
    MapResult& r = best[k];
    r.bound_value = bound_in(r.objective, r.bound);
    r.gap = r.feasible && r.bound_value > 0.0 ? r.objective_value / r.bound_value - 1.0 : 0.0;
    r.proven_optimal = r.feasible && ((all_proven && !none) || r.objective_value <= r.bound_value * (1.0 + 1e-12));
    r.time_limited = time_limited;
    r.evaluation_limited = evaluation_limited;
    r.evaluated = evaluated;
    r.tilings = tilings;
    r.pruned_by_bound = pruned;
    r.orders_merged = merged;
  }
  return best;
}

MapResult map_operator(const lp::Architecture& a, const lp::Problem& p0, const Constraints& c, const MapperOptions& o) {
  return map_all_objectives(a, p0, c, o)[static_cast<std::size_t>(o.objective)];
}

}  // namespace dse::costmodel::mapper
