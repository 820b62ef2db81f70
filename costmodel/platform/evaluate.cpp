#include "costmodel/platform/evaluate.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <utility>
#include <vector>

#include "costmodel/workload/footprint.hpp"

namespace dse::costmodel::platform {

namespace wl = dse::costmodel::workload;

std::string_view to_string(FusionStrategy f) noexcept {
  switch (f) {
    case FusionStrategy::none: return "none";
    case FusionStrategy::standard: return "standard";
    case FusionStrategy::aggressive: return "aggressive";
  }
  return "none";
}
std::optional<FusionStrategy> fusion_strategy_from_string(std::string_view s) noexcept {
  for (auto f : {FusionStrategy::none, FusionStrategy::standard, FusionStrategy::aggressive})
    if (to_string(f) == s) return f;
  return std::nullopt;
}
std::string_view to_string(FusionKind f) noexcept {
  switch (f) {
    case FusionKind::gemm_epilogue: return "gemm_epilogue";
    case FusionKind::norm_residual: return "norm_residual";
    case FusionKind::flash_attention: return "flash_attention";
    case FusionKind::conv_stage: return "conv_stage";
  }
  return "gemm_epilogue";
}
std::optional<FusionKind> fusion_kind_from_string(std::string_view s) noexcept {
  for (auto f : kFusionKinds)
    if (to_string(f) == s) return f;
  return std::nullopt;
}
std::string fusion_kind_names() {
  std::string out;
  for (std::size_t i = 0; i < kFusionKinds.size(); ++i) {
    if (i > 0) out += i + 1 == kFusionKinds.size() ? " or " : ", ";
    out += to_string(kFusionKinds[i]);
  }
  return out;
}
namespace {
// The one place a strategy's kinds are defined (no allocation: evaluate_graph asks per call).
bool strategy_applies(FusionStrategy f, FusionKind k) noexcept {
  switch (f) {
    case FusionStrategy::none: return false;
    case FusionStrategy::standard: return k == FusionKind::gemm_epilogue || k == FusionKind::norm_residual;
    case FusionStrategy::aggressive: return true;
  }
  return false;
}
}  // namespace
std::vector<FusionKind> fusion_kinds_of(FusionStrategy f) {
  std::vector<FusionKind> out;
  for (const auto k : kFusionKinds)
    if (strategy_applies(f, k)) out.push_back(k);
  return out;
}
bool applies_fusion(const EvalOptions& o, FusionKind k) {
  if (o.fusion_kinds) return std::find(o.fusion_kinds->begin(), o.fusion_kinds->end(), k) != o.fusion_kinds->end();
  return strategy_applies(o.fusion, k);
}
std::string_view to_string(LaunchMode m) noexcept {
  return m == LaunchMode::framework ? "framework" : "graph";
}
std::optional<LaunchMode> launch_mode_from_string(std::string_view s) noexcept {
  if (s == "framework") return LaunchMode::framework;
  if (s == "graph") return LaunchMode::graph;
  return std::nullopt;
}
std::string_view to_string(AttentionKernel k) noexcept {
  switch (k) {
    case AttentionKernel::flash2: return "flash2";
    case AttentionKernel::flash1: return "flash1";
    case AttentionKernel::native: break;
  }
  return "native";
}
std::optional<AttentionKernel> attention_kernel_from_string(std::string_view s) noexcept {
  if (s == "native") return AttentionKernel::native;
  if (s == "flash2") return AttentionKernel::flash2;
  if (s == "flash1") return AttentionKernel::flash1;
  return std::nullopt;
}
double attention_kernel_time_factor(AttentionKernel k) noexcept { return k == AttentionKernel::flash1 ? 2.0 : 1.0; }
bool attention_kernel_uses_warp_mma(AttentionKernel k) noexcept { return k != AttentionKernel::native; }

const GpuKernelCost* KernelCache::find(const Key& k) const {
  auto it = map_.find(k);
  return it == map_.end() ? nullptr : &it->second;
}
void KernelCache::put(const Key& k, const GpuKernelCost& c) { map_.emplace(k, c); }

Precision kernel_precision(const GpuHardware& hw, wl::Precision p) noexcept {
  Precision want = Precision::bf16;
  switch (p) {
    case wl::Precision::fp32: want = Precision::fp32; break;
    case wl::Precision::bf16: want = Precision::bf16; break;
    case wl::Precision::fp16: want = Precision::fp16; break;
    case wl::Precision::fp8: want = Precision::fp8; break;
    case wl::Precision::int8:
    case wl::Precision::int4: want = Precision::int8; break;
    case wl::Precision::int32: want = Precision::fp32; break;
  }
  if (hw.peak_matrix_flops_per_s(want) > 0.0) return want;
  for (Precision q : {Precision::bf16, Precision::fp16, Precision::fp32})
    if (hw.peak_matrix_flops_per_s(q) > 0.0) return q;
  return want;
}

namespace {

// Attention with fewer query rows than this per head is decode-shaped (below
// the smallest GEMM thread-block tile m of the presets, 64).
constexpr std::int64_t kDecodeAttentionMaxRows = 64;

// The softmax work of a fused attention kernel per score element, as FlashAttention-2's
// algorithm does it (Dao 2023, arXiv 2307.08691). Forward (Algorithm 1): the running row
// max (a compare), P = exp(S - m) (scale and subtraction in one FFMA, then the exp) and the
// running row sum (an add), 3 FP32 FLOPs and one exp per score; then, once per row and key
// block of B_c keys, O's rescale by exp(m_old - m_new): the row's d accumulators and its sum
// multiplied and the factor's FFMA (d + 2 FLOPs) and exp (flash_fwd_kernel.h,
// softmax_rescale_o, after every key block but the first; counted for all). Per score
// 3 + (d + 2) / B_c FLOPs and 1 + 1 / B_c exps, at the B_c of the kernel's grid where it is
// known (flash_forward_grid: 2.03 and 0.52 rescale FLOPs at head dim 128 and 64 for
// FlashAttention-2's 64- and 128-key blocks); a native kernel's B_c is not modelled, and it
// takes one rescale FLOP per score (kFlashForwardFlopsPerScore, 4, and one exp). Backward
// (Algorithm 2): P = exp(S - L) recomputed from the saved log-sum-exp (an FFMA and the exp)
// and dS = P o (dP - D) (a subtraction and a multiply): 3 FLOPs and one exp. One exponential per score is also what
// the FlashAttention-3 paper counts ("512x more matmul FLOPS than exponential" at head
// dimension 128, i.e. 4 x 128 matrix FLOPs per exp; Shah et al. 2024, arXiv 2407.08608,
// section 3.1). The decode kernels (FlashDecoding, XQA) run the same online softmax.
constexpr double kFlashExpsPerScore = 1.0;
constexpr double kFlashForwardFlopsPerScore = 4.0;
constexpr double kFlashForwardScoreFlops = 3.0;  // before the rescale: max, FFMA, sum
constexpr double kFlashBackwardFlopsPerScore = 3.0;
// The backward's matrix work runs at this share of the forward's rate (its five products
// per score tile, dQ accumulated across key blocks, more shared-memory traffic per FLOP).
// D/S: the share at which the model reproduces FlashAttention-2's measured backward,
// 322 TFLOP/s on an H100 SXM5 at head dim 128, no mask, 16k sequence, with the forward
// already at its measured 370 (Shah et al. 2024, arXiv 2407.08608, figure 'Attention
// backward speed, head dim 128 (H100 80GB SXM5)'; scenarios/validation/
// flash_attention_h100.csv): bisection once, 0.715 (0.717 before the thread blocks'
// start-up was counted, flash_block_startup_s; 0.731 while the forward counted O's rescale
// as one FLOP per score). Taken as a property of the algorithm on every chip (an
// assumption, R); on the A100 it puts FlashAttention-2's backward at 56-60% of the peak at
// head dim 128 and 2k-16k tokens (52-55% at 64), inside the 50-73% that Dao 2023's abstract
// gives for the kernel on that chip (P), where 1.0 would give 73-80%.
constexpr double kFlashBackwardMatrixShare = 0.715;
// The keys a block of that measurement's kernel holds (head dim 128 on the H100: 64 x 128 blocks, below). Where a
// kernel's blocks hold fewer, its backward falls further short of the forward's rate: the shortfall is taken as the
// dQ accumulation, whose bytes per FLOP grow as 1 / block_n. Per step of block_m queries each block multiplies
// its dS by its K block (block_m x block_n x d) and adds the block_m x d FP32 result to dQaccum in global memory,
// one atomicAdd per element (flash_bwd_kernel.h, compute_dq_dk_dv_1colblock, Seq_parallel), for 5 x 2 x block_m x
// block_n x d FLOPs of its five products: 4 / (10 block_n) bytes a FLOP, the same at head dims 64 and 128 (128-key
// blocks) and twice that at 160-256 (64-key). flash_bwd_launch_template.h says as much where it leaves a 128 x 64
// grid out at head dim 64: "M=128, N=64 is quite slow, I think because we need to read/write dQaccum twice as
// many times" (S). Taking all of the shortfall as that traffic (R: shared-memory traffic and the softmax's place
// in the loop could take some of it) gives 0.5565 at 64 keys; on the H200 that takes the head-dim-256 backwards
// (scenarios/validation/h200/attention-d256) from -20..-24% to -7.2..+6.7% with no constant fitted, and puts the
// backward's per-FLOP time at head dim 256 at 1.22x that at 128, against 1.17x measured there (16k tokens) and
// 1.16x in the start-up probe's loop slopes (h200_fa2_blocks.csv, 132-264 groups).
constexpr double kFlashBackwardReferenceBlockN = 128.0;
// FlashAttention-2's backward launches one thread block of 8 warps per kBlockN keys of a (batch, head), each
// looping over the queries kBlockM rows a step (flash_bwd_launch_template.h, run_mha_bwd_hdim*, traits
// Flash_bwd_kernel_traits<d, kBlockM, kBlockN, 8, ...> by the shared memory a block may take):
//   head dim 32: 128 x 128; 64: 128 x 128 where a block may take 144 KiB (else 64 x 128); 96: 64 x 128;
//   128: 64 x 128 where 144 KiB (else 64 x 64); 160 and 192: 64 x 64; 256: 64 x 64 where 144 KiB (the
//   A100's 163 KiB without double buffering, the H100's 227 with it), else 64 x 32.
// Seen on the H200: grid (seq / 128, batch, heads) at head dims 64 and 128 (scenarios/validation/h200/attention/
// h200_kernels.csv), two blocks per 128 keys at 256 (attention-d256/h200_fa2_blocks.csv); 8 warps at 255
// registers a thread: one block per SM. llm-foundry's Triton kernel (flash1, flash_attn_triton.py _bwd_kernel)
// steps BLOCK_M = 128 query rows over BLOCK_N = 128 keys, 8 warps, whichever of its two autotuned configs runs:
// one program per 128 keys (SEQUENCE_PARALLEL, dQ by atomic adds) or one per (batch, head) looping over its key
// blocks (dQ loaded, added and stored); the model takes the first's grid.
struct FlashBackwardGrid {
  std::int64_t block_m = 64;   // query rows a step of a block's loop
  std::int64_t block_n = 128;  // keys a block
};
FlashBackwardGrid flash_backward_grid(AttentionKernel k, std::int64_t head_dim, const GpuHardware& hw) noexcept {
  if (k == AttentionKernel::flash1) return {128, 128};
  const bool large = hw.sram_bytes_per_core >= 144.0 * 1024.0;
  if (head_dim <= 32) return {128, 128};
  if (head_dim <= 64) return {large ? 128 : 64, 128};
  if (head_dim <= 96) return {64, 128};
  if (head_dim <= 128) return {64, large ? 128 : 64};
  if (head_dim <= 192) return {64, 64};
  return {64, large ? 64 : 32};
}

// The backward's share of the forward's matrix rate on a known grid (kFlashBackwardReferenceBlockN explains it).
double flash_backward_matrix_share(const FlashBackwardGrid& g) noexcept {
  return 1.0 / (1.0 + (1.0 / kFlashBackwardMatrixShare - 1.0) * kFlashBackwardReferenceBlockN /
                          static_cast<double>(g.block_n));
}

// Under a causal mask over s x s scores, the key blocks of n keys that query row block i
// (rows i*m .. (i+1)*m - 1) keeps: 0 .. floor(((i+1) m - 1) / n), at most all of them.
std::int64_t causal_kept_key_blocks(std::int64_t s, std::int64_t m, std::int64_t n, std::int64_t i) noexcept {
  return std::min((s + n - 1) / n, (std::min((i + 1) * m, s) - 1) / n + 1);
}

// The share of (query block, key block) tiles of an s x s causally masked score matrix
// that hold at least one unmasked entry, for tiles of t.m query rows by t.n keys.
double causal_tile_fraction(std::int64_t s, const GemmTile& t) noexcept {
  if (s <= 0 || t.m <= 0 || t.n <= 0) return 1.0;
  const std::int64_t rows = (s + t.m - 1) / t.m;
  const std::int64_t cols = (s + t.n - 1) / t.n;
  std::int64_t kept = 0;
  for (std::int64_t i = 0; i < rows; ++i) kept += causal_kept_key_blocks(s, t.m, t.n, i);
  return static_cast<double>(kept) / (static_cast<double>(rows) * static_cast<double>(cols));
}

// A FlashAttention forward's thread blocks as its source launches them: one block per
// block_m query rows of one (batch, head), the query blocks of a head consecutive in launch
// order, each looping over the block_n-key blocks it keeps. FlashAttention-2 (A100, H100:
// flash_fwd_launch_template.h, grid (num_m_block, b, h) with m_block = blockIdx.x; without
// dropout on sm80/sm90, run_mha_fwd_hdim64: 128 x 128, 4 warps; hdim96 and hdim128: 128 x 64,
// 4 warps; hdim160: 128 x 32, 4 warps; hdim192: 128 x 64, 8 warps; hdim256: 128 x 64, 8 warps
// where a block may take 2 x 256 x (128 + 2 x 64) bytes of shared memory and a core holds less
// than 4 x 256 x (64 + 2 x 64) (the A100's 164 KB), else 64 x 64, 4 warps, two blocks a core
// (the H100's and H200's 228 KB; seen on the H200: grid 2 x groups for 128 queries,
// scenarios/validation/h200/attention-d256/h200_fa2_blocks.csv). The Flash_fwd_kernel_traits
// tile the warps along the query rows only (TiledMMA Layout<Shape<kNWarps, 1, 1>>), so each
// warp computes block_m / warps rows against the whole key block. llm-foundry's
// Triton kernel (flash1, flash_attn_triton.py): grid
// (cdiv(seqlen_q, BLOCK_M), batch * nheads), BLOCK_M = BLOCK_N = 128, num_warps 4 up to head
// dim 64 and 8 above, num_stages 1.
struct FlashForwardGrid {
  std::int64_t block_m = 128;
  std::int64_t block_n = 128;
  std::int64_t warps = 4;
};

FlashForwardGrid flash_forward_grid(AttentionKernel k, std::int64_t head_dim, const GpuHardware& hw) noexcept {
  if (k == AttentionKernel::flash1) return {128, 128, head_dim <= 64 ? 4 : 8};
  if (head_dim <= 64) return {128, 128, 4};
  if (head_dim <= 128) return {128, 64, 4};
  if (head_dim <= 160) return {128, 32, 4};
  if (head_dim <= 192) return {128, 64, 8};
  constexpr double kHdim = 256.0;
  if (hw.sram_bytes_per_core >= 2.0 * kHdim * (128 + 2 * 64) && hw.sram_bytes_per_core < 4.0 * kHdim * (64 + 2 * 64))
    return {128, 64, 8};
  return {64, 64, 4};
}

// How much longer a FlashAttention-2 forward's products take than the matrix rate gives when
// the core's shared memory cannot feed them (>= 1; 1 for the other kernels and where
// sram_bytes_per_cycle_per_core is not described). Per key block a thread block of the grid writes the K and V tiles
// into shared memory (2 x block_n x d elements; cp.async) and each of its warps reads its own block_m / warps rows of Q
// and all of K and V back (ldmatrix: Q is not kept in registers, Is_Q_in_regs = false in every traits of
// flash_fwd_launch_template.h), for 4 x block_m x block_n x d FLOPs: 4 block_m block_n / (e (block_m + 2 block_n (warps
// + 1))) FLOPs per byte of e-byte elements: 23.3 at head dim 64, 21.3 at 128, 11.6 at 256 on the 64 x 64 grid (12.8 on
// the A100's 128 x 64 of 8 warps). The products run at the lower of the matrix engine's rate at `matrix_share` of the
// sustained peak and that intensity times the bytes a core's shared memory moves a clock (both per core and clock: the
// clock cancels).
double flash_forward_smem_factor(const GpuHardware& hw, AttentionKernel k, const FlashForwardGrid& g, Precision p,
                                 double matrix_share) {
  if (k != AttentionKernel::flash2) return 1.0;
  const double smem = hw.sram_bytes_per_cycle_per_core;
  const double macs = hw.matrix_macs_per_cycle_per_core[static_cast<std::size_t>(p)];
  const double e = bytes_per_element(p);
  if (smem <= 0.0 || macs <= 0.0 || e <= 0.0 || g.block_m <= 0 || g.block_n <= 0 || g.warps <= 0) return 1.0;
  const double bm = static_cast<double>(g.block_m);
  const double bn = static_cast<double>(g.block_n);
  const double intensity = 4.0 * bm * bn / (e * (bm + 2.0 * bn * (static_cast<double>(g.warps) + 1.0)));
  const double matrix_flops_per_cycle = 2.0 * macs * hw.sustained_fraction(p) * matrix_share;
  return std::max(1.0, matrix_flops_per_cycle / (intensity * smem));
}

// Blocks of that kernel resident on one core at once: its registers (the kernels hold the
// output accumulator and a score tile in registers, 128 x 128 / 128 + 128 x 64 / 128 FP32
// values per thread at head dim 128, so they run at the 255-register limit: a 4-warp block
// takes 4 x 32 x 256 of the SM's 65,536 registers, 2 blocks; 8 warps, 1) and its shared
// memory (the Q tile and one K and one V tile, 2-byte elements: 64 KiB at head dim 128),
// at least one.
std::int64_t flash_resident_blocks(const GpuHardware& hw, const FlashForwardGrid& g, std::int64_t head_dim) noexcept {
  constexpr std::int64_t kRegistersPerCore = 65536;
  constexpr std::int64_t kRegistersPerThread = 256;
  const std::int64_t by_registers = kRegistersPerCore / (g.warps * 32 * kRegistersPerThread);
  const double smem = static_cast<double>((g.block_m + 2 * g.block_n) * head_dim * 2);
  const auto by_smem = static_cast<std::int64_t>(hw.sram_bytes_per_core > 0 ? hw.sram_bytes_per_core / smem : 1.0);
  return std::max<std::int64_t>(1, std::min(by_registers, by_smem));
}

// The mapping sheet's description of a fused attention kernel whose grid is known: its thread
// blocks (`shape`: "128x64" query rows x keys a step, forward; "128-key", backward), their warps,
// how many, their waves over the resident places, and the shared-memory factor where it binds:
// "64x64 blocks of 4 warps, 2048 blocks, 2 per core, 7.76 waves, shared memory x1.39".
std::string flash_grid_text(const std::string& shape, std::int64_t warps, std::int64_t blocks, std::int64_t per_core,
                            std::int64_t cores, double smem_factor) {
  char waves[32];
  std::snprintf(waves, sizeof waves, "%.3g",
                cores > 0 && per_core > 0 ? static_cast<double>(blocks) / static_cast<double>(cores * per_core) : 0.0);
  std::string t = shape + " blocks of " + std::to_string(warps) + " warps, " + std::to_string(blocks) + " blocks, " +
                  std::to_string(per_core) + " per core, " + waves + " waves";
  if (smem_factor > 1.0) {
    char f[32];
    std::snprintf(f, sizeof f, "%.3g", smem_factor);
    t += std::string(", shared memory x") + f;
  }
  return t;
}

// How much longer a causal forward takes than the unmasked one on the same grid. Each of
// `groups` (batch x heads) runs ceil(s / block_m) blocks, block i keeping
// causal_kept_key_blocks of them, so the blocks of a head grow from short to long in launch
// order. The block scheduler starts each block on the first place (of slots = cores x
// resident blocks) to free up, which is greedy list scheduling in launch order; the last
// heads' long blocks then finish alone, and the step waits for them. The ratio is the two
// schedules' makespans (in key blocks). Past kMaxSimulatedBlocks the remaining groups are
// added at the mean (their blocks fill every place evenly), which keeps the cost bounded (a
// 131,072-block grid: within 0.1% of the full simulation).
double causal_schedule_factor(std::int64_t s, std::int64_t groups, const FlashForwardGrid& g, std::int64_t slots) {
  if (s <= 0 || groups <= 0 || slots <= 0 || g.block_m <= 0 || g.block_n <= 0) return 1.0;
  constexpr std::int64_t kMaxSimulatedBlocks = 8192;
  const std::int64_t rows = (s + g.block_m - 1) / g.block_m;
  const std::int64_t cols = (s + g.block_n - 1) / g.block_n;
  std::int64_t kept_per_group = 0;
  for (std::int64_t i = 0; i < rows; ++i) kept_per_group += causal_kept_key_blocks(s, g.block_m, g.block_n, i);
  const std::int64_t simulated = std::min(groups, std::max<std::int64_t>(1, kMaxSimulatedBlocks / rows));
  // Finish times are whole key blocks and the earliest never decreases, so the places wait in
  // buckets by the time they free up: free_at[t] places free at t, and the next block goes to
  // the first non-empty bucket (the same schedule as a min-heap of finish times, without its
  // log factor on this per-evaluation path).
  std::vector<std::int64_t> free_at(static_cast<std::size_t>(cols + 1), 0);
  free_at[0] = std::min(slots, simulated * rows);
  std::int64_t now = 0, makespan = 0;
  for (std::int64_t grp = 0; grp < simulated; ++grp)
    for (std::int64_t i = 0; i < rows; ++i) {
      while (free_at[static_cast<std::size_t>(now)] == 0) ++now;
      --free_at[static_cast<std::size_t>(now)];
      const std::int64_t done = now + causal_kept_key_blocks(s, g.block_m, g.block_n, i);
      if (static_cast<std::size_t>(done) >= free_at.size()) free_at.resize(static_cast<std::size_t>(done) + 1, 0);
      ++free_at[static_cast<std::size_t>(done)];
      makespan = std::max(makespan, done);
    }
  const double rest = static_cast<double>(groups - simulated) / static_cast<double>(slots);
  const double causal = static_cast<double>(makespan) + rest * static_cast<double>(kept_per_group);
  const std::int64_t waves = (simulated * rows + slots - 1) / slots;
  const double full = static_cast<double>(waves * cols) + rest * static_cast<double>(rows * cols);
  return causal / full;
}

double matrix_flop_energy(const ChipEnergy& e, Precision p) noexcept {
  switch (p) {
    case Precision::fp32: return e.matrix_flop_fp32_j;
    case Precision::int8:
    case Precision::fp8: return e.matrix_flop_int8_j;
    default: return e.matrix_flop_fp16_j;
  }
}

// One evaluated kernel (before fusion).
struct Kernel {
  GpuKernelCost cost;
  bool matrix = false;  // FLOPs on the matrix engine
  bool collective = false;
  std::string kernel;
  Precision precision = Precision::bf16;
};

class Evaluator {
 public:
  Evaluator(const Platform& p, const EvalOptions& o, KernelCache& c) : p_(p), o_(o), cache_(c) {}

  Kernel lower(const wl::Operator& op) {
    Kernel k;
    const GpuHardware& hw = p_.gpu;
    const Precision prec = kernel_precision(hw, op.precision);
    k.precision = prec;
    switch (op.kind) {
      case wl::OpKind::gemm:
      case wl::OpKind::batched_gemm: {
        GemmShape s{op.m, op.n, op.k, op.kind == wl::OpKind::gemm ? 1 : op.batch, prec, DispatchPath::library};
        k.cost = gemm(s);
        k.matrix = true;
        k.kernel = std::string(wl::to_string(op.kind));
        break;
      }
      case wl::OpKind::conv2d: {
        const auto& c = op.conv;
        const std::int64_t g = std::max<std::int64_t>(1, c.groups);
        GemmShape s{c.n * c.out_h() * c.out_w(), c.k / g, (c.c / g) * c.r * c.s, g, prec,
                    DispatchPath::library};
        k.cost = implicit_gemm_traffic(s, static_cast<double>(c.n * c.c * c.h * c.w), gemm(s));
        k.matrix = true;
        k.kernel = "conv2d->implicit_gemm";
        break;
      }
      case wl::OpKind::elementwise: {
        ElementwiseShape s;
        s.elements = op.rows * op.cols;
        s.vector_flops_per_element = op.flops_per_element;
        s.special_ops_per_element = op.flops_per_element >= 5.0 ? 1.0 : 0.0;
        s.precision = prec;
        // Tensors of the op's precision count as inputs and one output; a full-size
        // tensor in another precision (a dropout's 1-byte mask) adds its own bytes.
        std::int64_t same = 0;
        for (const auto& t : op.tensors) {
          if (t.precision != op.precision && t.elements == op.rows * op.cols)
            s.extra_bytes_per_element += wl::bytes_per_element(t.precision);
          else
            ++same;
        }
        // No input of the op's precision when every other full-size tensor is of another
        // precision: a cast (a bf16 input, an fp32 output).
        s.inputs = std::max<std::int64_t>(s.extra_bytes_per_element > 0.0 ? 0 : 1, same - 1);
        s.outputs = 1;
        s.dispatch = DispatchPath::compiled;
        k.cost = elementwise(s, Memo::elementwise);
        k.kernel = "elementwise";
        break;
      }
      case wl::OpKind::softmax:
        k.cost = row(RowShape{op.rows, op.cols, prec, DispatchPath::eager}, Memo::softmax);
        k.kernel = "softmax";
        break;
      case wl::OpKind::cross_entropy:
        k.cost = row(RowShape{op.rows, op.cols, prec, DispatchPath::eager},
                     op.pass == wl::Pass::backward_data ? Memo::cross_entropy_backward : Memo::cross_entropy);
        k.kernel = op.pass == wl::Pass::backward_data ? "cross_entropy_bwd" : "cross_entropy";
        break;
      case wl::OpKind::layernorm:
      case wl::OpKind::rmsnorm:
        // The gradient (pass backward_data) re-reads dY and X for the weight gradients.
        k.cost = row(RowShape{op.rows, op.cols, prec, DispatchPath::compiled},
                     op.pass == wl::Pass::backward_data ? Memo::layernorm_backward : Memo::layernorm);
        k.kernel = std::string(wl::to_string(op.kind)) + (op.pass == wl::Pass::backward_data ? "_bwd" : "");
        break;
      case wl::OpKind::reduction: {
        ElementwiseShape s{op.rows * op.cols, 1.0, 0.0, prec, 1, 0, DispatchPath::compiled};
        k.cost = elementwise(s, Memo::reduction);
        k.kernel = "reduction";
        break;
      }
      case wl::OpKind::embedding: {
        ElementwiseShape s{op.rows * op.cols, 0.0, 0.0, prec, 1, 1, DispatchPath::compiled};
        k.cost = elementwise(s, Memo::embedding);
        k.kernel = "embedding_gather";
        break;
      }
      case wl::OpKind::all_reduce:
      case wl::OpKind::all_to_all:
        k = collective(op);
        break;
    }
    apply_launch_mode(k);
    return k;
  }

  // A product inside a fused attention kernel: its matrix time on the tile that wastes
  // least (the kernel is built for the head dimension, e.g. FlashAttention-2's
  // per-head-dim instances, so a head-dim-wide operand is not padded to a wider tile),
  // rather than the standalone GEMM's tile, which is chosen for its HBM traffic; at most
  // the standalone kernel's compute time.
  double fused_gemm_compute_s(const GemmShape& s, double standalone_compute_s) {
    const GpuKernelCost c = memo(
        Key{static_cast<int>(Memo::fused_gemm), s.m, s.n, s.k, s.batch, static_cast<int>(s.precision), 0.0, 0}, [&] {
          GpuKernelCost best;
          for (const GemmTile& t : p_.gpu.gemm_tiles) {
            const GpuKernelCost k = evaluate_gemm_with_tile(p_.gpu, s, preset_tile(p_.gpu, t, s.precision));
            if (k.feasible && (!best.feasible || k.compute_time_s < best.compute_time_s)) best = k;
          }
          return best;
        });
    return c.feasible ? std::min(c.compute_time_s, standalone_compute_s) : standalone_compute_s;
  }

 private:
  using Key = KernelCache::Key;
  // The memoised kernels. A cache key starts with its kernel's, so that equal shapes
  // of different kernels never share an entry; the row kernels (row()) dispatch on it.
  enum class Memo : int {
    gemm,
    elementwise,
    reduction,
    embedding,
    softmax,
    layernorm,
    layernorm_backward,
    cross_entropy,
    cross_entropy_backward,
    fused_gemm
  };

  GpuKernelCost memo(const Key& key, const auto& compute) {
    if (const GpuKernelCost* c = cache_.find(key)) {
      ++cache_.hits;
      return *c;
    }
    ++cache_.misses;
    GpuKernelCost c = compute();
    cache_.put(key, c);
    return c;
  }
  // Implicit-GEMM convolution (cuDNN / CUTLASS / TensorRT): the kernel gathers
  // the im2col rows on chip from the real input tensor, so the A operand's HBM
  // traffic is the input (N*C*H*W elements) read once per column block of output
  // tiles (ceil(N_gemm / tile_n) blocks; once in all when the input fits in L2
  // beside the weights), not the unrolled M x K matrix the GEMM model counts.
  // The A part of the GEMM's traffic is replaced and a memory-bound busy time
  // shrinks in proportion (compute time is kept as its floor).
  GpuKernelCost implicit_gemm_traffic(const GemmShape& s, double input_elements, GpuKernelCost c) const {
    if (!c.feasible || c.tile.n <= 0) return c;
    const double e = bytes_per_element(s.precision);
    const double unrolled = static_cast<double>(s.m) * static_cast<double>(s.k) * e * static_cast<double>(s.batch);
    const double weights = static_cast<double>(s.k) * static_cast<double>(s.n) * e * static_cast<double>(s.batch);
    const double input = input_elements * e;
    const double blocks = static_cast<double>((s.n + c.tile.n - 1) / c.tile.n);
    const double real = input + weights <= p_.gpu.l2_bytes ? input : input * blocks;
    if (real >= unrolled) return c;
    const double old_hbm = c.hbm_bytes;
    const double new_hbm = std::max(old_hbm - unrolled + real, real + weights);
    if (new_hbm >= old_hbm) return c;
    const double bw = p_.gpu.hbm_bandwidth_bytes_per_s();
    const double busy = std::max(0.0, c.latency_s - c.overhead_s);
    const double new_busy = c.hbm_time_s >= c.compute_time_s
                                ? std::max({c.compute_time_s, new_hbm / bw, busy * new_hbm / old_hbm})
                                : busy;
    c.hbm_bytes = new_hbm;
    c.hbm_time_s = new_hbm / bw;
    c.latency_s = new_busy + c.overhead_s;
    c.achieved_flops_per_s = c.latency_s > 0 ? c.flops / c.latency_s : 0.0;
    c.memory_stall_fraction = c.latency_s > 0 ? std::clamp((c.latency_s - c.compute_time_s) / c.latency_s, 0.0, 1.0) : 0.0;
    return c;
  }
  GpuKernelCost gemm(const GemmShape& s) {
    return memo(Key{static_cast<int>(Memo::gemm), s.m, s.n, s.k, s.batch, static_cast<int>(s.precision), 0.0, 0},
                [&] { return split_k_gemm(s); });
  }
  // Compulsory traffic floor: every operand is read and the output written at
  // least once, (m k + k n + m n) x batch x bytes (the kernel model shares operand
  // panels between the tiles of a wave, which undercounts distinct batches and
  // split-K slices).
  void compulsory_floor(const GemmShape& s, double extra_bytes, GpuKernelCost& c) const {
    const double e = bytes_per_element(s.precision);
    const double b = static_cast<double>(s.batch);
    const double floor = (static_cast<double>(s.m) * static_cast<double>(s.k) +
                          static_cast<double>(s.k) * static_cast<double>(s.n) +
                          static_cast<double>(s.m) * static_cast<double>(s.n)) * b * e + extra_bytes;
    if (c.hbm_bytes >= floor) return;
    const double bw = p_.gpu.hbm_bandwidth_bytes_per_s();
    c.hbm_bytes = floor;
    c.hbm_time_s = floor / bw;
    const double busy = std::max(c.latency_s - c.overhead_s, c.hbm_time_s);
    c.latency_s = busy + c.overhead_s;
  }
  // Split-K (as cuBLAS / hipBLASLt heuristics choose it for skinny GEMMs): the
  // k dimension is cut into `parts` slices run as extra batches, and the fp32
  // partial sums are written and read back once (charged at HBM bandwidth, no
  // extra launch; evaluate_gemm_split). The fastest of parts = 1, 2, 4, ..., 64
  // with k/parts >= 256. Where the hardware file gives the library's own
  // selection table for the precision, its kernel and split are taken as they
  // are (evaluate_gemm), with no search.
  GpuKernelCost split_k_gemm(const GemmShape& s) const {
    GpuKernelCost best = evaluate_gemm(p_.gpu, s);
    if (const GemmLibraryEntry* e = library_kernel(p_.gpu, s); e != nullptr && best.library_solution >= 0) {
      compulsory_floor(s, e->split_k > 1 ? partial_bytes(s, e->split_k) : 0.0, best);
      refresh_rates(s, best);
      return best;
    }
    if (best.feasible) compulsory_floor(s, 0.0, best);
    for (std::int64_t parts = 2; parts <= 64 && s.k / parts >= 256; parts *= 2) {
      GpuKernelCost c = evaluate_gemm_split(p_.gpu, s, parts);
      if (!c.feasible) continue;
      compulsory_floor(s, partial_bytes(s, parts), c);  // the floor counts A, B and C of the unsplit GEMM
      if (c.latency_s < best.latency_s || !best.feasible) {
        refresh_rates(s, c);
        best = c;
      }
    }
    return best;
  }
  static double partial_bytes(const GemmShape& s, std::int64_t parts) {
    return 2.0 * 4.0 * static_cast<double>(parts * s.m * s.n * s.batch);
  }
  void refresh_rates(const GemmShape& s, GpuKernelCost& c) const {
    if (!c.feasible || !(c.latency_s > 0.0)) return;
    c.achieved_flops_per_s = c.flops / c.latency_s;
    const double peak = p_.gpu.peak_matrix_flops_per_s(s.precision);
    c.pct_of_peak = peak > 0 ? 100.0 * c.achieved_flops_per_s / peak : 0.0;  // in percent, as GpuKernelCost's
    c.memory_stall_fraction = std::clamp((c.latency_s - c.compute_time_s) / c.latency_s, 0.0, 1.0);
  }
  GpuKernelCost elementwise(const ElementwiseShape& s, Memo kind) {
    return memo(
        Key{static_cast<int>(kind), s.elements, s.inputs, s.outputs,
            static_cast<std::int64_t>(std::llround(s.extra_bytes_per_element * 8.0)), static_cast<int>(s.precision),
            s.vector_flops_per_element, static_cast<int>(s.special_ops_per_element)},
        [&] { return evaluate_elementwise(p_.gpu, s); });
  }
  GpuKernelCost row(const RowShape& s, Memo kind) {
    return memo(Key{static_cast<int>(kind), s.rows, s.row_length, 0, 0, static_cast<int>(s.precision), 0.0, 0}, [&] {
      switch (kind) {
        case Memo::softmax:
          return evaluate_softmax(p_.gpu, s);
        case Memo::cross_entropy:
          return evaluate_cross_entropy(p_.gpu, s, false);
        case Memo::cross_entropy_backward:
          return evaluate_cross_entropy(p_.gpu, s, true);
        case Memo::layernorm_backward:
          return evaluate_layernorm_backward(p_.gpu, s);
        case Memo::layernorm:
        default:
          return evaluate_layernorm(p_.gpu, s);
      }
    });
  }

  Kernel collective(const wl::Operator& op) {
    Kernel k;
    k.collective = true;
    k.kernel = op.kind == wl::OpKind::all_reduce ? "all_reduce(ring)" : "all_to_all";
    k.precision = kernel_precision(p_.gpu, op.precision);  // the element type it moves
    k.cost.kind = GpuKernelKind::elementwise;
    k.cost.feasible = true;
    k.cost.flops = wl::flops(op);
    const double bytes = static_cast<double>(op.rows * op.cols) * wl::bytes_per_element(op.precision);
    system::Interconnect ic = o_.interconnect.value_or(p_.links);
    if (!o_.interconnect && system::chip_count(ic) < op.participants)
      ic = system::make_switch(op.participants, p_.links);
    system::Interconnect group;
    double t = 0.0;
    if (op.participants > 1 && system::subgroup(ic, op.participants, group)) {
      const auto kind = op.kind == wl::OpKind::all_reduce ? system::CollectiveKind::all_reduce
                                                          : system::CollectiveKind::all_to_all;
      const auto c = system::collective_cost(group, kind, system::CollectiveAlgorithm::ring, bytes);
      t = c.feasible ? c.time_s : 0.0;
      k.cost.feasible = c.feasible;
      k.cost.hbm_bytes = 2.0 * bytes;  // read the buffer, write the result
    } else if (op.participants > 1) {
      k.cost.feasible = false;
    }
    k.cost.overhead_s = p_.gpu.launch_overhead_s(DispatchPath::library);
    k.cost.compute_time_s = 0.0;
    k.cost.latency_s = t + k.cost.overhead_s;
    k.cost.bottleneck = t > k.cost.overhead_s ? Bottleneck::interconnect : Bottleneck::overhead;
    k.cost.bottleneck_detail = "interconnect";
    k.cost.memory_stall_fraction = k.cost.latency_s > 0 ? 1.0 : 0.0;
    return k;
  }

  // Graph launch replaces the dispatch path's overhead by the platform's per-kernel
  // one. For every launch mode the share of peak becomes a fraction here (a layer's
  // pct_of_peak is one; GpuKernelCost's, from costmodel/gpu, is in percent).
  void apply_launch_mode(Kernel& k) const {
    GpuKernelCost& c = k.cost;
    const bool graph = o_.launch == LaunchMode::graph;
    if (graph) {
      const double busy = std::max(0.0, c.latency_s - c.overhead_s);
      c.overhead_s = p_.graph_kernel_overhead_s;
      c.latency_s = busy + c.overhead_s;
      if (c.latency_s > 0.0)
        c.memory_stall_fraction = std::clamp((c.latency_s - c.compute_time_s) / c.latency_s, 0.0, 1.0);
    }
    if (c.latency_s > 0.0) c.achieved_flops_per_s = c.flops / c.latency_s;
    const double peak = k.matrix ? p_.gpu.peak_matrix_flops_per_s(k.precision)
                                 : p_.gpu.vector_fp32_flops_per_cycle_per_core *
                                       static_cast<double>(p_.gpu.core_count) * p_.gpu.clock_hz;
    c.pct_of_peak = peak > 0.0 ? c.achieved_flops_per_s / peak : 0.0;
    if (graph && !k.collective) {
      const double busy_max = std::max({c.compute_time_s, c.hbm_time_s, c.l2_time_s});
      if (c.overhead_s >= busy_max) c.bottleneck = Bottleneck::overhead;
      else if (c.compute_time_s >= std::max(c.hbm_time_s, c.l2_time_s)) c.bottleneck = Bottleneck::compute;
      else c.bottleneck = Bottleneck::memory;
    }
  }

  const Platform& p_;
  const EvalOptions& o_;
  KernelCache& cache_;
};

std::string tile_text(const GpuKernelCost& c) {
  if (c.tile.m == 0) return "";
  const std::string split = c.bottleneck_detail.rfind("split_k", 0) == 0 ? c.bottleneck_detail + ", " : "";
  const std::string library =
      c.library_solution >= 0 ? ", library kernel " + std::to_string(c.library_solution) : std::string();
  return split + std::to_string(c.tile.m) + "x" + std::to_string(c.tile.n) + "x" + std::to_string(c.tile.k) +
         ", " + std::to_string(c.tile_count) + " tiles, " + std::to_string(c.waves) + " waves" + library;
}

bool supported(const Platform& p, FusionKind f) {
  return std::find(p.supported_fusions.begin(), p.supported_fusions.end(), f) != p.supported_fusions.end();
}

void note_fusion_kind(GraphEval& out, const Platform& p, FusionKind f) {
  ++out.fusion_groups;
  if (!supported(p, f)) ++out.unsupported_fusion_groups;
}

double dynamic_energy(const Platform& p, const Kernel& k, double flops, double hbm, double l2) {
  const ChipEnergy& e = p.energy;
  const double flop_e = k.matrix ? matrix_flop_energy(e, k.precision) : e.vector_flop_j;
  return flops * flop_e + hbm * e.hbm_byte_j + l2 * e.l2_byte_j;
}

LayerResult layer_of(const Platform& p, const wl::Operator& op, std::int64_t repeat, const Kernel& k) {
  LayerResult r;
  r.name = op.name;
  r.type = std::string(wl::to_string(op.kind));
  r.layer = std::string(wl::to_string(op.layer));
  r.repeat = repeat;
  r.latency_s = k.cost.latency_s;
  r.flops = k.collective ? k.cost.flops : wl::flops(op);
  r.dram_bytes = k.cost.hbm_bytes;
  r.l2_bytes = k.cost.l2_bytes;
  r.bottleneck = k.cost.bottleneck;
  r.stall_fraction = k.cost.memory_stall_fraction;
  r.pct_of_peak = k.cost.pct_of_peak;
  r.mapping.kernel = k.kernel;
  r.mapping.tile = tile_text(k.cost);
  r.mapping.precision = std::string(to_string(k.precision));
  r.energy_j = dynamic_energy(p, k, r.flops, r.dram_bytes, r.l2_bytes);
  return r;
}

// A fused kernel (FlashAttention forward or backward): the longer of its compute time
// and its HBM traffic at `bw`, plus one launch overhead; its bottleneck, stall
// fraction and share of `peak` follow (the caller sets r.flops first).
// serial_bytes: memory-bound kernels around the fused one (after it, at HBM bandwidth).
void finish_fused(LayerResult& r, double compute_s, double traffic_bytes, double bw, double overhead_s, double peak,
                  double serial_bytes = 0.0) {
  r.dram_bytes = traffic_bytes + serial_bytes;
  r.l2_bytes = traffic_bytes + serial_bytes;
  const double busy = std::max(compute_s, traffic_bytes / bw);
  r.latency_s = busy + serial_bytes / bw + overhead_s;
  r.bottleneck = overhead_s >= busy ? Bottleneck::overhead
                 : compute_s >= traffic_bytes / bw ? Bottleneck::compute : Bottleneck::memory;
  r.stall_fraction = r.latency_s > 0 ? std::clamp((r.latency_s - compute_s) / r.latency_s, 0.0, 1.0) : 0.0;
  r.pct_of_peak = peak > 0 && r.latency_s > 0 ? r.flops / r.latency_s / peak : 0.0;
}

// An element-wise op with exactly one activation input (other tensors are
// weights such as a bias or a batch-norm scale): it can run in a GEMM epilogue.
bool epilogue_op(const wl::Operator& op) {
  if (op.kind != wl::OpKind::elementwise) return false;
  int inputs = 0;
  for (const auto& t : op.tensors)
    if (t.role == wl::TensorRole::input) ++inputs;
  return inputs == 1;
}

bool reads(const wl::Node& n, const std::string& name) {
  return std::find(n.inputs.begin(), n.inputs.end(), name) != n.inputs.end();
}

// conv_stage fusion: a block of convolutions and their element-wise epilogues
// only (at least two convolutions), and the bytes of its weights, all
// occurrences counted (each occurrence has its own).
bool conv_chain_block(const wl::Block& b) {
  int convs = 0;
  for (const auto& n : b.nodes) {
    if (n.op.kind == wl::OpKind::conv2d) ++convs;
    else if (n.op.kind != wl::OpKind::elementwise) return false;
  }
  return convs >= 2;
}

double weight_bytes(const wl::Block& b) {
  double w = 0.0;
  for (const auto& n : b.nodes)
    for (const auto& t : n.op.tensors)
      if (t.role == wl::TensorRole::weight) w += wl::bytes(t);
  return w * static_cast<double>(b.repeat);
}

// Groups of consecutive conv-chain blocks whose weights together fit in one
// core's SRAM: [first, last] block indices, greedy from the front.
std::vector<std::pair<std::size_t, std::size_t>> conv_stages(const wl::OperatorGraph& g, double sram_bytes) {
  std::vector<std::pair<std::size_t, std::size_t>> out;
  std::size_t i = 0;
  while (i < g.blocks.size()) {
    double w = conv_chain_block(g.blocks[i]) ? weight_bytes(g.blocks[i]) : sram_bytes + 1.0;
    if (w > sram_bytes) {
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j + 1 < g.blocks.size() && conv_chain_block(g.blocks[j + 1])) {
      const double next = weight_bytes(g.blocks[j + 1]);
      if (w + next > sram_bytes) break;
      w += next;
      ++j;
    }
    out.emplace_back(i, j);
    i = j + 1;
  }
  return out;
}

}  // namespace

double flash_block_startup_s(const GpuHardware& hw, AttentionKernel k, bool backward, std::int64_t seq_q,
                             std::int64_t seq_k, std::int64_t groups, std::int64_t head_dim, double element_bytes) {
  const double bw = hw.hbm_bandwidth_bytes_per_s();
  if (k == AttentionKernel::native || bw <= 0.0 || hw.core_count <= 0 || groups <= 0 || seq_q <= 0 || seq_k <= 0 ||
      head_dim <= 0)
    return 0.0;
  const double d = static_cast<double>(head_dim);
  double blocks_per_group = 0.0, slots = 0.0, wave_bytes = 0.0;
  if (!backward) {
    // One block per block_m query rows; its Q tile and its first K block (block_n keys).
    const FlashForwardGrid g = flash_forward_grid(k, head_dim, hw);
    blocks_per_group = static_cast<double>((seq_q + g.block_m - 1) / g.block_m);
    slots = static_cast<double>(hw.core_count * flash_resident_blocks(hw, g, head_dim));
    const double heads = std::max(1.0, slots / blocks_per_group);
    wave_bytes = (slots * static_cast<double>(g.block_m) + heads * static_cast<double>(g.block_n)) * d * element_bytes;
  } else {
    // One block per block_n keys, one resident per core; its K and V blocks and the first Q
    // and dO blocks (block_m rows) of its loop.
    const FlashBackwardGrid g = flash_backward_grid(k, head_dim, hw);
    blocks_per_group = static_cast<double>((seq_k + g.block_n - 1) / g.block_n);
    slots = static_cast<double>(hw.core_count);
    const double heads = std::max(1.0, slots / blocks_per_group);
    wave_bytes = (slots * 2.0 * static_cast<double>(g.block_n) + heads * 2.0 * static_cast<double>(g.block_m)) * d *
                 element_bytes;
  }
  // A grid smaller than one wave still waits its two round trips.
  const double waves = blocks_per_group * static_cast<double>(groups) / slots;
  return std::max(1.0, waves) * 2.0 * hw.hbm_latency_s + waves * wave_bytes / bw;
}

double flash_backward_matrix_share(const GpuHardware& hw, AttentionKernel k, std::int64_t head_dim) noexcept {
  if (k == AttentionKernel::native || head_dim <= 0) return kFlashBackwardMatrixShare;
  return flash_backward_matrix_share(flash_backward_grid(k, head_dim, hw));
}

double flash_forward_smem_factor(const GpuHardware& hw, AttentionKernel k, std::int64_t head_dim, Precision p) {
  if (head_dim <= 0) return 1.0;
  return flash_forward_smem_factor(hw, k, flash_forward_grid(k, head_dim, hw), p, hw.warp_mma_fraction);
}

GraphEval evaluate_graph(const Platform& platform, const wl::OperatorGraph& graph, const EvalOptions& options,
                         KernelCache* cache) {
  KernelCache local;
  KernelCache& kc = cache != nullptr ? *cache : local;
  const std::int64_t hits0 = kc.hits, misses0 = kc.misses;
  Evaluator ev(platform, options, kc);
  GraphEval out;
  const bool epilogues = applies_fusion(options, FusionKind::gemm_epilogue);
  const bool norm_residual = applies_fusion(options, FusionKind::norm_residual);
  const bool flash = applies_fusion(options, FusionKind::flash_attention);
  // The attention kernel's share of the matrix rate: warp_mma_fraction for kernels written
  // for the previous warp-level MMA (AttentionKernel), else all of it.
  const double attention_matrix_share =
      attention_kernel_uses_warp_mma(options.attention_kernel) ? platform.gpu.warp_mma_fraction : 1.0;
  const double bw = platform.gpu.hbm_bandwidth_bytes_per_s();
  const double overhead = options.launch == LaunchMode::graph ? platform.graph_kernel_overhead_s
                                                              : platform.gpu.launch_overhead_s(DispatchPath::library);

  // conv_stage groups (aggressive or named; inference): one kernel per group, costed
  // before the per-block walk, which then skips the member blocks.
  std::vector<std::pair<std::size_t, std::size_t>> stages;
  if (applies_fusion(options, FusionKind::conv_stage) && options.phase.phase != wl::Phase::training)
    stages = conv_stages(graph, platform.gpu.sram_bytes_per_core);
  std::size_t next_stage = 0;

  for (std::size_t bi = 0; bi < graph.blocks.size(); ++bi) {
    const wl::Block& b = graph.blocks[bi];
    if (next_stage < stages.size() && stages[next_stage].first == bi) {
      const auto [first, last] = stages[next_stage++];
      LayerResult r;
      r.name = graph.blocks[first].name + (last > first ? ".." + graph.blocks[last].name : "");
      r.type = "fused_stage";
      r.layer = std::string(wl::to_string(wl::LayerType::conv));
      r.repeat = 1;
      double matrix_s = 0.0, matrix_flops = 0.0, vector_flops = 0.0, weights = 0.0;
      std::vector<double> block_matrix_s;
      std::string names;
      Precision prec = Precision::bf16;
      for (std::size_t k = first; k <= last; ++k) {
        const wl::Block& m = graph.blocks[k];
        const double rep = static_cast<double>(m.repeat);
        double ms = 0.0;
        for (const auto& n : m.nodes) {
          if (n.op.kind == wl::OpKind::conv2d) {
            const Kernel kk = ev.lower(n.op);
            ms += kk.cost.compute_time_s;
            matrix_flops += wl::flops(n.op) * rep;
            prec = kk.precision;
          } else {
            vector_flops += wl::flops(n.op) * rep;
          }
        }
        matrix_s += ms * rep;
        block_matrix_s.push_back(ms);
        weights += weight_bytes(m);
        names += (names.empty() ? "" : "+") + m.name + (m.repeat > 1 ? " x" + std::to_string(m.repeat) : "");
      }
      // The stage's input (read once, also by a projection shortcut) and output.
      const wl::Block& fb = graph.blocks[first];
      const wl::Block& lb = graph.blocks[last];
      double in_bytes = 0.0;
      for (const auto& n : fb.nodes)
        if (n.op.kind == wl::OpKind::conv2d && n.inputs.empty())
          for (const auto& t : n.op.tensors)
            if (t.role == wl::TensorRole::input) in_bytes = std::max(in_bytes, wl::bytes(t));
      double out_bytes = 0.0;
      for (const auto& t : lb.nodes.back().op.tensors)
        if (t.role == wl::TensorRole::output) out_bytes += wl::bytes(t);
      const double traffic = in_bytes + out_bytes + weights;
      const double mem_s = traffic / bw;
      r.latency_s = std::max(matrix_s, mem_s) + overhead;
      r.flops = matrix_flops + vector_flops;
      r.dram_bytes = traffic;
      r.l2_bytes = traffic;
      r.bottleneck = matrix_s >= mem_s ? Bottleneck::compute : Bottleneck::memory;
      r.stall_fraction = r.latency_s > 0 ? std::max(0.0, r.latency_s - matrix_s) / r.latency_s : 0.0;
      const double peak = platform.gpu.peak_matrix_flops_per_s(prec);
      r.pct_of_peak = peak > 0 && r.latency_s > 0 ? matrix_flops / (r.latency_s * peak) : 0.0;
      r.mapping.kernel = "conv_stage";
      r.mapping.precision = std::string(to_string(prec));
      r.mapping.fusion_group = "conv_stage(" + names + ")";
      r.energy_j = matrix_flops * matrix_flop_energy(platform.energy, prec) +
                   vector_flops * platform.energy.vector_flop_j +
                   traffic * (platform.energy.hbm_byte_j + platform.energy.l2_byte_j);
      note_fusion_kind(out, platform, FusionKind::conv_stage);
      // Each member block's share of the kernel, per occurrence (by matrix time).
      for (std::size_t k = first; k <= last; ++k) {
        const double share = matrix_s > 0 ? block_matrix_s[k - first] / matrix_s : 1.0 / double(last - first + 1);
        out.block_latency_s.push_back(r.latency_s * share);
        out.block_collective_s.push_back(0.0);
      }
      out.layers.push_back(std::move(r));
      bi = last;
      continue;
    }
    const auto cons = wl::consumers(b);
    std::vector<Kernel> ks;
    ks.reserve(b.nodes.size());
    for (const auto& n : b.nodes) ks.push_back(ev.lower(n.op));
    std::vector<bool> done(b.nodes.size(), false);
    // A product inside a fused attention kernel, on its least-waste tile (Evaluator).
    auto fused_matrix_s = [&](std::size_t x) {
      const wl::Operator& o = b.nodes[x].op;
      return ev.fused_gemm_compute_s(GemmShape{o.m, o.n, o.k, o.batch, ks[x].precision, DispatchPath::library},
                                     ks[x].cost.compute_time_s);
    };
    double block_s = 0.0, block_coll = 0.0;
    auto push = [&](LayerResult r, bool coll) {
      block_s += r.latency_s;
      if (coll) block_coll += r.latency_s;
      out.layers.push_back(std::move(r));
    };
    auto note_fusion = [&](FusionKind f) { note_fusion_kind(out, platform, f); };
    for (std::size_t i = 0; i < b.nodes.size(); ++i) {
      if (done[i]) continue;
      const wl::Operator& op = b.nodes[i].op;
      // FlashAttention backward (training). workload::append_backward derives from
      // qk -> softmax [-> dropout] -> av the chain dP = dO V^T (av.bwd_a), dV = P^T dO
      // (av.bwd_b) [, the dropout's backward], dS (the softmax backward), dQ = dS K
      // (qk.bwd_a), dK = dS^T Q (qk.bwd_b). FlashAttention-2 runs it as one kernel
      // (Dao 2023, Algorithm 2) that recomputes S = Q K^T and P from the row
      // log-sum-exp saved by the forward instead of reading them: matrix work five
      // products of the score shape (the four above and S, whose shape dP has), on
      // head-dim tiles at flash_backward_matrix_share of the forward's rate (0.715, less on
      // a known grid of blocks under 128 keys); vector work
      // P's recompute and dS per score (kFlashBackwardFlopsPerScore, one exp), the
      // dropout mask regenerated on chip; HBM traffic Q, K, V, O and dO in,
      // dQ, dK and dV out (O has dO's size), no score-sized tensor. Causal: the masked
      // tiles are skipped as in the forward.
      if (flash && op.kind == wl::OpKind::batched_gemm && op.pass == wl::Pass::backward_data &&
          op.tensors.size() == 3) {
        const auto next = [&](std::size_t x) { return cons[x].size() == 1 ? cons[x][0] : b.nodes.size(); };
        const auto bwd = [&](std::size_t x, wl::OpKind kind) {
          return x < b.nodes.size() && b.nodes[x].op.pass == wl::Pass::backward_data && b.nodes[x].op.kind == kind &&
                 (kind != wl::OpKind::batched_gemm || b.nodes[x].op.tensors.size() == 3);
        };
        const auto dropout_bwd = [&](std::size_t x) {
          if (!bwd(x, wl::OpKind::elementwise)) return false;
          for (const auto& t : b.nodes[x].op.tensors)
            if (t.role == wl::TensorRole::input && t.name == "mask") return true;
          return false;
        };
        const std::size_t dv = next(i);
        std::size_t sm = dv < b.nodes.size() ? next(dv) : b.nodes.size();
        std::size_t drop = b.nodes.size();
        if (dropout_bwd(sm)) {
          drop = sm;
          sm = next(sm);
        }
        const std::size_t dq = bwd(sm, wl::OpKind::softmax) ? next(sm) : b.nodes.size();
        const std::size_t dk = bwd(dq, wl::OpKind::batched_gemm) ? next(dq) : b.nodes.size();
        if (bwd(dv, wl::OpKind::batched_gemm) && bwd(sm, wl::OpKind::softmax) && bwd(dq, wl::OpKind::batched_gemm) &&
            bwd(dk, wl::OpKind::batched_gemm)) {
          const auto& n = b.nodes;
          const bool with_drop = drop < n.size();
          const double d_o = wl::bytes(op.tensors.at(0));
          const double traffic = d_o /* dO */ + wl::bytes(op.tensors.at(1)) /* V */ + d_o /* O */ +
                                 wl::bytes(n[dv].op.tensors.at(2)) /* dV */ + wl::bytes(n[dq].op.tensors.at(1)) /* K */ +
                                 wl::bytes(n[dq].op.tensors.at(2)) /* dQ */ + wl::bytes(n[dk].op.tensors.at(0)) /* Q */ +
                                 wl::bytes(n[dk].op.tensors.at(2)) /* dK */;
          const double kept = op.causal && op.m >= kDecodeAttentionMaxRows ? causal_tile_fraction(op.m, ks[i].cost.tile) : 1.0;
          // The backward's grid where the kernel's is known (flash_backward_grid): its share of the
          // forward's rate and the mapping sheet's tile; native kernels keep the measured share.
          const bool known_grid =
              op.m >= kDecodeAttentionMaxRows && options.attention_kernel != AttentionKernel::native;
          const FlashBackwardGrid grid = flash_backward_grid(options.attention_kernel, op.k, platform.gpu);
          const double backward_share = known_grid ? flash_backward_matrix_share(grid) : kFlashBackwardMatrixShare;
          const double matrix_s =
              (2.0 * fused_matrix_s(i) + fused_matrix_s(dv) + fused_matrix_s(dq) + fused_matrix_s(dk)) /
              (attention_matrix_share * backward_share);
          const double scores = static_cast<double>(n[sm].op.rows) * static_cast<double>(n[sm].op.cols);
          const double vector_s =
              fused_score_work_time_s(platform.gpu, scores, kFlashBackwardFlopsPerScore, kFlashExpsPerScore) +
              (with_drop ? ks[drop].cost.compute_time_s : 0.0);
          const double compute =
              kept * (matrix_s + vector_s) * attention_kernel_time_factor(options.attention_kernel) +
              (op.m >= kDecodeAttentionMaxRows
                   ? flash_block_startup_s(platform.gpu, options.attention_kernel, true, op.m, op.n, op.batch, op.k,
                                           wl::bytes_per_element(op.tensors.at(0).precision))
                   : 0.0);
          const double matrix_flops =
              kept * (2.0 * wl::flops(op) + wl::flops(n[dv].op) + wl::flops(n[dq].op) + wl::flops(n[dk].op));
          const double vector_flops = kept * (2.0 * wl::flops(n[sm].op) + (with_drop ? wl::flops(n[drop].op) : 0.0));
          LayerResult r = layer_of(platform, op, b.repeat, ks[i]);
          r.type = "fused_attention";
          r.flops = matrix_flops + vector_flops;  // executed, the recompute included
          // Around it, two memory-bound kernels: a preprocess that reads O and dO for the
          // row sums delta = rowsum(O * dO) and clears dQ's fp32 accumulator, and a copy of
          // that accumulator into dQ. llm-foundry's Triton FlashAttention (flash1):
          // _bwd_preprocess_do_o_dot(o, do, delta), "dq_accum = torch.empty_like(q,
          // dtype=torch.float32)" zeroed by the main kernel's init_to_zero('DQ'), then
          // "dq.copy_(dq_accum)" (llmfoundry/models/layers/flash_attn_triton.py @ 307bbd7);
          // FlashAttention-2: flash_bwd_dot_do_o_kernel, which clears dQaccum, and
          // flash_bwd_convert_dq_kernel (csrc/flash_attn/src/flash_bwd_launch_template.h).
          // Bytes: O and dO read, 4 B per dQ element written and read back, dQ written
          // (the main kernel's own dQ bytes stand for its accumulation); their launches
          // are left out.
          const double dq_el = static_cast<double>(n[dq].op.tensors.at(2).elements);
          const double side = 2.0 * d_o + 8.0 * dq_el + wl::bytes(n[dq].op.tensors.at(2));
          finish_fused(r, compute, traffic, bw, overhead, platform.gpu.peak_matrix_flops_per_s(ks[i].precision), side);
          r.mapping.kernel =
              options.attention_kernel == AttentionKernel::flash1 ? "flash_attention_1_bwd" : "flash_attention_bwd";
          // One block per block_n keys of a (batch, head), 8 warps, one a core.
          if (known_grid)
            r.mapping.tile = flash_grid_text(
                std::to_string(grid.block_n) + "-key (" + std::to_string(grid.block_m) + "-query steps)", 8,
                (op.n + grid.block_n - 1) / grid.block_n * op.batch, 1, platform.gpu.core_count, 1.0);
          r.mapping.fusion_group = "flash_attention_bwd(" + op.name + "+" + n[dv].op.name +
                                   (with_drop ? "+" + n[drop].op.name : std::string()) + "+" + n[sm].op.name + "+" +
                                   n[dq].op.name + "+" + n[dk].op.name + ")";
          r.energy_j = matrix_flops * matrix_flop_energy(platform.energy, ks[i].precision) +
                       vector_flops * platform.energy.vector_flop_j +
                       (traffic + side) * (platform.energy.hbm_byte_j + platform.energy.l2_byte_j);
          done[dv] = done[sm] = done[dq] = done[dk] = true;
          if (with_drop) done[drop] = true;
          note_fusion(FusionKind::flash_attention);
          push(std::move(r), false);
          continue;
        }
      }
      // flash attention: batched_gemm -> softmax -> batched_gemm (forward, or its recompute).
      // A dropout on the probabilities (training) runs inside the fused kernel
      // (FlashAttention draws its mask on chip): its flops join, its traffic goes.
      const auto core = flash ? wl::attention_core_at(b, cons, i) : std::nullopt;
      if (core) {
        const std::size_t s = core->softmax;
        const auto& sop = b.nodes[s].op;
        const std::size_t drop = core->dropout.value_or(b.nodes.size());
        const bool with_drop = core->dropout.has_value();
        const std::size_t a = core->av;
        const wl::Operator& av = b.nodes[a].op;
        // Q, K (qk's operands), V and O (av's second operand and output), as the
        // tensor lists count them (K and V once per KV head under GQA).
        const double traffic = wl::bytes(op.tensors.at(0)) + wl::bytes(op.tensors.at(1)) +
                               wl::bytes(av.tensors.at(1)) + wl::bytes(av.tensors.at(2));
        const bool prefill_shaped = op.m >= kDecodeAttentionMaxRows;
        // Matrix work: the two products on head-dim tiles; softmax work: the online
        // softmax's per-score FLOPs and exps, in registers, with O's rescale once per key
        // block of the kernel's grid where the grid is known (kFlashForwardScoreFlops).
        const bool known_grid = options.attention_kernel != AttentionKernel::native;
        const FlashForwardGrid grid = flash_forward_grid(options.attention_kernel, op.k, platform.gpu);
        const double block_n = static_cast<double>(grid.block_n);
        const double score_flops = known_grid ? kFlashForwardScoreFlops + (static_cast<double>(op.k) + 2.0) / block_n
                                              : kFlashForwardFlopsPerScore;
        const double score_exps = known_grid ? kFlashExpsPerScore + 1.0 / block_n : kFlashExpsPerScore;
        const double score_s = fused_score_work_time_s(
            platform.gpu, static_cast<double>(sop.rows) * static_cast<double>(sop.cols), score_flops, score_exps);
        // FlashAttention-2's products wait on shared memory where it cannot feed them
        // (flash_forward_smem_factor: head dim 256 on Hopper).
        const double smem_factor = prefill_shaped
                                       ? flash_forward_smem_factor(platform.gpu, options.attention_kernel, grid,
                                                                   ks[i].precision, attention_matrix_share)
                                       : 1.0;
        double compute =
            (fused_matrix_s(i) + fused_matrix_s(a)) / (prefill_shaped ? attention_matrix_share : 1.0) * smem_factor +
            score_s;
        // Causal mask (prefill, training): the kernel skips the (query block, key block)
        // tiles wholly above the diagonal (FlashAttention-2, Dao 2023, section 3.1.1),
        // so the matrix and softmax work is that of the tiles it keeps. The kernels whose
        // grid is known from their source (flash2, flash1) keep the tiles of that grid and
        // take the time of their work as their thread blocks are scheduled
        // (causal_schedule_factor); a native kernel, whose grid and scheduler are not
        // modelled, keeps the standalone GEMM's tiles and takes their share of the
        // unmasked time.
        const bool causal = op.causal && prefill_shaped;
        const double kept = !causal      ? 1.0
                            : known_grid ? causal_tile_fraction(op.m, GemmTile{grid.block_m, grid.block_n, 0, 1})
                                         : causal_tile_fraction(op.m, ks[i].cost.tile);
        if (causal && known_grid) {
          const std::int64_t slots = platform.gpu.core_count * flash_resident_blocks(platform.gpu, grid, op.k);
          compute *= causal_schedule_factor(op.m, op.batch, grid, slots);
        } else {
          compute *= kept;
        }
        // Decode-shaped attention (few query rows): FlashDecoding / TensorRT-LLM
        // XQA kernels pack the query heads that share a KV head (GQA group g =
        // query heads / KV heads, read off the K tensor) into the M dimension and
        // pad only to the MMA instruction's m (mma_shape[0]), not to a GEMM
        // thread-block tile. Matrix time = 2 x (m g rounded up to mma m) x n x k
        // x (batch / g) per product, qk and av, at the sustained matrix peak.
        // A kernel that streams K once per query head (PhaseSpec::kv_read_per_query_head)
        // carries K elements per query head, so g reads 1: nothing is packed.
        if (!prefill_shaped && op.n > 0 && op.k > 0) {
          const double k_el = static_cast<double>(op.tensors.at(1).elements);
          const double per_q = static_cast<double>(op.n) * static_cast<double>(op.k);
          const double g = k_el > 0 ? std::max(1.0, std::round(static_cast<double>(op.batch) * per_q / k_el)) : 1.0;
          const double mma_m = static_cast<double>(std::max<std::int64_t>(1, platform.gpu.mma_shape[0]));
          const double rows = std::ceil(static_cast<double>(op.m) * g / mma_m) * mma_m;
          const double groups = static_cast<double>(op.batch) / g;
          const double peak = platform.gpu.peak_matrix_flops_per_s(ks[i].precision) *
                              platform.gpu.sustained_fraction(ks[i].precision);
          if (peak > 0) {
            const double mm = 2.0 * 2.0 * groups * rows * per_q / peak;
            compute = std::min(compute, mm + score_s);
          }
        }
        LayerResult r = layer_of(platform, op, b.repeat, ks[i]);
        r.type = "fused_attention";
        const double drop_flops = kept * (with_drop ? wl::flops(b.nodes[drop].op) : 0.0);
        if (with_drop) compute += kept * ks[drop].cost.compute_time_s;
        // An older kernel generation (EvalOptions::attention_kernel): prefill and training
        // attention; decode-shaped attention is costed by the rule above whatever the stack.
        if (prefill_shaped) compute *= attention_kernel_time_factor(options.attention_kernel);
        // Each thread block's start-up (flash_block_startup_s; 0 for a native kernel).
        if (prefill_shaped)
          compute += flash_block_startup_s(platform.gpu, options.attention_kernel, false, op.m, op.n, op.batch, op.k,
                                           wl::bytes_per_element(op.tensors.at(0).precision));
        // FLOPs executed (the kept tiles'), so that achieved FLOP/s stays physical.
        r.flops = kept * (wl::flops(op) + wl::flops(sop) + wl::flops(av)) + drop_flops;
        finish_fused(r, compute, traffic, bw, overhead, platform.gpu.peak_matrix_flops_per_s(ks[i].precision));
        r.mapping.kernel = prefill_shaped && options.attention_kernel == AttentionKernel::flash1 ? "flash_attention_1"
                                                                                                 : "flash_attention";
        if (prefill_shaped && known_grid)
          r.mapping.tile =
              flash_grid_text(std::to_string(grid.block_m) + "x" + std::to_string(grid.block_n), grid.warps,
                              (op.m + grid.block_m - 1) / grid.block_m * op.batch,
                              flash_resident_blocks(platform.gpu, grid, op.k), platform.gpu.core_count, smem_factor);
        r.mapping.fusion_group = "flash_attention(" + op.name + "+" + sop.name +
                                 (with_drop ? "+" + b.nodes[drop].op.name : std::string()) + "+" +
                                 av.name + ")";
        r.energy_j = kept * wl::flops(op) * matrix_flop_energy(platform.energy, ks[i].precision) +
                     kept * wl::flops(av) * matrix_flop_energy(platform.energy, ks[a].precision) +
                     (kept * wl::flops(sop) + drop_flops) * platform.energy.vector_flop_j +
                     traffic * platform.energy.hbm_byte_j +
                     traffic * platform.energy.l2_byte_j;
        done[s] = done[a] = true;
        if (with_drop) done[drop] = true;
        note_fusion(FusionKind::flash_attention);
        push(std::move(r), false);
        continue;
      }
      // GEMM epilogue: GEMM-like -> its only consumer, an element-wise op with one
      // activation input (bias / scale-shift / activation), and so on down a chain.
      // A two-input element-wise op (residual add) also joins the chain when no
      // norm reads it (norm_residual keeps those): the epilogue reads the other
      // operand from HBM (its bytes added at HBM bandwidth), as cuDNN / TensorRT
      // conv + bias + add + ReLU and CUTLASS residual epilogues do.
      auto next_epilogue = [&](std::size_t last) -> std::size_t {
        if (cons[last].size() != 1) return b.nodes.size();
        const std::size_t e = cons[last][0];
        // An op already taken by an earlier chain (the residual add of a ResNet
        // block is the consumer of both the main branch and the downsample
        // branch) joins only the first: the other GEMM writes its output, which
        // the first chain's epilogue reads (counted there).
        if (done[e]) return b.nodes.size();
        const wl::Operator& eo = b.nodes[e].op;
        if (epilogue_op(eo)) return e;
        if (eo.kind != wl::OpKind::elementwise || eo.tensors.size() != 3 || !reads(b.nodes[e], b.nodes[last].op.name))
          return b.nodes.size();
        if (norm_residual)
          for (std::size_t c : cons[e])
            if (b.nodes[c].op.kind == wl::OpKind::layernorm || b.nodes[c].op.kind == wl::OpKind::rmsnorm)
              return b.nodes.size();
        return e;
      };
      if (epilogues && wl::is_gemm_like(op.kind) && next_epilogue(i) < b.nodes.size()) {
        LayerResult r = layer_of(platform, op, b.repeat, ks[i]);
        std::string names = op.name;
        std::size_t last = i;
        for (std::size_t e = next_epilogue(last); e < b.nodes.size(); e = next_epilogue(last)) {
          if (!epilogue_op(b.nodes[e].op)) {
            const double extra = wl::bytes(b.nodes[e].op.tensors.at(1));
            r.dram_bytes += extra;
            r.l2_bytes += extra;
            r.latency_s += extra / bw;
            r.energy_j += extra * (platform.energy.hbm_byte_j + platform.energy.l2_byte_j);
          }
          const double ew_flops = wl::flops(b.nodes[e].op);
          r.flops += ew_flops;
          r.energy_j += ew_flops * platform.energy.vector_flop_j;
          names += "+" + b.nodes[e].op.name;
          done[e] = true;
          last = e;
        }
        r.mapping.fusion_group = "gemm_epilogue(" + names + ")";
        note_fusion(FusionKind::gemm_epilogue);
        push(std::move(r), false);
        continue;
      }
      // norm + residual: two-input element-wise -> norm that reads it
      if (norm_residual && op.kind == wl::OpKind::elementwise && op.tensors.size() == 3) {
        std::size_t nrm = b.nodes.size();
        for (std::size_t c : cons[i])
          if ((b.nodes[c].op.kind == wl::OpKind::layernorm || b.nodes[c].op.kind == wl::OpKind::rmsnorm) &&
              reads(b.nodes[c], op.name))
            nrm = c;
        if (nrm < b.nodes.size()) {
          const wl::Operator& nop = b.nodes[nrm].op;
          LayerResult r = layer_of(platform, op, b.repeat, ks[i]);
          const Kernel& nk = ks[nrm];
          const double in_bytes = static_cast<double>(nop.rows * nop.cols) * wl::bytes_per_element(nop.precision);
          const double saved_hbm = std::min(in_bytes, nk.cost.hbm_bytes);
          const double nbusy = std::max(0.0, nk.cost.latency_s - nk.cost.overhead_s);
          const double saved_t = nk.cost.hbm_time_s > 0 ? nbusy * saved_hbm / nk.cost.hbm_bytes : 0.0;
          r.latency_s += std::max(0.0, nbusy - saved_t);
          r.flops += wl::flops(nop);
          r.dram_bytes += nk.cost.hbm_bytes - saved_hbm;
          r.l2_bytes += std::max(0.0, nk.cost.l2_bytes - saved_hbm);
          r.energy_j += wl::flops(nop) * platform.energy.vector_flop_j +
                        (nk.cost.hbm_bytes - saved_hbm) * (platform.energy.hbm_byte_j + platform.energy.l2_byte_j);
          r.mapping.kernel = "residual+" + nk.kernel;
          r.mapping.fusion_group = "norm_residual(" + op.name + "+" + nop.name + ")";
          done[nrm] = true;
          note_fusion(FusionKind::norm_residual);
          push(std::move(r), false);
          continue;
        }
      }
      push(layer_of(platform, op, b.repeat, ks[i]), ks[i].collective);
    }
    out.block_latency_s.push_back(block_s);
    out.block_collective_s.push_back(block_coll);
  }

  GraphTotalsResult& t = out.totals;
  for (const auto& l : out.layers) {
    const double rep = static_cast<double>(l.repeat);
    t.latency_s += l.latency_s * rep;
    t.flops += l.flops * rep;
    t.dram_bytes += l.dram_bytes * rep;
    t.dynamic_energy_j += l.energy_j * rep;
    if (l.bottleneck == Bottleneck::interconnect || l.mapping.kernel.rfind("all_", 0) == 0)
      t.collective_s += l.latency_s * rep;
  }
  const auto& ph = options.phase;
  const double peak = platform.gpu.peak_matrix_flops_per_s(kernel_precision(platform.gpu, ph.precision));
  t.mfu = t.latency_s > 0 && peak > 0 ? t.flops / (t.latency_s * peak) : 0.0;
  t.static_energy_j = platform.energy.static_power_w * t.latency_s;
  t.energy_j = t.dynamic_energy_j + t.static_energy_j;
  t.tokens = static_cast<double>(ph.batch * ph.seq);
  t.tokens_per_s = t.latency_s > 0 ? t.tokens / t.latency_s : 0.0;
  out.footprint = wl::memory_footprint(
      graph, ph, {applies_fusion(options, FusionKind::flash_attention), options.sequence_parallel});
  t.memory_bytes = out.footprint.total_bytes();
  t.hbm_bytes_capacity = platform.gpu.hbm_bytes;
  out.fits_memory = t.memory_bytes <= platform.gpu.hbm_bytes;
  out.cache_hits = kc.hits - hits0;
  out.cache_misses = kc.misses - misses0;
  return out;
}

}  // namespace dse::costmodel::platform
