#include "search/nsga2.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "search/nondominated_sort.hpp"
#include "search/random_sampler.hpp"
#include "search/wire.hpp"

namespace dse::search {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

double min_form(const Evaluation& e, std::size_t j, Sense s) {
  return s == Sense::minimize ? e.objectives[j] : -e.objectives[j];
}

// Nearest digit to x, clamped to [0, radix - 1].
std::uint64_t to_digit(double x, std::uint64_t radix) {
  const double top = static_cast<double>(radix - 1);
  const double v = std::floor(x + 0.5);
  if (!(v > 0.0)) return 0;
  if (v >= top) return radix - 1;
  return static_cast<std::uint64_t>(v);
}

// Deb's bounded simulated binary crossover on one variable (nsga2-v1.1 realcross).
void sbx(double& y1, double& y2, double lo, double hi, double eta, CounterRng& rng) {
  if (std::fabs(y1 - y2) <= 1e-14) return;
  const double a = std::min(y1, y2);
  const double b = std::max(y1, y2);
  const double u = rng.unit();
  const double e1 = 1.0 / (eta + 1.0);
  const auto betaq = [&](double beta) {
    const double alpha = 2.0 - std::pow(beta, -(eta + 1.0));
    return u <= 1.0 / alpha ? std::pow(u * alpha, e1) : std::pow(1.0 / (2.0 - u * alpha), e1);
  };
  double c1 = 0.5 * ((a + b) - betaq(1.0 + 2.0 * (a - lo) / (b - a)) * (b - a));
  double c2 = 0.5 * ((a + b) + betaq(1.0 + 2.0 * (hi - b) / (b - a)) * (b - a));
  c1 = std::clamp(c1, lo, hi);
  c2 = std::clamp(c2, lo, hi);
  if (rng.unit() <= 0.5) std::swap(c1, c2);
  y1 = c1;
  y2 = c2;
}

// Deb's polynomial mutation on one bounded variable (nsga2-v1.1 real_mutate_ind).
double polynomial_mutation(double y, double lo, double hi, double eta, CounterRng& rng) {
  const double d1 = (y - lo) / (hi - lo);
  const double d2 = (hi - y) / (hi - lo);
  const double u = rng.unit();
  const double p = 1.0 / (eta + 1.0);
  double dq = 0.0;
  if (u <= 0.5) {
    const double val = 2.0 * u + (1.0 - 2.0 * u) * std::pow(1.0 - d1, eta + 1.0);
    dq = std::pow(val, p) - 1.0;
  } else {
    const double val = 2.0 * (1.0 - u) + 2.0 * (u - 0.5) * std::pow(1.0 - d2, eta + 1.0);
    dq = 1.0 - std::pow(val, p);
  }
  return std::clamp(y + dq * (hi - lo), lo, hi);
}

void put_evaluation(std::vector<std::byte>& out, const Evaluation& e) {
  wire::put_u64(out, e.index);
  wire::put_u8(out, e.feasible ? 1 : 0);
  wire::put_u32(out, static_cast<std::uint32_t>(e.objectives.size()));
  for (double v : e.objectives) wire::put_f64(out, v);
  wire::put_u32(out, static_cast<std::uint32_t>(e.constraints.size()));
  for (double v : e.constraints) wire::put_f64(out, v);
}

Evaluation get_evaluation(wire::Reader& in) {
  Evaluation e;
  e.index = in.u64();
  e.feasible = in.u8() != 0;
  const std::uint32_t no = in.u32();
  if (no > in.remaining() / 8) throw std::invalid_argument("Nsga2Sampler: truncated state");
  e.objectives.resize(no);
  for (double& v : e.objectives) v = in.f64();
  const std::uint32_t nc = in.u32();
  if (nc > in.remaining() / 8) throw std::invalid_argument("Nsga2Sampler: truncated state");
  e.constraints.resize(nc);
  for (double& v : e.constraints) v = in.f64();
  return e;
}

bool same(const Evaluation& a, const Evaluation& b) {
  const auto eq = [](const std::vector<double>& x, const std::vector<double>& y) {
    if (x.size() != y.size()) return false;
    for (std::size_t i = 0; i < x.size(); ++i) {
      if (!(x[i] == y[i]) && !(std::isnan(x[i]) && std::isnan(y[i]))) return false;
    }
    return true;
  };
  return a.index == b.index && a.feasible == b.feasible && eq(a.objectives, b.objectives) &&
         eq(a.constraints, b.constraints);
}

// Deb's crowding distance (2002, section III-B) of the members of one feasible front, added to
// `crowd` (n x m objectives in minimisation form in `obj`).
void crowding(const std::vector<std::size_t>& front, const std::vector<double>& obj, std::size_t m,
              std::vector<double>& crowd) {
  std::vector<std::size_t> order = front;
  for (std::size_t j = 0; j < m; ++j) {
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return obj[a * m + j] != obj[b * m + j] ? obj[a * m + j] < obj[b * m + j] : a < b;
    });
    const double lo = obj[order.front() * m + j];
    const double hi = obj[order.back() * m + j];
    crowd[order.front()] = kInf;
    crowd[order.back()] = kInf;
    if (hi > lo) {
      for (std::size_t k = 1; k + 1 < order.size(); ++k) {
        crowd[order[k]] += (obj[order[k + 1] * m + j] - obj[order[k - 1] * m + j]) / (hi - lo);
      }
    }
  }
}

// Per knob with probability p: a categorical digit redrawn among the others, an ordinal one moved
// by polynomial mutation (a move that rounds back to the same digit steps by one instead).
void mutate_digits(std::vector<std::uint64_t>& d, const std::vector<DesignSpace::Knob>& knobs,
                   const Nsga2Options& opt, double p, CounterRng& rng) {
  for (std::size_t j = 0; j < knobs.size(); ++j) {
    const std::uint64_t r = knobs[j].radix;
    if (r < 2 || rng.unit() >= p) continue;
    if (opt.kinds[j] == KnobKind::categorical) {
      const std::uint64_t other = rng.below(r - 1);
      d[j] = other >= d[j] ? other + 1 : other;
      continue;
    }
    const double top = static_cast<double>(r - 1);
    const std::uint64_t moved =
        to_digit(polynomial_mutation(static_cast<double>(d[j]), 0.0, top, opt.eta_mutation, rng), r);
    if (moved != d[j]) {
      d[j] = moved;
    } else if (d[j] == 0) {
      d[j] = 1;
    } else if (d[j] == r - 1) {
      d[j] = r - 2;
    } else {
      d[j] = rng.unit() < 0.5 ? d[j] - 1 : d[j] + 1;
    }
  }
}

// Per knob with probability 1/2: categorical digits swapped, ordinal ones crossed by SBX.
void crossover_digits(std::vector<std::uint64_t>& d1, std::vector<std::uint64_t>& d2,
                      const std::vector<DesignSpace::Knob>& knobs, const Nsga2Options& opt, CounterRng& rng) {
  for (std::size_t j = 0; j < knobs.size(); ++j) {
    const std::uint64_t r = knobs[j].radix;
    if (r < 2 || rng.unit() > 0.5) continue;
    if (opt.kinds[j] == KnobKind::categorical) {
      std::swap(d1[j], d2[j]);
      continue;
    }
    double y1 = static_cast<double>(d1[j]);
    double y2 = static_cast<double>(d2[j]);
    sbx(y1, y2, 0.0, static_cast<double>(r - 1), opt.eta_crossover, rng);
    d1[j] = to_digit(y1, r);
    d2[j] = to_digit(y2, r);
  }
}

// The random streams of islands (K > 1): CounterRng(counter_hash(seed, kIslandStream, k), g).
constexpr std::uint64_t kIslandStream = 0x151a4d5;

}  // namespace


Nsga2Sampler::Nsga2Sampler(DesignSpace space, std::vector<Sense> senses, Nsga2Options options)
    : space_(std::move(space)), senses_(std::move(senses)), opt_(std::move(options)) {
  if (opt_.population == 0) throw std::invalid_argument("Nsga2Sampler: population must be > 0");
  if (senses_.empty()) throw std::invalid_argument("Nsga2Sampler: no objective");
  if (!opt_.kinds.empty() && opt_.kinds.size() != space_.knobs().size()) {
    throw std::invalid_argument("Nsga2Sampler: one knob kind per knob expected");
  }
  const std::size_t k = opt_.islands;
  if (k == 0 || k > opt_.population) throw std::invalid_argument("Nsga2Sampler: islands must be 1 to population");
  if (k > 1 && opt_.migration_interval == 0) throw std::invalid_argument("Nsga2Sampler: migration_interval must be > 0");
  if (opt_.migration_size == 0) opt_.migration_size = std::max<std::size_t>(1, opt_.population / k / 5);
  if (k > 1 && opt_.migration_size >= opt_.population / k) {
    throw std::invalid_argument("Nsga2Sampler: migration_size must be below the island size (population / islands)");
  }
  if (opt_.kinds.empty()) opt_.kinds.assign(space_.knobs().size(), KnobKind::ordinal);
  mutation_probability_ = opt_.mutation_probability >= 0.0
                              ? opt_.mutation_probability
                              : 1.0 / static_cast<double>(std::max<std::size_t>(1, space_.knobs().size()));
  // The initial population: the first draws of a keyed permutation (distinct points), island k
  // taking the next size(k) of them.
  const IndexPermutation perm(space_.size(), opt_.seed);
  const std::uint64_t n = std::min<std::uint64_t>(opt_.population, space_.size());
  std::vector<std::uint64_t> ids;
  for (std::uint64_t i = 0; i < n; ++i) ids.push_back(perm(i));
  islands_.resize(k);
  std::size_t at = 0;
  for (std::size_t i = 0; i < k; ++i) {
    Island& island = islands_[i];
    island.size = opt_.population / k + (i < opt_.population % k ? 1 : 0);
    for (std::size_t j = 0; j < island.size && at < ids.size(); ++j) island.offspring.push_back(ids[at++]);
  }
  set_pending(std::move(ids));
}

void Nsga2Sampler::set_pending(std::vector<std::uint64_t> ids) {
  pending_ = std::move(ids);
  pending_set_.clear();
  pending_set_.reserve(pending_.size());
  for (std::uint64_t id : pending_) pending_set_.insert(id);
  handed_out_ = 0;
  received_.clear();
}

std::vector<std::uint64_t> Nsga2Sampler::ask(std::size_t n) {
  std::vector<std::uint64_t> out;
  while (out.size() < n && handed_out_ < pending_.size()) {
    const std::uint64_t id = pending_[handed_out_++];
    if (received_.contains(id)) continue;  // told before a checkpoint restore
    out.push_back(id);
  }
  requested_ += out.size();
  return out;
}

double Nsga2Sampler::violation(const Evaluation& e) const {
  if (!e.feasible) return kInf;
  for (double v : e.objectives) {
    if (!std::isfinite(v)) return kInf;
  }
  double total = 0.0;
  for (std::size_t j = 0; j < opt_.budgets.size(); ++j) {
    const double excess = e.constraints[j] - opt_.budgets[j];
    if (std::isnan(excess)) return kInf;
    if (excess > 0.0) total += opt_.budgets[j] != 0.0 ? excess / std::fabs(opt_.budgets[j]) : excess;
  }
  return total;
}

void Nsga2Sampler::tell(std::span<const Evaluation> results) {
  tell_results(results, [](const Evaluation& e) -> const Evaluation& { return e; });
}

void Nsga2Sampler::tell(std::vector<Evaluation>&& results) {
  tell_results(results, [](Evaluation& e) -> Evaluation&& { return std::move(e); });
}

template <class Results, class Take>
void Nsga2Sampler::tell_results(Results& results, Take take) {
  if (finished_) throw std::invalid_argument("Nsga2Sampler::tell: the search is finished");
  // Validate the whole batch first so that a bad result leaves the state untouched.
  for (const auto& e : results) {
    if (!pending_set_.contains(e.index)) throw std::invalid_argument("Nsga2Sampler::tell: index not pending");
    if (e.feasible && e.objectives.size() != senses_.size()) {
      throw std::invalid_argument("Nsga2Sampler::tell: objective count differs from senses");
    }
    if (e.feasible && e.constraints.size() < opt_.budgets.size()) {
      throw std::invalid_argument("Nsga2Sampler::tell: fewer constraint metrics than budgets");
    }
  }
  received_.reserve(pending_.size());
  for (auto& e : results) {
    if (const Evaluation* told = received_.find(e.index); told == nullptr) {
      const std::uint64_t index = e.index;
      received_.try_emplace(index, take(e));
    } else if (!same(*told, e)) {
      throw std::invalid_argument("Nsga2Sampler::tell: conflicting results for one index");
    }
  }
  if (received_.size() == pending_.size()) advance();
}

void Nsga2Sampler::advance() {
  for (;;) {
    // Every island selects among its parents and its offspring, whose results are the batch's or,
    // for an offspring that repeats a parent of some island, that parent's; every
    // migration_interval generations the islands then migrate.
    const bool migrating = islands_.size() > 1 && (generation_ + 1) % opt_.migration_interval == 0;
    // Shared: each part also makes its islands' offspring and takes the others'.
    const bool shared = parts_ > 1 && islands_.size() > 1;
    if (shared) {
      select_shared(migrating);
    } else {
      select_all(migrating);
    }
    ++generation_;
    set_pending({});
    if (generation_ > opt_.generations) {
      finished_ = true;
      return;
    }
    for (std::size_t k = 0; k < islands_.size() && !shared; ++k) make_offspring(k);
    collect_pending();
    if (!pending_.empty()) return;
    // Every child repeats a parent (tiny spaces): the next selection needs no evaluation.
  }
}

Nsga2Sampler::Known Nsga2Sampler::known_evaluations() const {
  Known known;
  std::size_t n = received_.size();
  for (const Island& island : islands_) n += island.parents.size();
  known.reserve(n);
  for (const Island& island : islands_) {
    for (const Member& m : island.parents) known.try_emplace(m.evaluation.index, &m.evaluation);
  }
  received_.for_each([&known](std::uint64_t id, const Evaluation& e) { known.try_emplace(id, &e); });
  return known;
}

Nsga2Sampler::Pool Nsga2Sampler::pool_of(std::size_t k, const Known& known) const {
  Pool pool;
  pool.reserve(islands_[k].parents.size() + islands_[k].offspring.size());
  for (const Member& m : islands_[k].parents) pool.push_back(&m.evaluation);
  for (std::uint64_t id : islands_[k].offspring) pool.push_back(known.at(id));
  return pool;
}

void Nsga2Sampler::select_all(bool migrating) {
  std::vector<std::vector<Member>> selected(islands_.size());
  {
    const Known known = known_evaluations();
    for (std::size_t k = 0; k < islands_.size(); ++k) selected[k] = select(pool_of(k, known), islands_[k].size);
  }
  for (std::size_t k = 0; k < islands_.size(); ++k) {
    islands_[k].parents = std::move(selected[k]);
    islands_[k].offspring.clear();
  }
  if (migrating) migrate();
}

std::vector<const Nsga2Sampler::Member*> Nsga2Sampler::emigrants_of(const std::vector<Member>& parents) const {
  std::vector<const Member*> order;
  order.reserve(parents.size());
  for (const Member& m : parents) order.push_back(&m);
  std::sort(order.begin(), order.end(), [](const Member* a, const Member* b) {
    if (a->rank != b->rank) return a->rank < b->rank;
    if (a->crowding != b->crowding) return a->crowding > b->crowding;
    return a->evaluation.index < b->evaluation.index;
  });
  order.resize(std::min(opt_.migration_size, order.size()));
  return order;
}

void Nsga2Sampler::migrate() {
  const std::size_t k = islands_.size();
  std::vector<std::vector<Evaluation>> emigrants(k);
  for (std::size_t i = 0; i < k; ++i) {
    for (const Member* m : emigrants_of(islands_[i].parents)) emigrants[i].push_back(m->evaluation);
  }
  for (std::size_t i = 0; i < k; ++i) {
    Island& to = islands_[(i + 1) % k];
    Pool pool;
    pool.reserve(to.parents.size() + emigrants[i].size());
    for (const Member& m : to.parents) pool.push_back(&m.evaluation);
    for (const Evaluation& e : emigrants[i]) pool.push_back(&e);
    to.parents = select(std::move(pool), to.size);
  }
}

std::vector<Nsga2Sampler::Member> Nsga2Sampler::select(Pool pool, std::size_t target) const {
  // Canonical order: everything below depends on the set of results, not their arrival (results of
  // one index are equal: tell() refuses conflicting ones).
  std::sort(pool.begin(), pool.end(), [](const Evaluation* a, const Evaluation* b) { return a->index < b->index; });
  pool.erase(std::unique(pool.begin(), pool.end(),
                         [](const Evaluation* a, const Evaluation* b) { return a->index == b->index; }),
             pool.end());
  const std::size_t n = pool.size();
  const std::size_t m = senses_.size();
  std::vector<double> viol(n);
  for (std::size_t i = 0; i < n; ++i) viol[i] = violation(*pool[i]);
  std::vector<double> obj(n * m, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    if (viol[i] == kInf) continue;
    for (std::size_t j = 0; j < m; ++j) obj[i * m + j] = min_form(*pool[i], j, senses_[j]);
  }
  // Fronts by constrained domination; each front's members in index order (pool order).
  const std::vector<std::size_t> rank = constrained_fronts(obj, m, viol);
  std::vector<std::vector<std::size_t>> fronts;
  for (std::size_t i = 0; i < n; ++i) {
    if (rank[i] >= fronts.size()) fronts.resize(rank[i] + 1);
    fronts[rank[i]].push_back(i);
  }
  std::vector<double> crowd(n, 0.0);
  std::vector<std::size_t> chosen;
  for (std::size_t r = 0; r < fronts.size() && chosen.size() < target; ++r) {
    const std::vector<std::size_t>& front = fronts[r];
    // Crowding distance (section III-B), only meaningful for feasible fronts.
    if (viol[front.front()] == 0.0) crowding(front, obj, m, crowd);
    if (chosen.size() + front.size() <= target) {
      chosen.insert(chosen.end(), front.begin(), front.end());
    } else {
      std::vector<std::size_t> order = front;
      std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return crowd[a] != crowd[b] ? crowd[a] > crowd[b] : a < b;
      });
      order.resize(target - chosen.size());
      chosen.insert(chosen.end(), order.begin(), order.end());
    }
  }
  std::sort(chosen.begin(), chosen.end());  // pool is index-sorted, so this orders by index
  std::vector<Member> out;
  out.reserve(chosen.size());
  for (std::size_t i : chosen) out.push_back({*pool[i], rank[i], crowd[i], viol[i]});
  return out;
}

void Nsga2Sampler::make_offspring(std::size_t k) {
  islands_[k].offspring = offspring_of(k, islands_[k].parents, generation_);
}

std::vector<std::uint64_t> Nsga2Sampler::offspring_of(std::size_t k, const std::vector<Member>& parents,
                                                      std::size_t generation) const {
  const std::size_t size = islands_[k].size;
  // One island: the stream of plain NSGA-II (the runs of earlier versions, bit for bit).
  CounterRng rng(islands_.size() == 1 ? opt_.seed : counter_hash(opt_.seed, kIslandStream, k), generation);
  const auto& knobs = space_.knobs();
  const std::size_t p = parents.size();
  std::vector<std::uint64_t> offspring;
  if (p == 0) return offspring;  // an island the initial draws did not reach (a space smaller than the population)
  const auto better = [&](std::size_t a, std::size_t b) {
    const Member& x = parents[a];
    const Member& y = parents[b];
    if (x.rank != y.rank) return x.rank < y.rank;
    if (x.crowding != y.crowding) return x.crowding > y.crowding;
    return x.evaluation.index < y.evaluation.index;
  };
  const auto tournament = [&]() {
    const auto a = static_cast<std::size_t>(rng.below(p));
    const auto b = static_cast<std::size_t>(rng.below(p));
    return better(b, a) ? b : a;
  };
  const auto mutate = [&](std::vector<std::uint64_t>& d) { mutate_digits(d, knobs, opt_, mutation_probability_, rng); };
  offspring.reserve(size);
  while (offspring.size() < size) {
    std::vector<std::uint64_t> d1 = space_.decode(parents[tournament()].evaluation.index);
    std::vector<std::uint64_t> d2 = space_.decode(parents[tournament()].evaluation.index);
    if (rng.unit() < opt_.crossover_probability) crossover_digits(d1, d2, knobs, opt_, rng);
    mutate(d1);
    mutate(d2);
    offspring.push_back(space_.encode(d1));
    if (offspring.size() < size) offspring.push_back(space_.encode(d2));
  }
  return offspring;
}

void Nsga2Sampler::collect_pending() {
  IdTable<std::uint8_t> seen;
  std::size_t n = 0;
  for (const Island& island : islands_) n += island.parents.size() + island.offspring.size();
  seen.reserve(n);
  for (const Island& island : islands_) {
    for (const Member& m : island.parents) seen.insert(m.evaluation.index);
  }
  std::vector<std::uint64_t> ids;
  for (const Island& island : islands_) {
    for (std::uint64_t id : island.offspring) {
      if (seen.insert(id)) ids.push_back(id);
    }
  }
  set_pending(std::move(ids));
}

std::vector<Nsga2Sampler::Member> Nsga2Sampler::population() const {
  std::vector<Member> out;
  for (const Island& island : islands_) out.insert(out.end(), island.parents.begin(), island.parents.end());
  std::stable_sort(out.begin(), out.end(),
                   [](const Member& a, const Member& b) { return a.evaluation.index < b.evaluation.index; });
  return out;
}

std::vector<Evaluation> Nsga2Sampler::front() const {
  std::vector<Evaluation> candidates;
  for (const Member& m : population()) {
    if (m.rank == 0 && m.violation == 0.0 && (candidates.empty() || candidates.back().index != m.evaluation.index)) {
      candidates.push_back(m.evaluation);
    }
  }
  if (islands_.size() == 1) return candidates;  // one island's rank 0 is its front
  std::vector<Evaluation> out;
  for (const Evaluation& e : candidates) {
    const bool dominated = std::any_of(candidates.begin(), candidates.end(), [&](const Evaluation& o) {
      return dominates(o.objectives, e.objectives, senses_);
    });
    if (!dominated) out.push_back(e);
  }
  return out;
}

std::uint64_t Nsga2Sampler::fingerprint() const {
  std::uint64_t h = counter_hash(opt_.seed, opt_.population, opt_.generations);
  h = mix64(h ^ space_.size());
  h = mix64(h ^ senses_.size());
  for (const auto& k : space_.knobs()) h = mix64(h ^ k.radix);
  // One island: the fingerprint of earlier versions (their checkpoints resume).
  if (islands_.size() > 1) h = counter_hash(h ^ islands_.size(), opt_.migration_interval, opt_.migration_size);
  return h;
}

namespace {

constexpr char kMagicV1[8] = {'D', 'S', 'E', 'N', 'S', 'G', 'A', '1'};
constexpr char kMagicV2[8] = {'D', 'S', 'E', 'N', 'S', 'G', 'A', '2'};

void put_member(std::vector<std::byte>& out, const Nsga2Sampler::Member& m) {
  put_evaluation(out, m.evaluation);
  wire::put_u64(out, m.rank);
  wire::put_f64(out, m.crowding);
  wire::put_f64(out, m.violation);
}

std::vector<Nsga2Sampler::Member> get_members(wire::Reader& in) {
  std::vector<Nsga2Sampler::Member> members(static_cast<std::size_t>(std::min<std::uint64_t>(in.u64(), in.remaining())));
  for (auto& m : members) {
    m.evaluation = get_evaluation(in);
    m.rank = static_cast<std::size_t>(in.u64());
    m.crowding = in.f64();
    m.violation = in.f64();
  }
  return members;
}

std::vector<std::uint64_t> get_ids(wire::Reader& in) {
  std::vector<std::uint64_t> ids(static_cast<std::size_t>(std::min<std::uint64_t>(in.u64(), in.remaining() / 8)));
  for (auto& id : ids) id = in.u64();
  return ids;
}

}  // namespace

// Version 2: magic, fingerprint, generation, finished, requested, island count, per island its
// parents and offspring, the pending ids and the results told of them (in pending order:
// identical bytes for identical states).
std::vector<std::byte> Nsga2Sampler::save_state() const {
  std::vector<std::byte> out;
  for (char c : kMagicV2) wire::put_u8(out, static_cast<std::uint8_t>(c));
  wire::put_u64(out, fingerprint());
  wire::put_u64(out, generation_);
  wire::put_u8(out, finished_ ? 1 : 0);
  wire::put_u64(out, requested_);
  wire::put_u64(out, islands_.size());
  for (const Island& island : islands_) {
    wire::put_u64(out, island.parents.size());
    for (const Member& m : island.parents) put_member(out, m);
    wire::put_u64(out, island.offspring.size());
    for (std::uint64_t id : island.offspring) wire::put_u64(out, id);
  }
  wire::put_u64(out, pending_.size());
  for (std::uint64_t id : pending_) wire::put_u64(out, id);
  std::size_t told = 0;
  for (std::uint64_t id : pending_) told += received_.contains(id) ? 1 : 0;
  wire::put_u64(out, told);
  for (std::uint64_t id : pending_) {
    if (const Evaluation* e = received_.find(id)) put_evaluation(out, *e);
  }
  return out;
}

void Nsga2Sampler::restore_state(std::span<const std::byte> bytes) {
  wire::Reader in(bytes);
  std::array<char, 8> magic{};
  for (char& c : magic) c = static_cast<char>(in.u8());
  const bool v1 = std::equal(magic.begin(), magic.end(), kMagicV1);
  if (!v1 && !std::equal(magic.begin(), magic.end(), kMagicV2)) {
    throw std::invalid_argument("Nsga2Sampler: not an NSGA-II state");
  }
  if (in.u64() != fingerprint()) {
    throw std::invalid_argument("Nsga2Sampler: state saved with another space, objectives or options");
  }
  const std::uint64_t generation = in.u64();
  const bool finished = in.u8() != 0;
  const std::uint64_t requested = in.u64();
  std::vector<Island> islands = islands_;
  if (v1) {
    // One population: its parents, and the pending ids as its offspring (the same pool).
    if (islands.size() != 1) throw std::invalid_argument("Nsga2Sampler: a one-population state for islands");
    islands[0].parents = get_members(in);
  } else {
    if (in.u64() != islands.size()) throw std::invalid_argument("Nsga2Sampler: state saved with another island count");
    for (Island& island : islands) {
      island.parents = get_members(in);
      island.offspring = get_ids(in);
    }
  }
  std::vector<std::uint64_t> pending = get_ids(in);
  if (v1) islands[0].offspring = pending;
  const std::uint64_t told = in.u64();
  std::vector<Evaluation> received;
  for (std::uint64_t i = 0; i < told; ++i) received.push_back(get_evaluation(in));
  if (!in.at_end()) throw std::invalid_argument("Nsga2Sampler: trailing bytes in state");
  generation_ = static_cast<std::size_t>(generation);
  finished_ = finished;
  requested_ = requested;
  islands_ = std::move(islands);
  set_pending(std::move(pending));
  for (auto& e : received) {
    if (!pending_set_.contains(e.index)) throw std::invalid_argument("Nsga2Sampler: state tells a non-pending index");
    const std::uint64_t id = e.index;
    received_.try_emplace(id, std::move(e));
  }
}

}  // namespace dse::search
