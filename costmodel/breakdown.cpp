#include "costmodel/breakdown.hpp"

#include <algorithm>
#include <cstdio>

namespace dse::costmodel {

namespace {

std::string format(const char* fmt, double a, double b, double c) {
  char buf[160];
  std::snprintf(buf, sizeof(buf), fmt, a, b, c);
  return buf;
}

const char* type_of(const LayerSpec& l) { return l.kind == LayerKind::gemm ? "gemm" : "elementwise"; }

}  // namespace

std::vector<LayerBreakdown> layer_breakdown(const RooflineHardware& hw, const WorkloadSpec& w, std::int64_t batch) {
  std::vector<LayerBreakdown> out;
  for (const auto& l : w.layers) {
    const KernelWork work = layer_work(l, batch);
    const KernelCost c = evaluate_roofline(hw, work);
    LayerBreakdown b;
    b.name = l.name;
    b.type = type_of(l);
    b.latency_s = c.latency_s;
    b.flops = work.flops;
    b.dram_bytes = work.bytes;
    b.stall_fraction = c.latency_s > 0 ? std::max(0.0, (c.latency_s - c.compute_time_s) / c.latency_s) : 0.0;
    b.pct_of_peak = c.latency_s > 0 ? 100.0 * work.flops / c.latency_s / hw.peak_flops_per_s : 0.0;
    b.bottleneck = c.bottleneck;
    b.mapping = format("roofline: max(compute %.3g us, memory %.3g us) + overhead %.3g us", c.compute_time_s * 1e6,
                       c.memory_time_s * 1e6, hw.kernel_overhead_s * 1e6);
    out.push_back(std::move(b));
  }
  return out;
}

std::vector<LayerBreakdown> layer_breakdown(const SystolicHardware& hw, const WorkloadSpec& w, std::int64_t batch) {
  std::vector<LayerBreakdown> out;
  const double peak = static_cast<double>(hw.array.rows * hw.array.cols) * 2.0 * hw.clock_hz;
  for (const auto& l : w.layers) {
    const SystolicLayerCost c = evaluate_layer(hw, l, batch);
    LayerBreakdown b;
    b.name = l.name;
    b.type = type_of(l);
    b.latency_s = c.latency_s;
    b.flops = c.flops;
    b.dram_bytes = c.dram_bytes;
    b.stall_fraction = c.stall_fraction;
    b.pct_of_peak = c.latency_s > 0 ? 100.0 * c.flops / c.latency_s / peak : 0.0;
    b.bottleneck = c.bottleneck;
    if (l.kind == LayerKind::gemm) {
      b.mapping = std::to_string(hw.array.rows) + "x" + std::to_string(hw.array.cols) + " " +
                  std::string(to_string(hw.array.dataflow)) + ", " + std::to_string(c.folds) + " folds, " +
                  format("%.3g%% mapping efficiency, %.3g%% stalls, DRAM %.3g words/cycle/operand",
                         c.mapping_eff_pct, 100.0 * c.stall_fraction,
                         static_cast<double>(hw.array.dram_words_per_cycle));
    } else {
      b.mapping = format("vector unit %.3g ops/cycle, DRAM %.3g words/cycle x %.0f interfaces",
                         hw.vector_ops_per_cycle > 0 ? hw.vector_ops_per_cycle : static_cast<double>(hw.array.cols),
                         static_cast<double>(hw.array.dram_words_per_cycle), 3.0);
    }
    out.push_back(std::move(b));
  }
  return out;
}

}  // namespace dse::costmodel
