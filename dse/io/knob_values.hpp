// The values a swept figure takes in a scenario (a hardware entry's figure, or a chip or system
// figure under `overrides:`): a number, or a range, each value one step of a knob.
#pragma once

#include <string>
#include <vector>

#include "dse/io/yaml_reader.hpp"

namespace dse::io {

// A scalar, or exactly one of {choices: [a, b, ...]}, {linear: [from, to, steps]},
// {log: [from, to, steps]}; `positive`: every value > 0. At most 10^6 steps, every point
// finite. Throws ConfigError at `at`.
std::vector<double> read_knob_values(const YAML::Node& node, const Place& at, bool positive);

// The shortest text that reads back to v (6 to 17 significant digits), as a scenario writes
// a number and as /variants, `dse eval --override` and `dse map --json` print one.
std::string exact_number_text(double v);

// The segments of an override path ("levels.shared_glb.capacity_words" -> levels, shared_glb,
// capacity_words), as both kinds of overrides (overrides.hpp, loopnest_overrides.hpp) write them.
std::vector<std::string> split_path(const std::string& path);

}  // namespace dse::io
