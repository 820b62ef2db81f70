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
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "search/design_space.hpp"
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
  // or `kinds` of the wrong length.
  Nsga2Sampler(DesignSpace space, std::vector<Sense> senses, Nsga2Options options);

  std::vector<std::uint64_t> ask(std::size_t n) override;
  // Throws std::invalid_argument for an index that is not in the pending batch, a
  // conflicting second result for an index, or a feasible result with the wrong
  // objective count / fewer constraint metrics than budgets.
  void tell(std::span<const Evaluation> results) override;
  [[nodiscard]] bool done() const override { return finished_; }

  // Selections completed: 0 while the initial population is pending.
  [[nodiscard]] std::size_t generation() const noexcept { return generation_; }
  // The current parents, ordered by index.
  [[nodiscard]] const std::vector<Member>& population() const noexcept { return parents_; }
  // Feasible rank-0 parents (the front found), ordered by index.
  [[nodiscard]] std::vector<Evaluation> front() const;
  // Ids of the pending batch not yet told.
  [[nodiscard]] std::size_t outstanding() const noexcept { return pending_.size() - received_.size(); }
  [[nodiscard]] std::uint64_t evaluations_requested() const noexcept { return requested_; }

  // Checkpoint: the whole search state as little-endian bytes. restore_state() must be
  // called on a sampler built with the same space, senses and options; ids handed out
  // but not told before the checkpoint are handed out again by ask().
  [[nodiscard]] std::vector<std::byte> save_state() const;
  void restore_state(std::span<const std::byte> bytes);

 private:
  void advance();
  void select(std::vector<Evaluation> pool);
  void make_offspring();
  [[nodiscard]] double violation(const Evaluation& e) const;
  [[nodiscard]] std::uint64_t fingerprint() const;
  void set_pending(std::vector<std::uint64_t> ids);

  DesignSpace space_;
  std::vector<Sense> senses_;
  Nsga2Options opt_;
  double mutation_probability_ = 0.0;

  std::size_t generation_ = 0;
  bool finished_ = false;
  std::uint64_t requested_ = 0;
  std::vector<Member> parents_;
  std::vector<std::uint64_t> offspring_;  // the full current offspring list (may repeat)
  std::vector<std::uint64_t> pending_;    // distinct ids to evaluate, in ask order
  std::unordered_set<std::uint64_t> pending_set_;
  std::size_t handed_out_ = 0;
  std::unordered_map<std::uint64_t, Evaluation> received_;
};

}  // namespace dse::search
