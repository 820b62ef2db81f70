// Whole-graph evaluation on a GPU-class chip (GPUs, and TPUs / Gaudi described
// as many-core matrix-engine chips): every operator of an OperatorGraph is
// lowered to a GPU kernel of costmodel/gpu/gpu.hpp (GEMM, batched GEMM, implicit-
// GEMM convolution, element-wise, softmax, norm, reduction, gather) or to a
// collective of costmodel/system/collectives.hpp; a fusion planner merges
// kernels; per-layer and total latency, FLOPs, DRAM traffic, MFU and energy
// come out. Pure: standard library only, no I/O, no globals.
//
// Lowering (per occurrence of an operator):
//   gemm          evaluate_gemm(m, n, k), library dispatch; split-K into 2..64 slices
//                 (extra batches + an fp32 partial-sum round trip to HBM) when faster;
//                 HBM traffic is never below the compulsory (mk + kn + mn) x batch bytes
//   batched_gemm  evaluate_gemm with batch = batch count (extra waves)
//   conv2d        implicit GEMM: M = N*P*Q, N = K/groups, K = C/groups*R*S,
//                 batch = groups (so N*K_total*C*R*S/groups MACs, as the op counts)
//   elementwise   evaluate_elementwise (compiled dispatch; an activation with >= 5
//                 FLOPs/element is charged one special-function op per element)
//   softmax       evaluate_softmax (eager dispatch)
//   layernorm / rmsnorm  evaluate_layernorm (compiled dispatch)
//   reduction     evaluate_elementwise of rows*cols elements, 1 input, 1 FLOP each,
//                 the output (rows elements) neglected
//   embedding     memory-bound gather: evaluate_elementwise of rows*cols elements,
//                 0 FLOPs, one read and one write
//   all_reduce / all_to_all  collective_cost (ring algorithm) over the first
//                 `participants` chips of the interconnect + a library launch
// Precisions the matrix engine lacks (e.g. fp8 on A100) run at the first
// supported of bf16, fp16, fp32 (the mapping says so); int4 runs as int8.
//
// Launch modes: `framework` charges each kernel its dispatch path's overhead
// from the hardware file (PyTorch eager timing, as the measured operator files
// were taken); `graph` replaces it by the platform's graph_kernel_overhead_s
// (CUDA graphs / XLA programs / HPU graphs, as serving and training stacks run).
//
// Fusion (within a block; `standard` and `aggressive`, or the kinds named in
// EvalOptions::fusion_kinds):
//   gemm_epilogue  a GEMM-like op whose only consumer is a one-input element-wise
//                  op (bias is already part of the GEMM's tensors): the element-
//                  wise kernel disappears (its launch, its read and its write);
//                  the GEMM writes the activated output instead of its own.
//   norm_residual  a two-input element-wise op (residual add; two input tensors) read by a
//                  norm: the norm's read of its input and its launch disappear.
//   flash_attention (aggressive, or named) batched_gemm -> softmax -> batched_gemm:
//                  one kernel; DRAM traffic = Q + K + V + O only, as the operators'
//                  tensor lists count them (qk's two operands, av's second operand
//                  and its output; K and V once per KV head under GQA) -- the score
//                  matrix stays on chip); latency = max(compute of the two GEMMs
//                  + softmax vector/SFU time, traffic / HBM bandwidth) + one launch.
//   conv_stage     (aggressive, or named; inference) consecutive blocks made only of
//                  convolutions and their element-wise epilogues (ResNet
//                  bottlenecks) whose weights together fit in one core's SRAM run
//                  as one persistent kernel: every core keeps all the weights and
//                  streams activation tiles through the whole chain, so DRAM
//                  traffic = the first block's input + the last block's output +
//                  the weights once; latency = max(sum of the member convolutions'
//                  matrix time, tile and wave quantisation included, traffic / HBM
//                  bandwidth) + one launch. TensorRT's RnRes2FullFusion plugin is
//                  this for ResNet-50's res2 stage in INT8 (208 KB of weights; res3
//                  needs 376 KB and is not fused).
// A fusion the platform's software stack does not list is still applied (the
// strategy is a what-if) and counted in unsupported_fusion_groups (a risk).
//
// Energy: dynamic = matrix FLOPs x e_flop(precision) + vector FLOPs x e_vector
// + HBM bytes x e_hbm + L2 bytes x e_l2 (per-chip figures in the hardware
// file), plus static power x latency.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "costmodel/gpu/gpu.hpp"
#include "costmodel/roofline.hpp"
#include "costmodel/system/collectives.hpp"
#include "costmodel/workload/footprint.hpp"
#include "costmodel/workload/graph.hpp"
#include "costmodel/workload/spec.hpp"

namespace dse::costmodel::platform {

enum class FusionStrategy { none, standard, aggressive };
std::string_view to_string(FusionStrategy f) noexcept;
std::optional<FusionStrategy> fusion_strategy_from_string(std::string_view s) noexcept;

enum class FusionKind { gemm_epilogue, norm_residual, flash_attention, conv_stage };
inline constexpr std::array kFusionKinds = {FusionKind::gemm_epilogue, FusionKind::norm_residual,
                                            FusionKind::flash_attention, FusionKind::conv_stage};
std::string_view to_string(FusionKind f) noexcept;
std::optional<FusionKind> fusion_kind_from_string(std::string_view s) noexcept;
// "gemm_epilogue, norm_residual, flash_attention or conv_stage" (for error messages).
std::string fusion_kind_names();
// The fusion kinds a strategy applies (none: none; standard: gemm_epilogue and
// norm_residual; aggressive: all).
std::vector<FusionKind> fusion_kinds_of(FusionStrategy f);

enum class LaunchMode { framework, graph };
std::string_view to_string(LaunchMode m) noexcept;
std::optional<LaunchMode> launch_mode_from_string(std::string_view s) noexcept;

// The stack's fused attention kernel (prefill and training; decode-shaped attention keeps
// its own rule), for the flash_attention fusion:
//  native  (default) a FlashAttention-2-class kernel built for the chip: its member GEMMs at
//          the chip's matrix rate, masked tiles skipped (Dao 2023, Algorithms 1 and 2).
//  flash2  FlashAttention-2 itself: the same work, written for Ampere's warp-level MMA, so on a
//          chip whose full rate needs another instruction its matrix part runs at
//          GpuHardware::warp_mma_fraction of the rate (Hopper: mma.sync caps it at about 2/3 of
//          the peak; the H100 preset's 0.594 reproduces FlashAttention-2's measured forward rate;
//          "FlashAttention-2 achieving only 35% utilization on the H100 GPU", Shah et al.
//          2024, arXiv 2407.08608, abstract).
//  flash1  the kernels before it, FlashAttention (v1, CUDA) and the Triton FlashAttention of
//          2022-23 (flash_attn_triton.py; llm-foundry's attn_impl: triton): twice flash2's
//          compute time, forward and backward alike. Dao 2023 (arXiv 2307.08691, abstract):
//          FlashAttention-2 yields "around 2x speedup compared to FlashAttention", which reaches
//          "only 25-40% of the theoretical maximum FLOPs/s" (FlashAttention-2: 50-73%, A100); the
//          Triton kernel's docstring: "Overall Triton forward + backward is slightly slower than
//          CUDA forward + backward". 2 is the sourced ratio, a lower bound for the Triton kernel.
// The traffic bound and the launch are the same kernels'.
enum class AttentionKernel { native, flash2, flash1 };
std::string_view to_string(AttentionKernel k) noexcept;
std::optional<AttentionKernel> attention_kernel_from_string(std::string_view s) noexcept;
// Compute time of kernel k relative to FlashAttention-2's (1, or 2 for flash1).
double attention_kernel_time_factor(AttentionKernel k) noexcept;
// Whether kernel k is written for the previous generation's warp-level MMA (flash2, flash1).
bool attention_kernel_uses_warp_mma(AttentionKernel k) noexcept;
// What the thread blocks of a FlashAttention kernel whose grid is known (flash2, flash1; 0 for
// native, whose persistent kernels overlap one tile's start with another's work) cost besides
// their loop, in s: per wave of resident blocks (at least one), two dependent HBM round trips
// (hbm_latency_s), and per wave the wave's first tiles at the HBM bandwidth. Forward (FlashAttention-2's
// flash_fwd_kernel.h): a block loads Q and its first K block, waits for them, and only then
// issues its first V block, which its first P V product waits for; a wave moves the Q tiles of
// its blocks and the first K block once per (batch, head) among them (the query blocks of a head
// are consecutive in launch order and share it through L2). Backward (flash_bwd_kernel.h): a
// block loads its K and V blocks and the first Q and dO blocks of its loop (shared by the key
// blocks of a head), then the rows' log-sum-exp and dO . O sums. Waves: the blocks (forward: one
// per block_m query rows; backward: one per block_n keys, 128 at head dims up to 128 and 64 above
// on the presets) over the resident places (cores x resident blocks; backward: one per core). groups: batch x heads;
// element_bytes: of Q. On the H200 preset this gives 4.2 us (forward, head dim 128) and 3.2 us (64) per wave for one
// query block per head, against 4.1 and 3.4 measured (scripts/measure_gpu.py --sections fa2_blocks:
// scenarios/validation/h200/attention/h200_fa2_blocks.csv); backward 4.2 and 3.2 against 4.5.
double flash_block_startup_s(const GpuHardware& hw, AttentionKernel k, bool backward, std::int64_t seq_q,
                             std::int64_t seq_k, std::int64_t groups, std::int64_t head_dim, double element_bytes);
// How much longer the products of FlashAttention-2's forward (k = flash2; 1 for the others)
// take than its matrix rate gives, where the core's shared memory (sram_bytes_per_cycle_per_core)
// cannot stream their operands: per key block the thread block writes K and V into shared memory
// and each warp reads its rows of Q and all of K and V back (attention_fusion.cpp explains the count).
// >= 1; on the H100 and H200 presets 1 at head dims 64 and 128, 1.39 at 256 (64 x 64 blocks of
// 4 warps: 11.6 FLOPs per byte against the warp-MMA rate's 16.2 per clock and byte).
double flash_forward_smem_factor(const GpuHardware& hw, AttentionKernel k, std::int64_t head_dim, Precision p);
// The share of the forward's matrix rate at which a FlashAttention backward's five products run: 0.715 (measured:
// FlashAttention-2 on the H100 at head dim 128, 128-key blocks) for native kernels and wherever the kernel's
// blocks hold 128 keys; a kernel whose grid is known (flash2, flash1) pays that shortfall per FLOP in proportion
// to 128 / its blocks' keys, the dQ accumulation's bytes per FLOP (attention_fusion.cpp gives the grid and the count):
// 1 / (1 + (1 / 0.715 - 1) x 128 / block_n), 0.5565 on the 64-key blocks of FlashAttention-2 at head dims 160-256.
double flash_backward_matrix_share(const GpuHardware& hw, AttentionKernel k, std::int64_t head_dim) noexcept;

// Per-chip energy and power figures (hardware file section `energy:`).
struct ChipEnergy {
  double matrix_flop_fp32_j = 0.0;  // per FLOP (half a MAC)
  double matrix_flop_fp16_j = 0.0;  // fp16 / bf16 / tf32
  double matrix_flop_int8_j = 0.0;  // int8 / fp8
  double vector_flop_j = 0.0;       // fp32 vector FLOP
  double hbm_byte_j = 0.0;
  double l2_byte_j = 0.0;
  double static_power_w = 0.0;
  double tdp_w = 0.0;
  // The figures above whose source is recalled or assumed, not measured or derived from a
  // measurement (a platform file's `confidence:` tags R; names as the file's keys): the
  // point's engineering risk counts those its power depends on (system/risk.hpp).
  std::vector<std::string> recalled_figures;
};

// A chip: its kernel model, its energy, its software stack, its own links.
struct Platform {
  GpuHardware gpu;
  ChipEnergy energy;
  std::vector<FusionKind> supported_fusions;
  double graph_kernel_overhead_s = 0.0;  // per kernel under graph launch
  system::Interconnect links;            // the chip's links (a switch of 1 by default)
  double stack_maturity = 1.0;           // [0, 1] for the risk assessment
  // Silicon (a platform file's `area:` and energy.process_nm): the die area of one chip (all
  // of its dies), for the point's area and the build-cost model of system/cost.hpp; 0 unknown.
  double die_area_mm2 = 0.0;
  double process_nm = 0.0;
};

struct EvalOptions {
  FusionStrategy fusion = FusionStrategy::standard;
  // The fusion kinds applied, when set: replaces the strategy's set (standard =
  // gemm_epilogue + norm_residual, aggressive = all four). For stacks that fuse
  // a mix, e.g. TorchInductor over cuBLAS GEMMs with PyTorch's SDPA kernel:
  // norm_residual + flash_attention, no GEMM epilogue.
  std::optional<std::vector<FusionKind>> fusion_kinds;
  LaunchMode launch = LaunchMode::graph;
  // The fused attention kernel's generation (applies where flash_attention fuses).
  AttentionKernel attention_kernel = AttentionKernel::native;
  // Collectives of the graph run on the first `participants` chips of this
  // interconnect; unset: on a switch of the platform's own links.
  std::optional<system::Interconnect> interconnect;
  workload::PhaseSpec phase;  // for memory footprint and tokens/s
  // Training under tensor parallelism with sequence parallelism (Megatron-LM
  // --sequence-parallel): the memory footprint's replicated activations are sharded
  // (workload/footprint.hpp). Its collectives move the all-reduces' bytes as an
  // all-gather plus a reduce-scatter, which the graph's all-reduces already cost.
  bool sequence_parallel = false;
  // The all-reduce kernel of the serving stack (system/serving.hpp ServingStack): its own
  // peer-to-peer kernel (system::peer_all_reduce_cost) for buffers up to
  // custom_all_reduce_max_bytes (0: any), else the library's ring.
  system::AllReduceKernel all_reduce_kernel = system::AllReduceKernel::library;
  double custom_all_reduce_max_bytes = 0.0;
};
// Whether the options apply fusion kind k (their fusion_kinds, else their strategy's).
bool applies_fusion(const EvalOptions& o, FusionKind k);

struct LayerMapping {
  std::string kernel;        // gemm, batched_gemm, conv2d->gemm, elementwise, ...
  std::string tile;          // "128x256x32, 96 tiles, 1 waves" for GEMMs
  std::string fusion_group;  // "" when unfused, else the group's name
  std::string precision;     // the precision the kernel ran at
};

struct LayerResult {
  std::string name;
  std::string type;   // the operator kind (or "fused_attention")
  std::string layer;  // the layer type (attention, ffn, ...)
  std::int64_t repeat = 1;
  double latency_s = 0.0;  // one occurrence
  double flops = 0.0;      // one occurrence
  double dram_bytes = 0.0;
  double l2_bytes = 0.0;
  double energy_j = 0.0;   // dynamic, one occurrence
  Bottleneck bottleneck = Bottleneck::compute;
  double stall_fraction = 0.0;
  double pct_of_peak = 0.0;  // achieved FLOP/s over the peak (matrix or vector), a fraction: 0.86, not 86
  LayerMapping mapping;
};

struct GraphTotalsResult {
  double latency_s = 0.0;
  double flops = 0.0;
  double mfu = 0.0;              // flops / (latency x matrix peak at the graph's precision)
  double dynamic_energy_j = 0.0;
  double static_energy_j = 0.0;
  double energy_j = 0.0;
  double tokens = 0.0;           // tokens (or samples) the step processes; 0 if n/a
  double tokens_per_s = 0.0;
  double memory_bytes = 0.0;     // footprint on one chip
  double hbm_bytes_capacity = 0.0;
  double dram_bytes = 0.0;
  double collective_s = 0.0;     // time in collectives (with repeats)
};

struct GraphEval {
  std::vector<LayerResult> layers;  // fused groups appear once, under the first op's name
  GraphTotalsResult totals;
  // Per block: latency of one occurrence, and of its collectives.
  std::vector<double> block_latency_s;
  std::vector<double> block_collective_s;
  // Per block, one occurrence: the time of its fused attention kernels (flash_attention).
  std::vector<double> block_attention_s;
  int fusion_groups = 0;
  int unsupported_fusion_groups = 0;
  std::int64_t cache_hits = 0;
  std::int64_t cache_misses = 0;
  // The step's memory on one chip, by kind; totals.memory_bytes is its sum. Under
  // pipeline parallelism or sharded states, the stage's and shard's (platform/system.cpp).
  workload::MemoryFootprint footprint;
  bool fits_memory = true;
};

// Memo of kernel costs by shape, shared by the evaluations of one call chain.
class KernelCache {
 public:
  using Key = std::tuple<int, std::int64_t, std::int64_t, std::int64_t, std::int64_t, int, double, int>;
  const GpuKernelCost* find(const Key& k) const;
  void put(const Key& k, const GpuKernelCost& c);
  std::int64_t hits = 0;
  std::int64_t misses = 0;

 private:
  std::map<Key, GpuKernelCost> map_;
};

// Matrix-engine precision a workload precision runs at on this chip.
Precision kernel_precision(const GpuHardware& hw, workload::Precision p) noexcept;

GraphEval evaluate_graph(const Platform& platform, const workload::OperatorGraph& graph,
                         const EvalOptions& options, KernelCache* cache = nullptr);

}  // namespace dse::costmodel::platform
