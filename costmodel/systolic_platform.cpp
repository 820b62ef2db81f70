#include "costmodel/systolic_platform.hpp"

#include <algorithm>

namespace dse::costmodel {

double SystolicHardware::area_mm2() const {
  const double pes = static_cast<double>(array.rows * array.cols);
  const double kib = static_cast<double>(array.ifmap_sram_bytes + array.filter_sram_bytes + array.ofmap_sram_bytes) / 1024.0;
  return fixed_area_mm2 + pes * area_per_pe_mm2 + kib * area_per_sram_kib_mm2;
}

WorkloadCost evaluate_workload(const SystolicHardware& hw, const WorkloadSpec& w, std::int64_t batch) {
  WorkloadCost c;
  double slowest = -1.0;
  const double words_per_cycle = static_cast<double>(hw.array.dram_words_per_cycle) * 3.0;
  const double vector_rate = hw.vector_ops_per_cycle > 0 ? hw.vector_ops_per_cycle : static_cast<double>(hw.array.cols);
  for (const auto& l : w.layers) {
    const KernelWork work = layer_work(l, batch);
    double cycles = 0.0;
    double energy = 0.0;
    Bottleneck b = Bottleneck::compute;
    if (l.kind == LayerKind::gemm) {
      const ConvLayer conv = gemm_as_conv(l.rows_per_sample * batch, l.n, l.k);
      const SystolicResult r = estimate_systolic(hw.array, conv);
      cycles = static_cast<double>(r.total_cycles);
      const double sram = static_cast<double>(r.sram_ifmap_reads + r.sram_filter_reads + r.sram_ofmap_writes);
      const double dram = static_cast<double>(r.dram_ifmap_reads + r.dram_filter_reads + r.dram_ofmap_writes);
      energy = static_cast<double>(r.macs) * hw.energy_per_mac_j + sram * hw.energy_per_sram_word_j +
               dram * hw.energy_per_dram_word_j;
      b = r.stall_cycles * 2 > r.total_cycles ? Bottleneck::memory : Bottleneck::compute;
      c.bytes += dram * static_cast<double>(hw.array.word_bytes);
    } else {
      const double words = work.bytes / static_cast<double>(hw.array.word_bytes);
      const double mem_cycles = words / words_per_cycle;
      const double op_cycles = work.flops / vector_rate;
      cycles = std::max(mem_cycles, op_cycles);
      energy = words * hw.energy_per_dram_word_j;
      b = mem_cycles >= op_cycles ? Bottleneck::memory : Bottleneck::compute;
      c.bytes += work.bytes;
    }
    const double t = cycles / hw.clock_hz;
    c.latency_s += t;
    c.energy_j += energy + hw.static_power_w * t;
    c.flops += work.flops;
    if (t > slowest) {
      slowest = t;
      c.bottleneck = b;
    }
  }
  const double bt = static_cast<double>(batch);
  c.throughput_samples_per_s = c.latency_s > 0.0 ? bt / c.latency_s : 0.0;
  c.energy_per_sample_j = c.energy_j / bt;
  c.memory_bytes = resident_bytes(w, batch);
  c.feasible = hw.memory_capacity_bytes <= 0.0 || c.memory_bytes <= hw.memory_capacity_bytes;
  if (!c.feasible) c.bottleneck = Bottleneck::capacity;
  return c;
}

}  // namespace dse::costmodel
