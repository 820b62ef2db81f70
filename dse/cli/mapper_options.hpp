// The mapper's search budget on the command line (`dse map`, `dse timeloop-mapper`):
// --time-budget-ms, --evaluations and --seed into mapper::MapperOptions, and the one
// line that says how the search ended.
#pragma once

#include <boost/program_options/options_description.hpp>
#include <boost/program_options/value_semantic.hpp>

#include <cmath>
#include <cstdint>
#include <sstream>
#include <string>

#include "costmodel/mapper/mapper.hpp"
#include "costmodel/mapper/sheet.hpp"
#include "dse/error.hpp"

namespace dse::cli {

struct MapperBudgetArgs {
  double time_budget_ms = 100.0;
  std::int64_t evaluations = costmodel::mapper::MapperOptions{}.heuristic_evaluations;
  std::uint64_t seed = costmodel::mapper::MapperOptions{}.seed;
};

inline void add_mapper_budget_options(boost::program_options::options_description& named, MapperBudgetArgs& b) {
  namespace po = boost::program_options;
  named.add_options()(
      "time-budget-ms", po::value<double>(&b.time_budget_ms)->default_value(b.time_budget_ms),
      "wall-clock budget of the search in ms (0 = none). A search it cuts short depends on the machine's "
      "speed and load; the evaluation cap alone gives the same answer everywhere")(
      "evaluations", po::value<std::int64_t>(&b.evaluations)->default_value(b.evaluations),
      "cap on the local search's evaluations (deterministic; what dse validate uses)")(
      "seed", po::value<std::uint64_t>(&b.seed)->default_value(b.seed), "seed of the local search's random moves");
}

// Checks the values and copies them into `o`.
inline void apply_mapper_budget(const MapperBudgetArgs& b, costmodel::mapper::MapperOptions& o) {
  if (!(b.time_budget_ms >= 0.0) || !std::isfinite(b.time_budget_ms)) {
    std::ostringstream v;
    v << b.time_budget_ms;
    throw InputError("--time-budget-ms: expected a number of milliseconds >= 0 (got " + v.str() + ")");
  }
  if (b.evaluations < 1) throw InputError("--evaluations: expected a count >= 1 (got " + std::to_string(b.evaluations) + ")");
  o.time_budget_ms = b.time_budget_ms;
  o.heuristic_evaluations = b.evaluations;
  o.seed = b.seed;
}

// "proven optimal" or "not proven optimal, gap to lower bound X %", and what ended the search.
inline std::string optimality_text(const costmodel::mapper::MappingSheet& sh) {
  std::ostringstream s;
  if (sh.proven_optimal) {
    s << "proven optimal";
  } else {
    s << "not proven optimal, gap to lower bound " << 100.0 * sh.gap_to_bound << " %";
  }
  s << "; search ended: " << sh.stopped_by;
  return s.str();
}

}  // namespace dse::cli
