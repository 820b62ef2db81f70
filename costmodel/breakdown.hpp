// Per-layer breakdown of a workload on a hardware point: the rows of a mapping
// sheet (what each layer costs, what bounds it, and how it was mapped). Pure.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "costmodel/layer.hpp"
#include "costmodel/roofline.hpp"
#include "costmodel/systolic/systolic_platform.hpp"

namespace dse::costmodel {

struct LayerBreakdown {
  std::string name;
  std::string type;            // gemm | elementwise
  std::int64_t repeat = 1;     // occurrences in the step (a transformer block's layers: its layer count)
  double latency_s = 0.0;      // one occurrence
  double energy_j = 0.0;       // one occurrence (filled by the custom-chip models: costmodel/lowering)
  double flops = 0.0;
  double dram_bytes = 0.0;
  double stall_fraction = 0.0;  // (latency - compute time) / latency
  double pct_of_peak = 0.0;     // achieved FLOP/s over the peak, in percent
  Bottleneck bottleneck = Bottleneck::compute;
  std::string mapping;          // how the layer was mapped, in words
  std::string fusion_group;     // the fused kernel the layer runs in ("" when it runs alone)
};

std::vector<LayerBreakdown> layer_breakdown(const RooflineHardware& hw, const WorkloadSpec& w, std::int64_t batch);
std::vector<LayerBreakdown> layer_breakdown(const SystolicHardware& hw, const WorkloadSpec& w, std::int64_t batch);

}  // namespace dse::costmodel
