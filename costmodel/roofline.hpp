// The first timing model of the walking skeleton: a roofline per kernel.
// Pure: no I/O, no globals. Later models (loop nests, systolic arrays,
// GPU-class engines) refine what a kernel costs; this one stays as the bound
// every refined model must respect.
#pragma once

#include <string>
#include <string_view>

namespace dse::costmodel {

// What limits a kernel. Names match the bottleneck classes of docs/design.md.
enum class Bottleneck { compute, memory, overhead, interconnect, capacity };
std::string_view to_string(Bottleneck b);

// Time by bottleneck class, summed over the parts of a step; the dominant class is the one
// that takes the most time (ties: the first in the enum's order).
struct ClassTimes {
  double seconds[5] = {};
  void add(Bottleneck b, double s) noexcept { seconds[static_cast<int>(b)] += s; }
  [[nodiscard]] Bottleneck dominant() const noexcept {
    int best = 0;
    for (int i = 1; i < 5; ++i)
      if (seconds[i] > seconds[best]) best = i;
    return static_cast<Bottleneck>(best);
  }
};

// A roofline description of one chip. Every figure is in SI units.
struct RooflineHardware {
  std::string name;
  double peak_flops_per_s = 0.0;
  double memory_bandwidth_bytes_per_s = 0.0;
  double memory_capacity_bytes = 0.0;
  double kernel_overhead_s = 0.0;
  double energy_per_flop_j = 0.0;
  double energy_per_byte_j = 0.0;
  double static_power_w = 0.0;
  double engineering_risk = 0.0;  // in [0, 1], from the scenario for now
  double area_mm2 = 0.0;          // die area, a constraint metric (0: unknown)
};

// The work of one kernel launch.
struct KernelWork {
  double flops = 0.0;
  double bytes = 0.0;  // DRAM/HBM traffic
};

struct KernelCost {
  double compute_time_s = 0.0;  // flops / peak
  double memory_time_s = 0.0;   // bytes / bandwidth
  double latency_s = 0.0;       // max(compute, memory) + kernel overhead
  double energy_j = 0.0;        // flops*e_flop + bytes*e_byte + static power * latency
  Bottleneck bottleneck = Bottleneck::compute;
};

// latency = max(flops / peak, bytes / bandwidth) + kernel_overhead
// energy  = flops * energy_per_flop + bytes * energy_per_byte + static_power * latency
KernelCost evaluate_roofline(const RooflineHardware& hw, const KernelWork& work) noexcept;

}  // namespace dse::costmodel
