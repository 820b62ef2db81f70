// Reader for Timeloop v0.4 inputs (architecture with !Container / !Component /
// !Parallel nodes, problem shape + instance, mapping, and Accelergy's ERT) into
// the pure loop-nest model. Containers with a spatial mesh become pure fan-out
// levels named inter_<name>_spatial, as Timeloop's front end does. Features
// the model does not have (sparsity, compound components other than storage
// and compute) are refused with a ConfigError naming the feature and file:line.
#pragma once

#include <string>
#include <vector>

#include "costmodel/loopnest/architecture.hpp"
#include "costmodel/loopnest/mapping.hpp"
#include "costmodel/loopnest/problem.hpp"

namespace dse::io {

struct TimeloopCase {
  costmodel::loopnest::Architecture arch;
  costmodel::loopnest::Problem problem;
  costmodel::loopnest::Mapping mapping;
};

costmodel::loopnest::Problem read_timeloop_problem(const std::string& path);

// The architecture without energies; read_timeloop_ert fills them in.
costmodel::loopnest::Architecture read_timeloop_arch(const std::string& path);
void read_timeloop_ert(const std::string& path, costmodel::loopnest::Architecture& arch);

costmodel::loopnest::Mapping read_timeloop_mapping(const std::string& path,
                                                   const costmodel::loopnest::Architecture& arch,
                                                   const costmodel::loopnest::Problem& problem);

TimeloopCase read_timeloop_case(const std::string& arch_path, const std::string& problem_path,
                                const std::string& mapping_path, const std::string& ert_path);

}  // namespace dse::io
