// Timing and traffic of one layer on an R x C systolic array of 1-MAC PEs with
// three double-buffered SRAMs (ifmap, filter, ofmap) in front of DRAM.
//
// Two models live here, both pure (standard library only):
//
// * simulate_scalesim(): a SCALE-Sim v2 compatible model. It reproduces, line
//   by line, the demand matrices of SCALE-Sim's compute/systolic_compute_{ws,
//   os,is}.py and the bookkeeping of its memory system
//   (memory/double_buffered_scratchpad_mem.py, read_buffer.py,
//   read_buffer_estimate_bw.py, write_buffer.py), so that its cycle counts,
//   stalls and SRAM/DRAM access counts are the ones SCALE-Sim reports,
//   quirks included. Two implementations give identical results:
//     - simulate_scalesim_reference() replays the request streams one demand
//       row at a time (O(requests)); it is the executable specification.
//     - simulate_scalesim() works per fold: each operand's requests in a fold
//       are a block of distinct addresses, identical to or disjoint from the
//       blocks of other folds, in a fixed order, so CALC's 100-set window is
//       tracked per block (O(1) per fold), USER's rotating prefetch window
//       per miss (O(log) per rotation: the fold's fetch positions increase
//       along the skewed diagonals and are inverted in closed form), and the
//       ofmap write buffer and the stalls per drain/stall event (the rows in
//       between are skipped with the trapezoid counts of the skewed fold).
//       Cost: O(folds + rotations + drains) times a log factor. Convolutions
//       whose windows overlap (filter > stride) reuse ifmap addresses inside
//       and across folds; they take the fold-level path only while the ifmap
//       buffer never leaves its first window (see
//       scalesim_fast_path_applies(array, layer)), otherwise, and for layers
//       that read past the ifmap edge, the reference replay (exact,
//       O(requests)).
//
// * estimate_systolic(): the project's native closed-form model: same folds,
//   skew and SRAM counts, but DRAM traffic counted as compulsory traffic times
//   the number of times an operand must be re-streamed because it does not fit
//   in half of its SRAM, and stalls as the excess of DRAM transfer time over
//   compute time per fold. Where it differs from SCALE-Sim and why:
//     - CALC bandwidth: SCALE-Sim re-reads an operand whenever its address left
//       a sliding window of 50 "sets" of floor(SRAM/100) words, even when the
//       operand would fit in the whole SRAM (e.g. the ifmap of a 128x256 GEMM
//       on 64 KiB is read twice with ws). The native model re-reads only when
//       the operand exceeds the active half of its SRAM.
//     - USER bandwidth: SCALE-Sim's read buffer rotates a fixed prefetch window
//       over the prefetch matrix and, on a miss, keeps rotating until the
//       address comes round again, so small SRAMs re-fetch operands 4x-8x
//       (S8/S9 in the oracles); the native model counts one re-stream per
//       fold that needs it.
//     - ofmap: SCALE-Sim counts padding words of partial drain lines as DRAM
//       writes (e.g. 3484831 instead of 3484800 for AlexNet conv1); the native
//       model counts words.
#pragma once

#include <cstdint>
#include <string_view>

namespace dse::costmodel {

enum class Dataflow { weight_stationary, output_stationary, input_stationary };
std::string_view to_string(Dataflow d);  // "ws", "os", "is"

// How the DRAM interface is described (SCALE-Sim's InterfaceBandwidth).
enum class DramBandwidthMode {
  unconstrained,  // CALC: reads never stall; SCALE-Sim estimates the needed bandwidth
  limited,        // USER: each operand interface moves at most words_per_cycle
};

struct SystolicArray {
  std::int64_t rows = 32;  // ArrayHeight
  std::int64_t cols = 32;  // ArrayWidth
  Dataflow dataflow = Dataflow::weight_stationary;
  std::int64_t ifmap_sram_bytes = 64 * 1024;
  std::int64_t filter_sram_bytes = 64 * 1024;
  std::int64_t ofmap_sram_bytes = 64 * 1024;
  std::int64_t word_bytes = 1;
  DramBandwidthMode bandwidth_mode = DramBandwidthMode::unconstrained;
  std::int64_t dram_words_per_cycle = 10;  // per operand interface, used when limited
  // Base addresses of the three operands (SCALE-Sim's *Offset keys).
  std::int64_t ifmap_offset = 0;
  std::int64_t filter_offset = 10000000;
  std::int64_t ofmap_offset = 20000000;
};

// A convolution without padding. A GEMM M x K times K x N is the conv
// gemm_as_conv(M, N, K).
struct ConvLayer {
  std::int64_t ifmap_h = 1;
  std::int64_t ifmap_w = 1;
  std::int64_t filter_h = 1;
  std::int64_t filter_w = 1;
  std::int64_t channels = 1;
  std::int64_t num_filters = 1;
  std::int64_t stride_h = 1;
  std::int64_t stride_w = 1;
};

// SCALE-Sim's GEMM lowering: H = M, W = K, R = 1, S = K, C = 1, N filters.
ConvLayer gemm_as_conv(std::int64_t m, std::int64_t n, std::int64_t k);

// The lowered matrix problem (SCALE-Sim's rounding: E = ceil((H - R + s) / s)).
struct LoweredShape {
  std::int64_t ofmap_h = 0;
  std::int64_t ofmap_w = 0;
  std::int64_t ofmap_px = 0;  // Sr in the README: E * F
  std::int64_t window = 0;    // T: R * S * C
  std::int64_t filters = 0;   // Sc: K
  std::int64_t macs = 0;
};
LoweredShape lower(const ConvLayer& layer);

// Per-fold structure of a dataflow: which dimension sits where.
struct FoldPlan {
  std::int64_t array_rows_dim = 0;  // problem dimension mapped on the rows
  std::int64_t array_cols_dim = 0;  // problem dimension mapped on the columns
  std::int64_t streamed_dim = 0;    // dimension streamed through the array
  std::int64_t row_folds = 0;
  std::int64_t col_folds = 0;
  [[nodiscard]] std::int64_t folds() const { return row_folds * col_folds; }
};
FoldPlan fold_plan(const SystolicArray& array, const LoweredShape& shape);

// Everything SCALE-Sim's COMPUTE, BANDWIDTH and DETAILED_ACCESS reports hold.
struct SystolicResult {
  std::int64_t total_cycles = 0;
  std::int64_t stall_cycles = 0;
  std::int64_t macs = 0;
  std::int64_t folds = 0;
  double overall_util_pct = 0.0;  // macs / (total_cycles * rows * cols)
  double mapping_eff_pct = 0.0;   // mean occupied fraction of the array per fold
  double compute_util_pct = 0.0;  // mean per-fold MAC utilisation (no stalls)

  std::int64_t sram_ifmap_reads = 0;
  std::int64_t sram_filter_reads = 0;
  std::int64_t sram_ofmap_writes = 0;
  std::int64_t dram_ifmap_reads = 0;
  std::int64_t dram_filter_reads = 0;
  std::int64_t dram_ofmap_writes = 0;

  // First and last cycle of each access stream (detailed access report).
  std::int64_t sram_ifmap_start = 0, sram_ifmap_stop = 0;
  std::int64_t sram_filter_start = 0, sram_filter_stop = 0;
  std::int64_t sram_ofmap_start = 0, sram_ofmap_stop = 0;
  std::int64_t dram_ifmap_start = 0, dram_ifmap_stop = 0;
  std::int64_t dram_filter_start = 0, dram_filter_stop = 0;
  std::int64_t dram_ofmap_start = 0, dram_ofmap_stop = 0;

  // Average bandwidths in words per cycle, as SCALE-Sim defines them.
  [[nodiscard]] double avg_sram_ifmap_bw() const;
  [[nodiscard]] double avg_sram_filter_bw() const;
  [[nodiscard]] double avg_sram_ofmap_bw() const;
  [[nodiscard]] double avg_dram_ifmap_bw() const;
  [[nodiscard]] double avg_dram_filter_bw() const;
  [[nodiscard]] double avg_dram_ofmap_bw() const;
};

// SCALE-Sim v2 compatible evaluation (see the header comment). Needs SRAMs of
// at least 2 words each (SCALE-Sim itself loops forever below that).
SystolicResult simulate_scalesim(const SystolicArray& array, const ConvLayer& layer);

// The row-by-row replay simulate_scalesim() is checked against.
SystolicResult simulate_scalesim_reference(const SystolicArray& array, const ConvLayer& layer);

// True when simulate_scalesim() takes the fold-level path for this layer on
// every array with SRAMs of at least 2 words: windows do not overlap and do
// not read past the ifmap edge (every ifmap address read at most once per
// fold).
bool scalesim_fast_path_applies(const ConvLayer& layer);

// True when simulate_scalesim() takes the fold-level path for this layer on
// this array; false: reference replay. Besides the layers above, it takes
// in-bounds convolutions with overlapping windows (filter > stride) whose
// ifmap buffer never leaves SCALE-Sim's first window: CALC, fewer distinct
// ifmap words than one 50-set epoch (50 * floor(SRAM words / 100)); USER, an
// active half that holds every line of the ifmap prefetch sequence. There the
// order of the repeated requests does not matter: each covered ifmap word is
// fetched once and the ifmap never stalls the array. Overlapping layers whose
// ifmap does leave the first window are replayed (see the README).
bool scalesim_fast_path_applies(const SystolicArray& array, const ConvLayer& layer);

// The project's native closed-form estimate (see the header comment).
SystolicResult estimate_systolic(const SystolicArray& array, const ConvLayer& layer);

}  // namespace dse::costmodel
