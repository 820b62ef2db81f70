// Engineering risk of a design point: a score in [0, 1] and the items behind
// it, each with an owner, a weight and the evidence that would retire it.
// Pure: no I/O, no globals.
//
// Formula. Items are treated as independent chances that the point does not
// deliver its modelled figures; the score is the chance that at least one does:
//     risk = 1 - prod_i (1 - w_i),   every w_i in [0, 1).
// An item that counts several instances (n unsupported fusions, n operator
// shapes out of range) has weight 1 - (1 - w)^n, i.e. n independent items of
// weight w. Every weight is one of the named constants below; nothing else
// enters the score.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace dse::costmodel::system {

// ---- the weights, with their rationale (edit here, and only here)
// A stack at maturity 0 (new compiler, runtime and framework port) is the most
// common reason an accelerator misses its modelled figures; alone it makes the
// point a coin flip. Scaled by (1 - maturity).
inline constexpr double kStackMaturityWeight = 0.5;
// Precision below bf16 (fp8, int8, int4...) with no stated quality evidence: the
// quantised model may fail its accuracy bar, which voids the point outright, but
// recipes for 8-bit inference exist for most models.
inline constexpr double kLowPrecisionWeight = 0.3;
// Narrowest precision that needs no quality evidence (bf16 / fp16).
inline constexpr int kLowPrecisionBitsBelow = 16;
// Each fusion the stack does not support: the modelled latency assumes the fused
// kernel; writing it is weeks of compiler work and may not reach the model.
inline constexpr double kUnsupportedFusionWeight = 0.1;
// A dataflow the stack does not ship (a custom mapping of the matrix engine or
// memory hierarchy): needs new compiler lowering and validation.
inline constexpr double kCustomDataflowWeight = 0.2;
// Memory headroom below this fraction of capacity counts as a risk (allocator
// fragmentation, runtime buffers and KV growth eat the last 10%).
inline constexpr double kMemoryHeadroomThreshold = 0.10;
// Weight at zero (or negative) headroom; it falls linearly to 0 at the threshold.
inline constexpr double kLowHeadroomWeight = 0.25;
// Each operator shape outside the range the performance model was validated on:
// its cost is an extrapolation.
inline constexpr double kShapeOutsideRangeWeight = 0.05;
// Each power figure of the chip that the point's power depends on (TDP, static power, the
// energy per HBM byte, the matrix FLOP energy at the point's precision) whose source is recalled
// or assumed (tag R), not measured: such figures have been off by 2-3x (the MI300X's
// rule-based energies put a compute-bound prefill at 313 W of its 750 W cap, where AMD's
// sustained GEMMs run at the cap), which moves the point's power, the clock its TDP allows and
// its energy per token, and decides whether a power budget binds.
inline constexpr double kRecalledPowerFigureWeight = 0.1;

enum class RiskOwner { ml_compiler, runtime_systems, performance_modelling, framework_integration };
enum class RiskKind {
  stack_maturity,
  low_precision_without_evidence,
  unsupported_fusion,
  custom_dataflow,
  low_memory_headroom,
  shape_outside_validated_range,
  power_figures_recalled
};
std::string_view to_string(RiskOwner o);
std::string_view to_string(RiskKind k);

struct RiskInputs {
  double stack_maturity = 1.0;          // [0, 1]; 1 = production stack serving comparable models
  int min_precision_bits = 16;          // narrowest precision the point uses
  bool low_precision_quality_evidence = false;  // accuracy at that precision is documented
  int unsupported_fusions = 0;          // fusion groups the stack cannot emit
  bool custom_dataflow = false;         // a dataflow the stack does not ship
  double memory_headroom_fraction = 1.0;  // (capacity - footprint) / capacity
  int shapes_outside_validated_range = 0;
  // The chip's power figures the point depends on whose source is tagged R (their names).
  std::vector<std::string> recalled_power_figures;
};

struct RiskItem {
  RiskKind kind = RiskKind::stack_maturity;
  RiskOwner owner = RiskOwner::runtime_systems;
  double weight = 0.0;                // in [0, 1)
  std::string detail;                 // what triggered it, with the figures
  std::string retiring_evidence;      // what would retire it
};

struct RiskAssessment {
  double score = 0.0;                 // 1 - prod(1 - weight)
  std::vector<RiskItem> items;        // only items with weight > 0, in RiskKind order
};

// Inputs out of range are clamped: maturity and headroom to their meaning,
// counts below 0 to 0.
RiskAssessment assess_risk(const RiskInputs& inputs);

}  // namespace dse::costmodel::system
