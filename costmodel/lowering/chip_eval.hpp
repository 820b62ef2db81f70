// One step of a workload graph (costmodel/workload) on one custom chip: a roofline,
// a systolic array or a loop-nest hierarchy mapped by the project's mapper. Each
// operator is lowered (lowering.hpp) to the chip's array or vector unit and costed
// alone, its tensors starting and ending in the chip's outermost memory; the step is
// the operators in sequence, each occurrence of a repeated block counted. Pure.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "costmodel/lowering/area.hpp"
#include "costmodel/lowering/memo.hpp"
#include "costmodel/mapper/mapper.hpp"
#include "costmodel/roofline.hpp"
#include "costmodel/systolic/systolic_platform.hpp"
#include "costmodel/workload/graph.hpp"
#include "costmodel/workload/spec.hpp"

namespace dse::costmodel::lowering {

// A vector unit beside the array: `ops_per_cycle` operations per cycle (0: one per
// compute instance of the array), each costing `energy_per_op_j`, fed from and writing to
// the outermost memory at its bandwidth.
struct VectorUnit {
  double ops_per_cycle = 0.0;
  double energy_per_op_j = 0.0;
};

// A loop-nest chip as one design point: the hierarchy (overrides applied), the mapping
// strategy (objective and search budget; the budget is an evaluation count, never a
// time), the operand precision, the vector unit, and the figures the point reports.
struct LoopnestChip {
  std::string name;
  loopnest::Architecture arch;
  bool keeps_by_role = true;  // a native description: bind its keeps to each operator (bind_keep_roles)
  mapper::MapperOptions mapper;
  // Epilogue fusion: a one-input element-wise operator whose only input is an array
  // operator's output (or a fused operator's), that output read by it alone, runs on the
  // vector unit as the output is written (a ReLU or a folded batch norm applied at the
  // array's output, as Eyeriss v1 applies its ReLU before writing ofmaps: Chen et al., JSSC
  // 52(1), 2017, section IV-A): its operations cost their vector-unit time and energy, its
  // tensors no memory traffic. Otherwise each operator's tensors go through memory.
  bool fuse_epilogues = false;
  int operand_bits = 0;  // 0: the first compute rate's
  VectorUnit vector;
  double static_power_w = 0.0;
  double memory_capacity_bytes = 0.0;  // 0: unbounded
  double engineering_risk = 0.0;
  AreaFigures area;
  // Mapping constraints for one operator (a Timeloop constraints file bound to it), or
  // empty for none; constraints_id names the source in the memo's key (0: none).
  std::function<mapper::Constraints(const loopnest::Architecture&, const loopnest::Problem&)> constraints;
  std::uint64_t constraints_id = 0;
  [[nodiscard]] int bits() const noexcept;
  [[nodiscard]] double vector_ops_per_cycle() const noexcept;
  [[nodiscard]] double area_mm2() const noexcept;
  [[nodiscard]] double peak_flops_per_s() const noexcept;  // 2 x MACs per cycle x clock at bits()
};

// One operator of the step: its figures per occurrence, how it ran.
struct OperatorCost {
  std::string name;
  std::string type;         // the operator kind (workload/operator.hpp to_string)
  std::int64_t repeat = 1;  // occurrences in the step
  double latency_s = 0.0;
  double energy_j = 0.0;  // dynamic, a loop nest's leakage and the chip's static power over latency_s
  double flops = 0.0;
  double dram_bytes = 0.0;  // outermost-memory traffic
  double stall_fraction = 0.0;
  double pct_of_peak = 0.0;  // achieved FLOP/s over the unit's peak, percent
  Bottleneck bottleneck = Bottleneck::compute;
  bool feasible = true;
  std::string reason;   // why not, when infeasible
  std::string mapping;  // how it ran: a loop nest, folds on the array, the vector unit
  std::string fused_into;  // the operator whose output it runs on when fused as an epilogue, else ""
};

struct GraphCost {
  std::vector<OperatorCost> ops;
  double latency_s = 0.0;  // the step
  double energy_j = 0.0;   // the step, static power included
  double flops = 0.0;
  double dram_bytes = 0.0;
  double memory_bytes = 0.0;  // the step's footprint (workload/footprint.hpp)
  bool feasible = true;       // every operator mapped and the footprint fits
  std::string reason;         // the first reason it is not ("capacity", "unsupported", a mapper reason)
  Bottleneck bottleneck = Bottleneck::compute;  // the class that takes the most time
};

GraphCost evaluate_graph(const RooflineHardware& hw, const workload::OperatorGraph& g,
                         const workload::PhaseSpec& phase);
GraphCost evaluate_graph(const SystolicHardware& hw, const workload::OperatorGraph& g,
                         const workload::PhaseSpec& phase);
// Mapped operators go through `memo`: one (architecture, operator shape, constraints, mapper
// options) is mapped once per memo, and a hit gives the same figures as the mapping did.
GraphCost evaluate_graph(const LoopnestChip& chip, const workload::OperatorGraph& g, const workload::PhaseSpec& phase,
                         OperatorMemo& memo);

// The mapper's answer for one operator on the chip, as the point uses it (through `memo`).
MappedOperator map_on_chip(const LoopnestChip& chip, const loopnest::Problem& p, OperatorMemo& memo);

}  // namespace dse::costmodel::lowering
