// An A100-like chip for the platform tests (test_platform.cpp, test_attention_fusion.cpp,
// test_e2e_validation.cpp), written out so that they do not depend on a reader, and the
// small graphs they build. Its figures are the A100 datasheet figures of
// scenarios/hardware/a100-sxm4-80gb.yaml with fixed efficiency constants (HBM 0.8 of
// peak, full matrix rate, 2 us per graph kernel): the tests' hand arithmetic uses
// these, so the preset's sourced efficiencies can change without touching them.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "costmodel/platform/evaluate.hpp"
#include "costmodel/system/collectives.hpp"
#include "costmodel/workload/graph.hpp"

namespace dse::test {

inline costmodel::platform::Platform a100_test_chip() {
  namespace cm = dse::costmodel;
  namespace pf = dse::costmodel::platform;
  pf::Platform p;
  cm::GpuHardware& h = p.gpu;
  h.name = "a100-test";
  h.core_count = 108;
  h.clock_hz = 1.41e9;
  h.matrix_macs_per_cycle_per_core[static_cast<std::size_t>(cm::Precision::fp16)] = 1024;
  h.matrix_macs_per_cycle_per_core[static_cast<std::size_t>(cm::Precision::bf16)] = 1024;
  h.matrix_macs_per_cycle_per_core[static_cast<std::size_t>(cm::Precision::fp32)] = 64;
  h.vector_fp32_flops_per_cycle_per_core = 128;
  h.vector_fp16_flops_per_cycle_per_core = 512;
  h.special_function_ops_per_cycle_per_core = 16;
  h.sram_bytes_per_core = 166912;
  h.l2_bytes = 41943040;
  h.l2_bandwidth_bytes_per_s = 7.2192e12;
  h.hbm_bytes = 85899345920.0;
  h.hbm_peak_bandwidth_bytes_per_s = 2.039e12;
  h.hbm_achievable_fraction = 0.8;
  h.hbm_latency_s = 5e-7;
  h.launch_overhead_library_s = 2.1e-5;
  h.launch_overhead_eager_s = 1.2e-5;
  h.launch_overhead_compiled_s = 4.5e-5;
  h.gemm_pipeline_stages = 3;
  h.gemm_tiles = {{256, 128, 32}, {128, 256, 32}, {128, 128, 32}, {64, 64, 64}};
  h.eager_softmax_single_pass_max_row_elements = 1024;
  h.eager_softmax_single_pass_max_row_bytes = 4096;
  h.compiled_reduction_single_pass_max_row_elements = 1024;
  p.energy = {2.3e-12, 0.75e-12, 0.15e-12, 3.8e-12, 31.2e-12, 12.5e-12, 60.0, 400.0, {}};
  p.graph_kernel_overhead_s = 2e-6;
  p.links = cm::system::make_switch(1, 2.5e10, 7e-7, 12);
  p.supported_fusions = {pf::FusionKind::gemm_epilogue, pf::FusionKind::norm_residual};
  return p;
}

// A graph of one block of `nodes`, repeated `repeat` times.
inline costmodel::workload::OperatorGraph one_block(std::vector<costmodel::workload::Node> nodes,
                                                    std::int64_t repeat = 1) {
  costmodel::workload::OperatorGraph g;
  g.name = "test";
  costmodel::workload::Block b;
  b.name = "b";
  b.repeat = repeat;
  b.nodes = std::move(nodes);
  g.blocks.push_back(std::move(b));
  return g;
}

// An attention chain qk -> softmax -> av: b heads, S tokens, head dim d (default 16, 512, 64).
inline std::vector<costmodel::workload::Node> attention_chain(costmodel::workload::Precision P, std::int64_t b = 16,
                                                              std::int64_t S = 512, std::int64_t d = 64) {
  namespace wl = costmodel::workload;
  return {wl::Node{wl::make_batched_gemm("qk", wl::LayerType::attention, b, S, S, d, P), {}},
          wl::Node{wl::make_softmax("sm", wl::LayerType::attention, b * S, S, P), {"qk"}},
          wl::Node{wl::make_batched_gemm("av", wl::LayerType::attention, b, S, d, S, P), {"sm"}}};
}

// The graph evaluated under one fusion strategy at precision P.
inline costmodel::platform::GraphEval evaluate_as(const costmodel::platform::Platform& p,
                                                  const costmodel::workload::OperatorGraph& g,
                                                  costmodel::workload::Precision P,
                                                  costmodel::platform::FusionStrategy f) {
  costmodel::platform::EvalOptions o;
  o.phase.precision = P;
  o.fusion = f;
  return costmodel::platform::evaluate_graph(p, g, o);
}

}  // namespace dse::test
