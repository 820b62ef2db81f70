// Pipeline parallelism (bubble fraction, stage balance) and the other strategies'
// communication, against hand arithmetic.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "costmodel/system/parallelism.hpp"

namespace cs = dse::costmodel::system;
using dse::costmodel::Bottleneck;

namespace {
constexpr double kBw = 100e9;
constexpr double kAlpha = 2e-6;

cs::StepWork uniform_blocks(int n, double compute_s, int micro_batches) {
  cs::StepWork w;
  w.blocks.assign(static_cast<std::size_t>(n), cs::BlockWork{compute_s, 0.0, 0.0});
  w.micro_batches = micro_batches;
  return w;
}
}  // namespace

// (p-1)/(m+p-1) (GPipe, Huang et al. 2019): the p-1 fill/drain slots of m+p-1.
TEST(Pipeline, BubbleFractionFormula) {
  EXPECT_DOUBLE_EQ(cs::pipeline_bubble_fraction(4, 8), 3.0 / 11.0);
  EXPECT_DOUBLE_EQ(cs::pipeline_bubble_fraction(8, 1), 7.0 / 8.0);
  EXPECT_DOUBLE_EQ(cs::pipeline_bubble_fraction(1, 5), 0.0);
  EXPECT_DOUBLE_EQ(cs::pipeline_bubble_fraction(0, 5), 0.0);
}

// 8 equal blocks of 1 ms on 4 stages: 2 ms per stage; m = 8 micro-batches take
// (8 + 4 - 1) * 2 ms = 22 ms, of which (4-1) * 2 = 6 ms bubble = 3/11.
TEST(Pipeline, BalancedStepMatchesBubbleFormula) {
  const auto sys = cs::make_switch(4, kBw, kAlpha);
  const auto c = cs::evaluate_parallel_step(sys, {1, 4, 1, 1}, uniform_blocks(8, 1e-3, 8), {},
                                            cs::CollectiveAlgorithm::ring);
  ASSERT_TRUE(c.feasible);
  EXPECT_NEAR(c.step_time_s, 22e-3, 1e-15);
  EXPECT_NEAR(c.bubble_fraction, 3.0 / 11.0, 1e-12);
  EXPECT_NEAR(c.ideal_bubble_fraction, 3.0 / 11.0, 1e-15);
  EXPECT_EQ(c.blocks_per_stage, (std::vector<int>{2, 2, 2, 2}));
  EXPECT_NEAR(c.stage_imbalance, 1.0, 1e-12);
  EXPECT_NEAR(c.compute_s + c.exposed_comm_s + c.bubble_s, c.step_time_s, 1e-15);
}

// Linear partition of 1..9 into 3 contiguous parts: the result must match the best
// of all 28 splits, enumerated here (the optimum is 17: {1..5}, {6,7}, {8,9}).
TEST(Pipeline, StagePartitionIsOptimal) {
  const std::vector<double> t{1, 2, 3, 4, 5, 6, 7, 8, 9};
  auto sum = [&t](std::size_t a, std::size_t b) {
    return std::accumulate(t.begin() + static_cast<long>(a), t.begin() + static_cast<long>(b),
                           0.0);
  };
  double best = 1e300;
  for (std::size_t i = 1; i < t.size(); ++i) {
    for (std::size_t j = i + 1; j < t.size(); ++j) {
      best = std::min(best, std::max({sum(0, i), sum(i, j), sum(j, t.size())}));
    }
  }
  EXPECT_DOUBLE_EQ(best, 17.0);
  const auto counts = cs::partition_stages(t, 3);
  ASSERT_EQ(counts.size(), 3u);
  EXPECT_EQ(std::accumulate(counts.begin(), counts.end(), 0), 9);
  double worst = 0.0;
  std::size_t at = 0;
  for (const int c : counts) {
    ASSERT_GT(c, 0);
    worst = std::max(worst, sum(at, at + static_cast<std::size_t>(c)));
    at += static_cast<std::size_t>(c);
  }
  EXPECT_DOUBLE_EQ(worst, best);
  EXPECT_TRUE(cs::partition_stages(t, 10).empty());
}

// Imbalance: blocks 1,1,1,5 ms on 2 stages -> {1,1,1} and {5}: slowest 5 ms,
// mean 4 ms; m = 4: (4 + 1) * 5 = 25 ms.
TEST(Pipeline, ImbalancedStages) {
  cs::StepWork w;
  for (const double ms : {1.0, 1.0, 1.0, 5.0}) w.blocks.push_back({ms * 1e-3, 0.0, 0.0});
  w.micro_batches = 4;
  const auto c = cs::evaluate_parallel_step(cs::make_switch(2, kBw, kAlpha), {1, 2, 1, 1}, w,
                                            {}, cs::CollectiveAlgorithm::ring);
  EXPECT_NEAR(c.step_time_s, 25e-3, 1e-15);
  EXPECT_NEAR(c.stage_imbalance, 1.25, 1e-12);
}

// Stage-to-stage sends: 2 stages, boundary 1 MB over one 100 GB/s link:
// 2 us + 10 us = 12 us added to the first stage (1 ms + 12 us), m = 2:
// (2 + 1) * 1.012 ms; with overlap 1 it disappears.
TEST(Pipeline, StageSendsAndOverlap) {
  auto w = uniform_blocks(2, 1e-3, 2);
  w.stage_boundary_bytes = 1e6;
  const auto sys = cs::make_switch(2, kBw, kAlpha);
  const auto c = cs::evaluate_parallel_step(sys, {1, 2, 1, 1}, w, {},
                                            cs::CollectiveAlgorithm::ring);
  EXPECT_NEAR(c.step_time_s, 3.0 * 1.012e-3, 1e-12);
  cs::OverlapFractions hide;
  hide.pipeline = 1.0;
  const auto h = cs::evaluate_parallel_step(sys, {1, 2, 1, 1}, w, hide,
                                            cs::CollectiveAlgorithm::ring);
  EXPECT_NEAR(h.step_time_s, 3e-3, 1e-12);
  EXPECT_NEAR(h.pp_comm_s, 2.0 * 12e-6, 1e-15);
}

// On a two-level system (nodes of 8 chips, one 25 GB/s scale-out port per chip at 0.96,
// alpha 5 us): TP 8 and PP 2 put the two stages on two nodes, so the 1 MB stage send
// crosses them, 5 us + 1e6 / 24e9 s; and DP 2 beside the TP groups is a 2-chip group of
// scale-out ports whose ring all-reduce of G = 100 MB takes 2 x 5 us + 100e6 / 24e9 s.
TEST(Pipeline, TwoLevelSystemSendsAndReducesAcrossNodes) {
  auto w = uniform_blocks(2, 1e-3, 2);
  w.stage_boundary_bytes = 1e6;
  auto sys = cs::make_switch(32, kBw, kAlpha, 12);
  sys.scale_out = cs::ScaleOut{8, 25e9, 5e-6, 1, 0.96};
  const auto c = cs::evaluate_parallel_step(sys, {8, 2, 1, 1}, w, {}, cs::CollectiveAlgorithm::ring);
  ASSERT_TRUE(c.feasible);
  EXPECT_NEAR(c.pp_comm_s, 2.0 * (5e-6 + 1e6 / 24e9), 1e-15);
  // Both stages fit one node with TP 4: the send stays on the node's 12 ports.
  const auto in_node = cs::evaluate_parallel_step(sys, {4, 2, 1, 1}, w, {}, cs::CollectiveAlgorithm::ring);
  EXPECT_NEAR(in_node.pp_comm_s, 2.0 * (kAlpha + 1e6 / (12 * kBw)), 1e-15);
  w.gradient_bytes = 100e6;
  const auto d = cs::evaluate_parallel_step(sys, {8, 1, 2, 1}, w, {}, cs::CollectiveAlgorithm::ring);
  ASSERT_TRUE(d.feasible);
  EXPECT_NEAR(d.dp_comm_s, 2.0 * 5e-6 + 100e6 / 24e9, 1e-12);
}

// Interleaved 1F1B (Narayanan et al. SC'21, v model chunks per chip): 8 blocks of
// 1 ms, p = 2, v = 2 -> 4 chunks of 2 blocks, chip 0 holds chunks 0 and 2, chip 1
// chunks 1 and 3: 4 ms per micro-batch on each chip. m = 4: (4 + (2-1)/2) x 4 ms =
// 18 ms (plain schedule: (4 + 1) x 4 = 20 ms); bubble 0.5 x 4 = 2 ms, ideal
// fraction 0.5 / 4.5 = 1/9. With 1 MB sends (2 us + 1e6 / 100e9 = 12 us): chip 0
// sends after chunks 0 and 2, chip 1 after chunk 1 only (chunk 3 is the last), so
// chip 0 is slowest at 4.024 ms: 4.5 x 4.024 = 18.108 ms; sends m x v x 12 us = 96 us.
TEST(Pipeline, InterleavedScheduleShortensTheBubble) {
  const auto sys = cs::make_switch(2, kBw, kAlpha);
  auto w = uniform_blocks(8, 1e-3, 4);
  w.virtual_stages = 2;
  const auto c = cs::evaluate_parallel_step(sys, {1, 2, 1, 1}, w, {}, cs::CollectiveAlgorithm::ring);
  ASSERT_TRUE(c.feasible);
  EXPECT_NEAR(c.step_time_s, 18e-3, 1e-15);
  EXPECT_NEAR(c.bubble_s, 2e-3, 1e-15);
  EXPECT_NEAR(c.ideal_bubble_fraction, 1.0 / 9.0, 1e-15);
  EXPECT_EQ(c.blocks_per_stage, (std::vector<int>{4, 4}));
  w.virtual_stages = 1;
  EXPECT_NEAR(cs::evaluate_parallel_step(sys, {1, 2, 1, 1}, w, {}, cs::CollectiveAlgorithm::ring).step_time_s,
              20e-3, 1e-15);

  w.virtual_stages = 2;
  w.stage_boundary_bytes = 1e6;
  const auto s = cs::evaluate_parallel_step(sys, {1, 2, 1, 1}, w, {}, cs::CollectiveAlgorithm::ring);
  EXPECT_NEAR(s.stage_time_s[0], 4.024e-3, 1e-15);
  EXPECT_NEAR(s.stage_time_s[1], 4.012e-3, 1e-15);
  EXPECT_NEAR(s.step_time_s, 4.5 * 4.024e-3, 1e-15);
  EXPECT_NEAR(s.pp_comm_s, 96e-6, 1e-15);

  w.virtual_stages = 2;
  EXPECT_EQ(cs::evaluate_parallel_step(sys, {1, 1, 1, 1}, w, {}, cs::CollectiveAlgorithm::ring).status,
            cs::ParallelStatus::invalid_degrees);  // interleaving needs a pipeline
  w.virtual_stages = 5;                            // 2 x 5 = 10 chunks of 8 blocks
  EXPECT_EQ(cs::evaluate_parallel_step(sys, {1, 2, 1, 1}, w, {}, cs::CollectiveAlgorithm::ring).status,
            cs::ParallelStatus::too_few_blocks);
}

// TP = 4 on a switch: two ring all-reduces of A = 8 MB per block:
// AR = 2*3 alpha + 2*(3/4) A / B = 12 us + 120 us = 132 us; per block 264 us.
// 2 blocks of 100 us compute, m = 1: 2 * (100 + 264) us; exposed comm > compute,
// so the bottleneck is the interconnect. Half overlap would hide 132 us, but only the
// block's 100 us of compute can run beside it: 264 us a block, never shorter than its
// all-reduces.
TEST(Parallelism, TensorParallelAllReduces) {
  cs::StepWork w;
  w.blocks.assign(2, cs::BlockWork{100e-6, 8e6, 0.0});
  const auto sys = cs::make_switch(4, kBw, kAlpha);
  const auto c = cs::evaluate_parallel_step(sys, {4, 1, 1, 1}, w, {},
                                            cs::CollectiveAlgorithm::ring);
  ASSERT_TRUE(c.feasible);
  EXPECT_NEAR(c.step_time_s, 2.0 * (100e-6 + 264e-6), 1e-12);
  EXPECT_NEAR(c.tp_comm_s, 2.0 * 264e-6, 1e-12);
  EXPECT_EQ(c.bottleneck, Bottleneck::interconnect);
  cs::OverlapFractions half;
  half.tensor = 0.5;
  const auto h = cs::evaluate_parallel_step(sys, {4, 1, 1, 1}, w, half,
                                            cs::CollectiveAlgorithm::ring);
  EXPECT_NEAR(h.step_time_s, 2.0 * 264e-6, 1e-12);
  EXPECT_EQ(h.bottleneck, Bottleneck::interconnect);
  // With 300 us of compute a block, the half (132 us) hides: 300 + 132 us.
  w.blocks.assign(2, cs::BlockWork{300e-6, 8e6, 0.0});
  EXPECT_NEAR(cs::evaluate_parallel_step(sys, {4, 1, 1, 1}, w, half, cs::CollectiveAlgorithm::ring).step_time_s,
              2.0 * (300e-6 + 132e-6), 1e-12);
  // Compute-dominated blocks keep the compute bottleneck they came with.
  w.blocks.assign(2, cs::BlockWork{1e-3, 8e6, 0.0});
  w.compute_bottleneck = Bottleneck::memory;
  const auto m = cs::evaluate_parallel_step(sys, {4, 1, 1, 1}, w, {},
                                            cs::CollectiveAlgorithm::ring);
  EXPECT_EQ(m.bottleneck, Bottleneck::memory);
}

// EP = 8 on a switch, direct all-to-all of X = 4 MB: alpha + (7/8) X / B = 2 + 35 us;
// dispatch + combine = 74 us per MoE block. DP = 2 training: gradient all-reduce of
// G = 100 MB over 2 chips (ring): 2 alpha + G/B = 1.000004 ms, exposed after the step.
TEST(Parallelism, ExpertAndDataParallel) {
  cs::StepWork w;
  w.blocks.push_back(cs::BlockWork{1e-3, 0.0, 4e6});
  w.blocks.push_back(cs::BlockWork{1e-3, 0.0, 0.0});
  const auto sys = cs::make_switch(8, kBw, kAlpha);
  const auto e = cs::evaluate_parallel_step(sys, {1, 1, 8, 8}, w, {},
                                            cs::CollectiveAlgorithm::direct);
  ASSERT_TRUE(e.feasible);
  EXPECT_NEAR(e.step_time_s, 2e-3 + 74e-6, 1e-12);
  EXPECT_NEAR(e.ep_comm_s, 74e-6, 1e-12);

  w.gradient_bytes = 100e6;
  const auto d = cs::evaluate_parallel_step(sys, {1, 1, 2, 1}, w, {},
                                            cs::CollectiveAlgorithm::ring);
  EXPECT_NEAR(d.dp_comm_s, 2.0 * kAlpha + 100e6 / kBw, 1e-12);
  EXPECT_NEAR(d.step_time_s, 2e-3 + d.dp_comm_s, 1e-12);
  cs::OverlapFractions hide;
  hide.data = 0.75;
  const auto h = cs::evaluate_parallel_step(sys, {1, 1, 2, 1}, w, hide,
                                            cs::CollectiveAlgorithm::ring);
  EXPECT_NEAR(h.step_time_s, 2e-3 + 0.25 * d.dp_comm_s, 1e-12);
}

// A step is never shorter than any one of its streams. DP 8 on a switch: the gradient
// all-reduce of G = 1 GB, 2 x 7 alpha + 2 x 7/8 G/B = 17.528 ms, beside 2 x 1 ms of blocks:
// with every bit of it allowed to hide (overlap.data 1), 2 ms hide and 15.528 ms stay exposed,
// so the step is the all-reduce's 17.528 ms, not the blocks' 2 ms. Under sharded states
// (3 micro-batches: 9 collectives of 14 us + 8.75 ms = 78.876 ms) the stream also carries the
// copies beside the collectives (4 ms): 82.876 ms, of which the 6 ms of blocks and the 1 ms of
// copies on the compute stream hide 7 ms: 6 + 1 + 75.876 = 82.876 ms, the stream's length.
TEST(Parallelism, StepIsNeverShorterThanItsStreams) {
  cs::StepWork w = uniform_blocks(2, 1e-3, 1);
  w.gradient_bytes = 1e9;
  const auto sys = cs::make_switch(8, kBw, kAlpha);
  cs::OverlapFractions all;
  all.data = 1.0;
  const auto c = cs::evaluate_parallel_step(sys, {1, 1, 8, 1}, w, all, cs::CollectiveAlgorithm::ring);
  ASSERT_TRUE(c.feasible);
  EXPECT_NEAR(c.dp_comm_s, 17.528e-3, 1e-12);
  EXPECT_NEAR(c.step_time_s, 17.528e-3, 1e-12);
  EXPECT_NEAR(c.exposed_comm_s, 15.528e-3, 1e-12);
  EXPECT_EQ(c.bottleneck, Bottleneck::interconnect);
  w.micro_batches = 3;
  w.shard_states = true;
  w.shard_copies_s = 1e-3;
  w.shard_side_copies_s = 4e-3;
  const auto z = cs::evaluate_parallel_step(sys, {1, 1, 8, 1}, w, all, cs::CollectiveAlgorithm::ring);
  ASSERT_TRUE(z.feasible);
  EXPECT_NEAR(z.dp_comm_s, 78.876e-3, 1e-12);
  EXPECT_NEAR(z.step_time_s, 82.876e-3, 1e-12);
  // The helper itself: 10 s of which 0.5 may hide beside 3 s of compute hides 3 s.
  EXPECT_NEAR(cs::exposed_after_hiding(10.0, 0.5, 3.0), 7.0, 1e-12);
  EXPECT_NEAR(cs::exposed_after_hiding(10.0, 0.5, 8.0), 5.0, 1e-12);
  EXPECT_EQ(cs::exposed_after_hiding(0.0, 1.0, 1.0), 0.0);
}

// ZeRO-3 / FSDP FULL_SHARD over 8 chips of a switch (ring algorithm), G = 100 MB of
// parameters (= gradients), 3 micro-batches: each micro-batch all-gathers twice and
// reduce-scatters once, each (n - 1) alpha + (n - 1)/n G/B = 14 us + 0.875 ms, so
// 3 x 3 x 0.889 ms = 8.001 ms, exposed after the 3 x 2 ms of blocks; unsharded, one
// all-reduce per step, 2 x 7 alpha + 2 x 7/8 G/B = 1.778 ms.
TEST(Parallelism, ShardedStatesGatherTwiceAndReduceScatterPerMicroBatch) {
  cs::StepWork w;
  w.blocks.push_back(cs::BlockWork{1e-3, 0.0, 0.0});
  w.blocks.push_back(cs::BlockWork{1e-3, 0.0, 0.0});
  w.micro_batches = 3;
  w.gradient_bytes = 100e6;
  const auto sys = cs::make_switch(8, kBw, kAlpha);
  const auto plain = cs::evaluate_parallel_step(sys, {1, 1, 8, 1}, w, {}, cs::CollectiveAlgorithm::ring);
  ASSERT_TRUE(plain.feasible);
  EXPECT_NEAR(plain.dp_comm_s, 1.778e-3, 1e-12);
  w.shard_states = true;
  const auto z3 = cs::evaluate_parallel_step(sys, {1, 1, 8, 1}, w, {}, cs::CollectiveAlgorithm::ring);
  ASSERT_TRUE(z3.feasible);
  EXPECT_NEAR(z3.dp_comm_s, 8.001e-3, 1e-12);
  EXPECT_NEAR(z3.step_time_s, 6e-3 + 8.001e-3, 1e-12);
  EXPECT_NEAR(z3.exposed_comm_s, 8.001e-3, 1e-12);
  // One replica: nothing to gather.
  EXPECT_EQ(cs::evaluate_parallel_step(sys, {1, 1, 1, 1}, w, {}, cs::CollectiveAlgorithm::ring).dp_comm_s, 0.0);
  // The gradients reduced in another precision than the weights (Megatron-LM reduces a bf16
  // run's gradients in fp32): 200 MB reduced, the parameters' 100 MB gathered. Sharded, per
  // micro-batch two all-gathers of 0.889 ms and a reduce-scatter of 14 us + 1.75 ms: 3 x
  // 3.542 = 10.626 ms; unsharded, one all-reduce of 2 x 7 alpha + 2 x 7/8 x 2 ms = 3.528 ms.
  w.gradient_reduce_bytes = 200e6;
  EXPECT_NEAR(cs::evaluate_parallel_step(sys, {1, 1, 8, 1}, w, {}, cs::CollectiveAlgorithm::ring).dp_comm_s, 10.626e-3,
              1e-12);
  w.shard_states = false;
  EXPECT_NEAR(cs::evaluate_parallel_step(sys, {1, 1, 8, 1}, w, {}, cs::CollectiveAlgorithm::ring).dp_comm_s, 3.528e-3,
              1e-12);
}

// Hybrid sharding on two slices of a 4 x 4 torus (100 GB/s, 2 links per direction, alpha
// 2 us) joined by a 6.25 GB/s scale-out port per chip (alpha 10 us): dp 32, states sharded
// over each slice's 16 chips, G = 100 MB of parameters, one micro-batch. By hand, the
// reduce-scatter over the 4 x 4 torus runs 4-chip rings on G then on G/4: (3 alpha + 3/4 x
// 100 MB / 200 GB/s) + (3 alpha + 3/4 x 25 MB / 200 GB/s) = 381 + 99.75 = 480.75 us, each
// all-gather the same: 3 x 480.75 = 1,442.25 us; then the two copies all-reduce each chip's
// shard G/16 = 6.25 MB over the scale-out ports, 2 x 10 us + 2 x 1/2 x 6.25 MB / 6.25 GB/s =
// 1,020 us: 2,462.25 us in all. Fully sharded over the 32 chips instead, the group spans the
// slices and runs on the scale-out ports: 3 x (31 x 10 us + 31/32 x 100 MB / 6.25 GB/s) =
// 47.43 ms.
TEST(Parallelism, HybridShardingAllReducesTheShardsAcrossCopies) {
  cs::StepWork w = uniform_blocks(2, 1e-3, 1);
  w.gradient_bytes = 100e6;
  w.shard_states = true;
  w.shard_group = 16;
  auto sys = cs::make_torus({4, 4, 1}, kBw, kAlpha, 2);
  sys.topology = cs::Topology::torus_2d;
  sys.scale_out = cs::ScaleOut{16, 6.25e9, 1e-5, 1, 1.0, 2};
  const auto algo = cs::CollectiveAlgorithm::ring;
  const auto h = cs::evaluate_parallel_step(sys, {1, 1, 32, 1}, w, {}, algo);
  ASSERT_TRUE(h.feasible);
  EXPECT_NEAR(h.dp_comm_s, 2462.25e-6, 1e-12);
  EXPECT_NEAR(h.dp_replica_comm_s, 1020e-6, 1e-12);
  EXPECT_NEAR(h.step_time_s, 2e-3 + 2462.25e-6, 1e-12);
  w.shard_group = 0;
  const auto full = cs::evaluate_parallel_step(sys, {1, 1, 32, 1}, w, {}, algo);
  EXPECT_NEAR(full.dp_comm_s, 3.0 * (31 * 1e-5 + 31.0 / 32.0 * 100e6 / 6.25e9), 1e-12);
  EXPECT_EQ(full.dp_replica_comm_s, 0.0);
  w.shard_group = 5;  // not a divisor of dp
  EXPECT_EQ(cs::evaluate_parallel_step(sys, {1, 1, 32, 1}, w, {}, algo).status, cs::ParallelStatus::invalid_degrees);
}

TEST(Parallelism, InfeasibleConfigurationsAreValues) {
  const auto w = uniform_blocks(4, 1e-3, 1);
  const auto sys = cs::make_switch(8, kBw, kAlpha);
  const auto algo = cs::CollectiveAlgorithm::ring;
  EXPECT_EQ(cs::evaluate_parallel_step(sys, {4, 4, 1, 1}, w, {}, algo).status,
            cs::ParallelStatus::too_many_chips);
  EXPECT_EQ(cs::evaluate_parallel_step(sys, {2, 1, 2, 3}, w, {}, algo).status,
            cs::ParallelStatus::expert_groups_do_not_fit);
  EXPECT_EQ(cs::evaluate_parallel_step(sys, {1, 8, 1, 1}, w, {}, algo).status,
            cs::ParallelStatus::too_few_blocks);
  EXPECT_EQ(cs::evaluate_parallel_step(sys, {0, 1, 1, 1}, w, {}, algo).status,
            cs::ParallelStatus::invalid_degrees);
  EXPECT_FALSE(cs::evaluate_parallel_step(sys, {0, 1, 1, 1}, w, {}, algo).feasible);
}

// Ring context parallelism (cp 2 on a switch of 100 GB/s ports, alpha 2 us): a block with 3
// sends of 1 MB to the next chip, 3 x (2 + 10) us = 36 us, beside 20 us of attention: 16 us
// stay exposed, the block takes 100 + 16 us; beside 50 us of attention all hide. With dp 2 the
// gradient all-reduce of G = 100 MB runs over the dp x cp = 4 chips: 2 x 3 alpha + 2 x 3/4 G/B
// = 1.512 ms, and the chips are tp x cp x pp x dp = 4.
TEST(Parallelism, RingContextParallelSendsHideUnderAttention) {
  cs::StepWork w;
  cs::BlockWork b{100e-6, 0.0, 0.0};
  b.cp_sends = 3.0;
  b.cp_send_bytes = 1e6;
  b.attention_s = 20e-6;
  w.blocks.push_back(b);
  const auto sys = cs::make_switch(4, kBw, kAlpha);
  cs::ParallelismDegrees d;
  d.cp = 2;
  const auto c = cs::evaluate_parallel_step(sys, d, w, {}, cs::CollectiveAlgorithm::ring);
  ASSERT_TRUE(c.feasible);
  EXPECT_NEAR(c.cp_comm_s, 36e-6, 1e-15);
  EXPECT_NEAR(c.step_time_s, 116e-6, 1e-15);
  w.blocks[0].attention_s = 50e-6;
  EXPECT_NEAR(cs::evaluate_parallel_step(sys, d, w, {}, cs::CollectiveAlgorithm::ring).step_time_s, 100e-6, 1e-15);
  w.gradient_bytes = 100e6;
  d.dp = 2;
  const auto g = cs::evaluate_parallel_step(sys, d, w, {}, cs::CollectiveAlgorithm::ring);
  ASSERT_TRUE(g.feasible);
  EXPECT_EQ(g.chips, 4);
  EXPECT_NEAR(g.dp_comm_s, 1.512e-3, 1e-12);
  d.dp = 4;  // 8 chips on a system of 4
  EXPECT_EQ(cs::evaluate_parallel_step(sys, d, w, {}, cs::CollectiveAlgorithm::ring).status,
            cs::ParallelStatus::too_many_chips);
}
