// NSGA-II (Deb et al., IEEE TEVC 6(2), 2002) over the mixed-radix digits of a
// DesignSpace, behind the ask/tell interface.
//
// * Genome = the digits of a point index. Ordinal knobs (ranges: sizes, bandwidths,
//   clocks) use simulated binary crossover and polynomial mutation on the digit value
//   in [0, radix-1], rounded to the nearest digit (a mutation that rounds back to the
//   same digit moves one step instead, so small radices still mutate). Categorical
//   knobs (dataflow, precision) use uniform crossover and uniform re-draw mutation.
//   Continuous test problems (ZDT1) are run on a fine grid: x = digit / (radix - 1);
//   there is no separate real-valued mode because a point must have an index.
// * ask(n) hands out the distinct ids of the pending batch: first the initial
//   population (the first `population` draws of RandomSampler without replacement),
//   then one offspring generation at a time. Offspring identical to a current parent
//   are not re-evaluated; duplicates within a generation are asked once. ask()
//   returns empty while results of the batch are outstanding.
// * tell() accepts results in any order and grouping. When the batch is complete,
//   parents and offspring are pooled *sorted by index*, ranked by constrained
//   non-dominated sorting and crowding distance, and truncated (ties by index).
//   All random choices of generation g come from CounterRng(seed, g), so the run is a
//   pure function of (space, senses, options) and the results -- identical for any
//   rank count, thread count or arrival order.
// * Constraints (Deb's constrained domination): a feasible point beats an infeasible
//   one; infeasible points compare by total violation. Violation is +inf when
//   Evaluation::feasible is false or an objective is not finite, else
//   sum_j max(0, constraints[j] - budgets[j]) / |budgets[j]| (or unnormalised when
//   the budget is 0); with no budgets only the feasible flag counts.
// * Islands (the island model: Cantu-Paz, "Efficient and Accurate Parallel Genetic
//   Algorithms", 2000, ch. 2; Whitley, Rana, Heckendorn, J. Computing and Information
//   Technology 7, 1999): with islands = K > 1 the population is split into K populations
//   of population / K members (the first population % K islands one more) that evolve side
//   by side: each island breeds its own offspring from its own parents (its own random
//   stream, CounterRng(counter_hash(seed, kIslandStream, island), g)) and selects among
//   them. Every migration_interval generations, after the selections, each island's
//   migration_size best members (rank, then crowding, then index) join the selection of the
//   next island (a ring, island k to k + 1 mod K). The defaults, every generation and a
//   fifth of an island, were the best of those tried on ZDT1 at equal evaluations (islands
//   of 25: within 1% of one population of 100 after 20 and 40 generations; islands that
//   migrate every 5 generations or 2 members lagged by 3%; islands of 10 lag by 3% after 20
//   generations and 1% after 40 whatever the migration: keep islands of 25 or more). A generation still asks population
//   points, all islands' offspring together (distinct ids, an id that is a parent of any
//   island not asked again), so the batch that feeds the ranks is the scenario's
//   population; the selections cost K x O(M (2 population / K)^2) instead of
//   O(M (2 population)^2) in the worst case (the fronts by ENS-SS, search/nondominated_sort.hpp).
//   The run is a pure function of the options and the results, as with one island;
//   islands = 1 is plain NSGA-II, bit for bit. share_selections() splits the islands'
//   selections over cooperating copies (the ranks of `dse run`) without changing the result.
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <span>
#include <vector>

#include "search/design_space.hpp"
#include "search/id_table.hpp"
#include "search/pareto.hpp"
#include "search/sampler.hpp"

namespace dse::search {

enum class KnobKind { ordinal, categorical };

struct Nsga2Options {
  std::size_t population = 100;     // parents kept and offspring made per generation
  std::size_t generations = 100;    // offspring generations after the initial population
  std::uint64_t seed = 1;
  double crossover_probability = 0.9;
  double mutation_probability = -1.0;  // per knob; < 0 means 1 / knob count
  double eta_crossover = 15.0;         // SBX distribution index
  double eta_mutation = 20.0;          // polynomial mutation distribution index
  std::vector<KnobKind> kinds;         // per knob; empty = all ordinal
  std::vector<double> budgets;         // per constraint metric (<= budget); empty = none
  std::size_t islands = 1;             // populations evolved side by side (1: plain NSGA-II)
  std::size_t migration_interval = 1;  // generations between migrations (islands > 1)
  std::size_t migration_size = 0;      // members each island sends per migration; 0: a fifth of the
                                       // smallest island, at least 1
};

class Nsga2Sampler final : public Sampler {
 public:
  struct Member {
    Evaluation evaluation;
    std::size_t rank = 0;        // 0 = first non-dominated front
    double crowding = 0.0;       // +inf at the ends of a front
    double violation = 0.0;      // 0 when feasible and within budgets
  };

  // Throws std::invalid_argument for a zero population, an empty objective list,
  // `kinds` of the wrong length, or islands that are not 1 to population (with a
  // migration_interval >= 1 and a migration_size below the smallest island when K > 1).
  Nsga2Sampler(DesignSpace space, std::vector<Sense> senses, Nsga2Options options);

  std::vector<std::uint64_t> ask(std::size_t n) override;
  // Throws std::invalid_argument for an index that is not in the pending batch, a
  // conflicting second result for an index, or a feasible result with the wrong
  // objective count / fewer constraint metrics than budgets.
  void tell(std::span<const Evaluation> results) override;
  // The same, the results moved in rather than copied.
  void tell(std::vector<Evaluation>&& results);
  [[nodiscard]] bool done() const override { return finished_; }

  // Selections completed: 0 while the initial population is pending.
  [[nodiscard]] std::size_t generation() const noexcept { return generation_; }
  // The current parents of every island, ordered by index (an index held by two islands
  // appears twice; rank and crowding are each member's within its island).
  [[nodiscard]] std::vector<Member> population() const;
  // The current parents of island k, ordered by index.
  [[nodiscard]] const std::vector<Member>& island(std::size_t k) const { return islands_.at(k).parents; }
  [[nodiscard]] std::size_t islands() const noexcept { return islands_.size(); }
  // The feasible parents that no feasible parent of any island dominates (the front
  // found), each index once, ordered by index.
  [[nodiscard]] std::vector<Evaluation> front() const;
  // Ids of the pending batch not yet told.
  [[nodiscard]] std::size_t outstanding() const noexcept { return pending_.size() - received_.size(); }
  [[nodiscard]] std::uint64_t evaluations_requested() const noexcept { return requested_; }
  // The constraint metrics it reads of each result: the first budgets().size(), none without budgets.
  [[nodiscard]] const std::vector<double>& budgets() const noexcept { return opt_.budgets; }

  // Checkpoint: the whole search state as little-endian bytes. restore_state() must be
  // called on a sampler built with the same space, senses and options; ids handed out
  // but not told before the checkpoint are handed out again by ask().
  [[nodiscard]] std::vector<std::byte> save_state() const;
  void restore_state(std::span<const std::byte> bytes);

  // Selections shared by cooperating copies (issue 59): `parts` samplers built with the same
  // arguments and told the same results (one per rank) split each generation's selections. Copy
  // `part` selects (and receives the migrants of) islands [part K / parts, (part + 1) K / parts)
  // only and hands each of them to the others as indices with rank, crowding and violation (the
  // evaluations are the told results and the parents every copy holds). `exchange(mine)` must
  // return every part's bytes concatenated in any order (an all-gather); each copy calls it at the
  // same points of tell(), twice in a generation that migrates, once otherwise. A copy that fails
  // between two exchanges still takes part in the next one, and then every copy throws (the others
  // std::runtime_error), so none waits on it. The state after every generation is the same on
  // every copy and byte for byte that of one unshared sampler. No effect with one island or one
  // part. Throws std::invalid_argument for part >= parts or an empty exchange.
  using Exchange = std::function<std::vector<std::byte>(std::vector<std::byte>)>;
  void share_selections(std::size_t part, std::size_t parts, Exchange exchange);

 private:
  struct Island {
    std::size_t size = 0;                  // parents it keeps
    std::vector<Member> parents;           // ordered by index
    std::vector<std::uint64_t> offspring;  // its current offspring (may repeat; the initial draws at first)
  };

  void advance();
  // Index -> result of every current parent and every told result of the batch.
  using Known = IdTable<const Evaluation*>;
  [[nodiscard]] Known known_evaluations() const;
  // A selection's candidates, pointing into the current parents and the told results (or a
  // migration's emigrants), which outlive the selection.
  using Pool = std::vector<const Evaluation*>;
  [[nodiscard]] Pool pool_of(std::size_t k, const Known& known) const;
  // Every island's selection (one copy does them all), then the migration when `migrating`.
  void select_all(bool migrating);
  // This part's islands' selections, migrations and next offspring (when the run goes on), the
  // others' taken from the exchange.
  void select_shared(bool migrating);
  // Every part's message (each framed with its status), after this part's `mine`; throws when
  // `failure` is set (rethrown) or another part failed.
  [[nodiscard]] std::vector<std::vector<std::byte>> share(std::vector<std::byte> mine,
                                                          const std::exception_ptr& failure) const;
  // The `target` members that constrained non-dominated sorting and crowding keep of `pool`
  // (one per index), ordered by index.
  [[nodiscard]] std::vector<Member> select(Pool pool, std::size_t target) const;
  void migrate();
  // The migration_size best members of `parents` (rank, then crowding, then index).
  [[nodiscard]] std::vector<const Member*> emigrants_of(const std::vector<Member>& parents) const;
  void make_offspring(std::size_t k);
  // Island k's offspring of generation `generation` bred from `parents`.
  [[nodiscard]] std::vector<std::uint64_t> offspring_of(std::size_t k, const std::vector<Member>& parents,
                                                        std::size_t generation) const;
  // Every island's offspring asked: the distinct ids that no island holds as a parent.
  void collect_pending();
  [[nodiscard]] double violation(const Evaluation& e) const;
  [[nodiscard]] std::uint64_t fingerprint() const;
  void set_pending(std::vector<std::uint64_t> ids);
  // tell(): checks the whole batch, then files each result (copied or moved by `take`).
  template <class Results, class Take>
  void tell_results(Results& results, Take take);

  DesignSpace space_;
  std::vector<Sense> senses_;
  Nsga2Options opt_;
  double mutation_probability_ = 0.0;

  std::size_t generation_ = 0;
  bool finished_ = false;
  std::uint64_t requested_ = 0;
  std::vector<Island> islands_;
  std::vector<std::uint64_t> pending_;    // distinct ids to evaluate, in ask order
  IdTable<std::uint8_t> pending_set_;
  std::size_t handed_out_ = 0;
  IdTable<Evaluation> received_;
  std::size_t part_ = 0;
  std::size_t parts_ = 1;
  Exchange exchange_;
};

}  // namespace dse::search
