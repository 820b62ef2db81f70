// Timeloop v0.4 constraints (embedded in an architecture and/or in a separate
// constraints file) into mapper::Constraints, and a Mapping back out as
// Timeloop mapping YAML (readable by read_timeloop_mapping and by Timeloop).
#pragma once

#include <memory>
#include <mutex>
#include <ostream>
#include <string>

#include "costmodel/loopnest/architecture.hpp"
#include "costmodel/loopnest/mapping.hpp"
#include "costmodel/loopnest/problem.hpp"
#include "costmodel/mapper/mapper.hpp"

namespace dse::io {

// Constraints of the architecture's own nodes (`constraints:` on components and
// spatial containers) and, when constraints_path is not empty, of a constraints
// file (mapspace_constraints / constraints / architecture_constraints / mapspace
// holding `targets:` or a list, a bare `targets:` or a bare list; entries with
// target, type temporal | spatial | dataspace | bypass | datatype |
// max_overbooked_proportion | utilization, factors with =, <= and >=,
// default_max_factor, default_min_factor, permutation with an optional '_' before
// the outermost loops, split, keep, bypass, proportion, min). Implemented in
// timeloop_constraints.cpp. A re-specification of anything for one level is
// refused, as Timeloop refuses it (docs/hardware-guide.md, Timeloop v0.4 inputs).
costmodel::mapper::Constraints read_timeloop_constraints(const std::string& arch_path,
                                                         const std::string& constraints_path,
                                                         const costmodel::loopnest::Architecture& arch,
                                                         const costmodel::loopnest::Problem& problem);

// The same constraints read once and bound to operators many times (`dse run`'s loop-nest
// chips): the files are read when the source is made (a ConfigError for a bad file), then
// bind() gives read_timeloop_constraints' answer for each (architecture, problem). Safe to
// share between threads (bind() takes a lock: the YAML trees are not thread-safe).
class TimeloopConstraintSource {
 public:
  TimeloopConstraintSource(const std::string& arch_path, const std::string& constraints_path);
  [[nodiscard]] costmodel::mapper::Constraints bind(const costmodel::loopnest::Architecture& arch,
                                                    const costmodel::loopnest::Problem& problem) const;

 private:
  struct Documents;
  std::shared_ptr<Documents> docs_;
  std::shared_ptr<std::mutex> mu_ = std::make_shared<std::mutex>();
};

// A native loop-nest hardware description (not Timeloop), e.g.
// scenarios/hardware/gpu-4level.yaml: loopnest_hardware: {name, clock_hz,
// levels: [{name, capacity_words (0 = unbounded), word_bits, block_words, mesh_x,
// mesh_y (instances counted from the top), read/write_bandwidth_words_per_cycle,
// read/fill/update_energy_pj (per access vector), leak_pj_per_cycle, fanout_only,
// keeps: [weights | inputs | outputs] (default all; the level bypasses the others)}],
// compute: {name, mesh_x, mesh_y, rates: [{bits, macs_per_cycle, energy_pj_per_mac}]}}.
// `keeps` is by role; bind it to an operator with loopnest::bind_keep_roles.
costmodel::loopnest::Architecture read_loopnest_hardware(const std::string& path);

// A mapping whose factors over-cover a dimension (padded) is written with the top-level
// key `imperfect_factors: padded`, without which read_timeloop_mapping refuses it.
void write_timeloop_mapping(std::ostream& out, const costmodel::loopnest::Architecture& arch,
                            const costmodel::loopnest::Problem& problem, const costmodel::loopnest::Mapping& m);

}  // namespace dse::io
