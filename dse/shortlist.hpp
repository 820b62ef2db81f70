// `dse shortlist`: the Pareto points of a result file as a table.
#pragma once

#include <iosfwd>
#include <string>

#include "dse/results.hpp"

namespace dse {

struct ShortlistOptions {
  std::string input_path;
};

// Prints the Pareto rows of `results`, grouped by workload, best throughput first.
void print_shortlist(const ResultsFile& results, std::ostream& out);

}  // namespace dse
