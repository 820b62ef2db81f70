// Roofline numbers against values computed by hand (arithmetic in comments).
#include <gtest/gtest.h>

#include "costmodel/layer.hpp"
#include "costmodel/roofline.hpp"

namespace dse::costmodel {
namespace {

RooflineHardware toy() {
  RooflineHardware hw;
  hw.name = "toy";
  hw.peak_flops_per_s = 100e12;             // 100 TFLOP/s
  hw.memory_bandwidth_bytes_per_s = 1e12;   // 1 TB/s -> ridge at 100 FLOP/byte
  hw.memory_capacity_bytes = 1e9;
  hw.kernel_overhead_s = 5e-6;
  hw.energy_per_flop_j = 1e-12;             // 1 pJ/FLOP
  hw.energy_per_byte_j = 10e-12;            // 10 pJ/byte
  hw.static_power_w = 50.0;
  return hw;
}

TEST(Roofline, ComputeBoundGemm) {
  // GEMM M=N=K=4096, fp16: flops = 2*4096^3 = 137,438,953,472;
  // bytes = 3 * 4096^2 * 2 = 100,663,296.
  LayerSpec g{"g", LayerKind::gemm, 4096, 4096, 4096, 0, 1.0, 2, 2};
  const KernelWork w = layer_work(g, 1);
  EXPECT_DOUBLE_EQ(w.flops, 137438953472.0);
  EXPECT_DOUBLE_EQ(w.bytes, 100663296.0);
  const KernelCost c = evaluate_roofline(toy(), w);
  // compute 137438953472 / 100e12 = 1.37438953472e-3 s; memory 100663296 / 1e12 = 1.00663296e-4 s
  EXPECT_DOUBLE_EQ(c.compute_time_s, 1.37438953472e-3);
  EXPECT_DOUBLE_EQ(c.memory_time_s, 1.00663296e-4);
  // latency = 1.37438953472e-3 + 5e-6 = 1.37938953472e-3
  EXPECT_NEAR(c.latency_s, 1.37938953472e-3, 1e-18);
  // energy = 137438953472e-12 + 100663296*10e-12 + 50 * 1.37938953472e-3
  //        = 0.137438953472 + 0.00100663296 + 0.068969476736 = 0.207415063168 J
  EXPECT_NEAR(c.energy_j, 0.207415063168, 1e-12);
  EXPECT_EQ(c.bottleneck, Bottleneck::compute);
}

TEST(Roofline, MemoryBoundElementwise) {
  // 1M elements, 1 flop each, 2 tensors of fp16: bytes = 1,048,576 * 2 * 2 = 4,194,304.
  LayerSpec e{"e", LayerKind::elementwise, 1, 1, 1, 1 << 20, 1.0, 2, 2};
  const KernelCost c = evaluate_roofline(toy(), layer_work(e, 1));
  // memory 4194304 / 1e12 = 4.194304e-6 s > compute 1048576 / 100e12 = 1.048576e-8 s
  EXPECT_DOUBLE_EQ(c.memory_time_s, 4.194304e-6);
  EXPECT_NEAR(c.latency_s, 4.194304e-6 + 5e-6, 1e-18);
  EXPECT_EQ(c.bottleneck, Bottleneck::overhead);  // 5 us overhead > 4.19 us of traffic
}

TEST(Roofline, WorkloadAddsLayersAndChecksCapacity) {
  WorkloadSpec w{"w", {{"a", LayerKind::gemm, 1, 1024, 1024, 0, 1.0, 2, 2}}};
  auto hw = toy();
  // batch 8: M=8: flops = 2*8*1024*1024 = 16,777,216; bytes = (8*1024 + 1024*1024 + 8*1024)*2 = 2,129,920
  const WorkloadCost c = evaluate_workload(hw, w, 8);
  EXPECT_DOUBLE_EQ(c.flops, 16777216.0);
  EXPECT_DOUBLE_EQ(c.bytes, 2129920.0);
  // memory time 2.12992e-6 s > compute 1.6777216e-7 s; latency = 2.12992e-6 + 5e-6 = 7.12992e-6
  EXPECT_NEAR(c.latency_s, 7.12992e-6, 1e-18);
  EXPECT_NEAR(c.throughput_samples_per_s, 8.0 / 7.12992e-6, 1e-3);
  // resident = weights 1024*1024*2 + activations 8*(1024+1024)*2 = 2,097,152 + 32,768
  EXPECT_DOUBLE_EQ(c.memory_bytes, 2129920.0);
  EXPECT_TRUE(c.feasible);
  hw.memory_capacity_bytes = 2e6;
  EXPECT_FALSE(evaluate_workload(hw, w, 8).feasible);
  EXPECT_EQ(evaluate_workload(hw, w, 8).bottleneck, Bottleneck::capacity);
}

}  // namespace
}  // namespace dse::costmodel
