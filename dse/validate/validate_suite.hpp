// The validation suite of `dse validate` (scenarios/validation/suite.yaml): its cases read and
// evaluated, each with its measured and predicted figures and the constants it used. The command
// (dse/cli/cmd_validate.cpp) prints them with the per-group statistics, rank orders and speedups.
#pragma once

#include <string>
#include <vector>

namespace dse::cli::validation {

struct CaseResult {
  std::string name, group, source, unit, constants;
  std::string file;       // the measurement file of a CSV-driven case, "" for the others
  std::string benchmark;  // "kind:workload" of throughput cases, for the rank-order check
  double measured = 0.0, predicted = 0.0, error = 0.0;
};

// Reads the suite at `path` and evaluates its cases in the file's order; with `only` not empty,
// the cases of those groups only. A bad suite is an InputError at its file, line and key; a group
// of `only` that the suite lacks is an InputError naming the suite's groups.
std::vector<CaseResult> evaluate_suite(const std::string& path, const std::vector<std::string>& only);

}  // namespace dse::cli::validation
