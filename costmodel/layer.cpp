#include "costmodel/layer.hpp"

#include <algorithm>

namespace dse::costmodel {

KernelWork layer_work(const LayerSpec& layer, std::int64_t batch) noexcept {
  const double b = layer.bytes_per_element;
  if (layer.kind == LayerKind::gemm) {
    const double m = static_cast<double>(layer.rows_per_sample) * static_cast<double>(batch);
    const double n = static_cast<double>(layer.n);
    const double k = static_cast<double>(layer.k);
    return {2.0 * m * n * k, (m * k + k * n + m * n) * b};
  }
  const double e = static_cast<double>(layer.elements_per_sample) * static_cast<double>(batch);
  return {e * layer.flops_per_element, e * layer.tensors_touched * b};
}

double resident_bytes(const WorkloadSpec& w, std::int64_t batch) noexcept {
  double weights = 0.0;
  double largest_activation = 0.0;
  const double bt = static_cast<double>(batch);
  for (const auto& l : w.layers) {
    const double b = l.bytes_per_element;
    if (l.kind == LayerKind::gemm) {
      weights += static_cast<double>(l.k) * static_cast<double>(l.n) * b;
      const double rows = static_cast<double>(l.rows_per_sample) * bt;
      largest_activation = std::max(
          largest_activation, rows * (static_cast<double>(l.k) + static_cast<double>(l.n)) * b);  // no int64 sum: k + n may pass 2^63
    } else {
      largest_activation = std::max(
          largest_activation,
          static_cast<double>(l.elements_per_sample) * bt * l.tensors_touched * b);
    }
  }
  return weights + largest_activation;
}

WorkloadCost evaluate_workload(const RooflineHardware& hw, const WorkloadSpec& w,
                               std::int64_t batch) noexcept {
  WorkloadCost c;
  ClassTimes by_class;
  for (const auto& l : w.layers) {
    const KernelWork work = layer_work(l, batch);
    const KernelCost k = evaluate_roofline(hw, work);
    c.latency_s += k.latency_s;
    c.energy_j += k.energy_j;
    c.flops += work.flops;
    c.bytes += work.bytes;
    by_class.add(k.bottleneck, k.latency_s);
  }
  c.bottleneck = by_class.dominant();
  finish_workload_cost(c, w, batch, hw.memory_capacity_bytes);
  return c;
}

void finish_workload_cost(WorkloadCost& c, const WorkloadSpec& w, std::int64_t batch,
                          double memory_capacity_bytes) noexcept {
  const double bt = static_cast<double>(batch);
  c.throughput_samples_per_s = c.latency_s > 0.0 ? bt / c.latency_s : 0.0;
  c.energy_per_sample_j = c.energy_j / bt;
  c.memory_bytes = resident_bytes(w, batch);
  c.feasible = memory_capacity_bytes <= 0.0 || c.memory_bytes <= memory_capacity_bytes;
  if (!c.feasible) c.bottleneck = Bottleneck::capacity;
}

}  // namespace dse::costmodel
