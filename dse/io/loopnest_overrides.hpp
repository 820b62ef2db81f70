// The `overrides:` of a `kind: loopnest` hardware entry (scenarios/README.md, "Loop-nest
// chips"): figures of the architecture as knobs. A path names a number of the architecture
// by the keys of the native loop-nest file (dse/io/timeloop_writer.hpp,
// read_loopnest_hardware), whatever form the architecture was read from:
//   clock_hz
//   levels.<level name>.<key>      capacity_words, word_bits, block_words, mesh_x, mesh_y,
//                                  read_bandwidth_words_per_cycle, write_bandwidth_words_per_cycle,
//                                  read_energy_pj, fill_energy_pj, update_energy_pj, leak_pj_per_cycle
//   compute.mesh_x, compute.mesh_y
//   compute.rates.<position>.<key> bits, macs_per_cycle, energy_pj_per_mac
// (a list element with a `name` is addressed by its name, a rate by its position; a Timeloop
// v0.4 architecture's levels are named as the model reads them, inter_<name>_spatial for a
// spatial fan-out). The value syntax is the one of `kind: system` overrides
// (dse/io/overrides.hpp): a number, {choices: [...]},
// {linear: [from, to, steps]}, {log: [from, to, steps]} or {times: NUMBER-OR-RANGE} (the
// architecture's value times each factor); a knob keyed by a name of its own moves several
// paths together, {paths: [a, b], choices: [...]}, a choice being one number for every path
// or a list of one number per path, and optionally `labels: [...]`, one name per choice,
// which the result file's knob text shows instead of the numbers. An unknown path is refused with the closest valid
// one; a value the native reader would refuse, or one that leaves an invalid hierarchy (loopnest::validate), is refused
// at the knob's place: FILE:LINE:COL: hardware[i].overrides.KEY: ... When the knobs have at most
// kMaxCheckedCombinations combinations, every combination is checked as the scenario is read; past that, each value
// alone, and a combination that leaves an invalid hierarchy is an infeasible point.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "costmodel/loopnest/architecture.hpp"
#include "dse/io/knob_values.hpp"  // exact_number_text
#include "dse/io/yaml_reader.hpp"

namespace dse::io {

inline constexpr std::uint64_t kMaxCheckedCombinations = 4096;

// One number of a loop-nest architecture.
struct LoopnestField {
  enum class Owner : std::uint8_t { chip, level, compute, rate };
  Owner owner = Owner::chip;
  int index = 0;  // the level or the rate
  int key = 0;    // position in the owner's key table (loopnest_overrides.cpp)
};

struct LoopnestKnob {
  std::string key;  // its key under `overrides:` (a path, or a group's name)
  std::vector<std::string> paths;
  std::vector<LoopnestField> fields;        // one per path
  std::vector<std::vector<double>> values;  // values[choice][path], in the file's units
  std::vector<std::string> labels;          // a group's names of its choices, or none
};


// Every path of `a` (for messages and `dse presets`-style listings).
std::vector<std::string> loopnest_paths(const costmodel::loopnest::Architecture& a);
std::optional<LoopnestField> resolve_loopnest_path(const costmodel::loopnest::Architecture& a, const std::string& path);
// The number at f, in the file's units (energies in pJ).
double loopnest_value(const costmodel::loopnest::Architecture& a, const LoopnestField& f);
// "" when v is a value the native reader takes at f, else what it expects ("a whole number > 0").
std::string check_loopnest_value(const LoopnestField& f, double v);
void set_loopnest_value(costmodel::loopnest::Architecture& a, const LoopnestField& f, double v);

// `base` with the knobs at `choices` (choices[k] < knobs[k].values.size()) applied.
costmodel::loopnest::Architecture apply_loopnest_knobs(const costmodel::loopnest::Architecture& base,
                                                       const std::vector<LoopnestKnob>& knobs,
                                                       const std::vector<std::size_t>& choices);

// Reads `overrides:` (node at `at`) against the architecture `base`, named `file` in messages
// (as the scenario names it).
// Throws ConfigError.
std::vector<LoopnestKnob> read_loopnest_overrides(const YAML::Node& node, const Place& at,
                                                  const costmodel::loopnest::Architecture& base,
                                                  const std::string& file);

}  // namespace dse::io
