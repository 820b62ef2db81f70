// Collective communication between chips: an alpha-beta (latency-bandwidth)
// model of all-reduce, all-gather, reduce-scatter and all-to-all on ring,
// 2-D / 3-D torus and switch topologies. Pure: no I/O, no globals.
//
// Notation: n chips in the group, S = `bytes` (see CollectiveKind for what S
// is per kind), alpha = link latency, B = link bandwidth, k = parallel links.
//
// Ring topology (one ring of n chips; each chip has k parallel links to the
// next chip, all used in the same direction -- a conservative view of a
// bidirectional ring, whose short-way routing is not modelled). Data is split
// evenly over the k links, so every bandwidth term is divided by k; latency
// terms are not. A message that crosses d links pays d alpha.
//   ring algorithm   reduce-scatter = all-gather = (n-1) alpha + (n-1)/n S / (kB)
//                    all-reduce = RS + AG = 2(n-1) alpha + 2(n-1)/n S / (kB)
//                    (the textbook figure, Patarasuk & Yuan 2009, for k = 1)
//   tree algorithm   recursive halving (RS) / doubling (AG) in the shift form:
//                    log2 n steps; at the step of distance d = n/2, n/4, ..., 1 every
//                    chip i sends S d/n to chip i+d, so d messages share each link:
//                    sum d alpha = (n-1) alpha, sum d (S d/n) = n S (1 - 1/n^2) / 3:
//                    RS = AG = (n-1) alpha + n S (1 - 1/n^2) / (3 kB)  (n a power of 2)
//   direct           every chip sends its n-1 pieces of S/n at once; the piece to
//                    the chip d hops on crosses d links, so the n links carry
//                    n * (S/n) * (1 + ... + n-1) in all, (n-1) S / 2 each:
//                    RS = AG = (n-1) alpha + (n-1) S / (2 kB)
//   all-to-all       (any algorithm) is the direct pattern, S being all the bytes
//                    one chip sends: (n-1) alpha + (n-1) S / (2 kB)
// Torus (dims n1 x n2 [x n3], every dimension a ring with k links per
// direction; a chip with one full-duplex link to each neighbour of a dimension
// has k = 2 there: its ring collectives run as two counter-rotating rings on S/2
// each, whose bandwidth term is the formula's with k = 2): dimension by
// dimension. Reduce-scatter runs along dim 1 on S, then along dim 2 on S/n1,
// ...; all-gather runs the same phases in reverse; all-reduce = RS + AG;
// all-to-all runs one all-to-all of the full S per dimension (dimension-ordered
// routing). Each phase uses the ring formulas above with n = n_i. Links of
// different dimensions are distinct, so the busiest link is the busiest
// dimension's.
// Switch (non-blocking, full bisection; each chip has k ports of bandwidth B
// into the switch; every port crossing costs one alpha):
//   ring             same as the ring topology: 2(n-1) alpha + 2(n-1)/n S/(kB) for AR
//   tree             recursive halving-doubling without contention:
//                    RS = AG = log2(n) alpha + (n-1)/n S/(kB)   (n a power of 2)
//   direct           all pieces at once through the switch:
//                    RS = AG = alpha + (n-1)/n S/(kB); all-to-all likewise
// A group of one chip costs nothing.
//
// Two levels (Interconnect::scale_out): a switch of chips grouped in nodes of
// chips_per_node (NVLink and NVSwitch inside a DGX), the nodes joined by a scale-out
// network in which every chip has its own port (a NIC per GPU on a non-blocking fat
// tree). A group inside one node is a switch of the node's links; a group that spans
// nodes is a switch of the chips' scale-out ports: its ring crosses the nodes through
// them, and they are the slowest hop (NCCL's rings across nodes use one NIC per GPU).
// The nodes may also be tori or rings (TPU slices joined by the data-center network,
// Cloud TPU Multislice): `dims` is then one node's torus or ring, the system holds
// ScaleOut::nodes of them, and a group that spans nodes is, as above, a switch of its
// chips' scale-out ports (each chip's share of its host's network bandwidth).
#pragma once

#include <array>
#include <string_view>

namespace dse::costmodel::system {

enum class Topology { ring, torus_2d, torus_3d, switched };
enum class CollectiveAlgorithm { ring, tree, direct };
// S ("bytes") is, per chip: all_reduce -- the buffer reduced (in = out = S);
// all_gather -- the gathered output (each chip contributes S/n);
// reduce_scatter -- the input (each chip keeps S/n); all_to_all -- all the
// bytes one chip sends, S/n to each chip (its own share stays local).
enum class CollectiveKind { all_reduce, all_gather, reduce_scatter, all_to_all };

std::string_view to_string(Topology t);
std::string_view to_string(CollectiveAlgorithm a);
std::string_view to_string(CollectiveKind k);

// The network between the nodes of a two-level system (see the top of this file).
struct ScaleOut {
  int chips_per_node = 0;                   // 0: one level, no scale-out network
  double link_bandwidth_bytes_per_s = 0.0;  // one chip's port, one direction
  double link_latency_s = 0.0;              // alpha of a step that crosses it
  int links = 1;                            // ports per chip
  double achievable_fraction = 1.0;         // as Interconnect::achievable_fraction
  // Torus and ring nodes only: how many nodes of `dims` the system holds (its chips are
  // chips_per_node x nodes, chips_per_node being the product of the dims). A switch
  // system's `dims[0]` counts all its chips; its nodes are dims[0] / chips_per_node.
  int nodes = 1;
};

// The interconnect of a group of chips.
struct Interconnect {
  Topology topology = Topology::ring;
  // Chips per dimension: ring and switch use dims[0] only; torus_2d dims[0..1];
  // torus_3d dims[0..2]. Unused dimensions must be 1.
  std::array<int, 3> dims{1, 1, 1};
  double link_bandwidth_bytes_per_s = 0.0;  // one link, one direction
  double link_latency_s = 0.0;              // alpha: per step (per hop on multi-hop routes)
  int links = 1;                            // k: parallel links per direction (ports, on a switch)
  // Share of the link bandwidth that collectives and sends sustain, in (0, 1]: a
  // collective microbenchmark's bus bandwidth over the peak (nccl-tests busbw / peak
  // per direction); 1 = peak.
  double achievable_fraction = 1.0;
  // A second level: the chips (dims[0] of a switch) grouped in nodes, or ScaleOut::nodes
  // copies of a torus or ring of `dims` (see the top of this file); chips_per_node 0 means none.
  ScaleOut scale_out{};
};

// All the chips: dims' product, times ScaleOut::nodes for a system of torus or ring nodes.
int chip_count(const Interconnect& ic) noexcept;

// A ring or switch of n chips, or a torus of the given dims.
Interconnect make_ring(int chips, double link_bandwidth_bytes_per_s, double link_latency_s,
                       int links = 1) noexcept;
Interconnect make_switch(int chips, double port_bandwidth_bytes_per_s, double link_latency_s,
                         int ports = 1) noexcept;
Interconnect make_torus(std::array<int, 3> dims, double link_bandwidth_bytes_per_s,
                        double link_latency_s, int links = 1) noexcept;
// A switch of n chips whose ports are a chip's `links` (bandwidth, latency, count and
// achievable fraction carried over): a platform's own links scaled to a system.
Interconnect make_switch(int chips, const Interconnect& links) noexcept;
// Bandwidth one chip sustains per direction: links x link bandwidth x achievable fraction.
double sustained_bandwidth_bytes_per_s(const Interconnect& ic) noexcept;
// A switch of `chips` chips whose ports are their scale-out ports (ic.scale_out).
Interconnect scale_out_switch(const Interconnect& ic, int chips) noexcept;

// The interconnect a group of `group` chips of `ic` sees. Groups are packed
// innermost first: a ring or switch group is a smaller ring or switch (on a
// ring, the group is assumed to close its own ring); a torus group fills
// dims[0] first, then dims[1], then dims[2], and must factor that way
// (e.g. 8 on 4x4: 4x2). On a two-level system a group of at most one node's
// chips is a group of the node (a switch of its links, or a torus or ring group
// packed as above) and a larger one a switch of the chips' scale-out ports (one
// level, either way). Returns false when it does not factor or exceeds ic.
bool subgroup(const Interconnect& ic, int group, Interconnect& out) noexcept;
// An outer group: `group` chips, one from each of the groups of `inner` chips that
// pack innermost (data parallelism outside a TP x PP replica). On a torus the inner
// groups must fill whole leading dimensions (12 on 12 x 16 x 16: dims[0]) and the
// outer group packs into the dimensions after them as `subgroup` packs (256 there:
// 16 x 16); on a ring or switch it is `subgroup`'s group. On a two-level system it
// stays inside a node only when the inner groups and it fit one together
// (inner x group <= chips_per_node); otherwise its members lie on different nodes
// and it is a switch of their scale-out ports. False when it does not factor.
bool outer_subgroup(const Interconnect& ic, int inner, int group, Interconnect& out) noexcept;

enum class CollectiveStatus { ok, invalid_input, needs_power_of_two };
std::string_view to_string(CollectiveStatus s);

struct CollectiveCost {
  bool feasible = true;
  CollectiveStatus status = CollectiveStatus::ok;
  double time_s = 0.0;
  double latency_term_s = 0.0;    // the alpha part of time_s
  double bandwidth_term_s = 0.0;  // the bytes/bandwidth part of time_s
  double busiest_link_bytes = 0.0;  // bytes over the most loaded link (one direction)
  int steps = 0;                    // sequential communication steps
};

// Time of one collective of S = `bytes` per chip (see CollectiveKind) over
// all chips of `ic`. Infeasible (a value, not an exception) for bad input
// (non-positive bandwidth, links, dims or negative bytes/latency) and for the
// tree algorithm on a dimension that is not a power of two.
CollectiveCost collective_cost(const Interconnect& ic, CollectiveKind kind,
                               CollectiveAlgorithm algorithm, double bytes) noexcept;

// Which kernel a serving stack runs for tensor parallelism's all-reduces: the collective
// library's (NCCL / RCCL, costed by collective_cost's ring algorithm) or the stack's own
// peer-to-peer kernel (peer_all_reduce_cost).
enum class AllReduceKernel { library, custom };
std::string_view to_string(AllReduceKernel k);

// A serving stack's own all-reduce kernel (vLLM csrc/custom_all_reduce.cuh, on CUDA and ROCm):
// every chip reads its peers' registered buffers directly over the links; a flag written to
// every peer marks the start of the kernel and another its end (start_sync, end_sync: one link
// latency alpha each, the kernel's only communication steps besides the reads).
//   one-shot  (cross_device_reduce_1stage) each chip reads the whole buffer of every peer:
//             2 alpha + (n-1) S / B
//   two-shot  (cross_device_reduce_2stage) reduce-scatter, then all-gather, by peer reads:
//             2 alpha + 2 (n-1)/n S / B
// B: one chip's sustained bandwidth (sustained_bandwidth_bytes_per_s). The kernel is vLLM's
// choice (custom_all_reduce.cuh, CustomAllreduce::allreduce): one-shot on 2 chips, below 512 KiB
// on up to 4 and below 256 KiB on up to 8; two-shot otherwise. Infeasible (invalid_input) unless
// ic is a switch (every chip reaches every peer directly: NVSwitch, or the MI300X's fully
// connected links) of 2, 4, 6 or 8 chips with no scale-out level (the kernel's world sizes).
CollectiveCost peer_all_reduce_cost(const Interconnect& ic, double bytes) noexcept;

}  // namespace dse::costmodel::system
