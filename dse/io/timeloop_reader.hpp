// Reader for Timeloop v0.4 inputs (architecture with !Container / !Component /
// !Parallel / !Nothing nodes, problem shape + instance, mapping, and Accelergy's
// ERT) into the pure loop-nest model. Containers and components with a spatial
// mesh get a pure fan-out level named inter_<name>_spatial, as Timeloop's front end
// places it. The mapping language (factor and permutation forms, keep/bypass,
// containers as targets, split) and every refusal are described in
// docs/hardware-guide.md (Timeloop v0.4 inputs); the mapping reader is
// timeloop_mapping.cpp, the shared directive parsing timeloop_directives.hpp.
// Features the model does not have (sparsity, compound components other than
// storage and compute, clusters, residual factors, skews, reuse restrictions) are
// refused with a ConfigError naming the feature at FILE:LINE:COL.
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

// The factors of every dimension must multiply to its size (Timeloop's rule), unless the
// document carries `imperfect_factors: padded` (written by write_timeloop_mapping for a
// padded mapping): then they may over-cover it. A product past 64 bits is always refused.
costmodel::loopnest::Mapping read_timeloop_mapping(const std::string& path,
                                                   const costmodel::loopnest::Architecture& arch,
                                                   const costmodel::loopnest::Problem& problem);

TimeloopCase read_timeloop_case(const std::string& arch_path, const std::string& problem_path,
                                const std::string& mapping_path, const std::string& ert_path);

}  // namespace dse::io
