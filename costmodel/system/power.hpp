// Power of a chip or system over an interval of work: dynamic energy spread
// over the busy time plus static power, capped at the TDP by throttling the
// clock. Pure: no I/O, no globals.
//
// The rule. At the nominal clock the work takes T seconds and E_dyn joules of
// dynamic energy on `chips` chips, so each chip draws
//     P = P_static + P_dyn,   P_dyn = E_dyn / (chips T).
// If P <= TDP nothing changes (throttle factor s = 1). Otherwise the clock is
// scaled by s < 1 and every latency by 1/s (all of the time is taken as clock
// bound: pessimistic for memory-bound phases). Two DVFS rules:
//  * frequency_only (voltage fixed): energy per operation is unchanged, so
//    P_dyn(s) = s P_dyn and E_dyn(s) = E_dyn;  s = (TDP - P_static) / P_dyn.
//  * voltage_and_frequency (V proportional to f): energy per operation goes
//    as V^2 = s^2, power as f V^2 = s^3:  P_dyn(s) = s^3 P_dyn,
//    E_dyn(s) = s^2 E_dyn;  s = ((TDP - P_static) / P_dyn)^(1/3).
// Energy over the throttled interval = E_dyn(s) + chips P_static T / s.
// Reported power never exceeds chips x TDP: when P_static >= TDP, or s falls
// below min_clock_fraction, the point is infeasible (a value) and its power is
// reported as the TDP with zero throughput.
#pragma once

#include <string_view>

namespace dse::costmodel::system {

enum class DvfsRule { frequency_only, voltage_and_frequency };
std::string_view to_string(DvfsRule r);

struct PowerSpec {  // per chip
  double tdp_w = 0.0;
  double static_power_w = 0.0;
  DvfsRule rule = DvfsRule::voltage_and_frequency;
  double min_clock_fraction = 0.0;  // lowest clock the part supports, as a fraction of nominal
};

struct PowerInput {  // totals of the system over one interval at the nominal clock
  double busy_time_s = 0.0;
  double dynamic_energy_j = 0.0;
  double tokens = 0.0;    // work done in the interval (for energy per token, perf/W)
  double requests = 0.0;
  int chips = 1;
};

enum class PowerStatus { ok, invalid_input, static_power_exceeds_tdp, below_min_clock };
std::string_view to_string(PowerStatus s);

struct PowerResult {
  bool feasible = true;
  PowerStatus status = PowerStatus::ok;
  bool throttled = false;
  double throttle_factor = 1.0;          // s: clock (and speed) relative to nominal
  double unthrottled_power_per_chip_w = 0.0;
  double latency_s = 0.0;                // T / s
  double power_per_chip_w = 0.0;         // <= TDP always
  double power_w = 0.0;                  // system: chips x per chip
  double dynamic_power_w = 0.0;          // system
  double static_power_w = 0.0;           // system
  double energy_j = 0.0;                 // system, over latency_s
  double energy_per_token_j = 0.0;
  double energy_per_request_j = 0.0;
  double tokens_per_s = 0.0;
  double perf_per_w = 0.0;               // tokens/s per W (= tokens per J)
};

PowerResult evaluate_power(const PowerSpec& spec, const PowerInput& input) noexcept;

}  // namespace dse::costmodel::system
