#include "costmodel/system/power.hpp"

#include <algorithm>

#include <cmath>
#include <limits>

namespace dse::costmodel::system {

std::string_view to_string(DvfsRule r) {
  switch (r) {
    case DvfsRule::frequency_only: return "frequency_only";
    case DvfsRule::voltage_and_frequency: return "voltage_and_frequency";
  }
  return "unknown";
}

std::string_view to_string(PowerStatus s) {
  switch (s) {
    case PowerStatus::ok: return "ok";
    case PowerStatus::invalid_input: return "invalid_input";
    case PowerStatus::static_power_exceeds_tdp: return "static_power_exceeds_tdp";
    case PowerStatus::below_min_clock: return "below_min_clock";
  }
  return "unknown";
}

namespace {

// Dynamic power and energy at clock fraction s (see the rule in power.hpp).
double power_scale(DvfsRule r, double s) noexcept {
  return r == DvfsRule::frequency_only ? s : s * s * s;
}
double energy_scale(DvfsRule r, double s) noexcept {
  return r == DvfsRule::frequency_only ? 1.0 : s * s;
}

}  // namespace

PowerResult evaluate_power(const PowerSpec& spec, const PowerInput& in) noexcept {
  PowerResult r;
  if (!(spec.tdp_w > 0.0) || !(spec.static_power_w >= 0.0) || !(in.busy_time_s > 0.0) ||
      !(in.dynamic_energy_j >= 0.0) || !(in.tokens >= 0.0) || !(in.requests >= 0.0) ||
      in.chips < 1 || !(spec.min_clock_fraction >= 0.0) || !(spec.min_clock_fraction <= 1.0)) {
    r.feasible = false;
    r.status = PowerStatus::invalid_input;
    return r;
  }
  const double chips = in.chips;
  const double p_dyn = in.dynamic_energy_j / (chips * in.busy_time_s);  // per chip, nominal
  r.unthrottled_power_per_chip_w = spec.static_power_w + p_dyn;
  auto infeasible = [&](PowerStatus s) {
    r.feasible = false;
    r.status = s;
    r.throttled = true;
    r.throttle_factor = 0.0;
    r.latency_s = std::numeric_limits<double>::infinity();
    r.power_per_chip_w = spec.tdp_w;
    r.power_w = chips * spec.tdp_w;
    return r;
  };
  if (spec.static_power_w >= spec.tdp_w) return infeasible(PowerStatus::static_power_exceeds_tdp);

  double s = 1.0;
  if (r.unthrottled_power_per_chip_w > spec.tdp_w) {
    const double ratio = (spec.tdp_w - spec.static_power_w) / p_dyn;
    s = spec.rule == DvfsRule::frequency_only ? ratio : std::cbrt(ratio);
    // Rounding may leave the power an ulp above the TDP: step the clock down until not.
    while (s > 0.0 && spec.static_power_w + power_scale(spec.rule, s) * p_dyn > spec.tdp_w) {
      s = std::nextafter(s, 0.0);
    }
    r.throttled = true;
    if (s < spec.min_clock_fraction) return infeasible(PowerStatus::below_min_clock);
  }
  r.throttle_factor = s;
  r.latency_s = in.busy_time_s / s;
  const double dyn_per_chip_w = power_scale(spec.rule, s) * p_dyn;
  r.power_per_chip_w = spec.static_power_w + dyn_per_chip_w;
  r.power_w = chips * r.power_per_chip_w;
  r.dynamic_power_w = chips * dyn_per_chip_w;
  r.static_power_w = chips * spec.static_power_w;
  r.energy_j = energy_scale(spec.rule, s) * in.dynamic_energy_j +
               chips * spec.static_power_w * r.latency_s;
  if (in.tokens > 0.0) r.energy_per_token_j = r.energy_j / in.tokens;
  if (in.requests > 0.0) r.energy_per_request_j = r.energy_j / in.requests;
  r.tokens_per_s = in.tokens / r.latency_s;
  r.perf_per_w = r.power_w > 0.0 ? r.tokens_per_s / r.power_w : 0.0;
  return r;
}

WallPower wall_power(const HostPower& host, double accelerators_w, double idle_chips_w,
                     double full_accelerators_w) noexcept {
  WallPower w;
  w.accelerators_w = accelerators_w;
  w.idle_chips_w = idle_chips_w;
  const double heat = accelerators_w + idle_chips_w + host.parts_w();
  const double full = full_accelerators_w + host.parts_w();
  const double load = full > 0.0 ? std::min(1.0, heat / full) : 1.0;
  w.fans_w = host.fans_w * load * load * load;
  w.host_w = host.parts_w() + w.fans_w;
  const double dc = heat + w.fans_w;
  const double eff = host.psu_efficiency > 0.0 && host.psu_efficiency <= 1.0 ? host.psu_efficiency : 1.0;
  w.wall_w = dc / eff;
  w.psu_loss_w = w.wall_w - dc;
  return w;
}

}  // namespace dse::costmodel::system
