// GPU-class timing: many cores, each with a matrix engine and per-core SRAM,
// a shared L2 and HBM. Kernels: GEMM / batched GEMM (thread-block tile
// selection as library heuristics do it, tile and wave quantisation, L2 reuse,
// a software-pipelined main loop with a non-overlapped prologue/epilogue per
// tile, or one per kernel where the engine streams its tiles: gemm_waves_pipelined)
// and memory-bound kernels (element-wise, softmax, layer norm) with vector and
// special-function throughput.
//
// Kernel latency = device busy time + the launch/dispatch overhead of the
// software path that issues the kernel (a library call such as cuBLAS, a
// framework-native eager kernel, or a compiled torch.compile/Triton kernel);
// each path has its own constant in the hardware file.
//
// Pure: standard library only, no I/O, no globals; every function is
// re-entrant. Every constant of the model is a named field of GpuHardware, set
// from a datasheet or a published microbenchmark in the hardware file.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "costmodel/roofline.hpp"

namespace dse::costmodel {

enum class Precision : std::uint8_t { fp32, tf32, fp16, bf16, fp8, int8 };
inline constexpr std::size_t kPrecisionCount = 6;
std::string_view to_string(Precision p);
double bytes_per_element(Precision p) noexcept;

// How the framework issues a kernel; each path has its own launch/dispatch
// overhead (host-timed single calls include it).
enum class DispatchPath : std::uint8_t {
  library,   // vendor library call (cuBLAS / rocBLAS) from the framework
  eager,     // framework-native eager kernel (e.g. PyTorch torch.softmax)
  compiled,  // torch.compile / Triton-generated kernel
};
std::string_view to_string(DispatchPath p);

// A thread-block tile a GEMM library may choose: output tile m x n, k-step k.
// `group_m`: the kernel's tile order. The tiles of a wave are handed out in
// groups of group_m tile rows (along m), all columns (along n) of a group
// before the next group (Tensile's WorkGroupMapping: ContractionSolution
// numFullBlocks = tiles along dimension 1 / workGroupMapping); 1 = row by row.
struct GemmTile {
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
  std::int64_t group_m = 1;
  // Cores that compute one tile together (Blackwell's 2-SM MMA, cta_group 2: each of the pair
  // holds m / 2 rows of A and half of B's n columns, and the MMA reads both): the pair's loads are
  // one tile's, its products run on both cores, and a wave holds core_count / cores tiles.
  std::int64_t cores = 1;
  friend bool operator==(const GemmTile&, const GemmTile&) = default;
};

// One entry of a GEMM library's selection table (a Tensile logic file's
// size -> solution list): the tuned problem size and the kernel the library
// runs for it. `split_k` is the kernel's k split (Tensile GlobalSplitU).
struct GemmLibraryEntry {
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
  std::int64_t batch = 1;
  GemmTile tile;
  std::int64_t split_k = 1;
  std::int64_t solution = -1;  // the library's own index, for reports
  std::int64_t order = 0;      // position in the library's table: of equally near sizes the first wins
};

struct GpuHardware {
  std::string name;
  // --- cores and clock
  std::int64_t core_count = 0;  // SMs / CUs
  double clock_hz = 0.0;        // clock at which the peaks are quoted
  // --- matrix engine (per core)
  std::array<std::int64_t, 3> mma_shape{16, 8, 16};  // m, n, k of one MMA instruction
  std::array<double, kPrecisionCount> matrix_macs_per_cycle_per_core{};  // 0 = unsupported
  // Fraction of the peak MMA rate a tuned library main loop sustains (issue
  // limits, power-limited clock); 1 = datasheet peak.
  double matrix_sustained_fraction = 1.0;
  // Per-precision override of that fraction where a precision has its own
  // measured ceiling (e.g. FP8 on Hopper sustains a smaller share of its
  // doubled peak than BF16); 0 = use matrix_sustained_fraction.
  std::array<double, kPrecisionCount> matrix_sustained_fraction_by_precision{};
  // Share of the matrix rate left to kernels written for the previous generation's
  // warp-level MMA instruction (mma.sync on Hopper, whose full rate needs the
  // warpgroup-wide wgmma): FlashAttention v1/v2 and pre-2024 Triton kernels. 1 = no
  // such limit. Used by the fused attention of those kernel generations
  // (platform::AttentionKernel).
  double warp_mma_fraction = 1.0;
  // --- vector and special-function units (per core, per cycle)
  double vector_fp32_flops_per_cycle_per_core = 0.0;  // an FMA counts 2
  double vector_fp16_flops_per_cycle_per_core = 0.0;  // packed half, an FMA counts 2
  double special_function_ops_per_cycle_per_core = 0.0;  // exp / tanh / rsqrt
  // --- memory hierarchy
  double sram_bytes_per_core = 0.0;  // shared memory / LDS usable by one block
  // Shared-memory bandwidth of one core, loads and stores together (32 banks of 4 bytes a
  // clock on NVIDIA GPUs: 128). Bounds kernels that stream their operands through shared
  // memory (the FlashAttention-2 forward, flash_forward_smem_factor). 0 = not described.
  double sram_bytes_per_cycle_per_core = 0.0;
  double l2_bytes = 0.0;
  double l2_bandwidth_bytes_per_s = 0.0;
  double hbm_bytes = 0.0;
  double hbm_peak_bandwidth_bytes_per_s = 0.0;
  double hbm_achievable_fraction = 1.0;  // of peak, for well-written streaming kernels
  double hbm_latency_s = 0.0;            // loaded round trip of one global load
  // L2 halves that each cache for the SMs wired to them (A100 / H100: 2): data
  // one core re-reads must fit in its own partition, l2_bytes / l2_partitions.
  std::int64_t l2_partitions = 1;
  std::int64_t max_threads_per_core = 0;  // resident threads per SM / CU; 0 = not described
  // --- software stack: per-kernel launch + framework + sync, by dispatch path
  double launch_overhead_library_s = 0.0;
  double launch_overhead_eager_s = 0.0;
  double launch_overhead_compiled_s = 0.0;
  std::int64_t gemm_pipeline_stages = 2;  // main-loop software pipeline depth
  // When above gemm_pipeline_stages: a GEMM kernel runs as many stages as the core's shared
  // memory holds after gemm_stage_carveout_bytes (its epilogue and barriers), up to this many
  // (gemm_stages), as cuBLASLt's sm90 kernels do; 0: every tile runs gemm_pipeline_stages.
  std::int64_t gemm_pipeline_stages_max = 0;
  double gemm_stage_carveout_bytes = 0.0;
  std::vector<GemmTile> gemm_tiles;       // candidate thread-block tiles (preset_tile)
  // The tiles' k is for 2-byte operands, and a kernel for 1-byte operands takes twice the
  // k elements, one for 4-byte operands half (preset_tile); false: every precision takes k.
  bool gemm_tile_k_scales_with_precision = false;
  // The engine streams a GEMM's tiles: DMA engines fetch the next tile's operands into SRAM while
  // the matrix engine computes the current one, and the finished tile's C is written meanwhile
  // (Gaudi's graph compiler pipelines its MMEs this way), so a kernel pays one prologue and one
  // epilogue, not one per wave (gemm_waves_time). false: each wave in turn (GPU thread blocks).
  bool gemm_waves_pipelined = false;
  // The library's own kernel selection for one precision, where the file gives
  // it: a GEMM of that precision runs the kernel of the nearest tuned size
  // (Euclidean distance over m, n, batch, k, as Tensile's MatchingLibrary does)
  // instead of the fastest tile of gemm_tiles. Empty = fastest tile.
  std::vector<GemmLibraryEntry> gemm_library;
  Precision gemm_library_precision = Precision::fp16;
  // gemm_library is laid out as a k-d tree by index_gemm_library (nearest-size
  // lookups in about log n steps); false = scanned in full.
  bool gemm_library_indexed = false;
  // Kernel-structure limits of the software stack (row kernels):
  // eager softmax keeps a row in one warp's registers (one pass over the
  // input) when it has at most this many elements and bytes; longer rows use
  // a block-per-row kernel that reads the row again.
  std::int64_t eager_softmax_single_pass_max_row_elements = 0;
  double eager_softmax_single_pass_max_row_bytes = 0.0;
  // compiled (Triton) reductions keep the row on chip (persistent reduction)
  // up to this length; longer rows loop over the row twice.
  std::int64_t compiled_reduction_single_pass_max_row_elements = 0;
  // Threads per block of those looped reductions (Inductor's num_warps x 32);
  // with max_threads_per_core it sets the rows in flight whose second pass must
  // still be in L2. 0 = not described: the second pass is served by L2.
  std::int64_t compiled_reduction_threads_per_block = 0;

  [[nodiscard]] double launch_overhead_s(DispatchPath p) const noexcept {
    switch (p) {
      case DispatchPath::library: return launch_overhead_library_s;
      case DispatchPath::eager: return launch_overhead_eager_s;
      case DispatchPath::compiled: return launch_overhead_compiled_s;
    }
    return launch_overhead_library_s;
  }

  [[nodiscard]] double peak_matrix_flops_per_s(Precision p) const noexcept;
  // The sustained share of peak_matrix_flops_per_s(p) a library main loop reaches.
  [[nodiscard]] double sustained_fraction(Precision p) const noexcept {
    const double f = matrix_sustained_fraction_by_precision[static_cast<std::size_t>(p)];
    return f > 0.0 ? f : matrix_sustained_fraction;
  }
  [[nodiscard]] double hbm_bandwidth_bytes_per_s() const noexcept {
    return hbm_peak_bandwidth_bytes_per_s * hbm_achievable_fraction;
  }
  // peak matrix FLOP/s / achievable HBM bandwidth: GEMMs below it are memory bound.
  [[nodiscard]] double ridge_flops_per_byte(Precision p) const noexcept;
};

// Why a description cannot be evaluated (a value, never an exception).
enum class GpuCheck : std::uint8_t { ok, no_cores, no_clock, no_memory, no_tiles, bad_fraction };
GpuCheck check(const GpuHardware& hw) noexcept;
std::string_view to_string(GpuCheck c);

struct GemmShape {
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
  std::int64_t batch = 1;
  Precision precision = Precision::fp16;
  DispatchPath dispatch = DispatchPath::library;
};

enum class GpuKernelKind : std::uint8_t { gemm, elementwise, softmax, layernorm };

// An element-wise kernel (e.g. GELU): reads and writes every element once.
// Operands start in HBM (a single call's inputs are not assumed L2-resident).
struct ElementwiseShape {
  std::int64_t elements = 0;
  double vector_flops_per_element = 0.0;
  double special_ops_per_element = 0.0;
  Precision precision = Precision::fp16;
  std::int64_t inputs = 1;   // tensors read
  std::int64_t outputs = 1;  // tensors written
  DispatchPath dispatch = DispatchPath::eager;
  // Bytes per element of further streams in another width, read or written
  // once (a dropout's 1-byte mask).
  double extra_bytes_per_element = 0.0;
};

// A row-wise normalisation (softmax / layer norm) over `rows` rows of `row_length`.
struct RowShape {
  std::int64_t rows = 0;
  std::int64_t row_length = 0;
  Precision precision = Precision::fp16;
  DispatchPath dispatch = DispatchPath::eager;
};

struct GpuKernelCost {
  bool feasible = false;
  GpuCheck reason = GpuCheck::ok;
  GpuKernelKind kind = GpuKernelKind::gemm;
  double latency_s = 0.0;       // including launch overhead
  double compute_time_s = 0.0;  // matrix / vector / SFU busy time (incl. quantisation)
  double l2_time_s = 0.0;       // bytes moved L2 -> cores / L2 bandwidth
  double hbm_time_s = 0.0;      // HBM bytes / achievable HBM bandwidth
  double overhead_s = 0.0;      // launch overhead of the dispatch path
  double memory_stall_fraction = 0.0;  // (latency - compute time) / latency
  double flops = 0.0;                  // useful work (2MNK for GEMM)
  double achieved_flops_per_s = 0.0;
  double pct_of_peak = 0.0;  // 100 x achieved / peak, in percent (matrix peak for GEMM, vector peak otherwise)
  double hbm_bytes = 0.0;
  double l2_bytes = 0.0;
  Bottleneck bottleneck = Bottleneck::compute;
  std::string bottleneck_detail;  // "compute", "memory:hbm", "memory:l2", "overhead"
  // GEMM only
  GemmTile tile;
  std::int64_t tile_count = 0;
  std::int64_t waves = 0;
  std::int64_t library_solution = -1;  // the library table's kernel index, -1 = fastest tile
};

// A tile t of hw.gemm_tiles as a kernel for operands of precision p runs it. With
// hw.gemm_tile_k_scales_with_precision the list gives the tiles of the 16-bit kernels, and a
// kernel for e-byte operands takes 2 / e times their k elements (FP8 and INT8 twice, TF32 and
// FP32 half), so that a k-step moves the same bytes, as CUTLASS's Hopper kernels do, 128 bytes
// a row: sm90 F16 128 x 128 x 64 (its unit test SM90_Device_Gemm_f16t_f16t_f32n_tensor_op_gmma_
// f32_ptr_array_pingpong), TF32 128 x 128 x 32 (examples/48_hopper_warp_specialized_gemm), FP8
// 64 x 128 x 128 (examples/54_hopper_fp8_warp_specialized_gemm). Its sm80 defaults do not
// (default_gemm_configuration.h: 128 x 256 x 64 for FP16 and INT8 alike), so the A100 presets
// leave the flag off. Without the flag every precision keeps t.
GemmTile preset_tile(const GpuHardware& hw, const GemmTile& t, Precision p) noexcept;
// The main loop's pipeline depth of tile t at precision p (k-steps of both operand tiles in
// shared memory): gemm_pipeline_stages, or with gemm_pipeline_stages_max set as many as fit
// after gemm_stage_carveout_bytes, between the two; 0 when gemm_pipeline_stages do not fit.
std::int64_t gemm_stages(const GpuHardware& hw, const GemmTile& t, Precision p) noexcept;

// The fastest tile of hw.gemm_tiles, or, where hw.gemm_library covers the
// precision, the library's kernel for the nearest tuned size (split into its
// split_k slices as evaluate_gemm_split does).
GpuKernelCost evaluate_gemm(const GpuHardware& hw, const GemmShape& s) noexcept;
// The entry of hw.gemm_library whose size is nearest to s (nullptr when the
// table is empty or is for another precision). Of equally near entries the one
// with the smallest `order` wins.
const GemmLibraryEntry* library_kernel(const GpuHardware& hw, const GemmShape& s) noexcept;
// Reorders hw.gemm_library into an implicit k-d tree over (m, n, batch, k) and
// sets gemm_library_indexed; library_kernel's answers are unchanged.
void index_gemm_library(GpuHardware& hw);
// s with k cut into `parts` slices run as extra batches (best tile, or `tile`
// when given), plus the fp32 partial sums written and read back once at HBM
// bandwidth; flops and rates are those of the whole GEMM. parts = 1: plain.
GpuKernelCost evaluate_gemm_split(const GpuHardware& hw, const GemmShape& s, std::int64_t parts,
                                  const GemmTile* tile = nullptr) noexcept;
// The same model for one fixed tile (for tests and mapping sheets).
GpuKernelCost evaluate_gemm_with_tile(const GpuHardware& hw, const GemmShape& s,
                                      const GemmTile& t) noexcept;
GpuKernelCost evaluate_elementwise(const GpuHardware& hw, const ElementwiseShape& s) noexcept;
// Softmax as PyTorch's eager kernels do it (s.dispatch normally eager): rows
// within eager_softmax_single_pass_max_row_* in one pass (1 read, 1 write);
// longer rows in a block-per-row kernel charged two HBM reads and one write
// (LLMCompass's softmax traffic count).
GpuKernelCost evaluate_softmax(const GpuHardware& hw, const RowShape& s) noexcept;
// Compute time of the softmax work a fused (FlashAttention-class) attention kernel does on
// score tiles held on chip: `scores` elements, each `fp32_flops` FP32 FLOPs and
// `special_ops` special-function ops (exp), issued from the same schedulers as a row
// kernel's (no memory traffic: the scores never leave the core).
double fused_score_work_time_s(const GpuHardware& hw, double scores, double fp32_flops, double special_ops) noexcept;
// A fused softmax cross-entropy over rows of logits (flash-attn 1.x's xentropy kernel):
// forward, two HBM reads of each row and no row-sized write (a loss and log-sum-exp per
// row); backward, one read and one write of the row.
GpuKernelCost evaluate_cross_entropy(const GpuHardware& hw, const RowShape& s, bool backward) noexcept;
// Layer norm as a compiled (Triton) reduction: one HBM read and one write;
// rows longer than compiled_reduction_single_pass_max_row_elements re-read the
// row (from L2) in a second loop.
GpuKernelCost evaluate_layernorm(const GpuHardware& hw, const RowShape& s) noexcept;
// Its gradient as PyTorch's CUDA kernels (and Apex's fused layer norm) compute it:
// one kernel reads dY and X and writes dX, a second reads dY and X again for the
// weight and bias gradients: four reads and one write of the rows.
GpuKernelCost evaluate_layernorm_backward(const GpuHardware& hw, const RowShape& s) noexcept;

// GELU (tanh form: x*0.5*(1+tanh(0.79788456*x*(1+0.044715*x*x)))): 7 vector
// FLOPs and one tanh per element.
ElementwiseShape gelu_shape(std::int64_t elements, Precision p = Precision::fp16) noexcept;

}  // namespace dse::costmodel
