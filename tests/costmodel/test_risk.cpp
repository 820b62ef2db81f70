// Engineering risk: the formula 1 - prod(1 - w_i) with the named weights of risk.hpp.
#include <gtest/gtest.h>

#include <cmath>

#include "costmodel/system/risk.hpp"

namespace cs = dse::costmodel::system;

TEST(Risk, MatureBf16PointHasNoRisk) {
  const auto a = cs::assess_risk({});
  EXPECT_EQ(a.score, 0.0);
  EXPECT_TRUE(a.items.empty());
}

// Maturity 0.4: weight 0.5 * (1 - 0.4) = 0.3, owned by runtime systems.
TEST(Risk, StackMaturityScales) {
  cs::RiskInputs in;
  in.stack_maturity = 0.4;
  const auto a = cs::assess_risk(in);
  ASSERT_EQ(a.items.size(), 1u);
  EXPECT_EQ(a.items[0].kind, cs::RiskKind::stack_maturity);
  EXPECT_EQ(a.items[0].owner, cs::RiskOwner::runtime_systems);
  EXPECT_NEAR(a.items[0].weight, cs::kStackMaturityWeight * 0.6, 1e-15);
  EXPECT_NEAR(a.score, 0.3, 1e-15);
  EXPECT_FALSE(a.items[0].retiring_evidence.empty());
}

// fp8 without evidence (0.3) and a custom dataflow (0.2): 1 - 0.7 * 0.8 = 0.44.
// Stating the quality evidence retires the precision item: 0.2 left.
TEST(Risk, ItemsCombineIndependently) {
  cs::RiskInputs in;
  in.min_precision_bits = 8;
  in.custom_dataflow = true;
  const auto a = cs::assess_risk(in);
  ASSERT_EQ(a.items.size(), 2u);
  EXPECT_EQ(a.items[0].owner, cs::RiskOwner::framework_integration);
  EXPECT_EQ(a.items[1].owner, cs::RiskOwner::ml_compiler);
  EXPECT_NEAR(a.score, 1.0 - (1.0 - cs::kLowPrecisionWeight) * (1.0 - cs::kCustomDataflowWeight),
              1e-15);
  EXPECT_NEAR(a.score, 0.44, 1e-12);
  in.low_precision_quality_evidence = true;
  EXPECT_NEAR(cs::assess_risk(in).score, 0.2, 1e-15);
}

// Three unsupported fusions: 1 - 0.9^3 = 0.271; two shapes out of range: 1 - 0.95^2.
TEST(Risk, CountedItems) {
  cs::RiskInputs in;
  in.unsupported_fusions = 3;
  EXPECT_NEAR(cs::assess_risk(in).score, 0.271, 1e-12);
  in.unsupported_fusions = 0;
  in.shapes_outside_validated_range = 2;
  const auto a = cs::assess_risk(in);
  EXPECT_NEAR(a.score, 1.0 - 0.95 * 0.95, 1e-12);
  EXPECT_EQ(a.items.at(0).owner, cs::RiskOwner::performance_modelling);
}

// Headroom: 5% is half way under the 10% threshold: 0.25 * 0.5 = 0.125; 10% or more
// none; a negative headroom (over capacity) takes the full weight.
TEST(Risk, MemoryHeadroom) {
  cs::RiskInputs in;
  in.memory_headroom_fraction = 0.05;
  EXPECT_NEAR(cs::assess_risk(in).score, 0.125, 1e-12);
  in.memory_headroom_fraction = 0.10;
  EXPECT_TRUE(cs::assess_risk(in).items.empty());
  in.memory_headroom_fraction = -0.3;
  EXPECT_NEAR(cs::assess_risk(in).score, cs::kLowHeadroomWeight, 1e-15);
}

// Everything at once stays in [0, 1) and equals the product formula over its items.
TEST(Risk, ScoreBoundedAndEqualsFormula) {
  cs::RiskInputs in;
  in.stack_maturity = -5.0;  // clamped to 0
  in.min_precision_bits = 4;
  in.unsupported_fusions = 50;
  in.custom_dataflow = true;
  in.memory_headroom_fraction = 0.0;
  in.shapes_outside_validated_range = 100;
  const auto a = cs::assess_risk(in);
  EXPECT_EQ(a.items.size(), 6u);
  double keep = 1.0;
  for (const auto& item : a.items) {
    EXPECT_GT(item.weight, 0.0);
    EXPECT_LT(item.weight, 1.0);
    EXPECT_FALSE(item.detail.empty());
    EXPECT_FALSE(item.retiring_evidence.empty());
    keep *= 1.0 - item.weight;
  }
  EXPECT_NEAR(a.score, 1.0 - keep, 1e-15);
  EXPECT_GT(a.score, 0.99);
  EXPECT_LT(a.score, 1.0);
}

// Power figures recalled, not measured: weight 0.1 each, 1 - 0.9^n for n of them, owned by
// performance modelling; the detail names them.
TEST(Risk, RecalledPowerFigures) {
  cs::RiskInputs in;
  in.recalled_power_figures = {"static_power_w", "matrix_flop_fp16_j"};
  const auto a = cs::assess_risk(in);
  ASSERT_EQ(a.items.size(), 1u);
  EXPECT_EQ(a.items[0].kind, cs::RiskKind::power_figures_recalled);
  EXPECT_EQ(a.items[0].owner, cs::RiskOwner::performance_modelling);
  EXPECT_NEAR(a.score, 1.0 - 0.9 * 0.9, 1e-12);
  EXPECT_NE(a.items[0].detail.find("static_power_w, matrix_flop_fp16_j"), std::string::npos);
  EXPECT_FALSE(a.items[0].retiring_evidence.empty());
  in.recalled_power_figures.clear();
  EXPECT_TRUE(cs::assess_risk(in).items.empty());
}
