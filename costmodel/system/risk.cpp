#include "costmodel/system/risk.hpp"

#include <algorithm>
#include <cmath>

namespace dse::costmodel::system {

std::string_view to_string(RiskOwner o) {
  switch (o) {
    case RiskOwner::ml_compiler: return "ML compiler";
    case RiskOwner::runtime_systems: return "runtime systems";
    case RiskOwner::performance_modelling: return "performance modelling";
    case RiskOwner::framework_integration: return "framework integration";
  }
  return "unknown";
}

std::string_view to_string(RiskKind k) {
  switch (k) {
    case RiskKind::stack_maturity: return "stack_maturity";
    case RiskKind::low_precision_without_evidence: return "low_precision_without_evidence";
    case RiskKind::unsupported_fusion: return "unsupported_fusion";
    case RiskKind::custom_dataflow: return "custom_dataflow";
    case RiskKind::low_memory_headroom: return "low_memory_headroom";
    case RiskKind::shape_outside_validated_range: return "shape_outside_validated_range";
    case RiskKind::power_figures_recalled: return "power_figures_recalled";
  }
  return "unknown";
}

namespace {

double repeated(double w, int n) { return 1.0 - std::pow(1.0 - w, std::max(0, n)); }

std::string percent(double f) { return std::to_string(static_cast<int>(std::lround(f * 100.0))) + "%"; }

}  // namespace

RiskAssessment assess_risk(const RiskInputs& in) {
  RiskAssessment a;
  auto add = [&a](RiskKind kind, RiskOwner owner, double weight, std::string detail,
                  std::string evidence) {
    if (!(weight > 0.0)) return;
    a.items.push_back(RiskItem{kind, owner, weight, std::move(detail), std::move(evidence)});
  };

  const double maturity = std::clamp(in.stack_maturity, 0.0, 1.0);
  add(RiskKind::stack_maturity, RiskOwner::runtime_systems,
      kStackMaturityWeight * (1.0 - maturity),
      "software-stack maturity " + percent(maturity),
      "the model served end to end on the platform's production stack at the modelled "
      "throughput");

  if (in.min_precision_bits < kLowPrecisionBitsBelow && !in.low_precision_quality_evidence) {
    add(RiskKind::low_precision_without_evidence, RiskOwner::framework_integration,
        kLowPrecisionWeight,
        std::to_string(in.min_precision_bits) + "-bit precision without quality evidence",
        "an accuracy evaluation of the model at this precision within its quality budget");
  }

  add(RiskKind::unsupported_fusion, RiskOwner::ml_compiler,
      repeated(kUnsupportedFusionWeight, in.unsupported_fusions),
      std::to_string(std::max(0, in.unsupported_fusions)) + " fusion(s) the stack does not support",
      "the compiler emits each fused kernel and its measured latency matches the model");

  if (in.custom_dataflow) {
    add(RiskKind::custom_dataflow, RiskOwner::ml_compiler, kCustomDataflowWeight,
        "a dataflow the stack does not ship",
        "a compiled kernel with this dataflow measured on silicon or a cycle-level simulator");
  }

  const double headroom = std::min(in.memory_headroom_fraction, 1.0);
  if (headroom < kMemoryHeadroomThreshold) {
    const double short_by = (kMemoryHeadroomThreshold - std::max(headroom, 0.0)) /
                            kMemoryHeadroomThreshold;
    add(RiskKind::low_memory_headroom, RiskOwner::runtime_systems, kLowHeadroomWeight * short_by,
        "memory headroom " + percent(headroom) + " (under " +
            percent(kMemoryHeadroomThreshold) + ")",
        "a peak-memory trace of the serving runtime under load that fits with the headroom "
        "threshold free");
  }

  add(RiskKind::shape_outside_validated_range, RiskOwner::performance_modelling,
      repeated(kShapeOutsideRangeWeight, in.shapes_outside_validated_range),
      std::to_string(std::max(0, in.shapes_outside_validated_range)) +
          " operator shape(s) outside the validated range",
      "measurements of those shapes on hardware or a validated simulator within the model's "
      "stated error");

  if (!in.recalled_power_figures.empty()) {
    std::string names;
    for (const auto& f : in.recalled_power_figures) names += (names.empty() ? "" : ", ") + f;
    add(RiskKind::power_figures_recalled, RiskOwner::performance_modelling,
        repeated(kRecalledPowerFigureWeight, static_cast<int>(in.recalled_power_figures.size())),
        std::to_string(in.recalled_power_figures.size()) + " power figure(s) of the chip recalled, not measured (" +
            names + ")",
        "the chip's power measured at a sustained GEMM and at idle (scripts/measure_gpu.py --sections power, or a "
        "published measurement) within 10% of the model");
  }

  double keep = 1.0;
  for (const RiskItem& item : a.items) keep *= 1.0 - item.weight;
  a.score = 1.0 - keep;
  return a;
}

}  // namespace dse::costmodel::system
