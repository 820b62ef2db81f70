// The ask/tell interface every search strategy implements (docs/style.md practice 8).
//
// A driver loops:   ids = s.ask(n);  evaluate ids (any rank, any thread);  s.tell(results)
// until s.done(). Samplers know nothing of hardware, MPI or files; they hand out
// design-space point indices and receive objective vectors back.
//
// Determinism contract (what makes results identical for any rank/thread count):
//  * the ids a sampler hands out depend only on its construction arguments (seed,
//    space) and on the *set* of evaluations told so far, never on the order in
//    which results arrive within a batch nor on how a batch is split over ask()
//    calls of different sizes;
//  * ask() returning an empty vector means "nothing to hand out now": either the
//    sampler is done() or it waits for outstanding results (NSGA-II waits for a
//    whole generation). A driver therefore stops on done(), not on an empty ask.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace dse::search {

// The result of evaluating one design point.
struct Evaluation {
  std::uint64_t index = 0;
  std::vector<double> objectives;   // in the senses the sampler/archive was built with
  std::vector<double> constraints;  // constraint metrics, each minimised (p99 s, power W, area, bytes)
  bool feasible = true;             // false: the point could not be realised (objectives are not used)
};

class Sampler {
 public:
  Sampler() = default;
  Sampler(const Sampler&) = default;
  Sampler& operator=(const Sampler&) = default;
  Sampler(Sampler&&) = default;
  Sampler& operator=(Sampler&&) = default;
  virtual ~Sampler() = default;

  // Up to n point indices to evaluate next; empty when done() or when the sampler
  // waits for results already handed out.
  virtual std::vector<std::uint64_t> ask(std::size_t n) = 0;
  // Results for indices handed out by ask(), in any order and in any grouping.
  virtual void tell(std::span<const Evaluation> results) = 0;
  [[nodiscard]] virtual bool done() const = 0;
};

}  // namespace dse::search
