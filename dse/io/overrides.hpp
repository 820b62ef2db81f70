// Chip and system figures as knobs: the `overrides:` of a `kind: system` hardware entry
// (scenarios/README.md, "Overrides"), and `dse eval --override PATH=VALUE`.
//
// A path names a number of the files a system is read from, by their own keys:
//   chip.<keys>    the chip's hardware file (scenarios/hardware/NAME.yaml) or its platform/
//                  sidecar (the sections energy, platform and area)
//   system.<keys>  the system file (scenarios/systems/NAME.yaml)
// A list element with a `name` is addressed by its name, any other by its position (0, 1, ...).
// The value is a number, a range ({choices: [...]}, {linear: [from, to, steps]},
// {log: [from, to, steps]}) or {times: NUMBER-OR-RANGE} (the file's value times each factor).
// A knob that moves several paths together is keyed by a name of its own:
//   matrix_rate: {paths: [chip.a, chip.b], times: {choices: [1, 1.5, 2]}}
//   hbm: {paths: [chip.memory.hbm_bytes, chip.area.die_area_mm2], choices: [[8.0e10, 814], [1.4e11, 900]]}
// (a choice a number: every path takes it; a list: one value per path).
//
// The files are patched as trees and read by their own readers (dse/io/platform_reader.hpp,
// gpu_hardware_reader.hpp), so a value a file would refuse is refused with that file's check,
// reported at the scenario's place: FILE:LINE:COL: hardware[i].overrides.KEY: ... Every
// combination of the knobs' values is read once, when the scenario is read, into a system shared
// by the points that use it (at most kMaxOverrideCombinations per entry). A chip whose die area,
// node or HBM capacity changed is priced by costmodel/system/cost.hpp's build-cost model, unless
// the scenario sets system.cost.chip_usd itself.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "dse/io/platform_reader.hpp"
#include "dse/io/yaml_reader.hpp"

namespace dse::io {

inline constexpr std::uint64_t kMaxOverrideCombinations = 4096;

struct OverrideKnob {
  std::string key;                          // its key under `overrides:` (a path, or a group's name)
  std::vector<std::string> paths;           // chip.<keys> / system.<keys>
  std::vector<std::vector<double>> values;  // values[choice][path], in the files' units
};

// One path set to one value.
using OverrideValue = std::pair<std::string, double>;

class SystemOverrides {
 public:
  SystemOverrides(std::vector<OverrideKnob> knobs, std::vector<std::shared_ptr<const SystemFile>> systems);
  [[nodiscard]] const std::vector<OverrideKnob>& knobs() const { return knobs_; }
  // The system of the knobs' choices (choices[k] < knobs()[k].values.size()).
  [[nodiscard]] const std::shared_ptr<const SystemFile>& system(const std::vector<std::size_t>& choices) const;
  [[nodiscard]] const std::vector<std::shared_ptr<const SystemFile>>& systems() const { return systems_; }
  // Every path of every knob at those choices, in knob order.
  [[nodiscard]] std::vector<OverrideValue> values(const std::vector<std::size_t>& choices) const;
  // "PATH=VALUE ..." (each value as the shortest text that reads back to it).
  [[nodiscard]] std::string describe(const std::vector<std::size_t>& choices) const;
  // "--override PATH=VALUE ..." for `dse eval`.
  [[nodiscard]] std::string eval_arguments(const std::vector<std::size_t>& choices) const;

 private:
  std::vector<OverrideKnob> knobs_;
  std::vector<std::shared_ptr<const SystemFile>> systems_;  // by combination, the first knob fastest
};

// Reads `overrides:` (node at `at`) of an entry whose system is `base`, checks every path and
// every combination as described above, and reads every combination's system. Throws ConfigError.
std::shared_ptr<const SystemOverrides> read_overrides(const YAML::Node& node, const Place& at, const SystemFile& base);

// `dse eval --override`: the system file at `path` (a preset's resolved file) with `values`
// applied as a scenario's overrides apply them. Throws InputError naming --override.
SystemFile load_system_with_overrides(const std::string& path, const std::vector<OverrideValue>& values);
// "PATH=VALUE" as --override gives it. Throws InputError.
OverrideValue parse_override_option(const std::string& text);
// The number dotted `keys` name in a tree (a list element by its `name`, else its position), or
// nothing: how an override path finds its figure in a file.
std::optional<double> number_at(const YAML::Node& root, const std::string& keys);

}  // namespace dse::io
