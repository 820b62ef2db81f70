#include "costmodel/systolic/systolic_platform.hpp"

#include <algorithm>

namespace dse::costmodel {

double SystolicHardware::area_mm2() const {
  const double pes = static_cast<double>(array.rows * array.cols);
  const double kib = static_cast<double>(array.ifmap_sram_bytes + array.filter_sram_bytes + array.ofmap_sram_bytes) / 1024.0;
  return fixed_area_mm2 + pes * area_per_pe_mm2 + kib * area_per_sram_kib_mm2;
}

SystolicLayerCost evaluate_layer(const SystolicHardware& hw, const LayerSpec& l, std::int64_t batch) {
  SystolicLayerCost c;
  const KernelWork work = layer_work(l, batch);
  c.flops = work.flops;
  double cycles = 0.0;
  if (l.kind == LayerKind::gemm) {
    const ConvLayer conv = gemm_as_conv(l.rows_per_sample * batch, l.n, l.k);
    const SystolicResult r = estimate_systolic(hw.array, conv);
    cycles = static_cast<double>(r.total_cycles);
    const double sram = static_cast<double>(r.sram_ifmap_reads + r.sram_filter_reads + r.sram_ofmap_writes);
    const double dram = static_cast<double>(r.dram_ifmap_reads + r.dram_filter_reads + r.dram_ofmap_writes);
    c.energy_j = static_cast<double>(r.macs) * hw.energy_per_mac_j + sram * hw.energy_per_sram_word_j +
                 dram * hw.energy_per_dram_word_j;
    c.stall_fraction = r.total_cycles > 0 ? static_cast<double>(r.stall_cycles) / static_cast<double>(r.total_cycles) : 0.0;
    c.bottleneck = r.stall_cycles * 2 > r.total_cycles ? Bottleneck::memory : Bottleneck::compute;
    c.dram_bytes = dram * static_cast<double>(hw.array.word_bytes);
    c.mapping_eff_pct = r.mapping_eff_pct;
    c.folds = r.folds;
  } else {
    const double words_per_cycle = static_cast<double>(hw.array.dram_words_per_cycle) * 3.0;
    const double vector_rate =
        hw.vector_ops_per_cycle > 0 ? hw.vector_ops_per_cycle : static_cast<double>(hw.array.cols);
    const double words = work.bytes / static_cast<double>(hw.array.word_bytes);
    const double mem_cycles = words / words_per_cycle;
    const double op_cycles = work.flops / vector_rate;
    cycles = std::max(mem_cycles, op_cycles);
    c.energy_j = words * hw.energy_per_dram_word_j;
    c.bottleneck = mem_cycles >= op_cycles ? Bottleneck::memory : Bottleneck::compute;
    c.stall_fraction = cycles > 0 ? (cycles - op_cycles) / cycles : 0.0;
    c.dram_bytes = work.bytes;
  }
  c.latency_s = cycles / hw.clock_hz;
  return c;
}

WorkloadCost evaluate_workload(const SystolicHardware& hw, const WorkloadSpec& w, std::int64_t batch) {
  WorkloadCost c;
  ClassTimes by_class;
  for (const auto& l : w.layers) {
    const SystolicLayerCost lc = evaluate_layer(hw, l, batch);
    c.latency_s += lc.latency_s;
    c.energy_j += lc.energy_j + hw.static_power_w * lc.latency_s;
    c.flops += lc.flops;
    c.bytes += lc.dram_bytes;
    by_class.add(lc.bottleneck, lc.latency_s);
  }
  c.bottleneck = by_class.dominant();
  finish_workload_cost(c, w, batch, hw.memory_capacity_bytes);
  return c;
}

}  // namespace dse::costmodel
