// A systolic-array accelerator as a design point: an R x C array with three
// double-buffered SRAMs and a bandwidth-limited DRAM interface, timed layer by
// layer with the native closed-form systolic model (estimate_systolic), plus
// energy per action and an area model. Pure.
#pragma once

#include <string>

#include "costmodel/layer.hpp"
#include "costmodel/systolic/systolic.hpp"

namespace dse::costmodel {

struct SystolicHardware {
  std::string name;
  SystolicArray array;                 // rows, cols, dataflow, SRAM bytes, DRAM words/cycle
  double clock_hz = 1e9;
  double energy_per_mac_j = 0.0;
  double energy_per_sram_word_j = 0.0;  // SRAM <-> array, per word
  double energy_per_dram_word_j = 0.0;  // DRAM <-> SRAM, per word
  double static_power_w = 0.0;
  double memory_capacity_bytes = 0.0;  // DRAM capacity (feasibility)
  double vector_ops_per_cycle = 0.0;   // element-wise unit (0: same as array columns)
  double area_per_pe_mm2 = 0.0;        // area model: PEs x this + SRAM KiB x the next
  double area_per_sram_kib_mm2 = 0.0;
  double fixed_area_mm2 = 0.0;
  double engineering_risk = 0.0;
  [[nodiscard]] double area_mm2() const;
};

// One layer on the array (GEMM) or through the DRAM interface / vector unit (element-wise).
struct SystolicLayerCost {
  double latency_s = 0.0;
  double energy_j = 0.0;        // dynamic only
  double flops = 0.0;
  double dram_bytes = 0.0;
  double stall_fraction = 0.0;  // stall cycles over total cycles
  double mapping_eff_pct = 0.0;
  std::int64_t folds = 0;
  Bottleneck bottleneck = Bottleneck::compute;
};
SystolicLayerCost evaluate_layer(const SystolicHardware& hw, const LayerSpec& l, std::int64_t batch);

// GEMM layers run on the array (M = rows_per_sample x batch rows, N, K); element-wise
// layers stream E x tensors words over the DRAM interface (3 x words/cycle) or run at
// the vector unit's rate, whichever is slower. Latency = cycles / clock per layer, in
// sequence; energy = MACs, SRAM words and DRAM words at their energies + static power.
WorkloadCost evaluate_workload(const SystolicHardware& hw, const WorkloadSpec& w, std::int64_t batch);

}  // namespace dse::costmodel
