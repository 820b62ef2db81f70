// Power with a TDP cap: the throttling rule of power.hpp, checked by hand.
#include <gtest/gtest.h>

#include <cmath>

#include "costmodel/system/power.hpp"
#include "costmodel/system/serving.hpp"  // Rng for random points

namespace cs = dse::costmodel::system;

// Under the TDP nothing changes: 1 chip, 0.5 s busy, 100 J dynamic -> 200 W dynamic
// + 100 W static = 300 W <= 700 W. Energy 100 + 100 * 0.5 = 150 J; 1000 tokens:
// 0.15 J/token; 2000 tokens/s over 300 W = 6.667 tokens/J.
TEST(Power, UnderTdpUnchanged) {
  const cs::PowerSpec spec{700.0, 100.0, cs::DvfsRule::voltage_and_frequency, 0.0};
  const auto r = cs::evaluate_power(spec, {0.5, 100.0, 1000.0, 10.0, 1});
  ASSERT_TRUE(r.feasible);
  EXPECT_FALSE(r.throttled);
  EXPECT_DOUBLE_EQ(r.throttle_factor, 1.0);
  EXPECT_DOUBLE_EQ(r.power_w, 300.0);
  EXPECT_DOUBLE_EQ(r.energy_j, 150.0);
  EXPECT_DOUBLE_EQ(r.energy_per_token_j, 0.15);
  EXPECT_DOUBLE_EQ(r.energy_per_request_j, 15.0);
  EXPECT_NEAR(r.perf_per_w, 2000.0 / 300.0, 1e-12);
}

// Over the TDP, V proportional to f: 2 chips, 1 s, 2000 J dynamic -> 1000 W dynamic
// per chip + 100 W static = 1100 W > 700 W. s = (600 / 1000)^(1/3) = 0.843433;
// latency 1 / s = 1.185631 s; power per chip 100 + s^3 * 1000 = 700 W;
// energy = s^2 * 2000 + 2 * 100 * 1.185631 = 1422.74 + 237.13 J.
TEST(Power, OverTdpCubicRule) {
  const cs::PowerSpec spec{700.0, 100.0, cs::DvfsRule::voltage_and_frequency, 0.0};
  const auto r = cs::evaluate_power(spec, {1.0, 2000.0, 5000.0, 50.0, 2});
  ASSERT_TRUE(r.feasible);
  EXPECT_TRUE(r.throttled);
  const double s = std::cbrt(0.6);
  EXPECT_NEAR(r.throttle_factor, s, 1e-12);
  EXPECT_NEAR(r.latency_s, 1.0 / s, 1e-12);
  EXPECT_NEAR(r.unthrottled_power_per_chip_w, 1100.0, 1e-12);
  EXPECT_LE(r.power_per_chip_w, 700.0);
  EXPECT_NEAR(r.power_per_chip_w, 700.0, 1e-9);
  EXPECT_NEAR(r.energy_j, s * s * 2000.0 + 200.0 / s, 1e-9);
  // Energy / latency is the reported power: the figures are consistent.
  EXPECT_NEAR(r.energy_j / r.latency_s, r.power_w, 1e-9);
  EXPECT_NEAR(r.tokens_per_s, 5000.0 * s, 1e-9);
}

// Voltage fixed: power linear in the clock, s = 600 / 1000 = 0.6; latency 1/0.6 s;
// dynamic energy unchanged: 1000 + 100 / 0.6 J on one chip.
TEST(Power, OverTdpLinearRule) {
  const cs::PowerSpec spec{700.0, 100.0, cs::DvfsRule::frequency_only, 0.0};
  const auto r = cs::evaluate_power(spec, {1.0, 1000.0, 100.0, 1.0, 1});
  EXPECT_NEAR(r.throttle_factor, 0.6, 1e-12);
  EXPECT_NEAR(r.latency_s, 1.0 / 0.6, 1e-12);
  EXPECT_NEAR(r.energy_j, 1000.0 + 100.0 / 0.6, 1e-9);
  EXPECT_LE(r.power_w, 700.0);
}

TEST(Power, InfeasibleCasesStillCapPower) {
  const cs::PowerSpec hot{300.0, 350.0, cs::DvfsRule::voltage_and_frequency, 0.0};
  const auto a = cs::evaluate_power(hot, {1.0, 100.0, 1.0, 1.0, 4});
  EXPECT_FALSE(a.feasible);
  EXPECT_EQ(a.status, cs::PowerStatus::static_power_exceeds_tdp);
  EXPECT_LE(a.power_w, 4 * 300.0);
  // The cubic rule wants s = (600/100000)^(1/3) = 0.18 < the part's 0.5 floor.
  const cs::PowerSpec floor{700.0, 100.0, cs::DvfsRule::voltage_and_frequency, 0.5};
  const auto b = cs::evaluate_power(floor, {1.0, 100000.0, 1.0, 1.0, 1});
  EXPECT_FALSE(b.feasible);
  EXPECT_EQ(b.status, cs::PowerStatus::below_min_clock);
  EXPECT_LE(b.power_per_chip_w, 700.0);
  EXPECT_EQ(cs::evaluate_power(floor, {0.0, 1.0, 1.0, 1.0, 1}).status,
            cs::PowerStatus::invalid_input);
}

// Random points over several orders of magnitude: power never exceeds the TDP, and
// throttled points obey the rule (P_static + s^k P_dyn = TDP to rounding).
TEST(Power, NeverAboveTdp) {
  cs::Rng rng(2024);
  for (int i = 0; i < 100000; ++i) {
    const double tdp = 50.0 + 1000.0 * rng.uniform();
    const double stat = tdp * 0.9 * rng.uniform();
    const auto rule = rng.uniform() < 0.5 ? cs::DvfsRule::frequency_only
                                          : cs::DvfsRule::voltage_and_frequency;
    const double t = std::pow(10.0, -6.0 + 6.0 * rng.uniform());
    const double e = t * tdp * std::pow(10.0, -2.0 + 5.0 * rng.uniform());
    const int chips = 1 + static_cast<int>(rng.uniform() * 16);
    const auto r = cs::evaluate_power({tdp, stat, rule, 0.0}, {t, e, 1.0, 1.0, chips});
    ASSERT_TRUE(r.feasible);
    ASSERT_LE(r.power_per_chip_w, tdp) << i;
    ASSERT_LE(r.power_w, chips * tdp) << i;
    ASSERT_LE(r.throttle_factor, 1.0);
    if (r.throttled) {
      const double p_dyn = e / (chips * t);
      const double k = rule == cs::DvfsRule::frequency_only ? 1.0 : 3.0;
      ASSERT_NEAR(stat + std::pow(r.throttle_factor, k) * p_dyn, tdp, 1e-9 * tdp) << i;
      ASSERT_NEAR(r.latency_s, t / r.throttle_factor, 1e-12 * r.latency_s);
    }
  }
}

// Power at the wall (power.hpp wall_power), by hand: accelerators 4,000 W, two idle chips at
// 100 W, host parts 1,000 W, fans 1,200 W at full load (8 chips x 700 W), PSUs 95% efficient.
// Heat 4,000 + 200 + 1,000 = 5,200 W of a full 5,600 + 1,000 = 6,600 W: fans 1,200 x
// (5,200 / 6,600)^3 = 1,200 x 0.48908 = 586.9 W; wall (5,200 + 586.9) / 0.95 = 6,091.5 W.
TEST(Power, WallPowerAddsHostFansAndSupplyLosses) {
  cs::HostPower h;
  h.cpus_w = 700.0;
  h.memory_w = 160.0;
  h.nics_w = 140.0;
  h.fans_w = 1200.0;
  h.psu_efficiency = 0.95;
  const cs::WallPower w = cs::wall_power(h, 4000.0, 200.0, 5600.0);
  const double fans = 1200.0 * std::pow(5200.0 / 6600.0, 3.0);
  EXPECT_NEAR(w.fans_w, fans, 1e-9);
  EXPECT_NEAR(fans, 586.9, 0.05);
  EXPECT_NEAR(w.host_w, 1000.0 + fans, 1e-9);
  EXPECT_NEAR(w.wall_w, (5200.0 + fans) / 0.95, 1e-9);
  EXPECT_NEAR(w.wall_w, 6091.5, 0.1);
  EXPECT_NEAR(w.psu_loss_w, w.wall_w - 5200.0 - fans, 1e-9);
  // Every chip at its TDP: the fans at their full figure.
  EXPECT_NEAR(cs::wall_power(h, 5600.0, 0.0, 5600.0).fans_w, 1200.0, 1e-9);
  // No host section: the wall is the accelerators.
  EXPECT_DOUBLE_EQ(cs::wall_power(cs::HostPower{}, 4000.0, 0.0, 5600.0).wall_w, 4000.0);
}
