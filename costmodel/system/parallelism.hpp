// Multi-chip parallelism for transformer steps: tensor (TP), pipeline (PP),
// data / replica (DP) and expert (EP) parallelism over an Interconnect, with
// the communication each implies and how much of it hides under compute.
// Pure: no I/O, no globals.
//
// The rules (one step = m micro-batches through all blocks; times per chip):
//  * TP: every block does two all-reduces of its activations over the TP
//    group (after attention and after the MLP, Megatron-LM, Shoeybi et al.
//    2019): 2 x all_reduce(activation_bytes). The all-reduces sit between
//    dependent GEMMs, so by default none of it hides (overlap.tensor = 0).
//  * EP (MoE blocks): a dispatch and a combine all-to-all over the EP group:
//    2 x all_to_all(expert_all_to_all_bytes).
//  * Each kind of communication runs on its own stream beside the compute stream:
//    the overlap fraction of its time hides, but never more than the compute it
//    runs beside, so exposed = time - min(fraction x time, compute) and nothing
//    is shorter than any one of its streams (exposed_after_hiding). A block costs
//    compute_s + exposed TP + exposed EP; a stage send hides under its chunk's
//    compute; the data-parallel stream (collectives, and under sharded states the
//    copies beside them) under the chip's compute stream of the step (its
//    micro-batches' blocks and the copies on that stream).
//  * PP: the blocks are split into p contiguous stages so that the slowest
//    stage is as fast as possible (exact linear partition); every stage sends
//    stage_boundary_bytes to the next over one link: alpha + bytes / (k B),
//    exposed as the overlap rule above says. With t the slowest stage's time
//    (blocks + exposed send), a step takes (m + p - 1) t (GPipe / 1F1B
//    schedule). Its bubble is (p - 1) t, the fraction (p-1)/(m+p-1) of it.
//    Interleaved schedule (virtual_stages v > 1, Narayanan et al. SC'21): the
//    blocks are split into p v contiguous chunks, chip s holding chunks s,
//    s + p, ...; t is a chip's time for all its chunks (v sends each, the last
//    chunk none) and a step takes (m + (p - 1) / v) t.
//  * DP: replicas run independently (inference); when gradient_bytes > 0
//    (training) one all-reduce of them over the DP group ends the step,
//    exposed by the overlap rule above. With shard_states (ZeRO-3, PyTorch FSDP
//    FULL_SHARD: parameters, gradients and optimizer state partitioned over the
//    DP group) every micro-batch all-gathers the parameters before its forward
//    and again before its backward and reduce-scatters its gradients
//    (Rajbhandari et al. 2020, section 7.2.2: 3 x the parameter bytes moved per
//    micro-batch, 1.5x data parallelism's all-reduce), by the same exposure rule.
//    Hybrid sharding (shard_group s, 1 < s < dp: PyTorch FSDP HYBRID_SHARD, MaxText's
//    ICI FSDP beside data parallelism over the data-center network): the states are
//    partitioned over groups of s chips, the dp / s groups hold copies of them, and
//    each micro-batch's reduce-scatter over its group of s is followed by an all-reduce
//    of the reduced shard (the reduced bytes / s) over the dp / s chips that hold the
//    same shard (PyTorch FSDP's post-backward hook all-reduces it over the inter-node
//    group after every reduce-scatter, _runtime_utils.py _reduce_grad). Ranks go
//    shard group first: a shard group packs as a DP group does, and the replica group
//    is the outer group beside the tp x pp x s chips of a sharded replica.
//  * Optimizer: a training step ends with the optimizer update on each chip's own
//    parameters (optimizer_s, costed by the caller), after the last micro-batch and
//    the gradient collectives; nothing overlaps it.
//  * Sharded states also copy: the step's memory-bound gradient and parameter copies
//    around the collectives (costed by the caller): those on the compute stream
//    (shard_copies_s) add to the step, those that run beside the collectives
//    (shard_side_copies_s) run on the data-parallel stream with the collectives.
//  * CP (ring): a block's key-value sends to the next chip of the CP group hide under its
//    attention kernels (BlockWork::attention_s) by the overlap rule above with fraction 1,
//    as Transformer Engine overlaps each step's send with the step's attention.
//  * Groups: chips = tp x cp x pp x dp must not exceed the system. Each group is
//    modelled as if packed innermost on the system's interconnect (see
//    `subgroup` in collectives.hpp) -- exact for TP on a switch or ring,
//    optimistic for outer groups on a torus; a DP group that does not pack
//    innermost is the outer group beside a replica's tp x pp chips
//    (outer_subgroup: PaLM's 256-way DP on the 16 x 16 plane beside a 12-chip
//    ring of a 12 x 16 x 16 torus). EP groups live inside the
//    tp x dp chips of a stage: ep must divide tp x dp.
//  * Bottleneck: interconnect when the exposed communication on the critical
//    path exceeds its compute; otherwise the blocks' own bottleneck.
#pragma once

#include <string_view>
#include <vector>

#include "costmodel/roofline.hpp"
#include "costmodel/system/collectives.hpp"

namespace dse::costmodel::system {

struct ParallelismDegrees {
  int tp = 1;
  int pp = 1;
  int dp = 1;
  int ep = 1;
  // Context parallelism: the sequence split over cp chips (workload/spec.hpp PhaseSpec::
  // context_parallel). Ranks go tensor-parallel innermost, then context-parallel (Megatron-LM's
  // order tp-cp-ep-dp-pp); the CP group is the outer group beside a TP group, and the CP chips,
  // which hold the same weights, reduce their gradients with the DP group (Megatron-LM's data-
  // parallel group with context parallelism): the data-parallel collectives and the states'
  // sharding run over dp x cp chips.
  int cp = 1;
};

// Fraction of each kind of communication hidden under compute, each in [0, 1].
struct OverlapFractions {
  double tensor = 0.0;    // TP all-reduces: 0 unless the stack overlaps them (async TP)
  double expert = 0.0;    // EP all-to-alls
  double pipeline = 0.0;  // stage-to-stage sends
  double data = 0.0;      // gradient all-reduce (overlaps the backward pass in training)
};

// One transformer block for one micro-batch, on one chip, already sharded by TP.
struct BlockWork {
  double compute_s = 0.0;                 // compute (and memory) time of the block on one chip
  double activation_bytes = 0.0;          // tokens x hidden x bytes/element (each TP all-reduce)
  double expert_all_to_all_bytes = 0.0;   // > 0 for MoE blocks: bytes one chip sends per all-to-all
  // Ring context parallelism: the block's sends to the next chip of the CP group (each of
  // cp_send_bytes: a key-value block forward, a key-value block and its gradient backward), each
  // alpha + bytes / B on the CP group's link, hidden under the block's attention kernels
  // (attention_s: each step's send overlaps the step's attention) as far as they last.
  double cp_sends = 0.0;
  double cp_send_bytes = 0.0;
  double attention_s = 0.0;
};

struct StepWork {
  std::vector<BlockWork> blocks;         // in model order
  int micro_batches = 1;                 // m
  int virtual_stages = 1;                // v: model chunks per chip (interleaved 1F1B when > 1)
  double stage_boundary_bytes = 0.0;     // activation sent between stages per micro-batch
  double gradient_bytes = 0.0;           // per chip, all-reduced over DP; 0 for inference
  // The bytes the DP gradient reduction (all-reduce, or with shard_states the reduce-scatter)
  // moves when it runs in another precision than the weights (Megatron-LM reduces a bf16
  // run's gradients in fp32); 0: gradient_bytes. The all-gathers move gradient_bytes.
  double gradient_reduce_bytes = 0.0;
  bool shard_states = false;             // ZeRO-3 / FSDP FULL_SHARD over DP (the rule above)
  int shard_group = 0;                   // shard_states: chips sharing one copy; 0 = all of dp
  double optimizer_s = 0.0;              // the optimizer update on one chip; 0 for inference
  // FP8 training: the chip's FP8 GEMM weights cast to FP8 (both layouts) once per step, on the
  // first micro-batch (costed by the caller: workload/spec.hpp apply_fp8_training); added to
  // the step as the optimizer update is.
  double weight_cast_s = 0.0;
  double shard_copies_s = 0.0;           // shard_states: copies on the compute stream, per step
  double shard_side_copies_s = 0.0;      // shard_states: copies beside the collectives, per step
  Bottleneck compute_bottleneck = Bottleneck::compute;  // what limits the blocks' compute
};

// The chips one copy of sharded states is partitioned over: shard_group (hybrid sharding),
// or all of dp where it is 0 (FULL_SHARD). Shared by the step's collectives and the
// platform layer's memory footprint.
constexpr int states_shard_degree(int shard_group, int dp) noexcept { return shard_group > 0 ? shard_group : dp; }

// Helpers for the byte counts above.
double tp_all_reduce_bytes(double tokens, double hidden, double bytes_per_element) noexcept;
double moe_all_to_all_bytes(double tokens, double hidden, int top_k,
                            double bytes_per_element) noexcept;

// What stays exposed of a stream of stream_s seconds when `fraction` of it may run beside
// window_s seconds of compute: stream_s - min(fraction x stream_s, window_s). So compute +
// exposed >= max(compute, stream): a step is never shorter than any one of its streams (with
// --overlap-data 1 a step had come out at 1.95 s while its collectives took 2.64 s).
double exposed_after_hiding(double stream_s, double fraction, double window_s) noexcept;

// (p - 1) / (m + p - 1); 0 for invalid input.
double pipeline_bubble_fraction(int stages, int micro_batches) noexcept;

// Contiguous split of `block_times_s` into `stages` non-empty stages that
// minimises the slowest stage; returns each stage's block count (empty when
// stages < 1 or stages > blocks).
std::vector<int> partition_stages(const std::vector<double>& block_times_s, int stages);

enum class ParallelStatus { ok, invalid_degrees, too_many_chips, expert_groups_do_not_fit,
                            group_does_not_map, collective_infeasible, too_few_blocks };
std::string_view to_string(ParallelStatus s);

struct ParallelStepCost {
  bool feasible = true;
  ParallelStatus status = ParallelStatus::ok;
  int chips = 0;                       // tp x pp x dp
  double step_time_s = 0.0;            // one step (m micro-batches) of one replica
  // Critical-path breakdown: step = compute + exposed_comm + bubble + shard copies + optimizer
  // + weight casts.
  double compute_s = 0.0;              // m x compute of the slowest stage
  double exposed_comm_s = 0.0;         // m x its exposed communication + exposed DP all-reduce
  double bubble_s = 0.0;               // (p - 1) x slowest stage time
  double optimizer_s = 0.0;            // the optimizer update that ends a training step
  double weight_cast_s = 0.0;          // FP8 training: the per-step FP8 casts of the weights
  double shard_copies_s = 0.0;         // sharded states' exposed gradient and parameter copies
  double bubble_fraction = 0.0;        // bubble_s / the pipeline's part of the step
  double ideal_bubble_fraction = 0.0;  // (p - 1) / (m + p - 1)
  double stage_imbalance = 1.0;        // slowest stage / mean stage (1 = balanced)
  // Whole-step communication time per kind, hidden or not (per chip; TP and EP
  // averaged over the stages).
  double tp_comm_s = 0.0;
  double ep_comm_s = 0.0;
  double cp_comm_s = 0.0;   // ring context parallelism's sends, hidden or not
  double pp_comm_s = 0.0;
  double dp_comm_s = 0.0;
  double dp_replica_comm_s = 0.0;  // hybrid sharding: the part of dp_comm_s across the copies
  std::vector<int> blocks_per_stage;
  std::vector<double> stage_time_s;    // per micro-batch, including exposed sends
  Bottleneck bottleneck = Bottleneck::compute;
};

ParallelStepCost evaluate_parallel_step(const Interconnect& system,
                                        const ParallelismDegrees& degrees, const StepWork& work,
                                        const OverlapFractions& overlap,
                                        CollectiveAlgorithm algorithm);

}  // namespace dse::costmodel::system
