// The price and cost model of costmodel/system/cost.hpp against hand arithmetic from its rules and
// constants (each constant's source is in cost.cpp): dies per 300 mm wafer, Poisson yield, the
// build-cost difference of a changed chip at the vendor's markup, and the cost per hour and per
// million tokens of owned and rented systems.
#include <gtest/gtest.h>

#include <cmath>

#include "costmodel/system/cost.hpp"

namespace dse::costmodel::system {
namespace {

TEST(Cost, DieCostOfTheGh100ByHand) {
  // 814 mm2 (the GH100): pi 150^2 / 814 = 86.838, pi 300 / sqrt(2 x 814) = 23.358: 63 whole dies;
  // yield exp(-814 x 0.001) = 0.443082; 63 x 0.443082 = 27.914 good dies of a 16,988 USD 5 nm-class
  // wafer: 608.58 USD each.
  EXPECT_EQ(dies_per_wafer(814.0), 63.0);
  EXPECT_NEAR(die_yield(814.0), 0.443082, 1e-6);
  EXPECT_NEAR(die_usd(814.0, 4.0), 608.58, 0.01);
  // 1,085 mm2: 65.148 - 20.232 = 44 whole dies, yield exp(-1.085) = 0.337901, 14.868 good:
  // 1,142.6 USD each. A 7 nm die of 826 mm2 (the GA100): 85.576 - 23.189 = 62 dies, yield
  // 0.437797, 27.143 good of a 9,346 USD wafer: 344.32 USD.
  EXPECT_EQ(dies_per_wafer(1085.0), 44.0);
  EXPECT_NEAR(die_usd(1085.0, 4.0), 1142.6, 0.1);
  EXPECT_NEAR(die_usd(826.0, 7.0), 344.32, 0.01);
  EXPECT_EQ(die_usd(0.0, 4.0), 0.0);  // no area: no die cost
}

TEST(Cost, ChangedChipPricedByItsBuildCostDifference) {
  const ChipBuild h100{814.0, 4.0, 85899345920.0, 3.35e12};
  // Nothing changed: the preset's price, exactly.
  EXPECT_EQ(derived_chip_usd(30678.0, h100, h100), 30678.0);
  // 192 GB of HBM instead of 80 GiB: (1.92e11 - 85,899,345,920) B x 10 USD/GB = 1,061.0 USD of
  // build cost, x 1 / (1 - 0.727) = 3.663: +3,886.5 USD.
  ChipBuild more = h100;
  more.hbm_bytes = 1.92e11;
  EXPECT_NEAR(derived_chip_usd(30678.0, h100, more), 30678.0 + 3886.47, 0.01);
  // Twice the bandwidth at the same capacity: the 859.0 USD of HBM x (2^0.48 - 1) = 339.09, x 3.663:
  // +1,242.1 USD.
  ChipBuild faster = h100;
  faster.hbm_bandwidth_bytes_per_s = 6.7e12;
  EXPECT_NEAR(derived_chip_usd(30678.0, h100, faster), 30678.0 + 1242.1, 0.1);
  // A larger die: (1,142.6 - 608.58) x 3.663 = +1,956 USD.
  ChipBuild bigger = h100;
  bigger.die_area_mm2 = 1085.0;
  EXPECT_NEAR(derived_chip_usd(30678.0, h100, bigger), 30678.0 + 1956.1, 0.5);
}

TEST(Cost, OwnedAndRentedSystemsPerHourAndPerToken) {
  const CostAssumptions a = default_cost_assumptions();
  EXPECT_EQ(a.electricity_usd_per_kwh, 0.08);
  EXPECT_EQ(a.amortisation_years, 4.0);
  // A DGX H100: 8 x (30,678 + 10,000) = 325,424 USD over 4 x 8,766 h = 9.28085 USD/h, plus 5 kW at
  // 0.08 USD/kWh = 0.4: 9.68085 USD/h; at 2,000 tokens/s, 9.68085 / 7.2e6 tokens x 1e6 = 1.34456 USD
  // per million tokens.
  const SystemCost owned = system_cost({30678.0, 10000.0, 0.0}, 8, 5000.0, a);
  EXPECT_EQ(owned.capital_usd, 325424.0);
  EXPECT_NEAR(owned.per_hour_usd, 9.68085, 1e-5);
  EXPECT_NEAR(usd_per_million(owned.per_hour_usd, 2000.0), 1.34456, 1e-5);
  // 256 Cloud TPU v5e chips at 1.20 USD a chip-hour: 307.2 USD/h, power included; over the 35,064 h
  // an owned system is written off in, 10,771,660.8 USD.
  const SystemCost rented = system_cost({0.0, 0.0, 1.2}, 256, 50000.0, a);
  EXPECT_NEAR(rented.per_hour_usd, 307.2, 1e-9);
  EXPECT_NEAR(rented.capital_usd, 10771660.8, 1e-3);
  // No price: no cost.
  EXPECT_EQ(system_cost({}, 8, 5000.0, a).per_hour_usd, 0.0);
  EXPECT_EQ(usd_per_million(9.0, 0.0), 0.0);
}

}  // namespace
}  // namespace dse::costmodel::system
