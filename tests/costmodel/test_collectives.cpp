// Collectives: alpha-beta times against textbook formulas and hand-derived cases.
#include <gtest/gtest.h>

#include "costmodel/system/collectives.hpp"

namespace cs = dse::costmodel::system;

namespace {
constexpr double kBw = 100e9;     // B, bytes/s per link
constexpr double kAlpha = 5e-6;   // alpha, s per link step
constexpr double kBytes = 256.0 * 1024 * 1024;  // S
constexpr double kRel = 1e-12;
}  // namespace

// Textbook ring all-reduce (Patarasuk & Yuan 2009; Thakur et al. 2005):
// T = 2(n-1)/n * S / B + 2(n-1) * alpha, each link carrying 2(n-1)/n * S.
TEST(Collectives, RingAllReduceMatchesTextbook) {
  for (const int n : {2, 3, 4, 7, 8, 16, 64}) {
    const auto ic = cs::make_ring(n, kBw, kAlpha);
    const auto c = cs::collective_cost(ic, cs::CollectiveKind::all_reduce,
                                       cs::CollectiveAlgorithm::ring, kBytes);
    const double expected = 2.0 * (n - 1) / n * kBytes / kBw + 2.0 * (n - 1) * kAlpha;
    ASSERT_TRUE(c.feasible);
    EXPECT_NEAR(c.time_s, expected, kRel * expected) << "n=" << n;
    EXPECT_NEAR(c.busiest_link_bytes, 2.0 * (n - 1) / n * kBytes, kRel * kBytes);
    EXPECT_EQ(c.steps, 2 * (n - 1));
  }
}

// Reduce-scatter and all-gather are one half each: (n-1)/n S/B + (n-1) alpha.
// Two parallel links halve the bandwidth term only.
TEST(Collectives, RingHalvesAndParallelLinks) {
  const int n = 8;
  const double half = 7.0 / 8.0 * kBytes / kBw + 7.0 * kAlpha;
  for (const auto kind : {cs::CollectiveKind::all_gather, cs::CollectiveKind::reduce_scatter}) {
    const auto c = cs::collective_cost(cs::make_ring(n, kBw, kAlpha), kind,
                                       cs::CollectiveAlgorithm::ring, kBytes);
    EXPECT_NEAR(c.time_s, half, kRel * half);
  }
  const auto two = cs::collective_cost(cs::make_ring(n, kBw, kAlpha, 2),
                                       cs::CollectiveKind::all_reduce,
                                       cs::CollectiveAlgorithm::ring, kBytes);
  const double expected = 2.0 * 7.0 / 8.0 * kBytes / (2.0 * kBw) + 14.0 * kAlpha;
  EXPECT_NEAR(two.time_s, expected, kRel * expected);
  EXPECT_NEAR(two.busiest_link_bytes, 0.875 * kBytes, kRel * kBytes);
}

// A sustained share f of the link bandwidth (achievable_fraction, a collective
// microbenchmark's bus bandwidth over the peak) divides the bandwidth term by f and
// leaves the latency term: ring all-reduce of 8 on one link,
// T = 2 (7/8) S / (f B) + 14 alpha; f outside (0, 1] is refused.
TEST(Collectives, AchievableFractionScalesTheBandwidthTermOnly) {
  auto ic = cs::make_ring(8, kBw, kAlpha);
  ic.achievable_fraction = 0.8;
  const auto c = cs::collective_cost(ic, cs::CollectiveKind::all_reduce, cs::CollectiveAlgorithm::ring, kBytes);
  ASSERT_TRUE(c.feasible);
  EXPECT_NEAR(c.bandwidth_term_s, 1.75 * kBytes / (0.8 * kBw), kRel * c.bandwidth_term_s);
  EXPECT_NEAR(c.latency_term_s, 14.0 * kAlpha, kRel * c.latency_term_s);
  EXPECT_NEAR(c.busiest_link_bytes, 1.75 * kBytes, kRel * kBytes);  // bytes moved do not change
  cs::Interconnect g;
  ASSERT_TRUE(cs::subgroup(ic, 4, g));
  EXPECT_EQ(g.achievable_fraction, 0.8);  // a TP group keeps its fabric's share
  for (const double bad : {0.0, -0.5, 1.5}) {
    ic.achievable_fraction = bad;
    const auto r = cs::collective_cost(ic, cs::CollectiveKind::all_reduce, cs::CollectiveAlgorithm::ring, kBytes);
    EXPECT_FALSE(r.feasible) << bad;
    EXPECT_EQ(r.status, cs::CollectiveStatus::invalid_input) << bad;
  }
}

// 4x4 torus, ring algorithm, all-reduce by hand:
//  dim x (n=4) on S:    RS + AG = 2*3 alpha + 2*(3/4) S/B = 6 alpha + 1.5 S/B
//  dim y (n=4) on S/4:  RS + AG = 6 alpha + 2*(3/4)(S/4)/B = 6 alpha + 0.375 S/B
//  total 12 alpha + 1.875 S/B; busiest link: an x link, 1.5 S.
TEST(Collectives, Torus2dAllReduceByHand) {
  const auto ic = cs::make_torus({4, 4, 1}, kBw, kAlpha);
  EXPECT_EQ(ic.topology, cs::Topology::torus_2d);
  const auto c = cs::collective_cost(ic, cs::CollectiveKind::all_reduce,
                                     cs::CollectiveAlgorithm::ring, kBytes);
  const double expected = 12.0 * kAlpha + 1.875 * kBytes / kBw;
  EXPECT_NEAR(c.time_s, expected, kRel * expected);
  EXPECT_NEAR(c.busiest_link_bytes, 1.5 * kBytes, kRel * kBytes);
  EXPECT_NEAR(c.latency_term_s, 12.0 * kAlpha, kRel);
}

// 2x2x2 torus: three dimensions of 2 on S, S/2, S/4: latency 3*2*1 alpha = 6 alpha,
// bandwidth 2*(1/2)(S + S/2 + S/4)/B = 1.75 S/B (the 8-ring's bandwidth term with
// 6 instead of 14 alphas). All-gather is half: 3 alpha + 0.875 S/B.
TEST(Collectives, Torus3dByHand) {
  const auto ic = cs::make_torus({2, 2, 2}, kBw, kAlpha);
  EXPECT_EQ(ic.topology, cs::Topology::torus_3d);
  const auto ar = cs::collective_cost(ic, cs::CollectiveKind::all_reduce,
                                      cs::CollectiveAlgorithm::ring, kBytes);
  EXPECT_NEAR(ar.time_s, 6.0 * kAlpha + 1.75 * kBytes / kBw, 1e-12);
  const auto ag = cs::collective_cost(ic, cs::CollectiveKind::all_gather,
                                      cs::CollectiveAlgorithm::ring, kBytes);
  EXPECT_NEAR(ag.time_s, 3.0 * kAlpha + 0.875 * kBytes / kBw, 1e-12);
}

// Switch, 8 chips, 2 ports each (2B per chip):
//  direct AR: 2 alpha + 2*(7/8) S / (2B) = 2 alpha + 0.875 S/B
//  tree AR:   2*log2(8) alpha + same bandwidth = 6 alpha + 0.875 S/B
//  ring AR:   14 alpha + 0.875 S/B
//  all-to-all direct: alpha + (7/8) S / (2B)
TEST(Collectives, SwitchByHand) {
  const auto ic = cs::make_switch(8, kBw, kAlpha, 2);
  const double bw_term = 0.875 * kBytes / kBw;
  const auto direct = cs::collective_cost(ic, cs::CollectiveKind::all_reduce,
                                          cs::CollectiveAlgorithm::direct, kBytes);
  const auto tree = cs::collective_cost(ic, cs::CollectiveKind::all_reduce,
                                        cs::CollectiveAlgorithm::tree, kBytes);
  const auto ring = cs::collective_cost(ic, cs::CollectiveKind::all_reduce,
                                        cs::CollectiveAlgorithm::ring, kBytes);
  EXPECT_NEAR(direct.time_s, 2.0 * kAlpha + bw_term, 1e-12);
  EXPECT_NEAR(tree.time_s, 6.0 * kAlpha + bw_term, 1e-12);
  EXPECT_NEAR(ring.time_s, 14.0 * kAlpha + bw_term, 1e-12);
  EXPECT_NEAR(direct.busiest_link_bytes, 0.875 * kBytes, 1e-3);  // 2*(7/8)S over 2 ports
  const auto a2a = cs::collective_cost(ic, cs::CollectiveKind::all_to_all,
                                       cs::CollectiveAlgorithm::direct, kBytes);
  EXPECT_NEAR(a2a.time_s, kAlpha + 0.4375 * kBytes / kBw, 1e-12);
}

// Ring of 4, all-to-all: a chip sends S/4 to chips 1, 2 and 3 hops on, 6 link
// crossings of S/4 = 1.5 S per chip; 4 chips over 4 links: 1.5 S per link.
// Time 3 alpha + 1.5 S/B.
TEST(Collectives, RingAllToAllByEnumeration) {
  const auto c = cs::collective_cost(cs::make_ring(4, kBw, kAlpha),
                                     cs::CollectiveKind::all_to_all,
                                     cs::CollectiveAlgorithm::ring, kBytes);
  EXPECT_NEAR(c.busiest_link_bytes, 1.5 * kBytes, 1e-3);
  EXPECT_NEAR(c.time_s, 3.0 * kAlpha + 1.5 * kBytes / kBw, 1e-12);
}

// Tree (recursive halving, shift form) on a ring of 8, reduce-scatter by steps:
//  d=4: S/2 per chip, 4 messages per link: 2 S;  d=2: S/4 x 2 = 0.5 S;
//  d=1: S/8 = 0.125 S;  total 2.625 S per link, latency (4+2+1) alpha = 7 alpha.
TEST(Collectives, TreeOnRingBySteps) {
  const auto c = cs::collective_cost(cs::make_ring(8, kBw, kAlpha),
                                     cs::CollectiveKind::reduce_scatter,
                                     cs::CollectiveAlgorithm::tree, kBytes);
  ASSERT_TRUE(c.feasible);
  EXPECT_NEAR(c.busiest_link_bytes, 2.625 * kBytes, 1e-3);
  EXPECT_NEAR(c.time_s, 7.0 * kAlpha + 2.625 * kBytes / kBw, 1e-12);
  EXPECT_EQ(c.steps, 3);
}

TEST(Collectives, InfeasibleAndTrivialCases) {
  const auto tree6 = cs::collective_cost(cs::make_switch(6, kBw, kAlpha),
                                         cs::CollectiveKind::all_reduce,
                                         cs::CollectiveAlgorithm::tree, kBytes);
  EXPECT_FALSE(tree6.feasible);
  EXPECT_EQ(tree6.status, cs::CollectiveStatus::needs_power_of_two);
  const auto bad = cs::collective_cost(cs::make_ring(4, 0.0, kAlpha),
                                       cs::CollectiveKind::all_reduce,
                                       cs::CollectiveAlgorithm::ring, kBytes);
  EXPECT_FALSE(bad.feasible);
  EXPECT_EQ(bad.status, cs::CollectiveStatus::invalid_input);
  const auto one = cs::collective_cost(cs::make_ring(1, kBw, kAlpha),
                                       cs::CollectiveKind::all_reduce,
                                       cs::CollectiveAlgorithm::ring, kBytes);
  EXPECT_TRUE(one.feasible);
  EXPECT_EQ(one.time_s, 0.0);
}

TEST(Collectives, SubgroupsPackInnermostFirst) {
  cs::Interconnect g;
  const auto torus = cs::make_torus({4, 4, 1}, kBw, kAlpha);
  ASSERT_TRUE(cs::subgroup(torus, 8, g));
  EXPECT_EQ(g.dims, (std::array<int, 3>{4, 2, 1}));
  ASSERT_TRUE(cs::subgroup(torus, 2, g));
  EXPECT_EQ(g.dims, (std::array<int, 3>{2, 1, 1}));
  EXPECT_FALSE(cs::subgroup(torus, 6, g));
  EXPECT_FALSE(cs::subgroup(torus, 32, g));
  ASSERT_TRUE(cs::subgroup(cs::make_switch(8, kBw, kAlpha), 4, g));
  EXPECT_EQ(cs::chip_count(g), 4);
}

// An outer group (DP beside TP x PP): on PaLM's 12 x 16 x 16 slice a 12-chip model group
// fills dims[0], so 256 replicas are the 16 x 16 plane of the other two dimensions, which
// innermost packing cannot place (256 is not a multiple of 12); 16 of them a ring of dims[1].
// An inner group that does not fill whole dimensions (8 of 12) has no such group.
TEST(Collectives, OuterSubgroupsTakeTheDimensionsBesideTheInnerGroup) {
  cs::Interconnect g;
  const auto torus = cs::make_torus({12, 16, 16}, kBw, kAlpha);
  EXPECT_FALSE(cs::subgroup(torus, 256, g));
  ASSERT_TRUE(cs::outer_subgroup(torus, 12, 256, g));
  EXPECT_EQ(g.dims, (std::array<int, 3>{16, 16, 1}));
  EXPECT_EQ(g.topology, torus.topology);
  ASSERT_TRUE(cs::outer_subgroup(torus, 12, 16, g));
  EXPECT_EQ(g.dims, (std::array<int, 3>{16, 1, 1}));
  ASSERT_TRUE(cs::outer_subgroup(torus, 12 * 16, 16, g));
  EXPECT_EQ(g.dims, (std::array<int, 3>{16, 1, 1}));
  EXPECT_FALSE(cs::outer_subgroup(torus, 8, 16, g));
  EXPECT_FALSE(cs::outer_subgroup(torus, 12, 512, g));  // 12 x 512 > 3,072 chips
  ASSERT_TRUE(cs::outer_subgroup(cs::make_switch(8, kBw, kAlpha), 2, 4, g));
  EXPECT_EQ(cs::chip_count(g), 4);
}

// Two levels (ScaleOut): 4 nodes of 8 chips on a 100 GB/s x 12-port switch, and one
// 25 GB/s scale-out port per chip at 0.96 of peak with alpha 5 us. A group of at most 8
// chips is a switch of the node's ports; a larger group, or an outer group whose members
// lie on different nodes, is a switch of the scale-out ports. By hand, the ring
// all-reduce of S over the 4 chips of an outer group (one per node beside TP groups of 8):
// 2 x 3 x 5 us + 2 x 3/4 x S / (0.96 x 25 GB/s).
TEST(Collectives, TwoLevelGroupsCrossNodesOnTheScaleOutPorts) {
  auto sys = cs::make_switch(32, kBw, kAlpha, 12);
  sys.scale_out = cs::ScaleOut{8, 25e9, 5e-6, 1, 0.96};
  cs::Interconnect g;
  ASSERT_TRUE(cs::subgroup(sys, 8, g));  // one node
  EXPECT_EQ(cs::chip_count(g), 8);
  EXPECT_DOUBLE_EQ(cs::sustained_bandwidth_bytes_per_s(g), 12 * kBw);
  EXPECT_EQ(g.scale_out.chips_per_node, 0);
  ASSERT_TRUE(cs::subgroup(sys, 16, g));  // two nodes
  EXPECT_EQ(cs::chip_count(g), 16);
  EXPECT_DOUBLE_EQ(cs::sustained_bandwidth_bytes_per_s(g), 0.96 * 25e9);
  EXPECT_DOUBLE_EQ(g.link_latency_s, 5e-6);
  ASSERT_TRUE(cs::outer_subgroup(sys, 8, 4, g));  // one chip per node
  EXPECT_EQ(cs::chip_count(g), 4);
  const auto ar = cs::collective_cost(g, cs::CollectiveKind::all_reduce, cs::CollectiveAlgorithm::ring, kBytes);
  const double want = 2.0 * 3 * 5e-6 + 2.0 * 3.0 / 4.0 * kBytes / (0.96 * 25e9);
  EXPECT_NEAR(ar.time_s, want, kRel * want);
  ASSERT_TRUE(cs::outer_subgroup(sys, 2, 4, g));  // 2 x 4 chips fit one node
  EXPECT_DOUBLE_EQ(cs::sustained_bandwidth_bytes_per_s(g), 12 * kBw);
  EXPECT_FALSE(cs::outer_subgroup(sys, 8, 8, g));  // 64 chips > 32
}

// Torus nodes (TPU slices joined by the data-center network): 4 nodes of a 4 x 4 torus (2
// links per direction), each chip one 3.125 GB/s scale-out port at alpha 10 us. 64 chips; a
// group of at most 16 packs on its node's torus (8: 4 x 2), a larger one or an outer group
// across nodes is a switch of the scale-out ports. By hand, the ring all-reduce of S over
// the 4 chips of an outer group (one per node beside whole nodes of 16):
// 2 x 3 x 10 us + 2 x 3/4 x S / 3.125 GB/s.
TEST(Collectives, TorusNodesCrossOnTheScaleOutPorts) {
  auto sys = cs::make_torus({4, 4, 1}, kBw, kAlpha, 2);
  sys.topology = cs::Topology::torus_2d;
  sys.scale_out = cs::ScaleOut{16, 3.125e9, 1e-5, 1, 1.0, 4};
  EXPECT_EQ(cs::chip_count(sys), 64);
  cs::Interconnect g;
  ASSERT_TRUE(cs::subgroup(sys, 16, g));  // one node
  EXPECT_EQ(g.topology, cs::Topology::torus_2d);
  EXPECT_EQ(g.dims, (std::array<int, 3>{4, 4, 1}));
  EXPECT_EQ(cs::chip_count(g), 16);
  EXPECT_EQ(g.scale_out.chips_per_node, 0);
  ASSERT_TRUE(cs::subgroup(sys, 8, g));
  EXPECT_EQ(g.dims, (std::array<int, 3>{4, 2, 1}));
  ASSERT_TRUE(cs::subgroup(sys, 32, g));  // two nodes
  EXPECT_EQ(g.topology, cs::Topology::switched);
  EXPECT_EQ(cs::chip_count(g), 32);
  EXPECT_DOUBLE_EQ(cs::sustained_bandwidth_bytes_per_s(g), 3.125e9);
  ASSERT_TRUE(cs::outer_subgroup(sys, 16, 4, g));  // one chip per node
  EXPECT_EQ(cs::chip_count(g), 4);
  const auto ar = cs::collective_cost(g, cs::CollectiveKind::all_reduce, cs::CollectiveAlgorithm::ring, kBytes);
  const double want = 2.0 * 3 * 1e-5 + 2.0 * 3.0 / 4.0 * kBytes / 3.125e9;
  EXPECT_NEAR(ar.time_s, want, kRel * want);
  ASSERT_TRUE(cs::outer_subgroup(sys, 4, 4, g));  // 4 x 4 chips fit one node: its second dimension
  EXPECT_EQ(g.topology, cs::Topology::torus_2d);
  EXPECT_EQ(cs::chip_count(g), 4);
  EXPECT_FALSE(cs::outer_subgroup(sys, 16, 8, g));  // 128 chips > 64
}

// vLLM's custom all-reduce (csrc/custom_all_reduce.cuh @ c9eabec): a start and an end flag (2 alpha)
// around the peer reads. 8x MI300X (scenarios/systems/mi300x-8.yaml: 7 links x 64 GB/s, alpha 1 us):
// a 16 KiB decode buffer is one-shot, each chip reading 7 x 16 KiB through its 7 links:
// 2 us + 7 x 16384 / 448e9 = 2.256 us (the ring: 14 us + 2 x 7/8 x 16384 / 448e9 = 14.064 us).
// At 256 KiB (not below vLLM's 256 KiB bound for 8 chips) it is two-shot: 2 x 7/8 x 262144 / 448e9.
TEST(Collectives, PeerAllReduceOneShotThenTwoShotAsVllmChooses) {
  const auto mi300x = cs::make_switch(8, 64e9, 1e-6, 7);
  const auto small = cs::peer_all_reduce_cost(mi300x, 16384.0);
  ASSERT_TRUE(small.feasible);
  EXPECT_NEAR(small.time_s, 2e-6 + 7.0 * 16384.0 / 448e9, 1e-15);
  EXPECT_EQ(small.steps, 2);
  EXPECT_NEAR(small.busiest_link_bytes, 16384.0, 1e-9);  // 7 x S over 7 links
  const auto ring = cs::collective_cost(mi300x, cs::CollectiveKind::all_reduce, cs::CollectiveAlgorithm::ring, 16384.0);
  EXPECT_NEAR(ring.time_s, 14e-6 + 2.0 * 7.0 / 8.0 * 16384.0 / 448e9, 1e-15);
  const auto big = cs::peer_all_reduce_cost(mi300x, 262144.0);
  EXPECT_NEAR(big.time_s, 2e-6 + 2.0 * 7.0 / 8.0 * 262144.0 / 448e9, 1e-15);
  // 4 chips stay one-shot up to 512 KiB: 3 x 262144 / (7 x 64e9).
  const auto four = cs::peer_all_reduce_cost(cs::make_switch(4, 64e9, 1e-6, 7), 262144.0);
  EXPECT_NEAR(four.time_s, 2e-6 + 3.0 * 262144.0 / 448e9, 1e-15);
  // 2 chips: always one-shot, S / B.
  const auto two = cs::peer_all_reduce_cost(cs::make_switch(2, 64e9, 1e-6, 7), 4194304.0);
  EXPECT_NEAR(two.time_s, 2e-6 + 4194304.0 / 448e9, 1e-15);
}

// The kernel serves 2, 4, 6 or 8 chips that reach each other directly (one switch level).
TEST(Collectives, PeerAllReduceNeedsOneSwitchOfTwoToEightChips) {
  EXPECT_FALSE(cs::peer_all_reduce_cost(cs::make_switch(3, 64e9, 1e-6, 7), 1024.0).feasible);
  EXPECT_FALSE(cs::peer_all_reduce_cost(cs::make_switch(16, 64e9, 1e-6, 7), 1024.0).feasible);
  EXPECT_FALSE(cs::peer_all_reduce_cost(cs::make_ring(8, 64e9, 1e-6), 1024.0).feasible);
  auto two_level = cs::make_switch(8, 64e9, 1e-6, 7);
  two_level.scale_out.chips_per_node = 4;
  EXPECT_FALSE(cs::peer_all_reduce_cost(two_level, 1024.0).feasible);
  EXPECT_EQ(cs::to_string(cs::AllReduceKernel::custom), "custom");
}
