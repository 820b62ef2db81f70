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

// ---------------------------------------------------------------- at the wall
// Everything a system draws besides its accelerators (a system file's `host:` section, each
// figure with its source there): host CPUs, memory, NICs, switch chips, storage and the rest
// at their draw under load, fans, and the power supplies' losses:
//     heat = accelerators + idle accelerators + host parts (CPUs ... other)
//     fans = fans_w x (heat / heat at full load)^3
//     wall = (heat + fans) / psu_efficiency
// Fans follow the affinity laws: the airflow that carries the heat away at a fixed temperature
// rise grows with the heat, the fans' power with the cube of their airflow; fans_w is their
// draw at full load, when every accelerator runs at its TDP (heat_full_w). The host parts draw
// their figure whatever the accelerators do, so a budget on wall power binds where the
// accelerators-only figure would not.
struct HostPower {
  double cpus_w = 0.0;
  double memory_w = 0.0;
  double nics_w = 0.0;
  double switches_w = 0.0;  // switch chips inside the system (NVSwitch), not the cluster fabric
  double storage_w = 0.0;
  double other_w = 0.0;     // board management, PCIe switches, retimers, ...
  double fans_w = 0.0;      // at full load (every accelerator at its TDP)
  double psu_efficiency = 1.0;  // DC out / AC in, in (0, 1]
  double max_wall_w = 0.0;      // the system's published maximum (0: none given); a check, not a cap
  // The parts whose draw does not depend on the load (all but the fans).
  [[nodiscard]] double parts_w() const noexcept {
    return cpus_w + memory_w + nics_w + switches_w + storage_w + other_w;
  }
};

struct WallPower {
  double accelerators_w = 0.0;  // the chips the work runs on (PowerResult::power_w)
  double idle_chips_w = 0.0;    // the system's other chips, at their static power
  double host_w = 0.0;          // the host parts and the fans
  double fans_w = 0.0;          // of host_w
  double psu_loss_w = 0.0;
  double wall_w = 0.0;
};
// `full_accelerators_w`: every chip of the system at its TDP (the load fans_w is given at).
WallPower wall_power(const HostPower& host, double accelerators_w, double idle_chips_w,
                     double full_accelerators_w) noexcept;

}  // namespace dse::costmodel::system
