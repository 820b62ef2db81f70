#include "costmodel/roofline.hpp"

#include <algorithm>

namespace dse::costmodel {

std::string_view to_string(Bottleneck b) {
  switch (b) {
    case Bottleneck::compute: return "compute";
    case Bottleneck::memory: return "memory";
    case Bottleneck::overhead: return "overhead";
    case Bottleneck::interconnect: return "interconnect";
    case Bottleneck::capacity: return "capacity";
  }
  return "unknown";
}

KernelCost evaluate_roofline(const RooflineHardware& hw, const KernelWork& work) noexcept {
  KernelCost c;
  c.compute_time_s = work.flops / hw.peak_flops_per_s;
  c.memory_time_s = work.bytes / hw.memory_bandwidth_bytes_per_s;
  const double busy_s = std::max(c.compute_time_s, c.memory_time_s);
  c.latency_s = busy_s + hw.kernel_overhead_s;
  c.energy_j = work.flops * hw.energy_per_flop_j + work.bytes * hw.energy_per_byte_j +
               hw.static_power_w * c.latency_s;
  if (hw.kernel_overhead_s > busy_s) {
    c.bottleneck = Bottleneck::overhead;
  } else if (c.memory_time_s > c.compute_time_s) {
    c.bottleneck = Bottleneck::memory;
  } else {
    c.bottleneck = Bottleneck::compute;
  }
  return c;
}

}  // namespace dse::costmodel
