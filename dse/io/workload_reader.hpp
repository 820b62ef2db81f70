// Workload files (YAML): a named preset with overrides, a builder with its
// hyperparameters, or an explicit operator list with symbolic dimensions. The
// format is documented in scenarios/README.md, section "Workload files".
// Produces validated value types of costmodel/workload; every problem is a
// ConfigError naming file, line, column and key path.
#pragma once

#include <string>

#include "costmodel/workload/spec.hpp"
#include "dse/io/yaml_reader.hpp"

namespace dse::io {

// A workload mapping (the whole file, or a `workload:` section of a scenario).
costmodel::workload::WorkloadSpec parse_workload(const YAML::Node& node, const Place& at);
costmodel::workload::WorkloadSpec parse_workload_text(const std::string& text, const std::string& file);
costmodel::workload::WorkloadSpec read_workload_file(const std::string& path);

// "" when NAME_OR_PATH is a workload preset or an existing file; otherwise what was expected,
// with the preset it may have meant, for the caller to report at its own place.
std::string unknown_workload(const std::string& name_or_path);
// A preset name (see costmodel/workload/presets.hpp) or, failing that, a file path.
costmodel::workload::WorkloadSpec resolve_workload(const std::string& name_or_path);

// Scalars shared with other readers: "bf16", "training"/"prefill"/"decode", ...
costmodel::workload::Precision as_precision(const YAML::Node& n, const Place& at);
costmodel::workload::Phase as_phase(const YAML::Node& n, const Place& at);

}  // namespace dse::io
