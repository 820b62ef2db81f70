// The custom-chip parts of a scenario (scenarios/README.md, "Loop-nest chips" and
// "Workloads on chips"): `kind: loopnest` hardware entries (a loop-nest architecture,
// its overrides, the mapping strategy and the point's figures) and workload entries that
// run a model (a workload preset, a workload file or an ONNX model) at one phase on a
// roofline, systolic or loop-nest chip. scenario.cpp calls in here; the types below are
// what its HardwareEntry and WorkloadEntry hold for them.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "costmodel/lowering/chip_eval.hpp"
#include "costmodel/lowering/memo.hpp"
#include "costmodel/workload/graph.hpp"
#include "costmodel/workload/spec.hpp"
#include "dse/io/loopnest_overrides.hpp"
#include "dse/io/timeloop_writer.hpp"
#include "dse/io/yaml_reader.hpp"

namespace dse {

struct HardwareEntry;
struct WorkloadEntry;
struct Scenario;

// What the variants of one `kind: loopnest` entry share.
struct LoopnestEntry {
  std::string architecture;  // the preset or file the scenario names
  std::string file;          // the file read
  std::string ert;           // a Timeloop architecture's ERT ("" for a native file)
  bool native = true;        // a native loop-nest file (keeps by role)
  costmodel::loopnest::Architecture base;
  std::vector<io::LoopnestKnob> overrides;
  // The `constraints` choices: a Timeloop v0.4 constraints file each, or "none" (no source).
  std::vector<std::string> constraint_names;
  std::vector<std::shared_ptr<const io::TimeloopConstraintSource>> constraint_sources;
  // The rank's memo of mapped operators, shared by every loop-nest entry of the scenario.
  std::shared_ptr<costmodel::lowering::OperatorMemo> memo;
};

// A model at one phase on a custom chip. Graphs are built when the scenario is read, one
// per batch size (ONNX models imported at each).
struct ChipWorkload {
  std::string model;  // as the scenario gives it
  std::string file;   // the workload or ONNX file read ("" for a preset)
  bool onnx = false;
  std::string phase_name;                  // inference, prefill, decode or train
  costmodel::workload::WorkloadSpec spec;  // not for ONNX
  costmodel::workload::PhaseSpec phase;    // the batch is the point's
  std::map<std::int64_t, std::shared_ptr<const costmodel::workload::OperatorGraph>> graphs;
  [[nodiscard]] costmodel::workload::PhaseSpec phase_at(std::int64_t batch) const;
};

namespace chips {

// A `kind: loopnest` hardware entry (node at `at`). Throws ConfigError.
HardwareEntry parse_loopnest_entry(const YAML::Node& node, const io::Place& at);
// The chip of variant figures f of a loop-nest entry.
costmodel::lowering::LoopnestChip build_loopnest(const std::string& name, const std::vector<double>& f,
                                                 const LoopnestEntry& e);
// describe() of a loop-nest entry: its swept figures and override knobs, key=value.
std::string describe_loopnest(const LoopnestEntry& e, const std::vector<double>& f, const std::vector<bool>& swept);

// For variant v of a loop-nest entry, the `dse map` options that map one operator on the same
// architecture under the same strategy (--hw FILE [--ert] [--constraints] --override PATH=VALUE
// ... --objective O --evaluations N --time-budget-ms 0 --seed S); the operator's --op text is
// in the point's mapping sheet.
std::string map_arguments(const HardwareEntry& h, std::uint64_t v);

// A workload entry with `model` and `phase` (a model on chips). Throws ConfigError.
WorkloadEntry parse_chip_workload(const YAML::Node& node, const io::Place& at);
// Builds every chip workload's graph at every batch size of s (after batch_sizes are read);
// `workloads` is the scenario's `workloads` node at `at`, for messages. Throws ConfigError.
void build_chip_graphs(Scenario& s, const YAML::Node& workloads, const io::Place& at);
// One memo for every loop-nest entry of s (what a rank shares).
void share_memo(Scenario& s);

}  // namespace chips
}  // namespace dse
