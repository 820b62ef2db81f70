#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "costmodel/platform/evaluate_detail.hpp"

// The fused attention kernels: FlashAttention's grids, causal masking and start-up as the
// kernels' sources launch them, and the two fusions (forward and backward) of evaluate_graph.
namespace dse::costmodel::platform {

namespace wl = dse::costmodel::workload;

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

// The softmax work of a fused forward (s): per score kFlashForwardScoreFlops and an exp, with O's
// rescale once per key block of the kernel's grid where the grid is known; a native kernel's
// kFlashForwardFlopsPerScore and one exp.
double flash_forward_score_s(const GpuHardware& hw, bool known_grid, const FlashForwardGrid& grid,
                             std::int64_t head_dim, double scores) {
  const double block_n = static_cast<double>(grid.block_n);
  const double score_flops = known_grid ? kFlashForwardScoreFlops + (static_cast<double>(head_dim) + 2.0) / block_n
                                        : kFlashForwardFlopsPerScore;
  const double score_exps = known_grid ? kFlashExpsPerScore + 1.0 / block_n : kFlashExpsPerScore;
  return fused_score_work_time_s(hw, scores, score_flops, score_exps);
}

// Causal mask (prefill, training): the kernel skips the (query block, key block) tiles wholly
// above the diagonal (FlashAttention-2, Dao 2023, section 3.1.1), so the matrix and softmax work
// is that of the tiles it keeps. The kernels whose grid is known from their source (flash2,
// flash1) keep the tiles of that grid and take the time of their work as their thread blocks are
// scheduled (causal_schedule_factor); a native kernel, whose grid and scheduler are not modelled,
// keeps the standalone GEMM's tiles (`standalone`) and takes their share of the unmasked time.
struct FlashCausal {
  double kept = 1.0;         // the share of the score tiles computed
  double time_factor = 1.0;  // the forward's time over the unmasked one
};
FlashCausal flash_forward_causal(const GpuHardware& hw, const wl::Operator& op, bool causal, bool known_grid,
                                 const FlashForwardGrid& grid, const GemmTile& standalone) {
  if (!causal) return {};
  FlashCausal c;
  c.kept = known_grid ? causal_tile_fraction(op.m, GemmTile{grid.block_m, grid.block_n, 0, 1})
                      : causal_tile_fraction(op.m, standalone);
  if (!known_grid) {
    c.time_factor = c.kept;
    return c;
  }
  const std::int64_t slots = hw.core_count * flash_resident_blocks(hw, grid, op.k);
  c.time_factor = causal_schedule_factor(op.m, op.batch, grid, slots);
  return c;
}

// Decode-shaped attention (few query rows): FlashDecoding / TensorRT-LLM XQA kernels pack the
// query heads that share a KV head (GQA group g = query heads / KV heads, read off the K tensor)
// into the M dimension and pad only to the MMA instruction's m (mma_shape[0]), not to a GEMM
// thread-block tile. Matrix time = 2 x (m g rounded up to mma m) x n x k x (batch / g) per
// product, qk and av, at the sustained matrix peak. A kernel that streams K once per query head
// (PhaseSpec::kv_read_per_query_head) carries K elements per query head, so g reads 1: nothing
// is packed. None where the shape or the chip's peak gives no time.
std::optional<double> decode_attention_matrix_s(const GpuHardware& hw, const wl::Operator& op, Precision p) {
  if (op.n <= 0 || op.k <= 0) return std::nullopt;
  const double k_el = static_cast<double>(op.tensors.at(1).elements);
  const double per_q = static_cast<double>(op.n) * static_cast<double>(op.k);
  const double g = k_el > 0 ? std::max(1.0, std::round(static_cast<double>(op.batch) * per_q / k_el)) : 1.0;
  const double mma_m = static_cast<double>(std::max<std::int64_t>(1, hw.mma_shape[0]));
  const double rows = std::ceil(static_cast<double>(op.m) * g / mma_m) * mma_m;
  const double groups = static_cast<double>(op.batch) / g;
  const double peak = hw.peak_matrix_flops_per_s(p) * hw.sustained_fraction(p);
  if (!(peak > 0)) return std::nullopt;
  return 2.0 * 2.0 * groups * rows * per_q / peak;
}

// The backward chain of a fused attention kernel (workload::append_backward's nodes): dP = dO V^T
// (its first product), dV = P^T dO, the dropout's backward where there is one, dS (the softmax
// backward), dQ = dS K and dK = dS^T Q; each the only consumer of the one before.
struct FlashBackwardChain {
  std::size_t dv, drop, sm, dq, dk;  // drop: the block's node count without a dropout
  bool with_drop;
};
std::optional<FlashBackwardChain> flash_backward_chain(const wl::Block& b,
                                                       const std::vector<std::vector<std::size_t>>& cons,
                                                       std::size_t i) {
  const wl::Operator& op = b.nodes[i].op;
  if (op.kind != wl::OpKind::batched_gemm || op.pass != wl::Pass::backward_data || op.tensors.size() != 3)
    return std::nullopt;
  const std::size_t none = b.nodes.size();
  const auto next = [&](std::size_t x) { return cons[x].size() == 1 ? cons[x][0] : none; };
  const auto bwd = [&](std::size_t x, wl::OpKind kind) {
    return x < none && b.nodes[x].op.pass == wl::Pass::backward_data && b.nodes[x].op.kind == kind &&
           (kind != wl::OpKind::batched_gemm || b.nodes[x].op.tensors.size() == 3);
  };
  const auto dropout_bwd = [&](std::size_t x) {
    if (!bwd(x, wl::OpKind::elementwise)) return false;
    for (const auto& t : b.nodes[x].op.tensors)
      if (t.role == wl::TensorRole::input && t.name == "mask") return true;
    return false;
  };
  FlashBackwardChain c{};
  c.dv = next(i);
  c.sm = c.dv < none ? next(c.dv) : none;
  c.drop = none;
  if (dropout_bwd(c.sm)) {
    c.drop = c.sm;
    c.sm = next(c.sm);
  }
  c.dq = bwd(c.sm, wl::OpKind::softmax) ? next(c.sm) : none;
  c.dk = bwd(c.dq, wl::OpKind::batched_gemm) ? next(c.dq) : none;
  if (!bwd(c.dv, wl::OpKind::batched_gemm) || !bwd(c.sm, wl::OpKind::softmax) ||
      !bwd(c.dq, wl::OpKind::batched_gemm) || !bwd(c.dk, wl::OpKind::batched_gemm))
    return std::nullopt;
  c.with_drop = c.drop < none;
  return c;
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

namespace detail {

double BlockWalk::fused_matrix_s(std::size_t x) const {
  const wl::Operator& o = b.nodes[x].op;
  return lowering.fused_gemm_compute_s(GemmShape{o.m, o.n, o.k, o.batch, ks[x].precision, DispatchPath::library},
                                       ks[x].cost.compute_time_s);
}

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
std::optional<LayerResult> BlockWalk::fuse_flash_backward(std::size_t i) {
  const auto chain = flash_backward_chain(b, cons, i);
  if (!chain) return std::nullopt;
  const wl::Operator& op = b.nodes[i].op;
  const auto& [dv, drop, sm, dq, dk, with_drop] = *chain;
  const auto& n = b.nodes;
  const double d_o = wl::bytes(op.tensors.at(0));
  const double traffic = d_o /* dO */ + wl::bytes(op.tensors.at(1)) /* V */ + d_o /* O */ +
                         wl::bytes(n[dv].op.tensors.at(2)) /* dV */ + wl::bytes(n[dq].op.tensors.at(1)) /* K */ +
                         wl::bytes(n[dq].op.tensors.at(2)) /* dQ */ + wl::bytes(n[dk].op.tensors.at(0)) /* Q */ +
                         wl::bytes(n[dk].op.tensors.at(2)) /* dK */;
  const double kept = op.causal && op.m >= kDecodeAttentionMaxRows ? causal_tile_fraction(op.m, ks[i].cost.tile) : 1.0;
  // The backward's grid where the kernel's is known (flash_backward_grid): its share of the
  // forward's rate and the mapping sheet's tile; native kernels keep the measured share.
  const bool known_grid = op.m >= kDecodeAttentionMaxRows && options.attention_kernel != AttentionKernel::native;
  const FlashBackwardGrid grid = flash_backward_grid(options.attention_kernel, op.k, platform.gpu);
  const double backward_share = known_grid ? flash_backward_matrix_share(grid) : kFlashBackwardMatrixShare;
  const double matrix_s = (2.0 * fused_matrix_s(i) + fused_matrix_s(dv) + fused_matrix_s(dq) + fused_matrix_s(dk)) /
                          (attention_matrix_share * backward_share);
  const double scores = static_cast<double>(n[sm].op.rows) * static_cast<double>(n[sm].op.cols);
  const double vector_s =
      fused_score_work_time_s(platform.gpu, scores, kFlashBackwardFlopsPerScore, kFlashExpsPerScore) +
      (with_drop ? ks[drop].cost.compute_time_s : 0.0);
  const double compute = kept * (matrix_s + vector_s) * attention_kernel_time_factor(options.attention_kernel) +
                         (op.m >= kDecodeAttentionMaxRows
                              ? flash_block_startup_s(platform.gpu, options.attention_kernel, true, op.m, op.n,
                                                      op.batch, op.k, wl::bytes_per_element(op.tensors.at(0).precision))
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
    r.mapping.tile =
        flash_grid_text(std::to_string(grid.block_n) + "-key (" + std::to_string(grid.block_m) + "-query steps)", 8,
                        (op.n + grid.block_n - 1) / grid.block_n * op.batch, 1, platform.gpu.core_count, 1.0);
  r.mapping.fusion_group = "flash_attention_bwd(" + op.name + "+" + n[dv].op.name +
                           (with_drop ? "+" + n[drop].op.name : std::string()) + "+" + n[sm].op.name + "+" +
                           n[dq].op.name + "+" + n[dk].op.name + ")";
  r.energy_j = matrix_flops * matrix_flop_energy(platform.energy, ks[i].precision) +
               vector_flops * platform.energy.vector_flop_j +
               (traffic + side) * (platform.energy.hbm_byte_j + platform.energy.l2_byte_j);
  done[dv] = done[sm] = done[dq] = done[dk] = true;
  if (with_drop) done[drop] = true;
  return r;
}

// FlashAttention forward: batched_gemm -> softmax -> batched_gemm (the forward, or its recompute).
// A dropout on the probabilities (training) runs inside the fused kernel
// (FlashAttention draws its mask on chip): its flops join, its traffic goes.
std::optional<LayerResult> BlockWalk::fuse_flash_forward(std::size_t i) {
  const wl::Operator& op = b.nodes[i].op;
  const auto core = wl::attention_core_at(b, cons, i);
  if (!core) return std::nullopt;

  const std::size_t s = core->softmax;
  const auto& sop = b.nodes[s].op;
  const std::size_t drop = core->dropout.value_or(b.nodes.size());
  const bool with_drop = core->dropout.has_value();
  const std::size_t a = core->av;
  const wl::Operator& av = b.nodes[a].op;
  // Q, K (qk's operands), V and O (av's second operand and output), as the
  // tensor lists count them (K and V once per KV head under GQA).
  const double traffic = wl::bytes(op.tensors.at(0)) + wl::bytes(op.tensors.at(1)) + wl::bytes(av.tensors.at(1)) +
                         wl::bytes(av.tensors.at(2));
  const bool prefill_shaped = op.m >= kDecodeAttentionMaxRows;
  // Matrix work: the two products on head-dim tiles; softmax work: the online
  // softmax's per-score FLOPs and exps, in registers, with O's rescale once per key
  // block of the kernel's grid where the grid is known (kFlashForwardScoreFlops).
  const bool known_grid = options.attention_kernel != AttentionKernel::native;
  const FlashForwardGrid grid = flash_forward_grid(options.attention_kernel, op.k, platform.gpu);
  const double score_s = flash_forward_score_s(platform.gpu, known_grid, grid, op.k,
                                               static_cast<double>(sop.rows) * static_cast<double>(sop.cols));
  // FlashAttention-2's products wait on shared memory where it cannot feed them
  // (flash_forward_smem_factor: head dim 256 on Hopper).
  const double smem_factor = prefill_shaped ? flash_forward_smem_factor(platform.gpu, options.attention_kernel, grid,
                                                                        ks[i].precision, attention_matrix_share)
                                            : 1.0;
  double compute =
      (fused_matrix_s(i) + fused_matrix_s(a)) / (prefill_shaped ? attention_matrix_share : 1.0) * smem_factor + score_s;
  const FlashCausal mask = flash_forward_causal(platform.gpu, op, op.causal && prefill_shaped, known_grid, grid,
                                                ks[i].cost.tile);
  const double kept = mask.kept;
  compute *= mask.time_factor;
  // Decode-shaped attention: the query heads of a GQA group packed into the MMA's m
  // (decode_attention_matrix_s), where that is faster.
  if (!prefill_shaped)
    if (const auto mm = decode_attention_matrix_s(platform.gpu, op, ks[i].precision))
      compute = std::min(compute, *mm + score_s);
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
  r.mapping.kernel =
      prefill_shaped && options.attention_kernel == AttentionKernel::flash1 ? "flash_attention_1" : "flash_attention";
  if (prefill_shaped && known_grid)
    r.mapping.tile =
        flash_grid_text(std::to_string(grid.block_m) + "x" + std::to_string(grid.block_n), grid.warps,
                        (op.m + grid.block_m - 1) / grid.block_m * op.batch,
                        flash_resident_blocks(platform.gpu, grid, op.k), platform.gpu.core_count, smem_factor);
  r.mapping.fusion_group = "flash_attention(" + op.name + "+" + sop.name +
                           (with_drop ? "+" + b.nodes[drop].op.name : std::string()) + "+" + av.name + ")";
  r.energy_j = kept * wl::flops(op) * matrix_flop_energy(platform.energy, ks[i].precision) +
               kept * wl::flops(av) * matrix_flop_energy(platform.energy, ks[a].precision) +
               (kept * wl::flops(sop) + drop_flops) * platform.energy.vector_flop_j +
               traffic * platform.energy.hbm_byte_j + traffic * platform.energy.l2_byte_j;
  done[s] = done[a] = true;
  if (with_drop) done[drop] = true;
  return r;
}

}  // namespace detail

}  // namespace dse::costmodel::platform
