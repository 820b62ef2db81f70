// Validation of the GPU-class timing model (costmodel/gpu/gpu.hpp) against
// measured silicon: the LLMCompass A100 / MI210 sweeps in
// oracles/measured (read from the original files at test time). The hardware
// descriptions are the preset files scenarios/hardware/*.yaml, built from
// datasheets and published microbenchmarks; nothing here is fitted per case.
//
// Dispatch paths follow how LLMCompass's harness issued each operator
// (PrincetonUniversity/LLMCompass software_model/*.py run_on_gpu): GEMM via
// torch.matmul (cuBLAS / rocBLAS: library), softmax via eager torch.softmax
// (eager), GELU and LayerNorm via @torch.compile functions (compiled).
//
// Bounds (issue 4): GEMM median |error| <= 8% and max <= 20% over all rows;
// GELU / LayerNorm / Softmax median <= 15%.
#include <gtest/gtest.h>

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "costmodel/gpu/gpu.hpp"
#include "costmodel/platform/attention_benchmark.hpp"
#include "costmodel/platform/evaluate.hpp"
#include "dse/io/gpu_hardware_reader.hpp"
#include "dse/io/platform_reader.hpp"
#include "dse/io/workload_reader.hpp"

namespace {

using dse::costmodel::GpuHardware;
using dse::costmodel::GpuKernelCost;

struct Row {
  std::string label;
  double measured_s = 0.0;
  GpuKernelCost predicted;
};

GpuHardware load(const std::string& file) {
  return dse::io::load_gpu_hardware(std::string(DSE_SOURCE_DIR) + "/scenarios/hardware/" + file);
}

// Comma-separated numbers of one line; units such as "ms" or "Tflops" after a
// number are kept as suffixes.
std::vector<std::pair<double, std::string>> fields(const std::string& line) {
  std::vector<std::pair<double, std::string>> out;
  std::stringstream ss(line);
  std::string cell;
  while (std::getline(ss, cell, ',')) {
    std::size_t pos = 0;
    const double v = std::stod(cell, &pos);
    std::string suffix = cell.substr(pos);
    suffix.erase(std::remove_if(suffix.begin(), suffix.end(), [](char c) { return std::isspace(c) != 0; }),
                 suffix.end());
    out.emplace_back(v, suffix);
  }
  return out;
}

// The rows of a measurement file, blank lines skipped.
std::vector<std::vector<std::pair<double, std::string>>> read_csv_file(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "cannot read " << path;
  std::vector<std::vector<std::pair<double, std::string>>> rows;
  std::string line;
  while (std::getline(in, line)) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    rows.push_back(fields(line));
  }
  return rows;
}

// A file of data/oracles/measured.
std::vector<std::vector<std::pair<double, std::string>>> read_csv(const std::string& name) {
  return read_csv_file(std::string(DSE_ORACLES_DIR) + "/measured/" + name);
}

// A GEMM timed on the device with its kernels back to back (do_bench, CUDA events):
// the prediction without the launch overhead.
Row device_gemm_row(const GpuHardware& hw, std::int64_t m, std::int64_t n, std::int64_t k,
                    dse::costmodel::Precision precision, double measured_s, const std::string& label_prefix = "") {
  dse::costmodel::GemmShape s;
  s.m = m;
  s.n = n;
  s.k = k;
  s.precision = precision;
  Row r;
  r.label = label_prefix + std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
  r.measured_s = measured_s;
  r.predicted = dse::costmodel::evaluate_gemm(hw, s);
  r.predicted.latency_s -= r.predicted.overhead_s;
  return r;
}

// A measured sweep's rows, each shape given with its measured TFLOP/s (device time, as device_gemm_row
// compares it); every shape must have a kernel (EXPECT, so the others are still checked).
struct MeasuredRate {
  std::int64_t m, n, k;
  double tflops;
};
std::vector<Row> rate_rows(const GpuHardware& hw, dse::costmodel::Precision precision,
                           const std::vector<MeasuredRate>& sweep) {
  std::vector<Row> rows;
  for (const MeasuredRate& x : sweep) {
    rows.push_back(device_gemm_row(hw, x.m, x.n, x.k, precision,
                                   2.0 * static_cast<double>(x.m) * static_cast<double>(x.n) *
                                       static_cast<double>(x.k) / (x.tflops * 1e12)));
    EXPECT_TRUE(rows.back().predicted.feasible) << rows.back().label;
  }
  return rows;
}

double rel_error(const Row& r) { return (r.predicted.latency_s - r.measured_s) / r.measured_s; }

// Print the table; check the median and (optionally) max absolute relative
// error; list the rows that break a bound.
// `known_gap` (may be empty) explains a gap the model does not close with a
// sourced constant; it is printed with the table and attached to failures.
void check_rows(const std::string& title, const std::vector<Row>& rows, double median_bound,
                double max_bound, const std::string& known_gap = "") {
  ASSERT_FALSE(rows.empty()) << title;
  std::printf("\n%s\n%-22s %12s %12s %8s %-11s %-14s %6s\n", title.c_str(), "case", "measured_us",
              "predicted_us", "err_%", "bottleneck", "tile", "stall");
  std::vector<double> errs;
  for (const Row& r : rows) {
    const double e = rel_error(r);
    errs.push_back(std::fabs(e));
    const auto& t = r.predicted.tile;
    const std::string tile = t.m > 0 ? std::to_string(t.m) + "x" + std::to_string(t.n) + "x" +
                                           std::to_string(t.k) + "/w" + std::to_string(r.predicted.waves)
                                     : "-";
    std::printf("%-22s %12.1f %12.1f %+8.1f %-11s %-14s %6.2f\n", r.label.c_str(), r.measured_s * 1e6,
                r.predicted.latency_s * 1e6, 100.0 * e, r.predicted.bottleneck_detail.c_str(), tile.c_str(),
                r.predicted.memory_stall_fraction);
  }
  std::vector<double> sorted = errs;
  std::sort(sorted.begin(), sorted.end());
  const std::size_t n = sorted.size();
  const double median = n % 2 == 1 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
  const double max = sorted.back();
  std::printf("%s: median |error| %.1f%% (bound %.0f%%), max |error| %.1f%%%s\n", title.c_str(),
              100.0 * median, 100.0 * median_bound, 100.0 * max,
              max_bound > 0.0 ? (" (bound " + std::to_string(static_cast<int>(100.0 * max_bound)) + "%)").c_str()
                              : "");
  if (!known_gap.empty()) std::printf("Known gap: %s\n", known_gap.c_str());
  EXPECT_LE(median, median_bound) << title << ": median |error| " << 100.0 * median << "% over "
                                  << n << " rows" << (known_gap.empty() ? "" : "\nKnown gap: ") << known_gap;
  if (max_bound > 0.0) {
    for (std::size_t i = 0; i < rows.size(); ++i) {
      EXPECT_LE(errs[i], max_bound) << title << ": row " << rows[i].label << " off by "
                                    << 100.0 * rel_error(rows[i]) << "% (measured "
                                    << rows[i].measured_s * 1e6 << " us, predicted "
                                    << rows[i].predicted.latency_s * 1e6 << " us, bottleneck "
                                    << rows[i].predicted.bottleneck_detail << ")";
    }
  }
}

std::vector<Row> gemm_rows(const GpuHardware& hw, const std::string& csv) {
  std::vector<Row> rows;
  for (const auto& f : read_csv(csv)) {
    EXPECT_EQ(f.size(), 5u) << csv;
    EXPECT_EQ(f[3].second, "ms") << csv;
    dse::costmodel::GemmShape s;
    s.m = static_cast<std::int64_t>(f[0].first);
    s.n = static_cast<std::int64_t>(f[1].first);
    s.k = static_cast<std::int64_t>(f[2].first);
    Row r;
    r.label = std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
    r.measured_s = f[3].first * 1e-3;
    r.predicted = dse::costmodel::evaluate_gemm(hw, s);
    EXPECT_TRUE(r.predicted.feasible) << r.label;
    rows.push_back(r);
  }
  return rows;
}

// Files giving rows, row length and throughput in G elements/s.
std::vector<Row> row_kernel_rows(const std::string& csv,
                                 const std::function<GpuKernelCost(std::int64_t, std::int64_t)>& eval) {
  std::vector<Row> rows;
  for (const auto& f : read_csv(csv)) {
    EXPECT_EQ(f.size(), 3u) << csv;
    const auto m = static_cast<std::int64_t>(f[0].first);
    const auto n = static_cast<std::int64_t>(f[1].first);
    Row r;
    r.label = std::to_string(m) + "x" + std::to_string(n);
    r.measured_s = static_cast<double>(m) * static_cast<double>(n) / (f[2].first * 1e9);
    r.predicted = eval(m, n);
    rows.push_back(r);
  }
  return rows;
}

// FlashAttention-2 on an H100 SXM5 (scenarios/validation/flash_attention_h100.csv: the
// FlashAttention-2 bars of the FlashAttention-3 paper's benchmark figures, S). The model's
// fused attention (costmodel/platform/attention_fusion.cpp) on the H100 preset with
// --attention-kernel flash2, at the figures' shapes: batch x sequence 16k, hidden 2048, BF16;
// the causal rows on a decoder layer, the others on an encoder layer (no mask); a layer's
// fused forward (attn_qk) and fused backward (attn_av.bwd_a) kernels, launch included.
// Two rows set constants (head dim 128, no mask, 16k: the forward sets the preset's
// warp_mma_fraction, the backward kFlashBackwardMatrixShare); the others are predictions.
// The H200's rows (scripts/measure_gpu.py --sections fa2) carry their own batch, heads and
// device time.
struct AttentionRow {
  std::string pass, mask;
  int head_dim = 0;
  int seq = 0;
  double tflops = 0.0;
  int batch = 0, heads = 0;  // 0: the paper's 16384 / seq and 2048 / head_dim
  double measured_s = 0.0;   // 0: from tflops
};

// The rows of a text CSV file under its header line (which must read `header`), '#' lines
// skipped, each cell trimmed; rows of another width are reported and dropped.
std::vector<std::vector<std::string>> text_csv(const std::string& path, const std::string& header) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "cannot read " << path;
  std::vector<std::vector<std::string>> rows;
  std::string line;
  bool first = true;
  std::size_t width = 0;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (first) {
      EXPECT_EQ(line, header) << path;
      width = static_cast<std::size_t>(std::count(header.begin(), header.end(), ',')) + 1;
      first = false;
      continue;
    }
    std::stringstream ss(line);
    std::string cell;
    std::vector<std::string> c;
    while (std::getline(ss, cell, ',')) {
      cell.erase(std::remove_if(cell.begin(), cell.end(), [](char ch) { return std::isspace(ch) != 0; }), cell.end());
      c.push_back(cell);
    }
    EXPECT_EQ(c.size(), width) << path << ": " << line;
    if (c.size() == width) rows.push_back(std::move(c));
  }
  return rows;
}

std::vector<AttentionRow> attention_rows() {
  std::vector<AttentionRow> rows;
  for (const auto& c : text_csv(std::string(DSE_SOURCE_DIR) + "/scenarios/validation/flash_attention_h100.csv",
                                "pass, mask, head_dim, seq, tflops"))
    rows.push_back({c[0], c[1], std::stoi(c[2]), std::stoi(c[3]), std::stod(c[4])});
  return rows;
}

// The FlashAttention-3 paper's cuDNN (backend cudnn) or FlashAttention-3 (fa3) bars on the H100, from the same
// figures as attention_rows() (flash_attention_h100_native.csv: 47 rows each, 12 of them forwards at head dim 256).
std::vector<AttentionRow> h100_native_attention_rows(const std::string& backend) {
  std::vector<AttentionRow> rows;
  for (const auto& c : text_csv(std::string(DSE_SOURCE_DIR) + "/scenarios/validation/flash_attention_h100_native.csv",
                                "backend, pass, mask, head_dim, seq, tflops"))
    if (c[0] == backend) rows.push_back({c[1], c[2], std::stoi(c[3]), std::stoi(c[4]), std::stod(c[5])});
  return rows;
}

// The H200's FlashAttention rows of one SDPA backend (h200/attention/h200_fa2.csv: flash, the
// FlashAttention-2 kernels; cudnn, cuDNN's), the device time of back-to-back calls.
std::vector<AttentionRow> h200_attention_rows(const std::string& backend, const std::string& folder = "attention") {
  std::vector<AttentionRow> rows;
  for (const auto& c :
       text_csv(std::string(DSE_SOURCE_DIR) + "/scenarios/validation/h200/" + folder + "/h200_fa2.csv",
                "backend, pass, mask, head_dim, seq, batch, heads, device_ms, tflops, kernels_ms, kernels"))
    if (c[0] == backend)
      rows.push_back({c[1], c[2], std::stoi(c[3]), std::stoi(c[4]), std::stod(c[8]), std::stoi(c[5]), std::stoi(c[6]),
                      std::stod(c[7]) * 1e-3});
  return rows;
}

Row attention_row(
    const dse::costmodel::platform::Platform& p, const AttentionRow& a,
    dse::costmodel::platform::AttentionKernel kernel = dse::costmodel::platform::AttentionKernel::flash2) {
  namespace pf = dse::costmodel::platform;
  pf::AttentionBenchmark b;
  b.backward = a.pass != "forward";
  b.causal = a.mask == "causal";
  b.head_dim = a.head_dim;
  b.seq = a.seq;
  b.batch = a.batch > 0 ? a.batch : 16384 / a.seq;
  b.heads = a.heads > 0 ? a.heads : 2048 / a.head_dim;
  b.kernel = kernel;
  Row r;
  r.label = std::string(b.backward ? "bwd" : "fwd") + (b.causal ? " causal " : " ") + "d" + std::to_string(a.head_dim) +
            " s" + std::to_string(a.seq);
  r.measured_s = a.measured_s > 0.0 ? a.measured_s : pf::attention_benchmark_flops(b) / (a.tflops * 1e12);
  r.predicted.latency_s = pf::attention_benchmark_latency_s(p, b);
  r.predicted.bottleneck_detail = "fused";
  r.predicted.feasible = r.predicted.latency_s > 0.0;
  EXPECT_TRUE(r.predicted.feasible) << r.label << ": no fused attention kernel";
  return r;
}

// The calibration rows within 1% (bisection to 3 digits), and the other 34 against the
// issue's operator targets (median <= 8%, max <= 20%). Before the fused kernel took its
// softmax work from Dao 2023's algorithm and its products on head-dim tiles (and before these
// two constants), its 36 rows were off by 18.6% on average and up to 37.6%: head dim 64
// forward 26-38% slow, head dim 128 backward 14-28% fast. The causal rows at head dim 128 and
// 2k-16k tokens were -7.1% to -8.9% while the causal forward took the kept tiles' share of the
// unmasked time; with its thread blocks' makespan they were -3.9% to +3.1%, and with O's
// rescale counted once per key block -3.8% to +3.2%. The 512-token rows were 5-28% fast (a
// known_gap test) until each wave of thread blocks paid its start-up (flash_block_startup_s,
// derived, no constant fitted; the two constants set again, 0.590 -> 0.594 and 0.717 ->
// 0.715): they are -9.1% to +11.5% now (median 6.0%), the 1k-16k rows median 3.1%, max 9.7%
// (the head-dim-64 unmasked forwards +6.1..+9.7%, +4.3..+6.0% before). The paper's 12 forwards at head dim
// 256 (8 heads) were added after the model took FlashAttention-2's grid there (64 x 64 blocks of 4 warps on
// Hopper) and the shared-memory bound on its products from flash-attn's source and the H200's measurements:
// +1.9% to +9.9% (unmasked +1.9..+7.2%, causal +4.6..+9.9%). Without the bound (sram_bytes_per_cycle_per_core
// taken out of the preset) they are -15.9% to -21.8%, as the H200's were.
TEST(GpuMeasured, FlashAttention2OnH100WithinOperatorBounds) {
  const auto p = dse::io::resolve_platform("h100-sxm5");
  std::vector<Row> rows;
  for (const AttentionRow& a : attention_rows()) {
    Row r = attention_row(p, a);
    if (a.head_dim == 128 && a.mask == "none" && a.seq == 16384) {
      EXPECT_NEAR(rel_error(r), 0.0, 0.01) << r.label << " (a calibration row)";
      continue;
    }
    rows.push_back(r);
  }
  EXPECT_EQ(rows.size(), 46u);
  check_rows("FlashAttention-2 on H100 SXM5, BF16 (FlashAttention-3 paper, 512-16k tokens)", rows, 0.08, 0.20);
}

// The same shapes measured on the H200 (scripts/measure_gpu.py --sections fa2: PyTorch 2.11's
// SDPA flash backend, FlashAttention-2's flash_fwd_kernel / flash_bwd_dq_dk_dv_loop_seqk_
// parallel_kernel with the grids the model takes, h200_kernels.csv), none of them used to set
// a constant (the H200 preset carries the H100's warp_mma_fraction): 48 rows, median 4.0%,
// max 18.5% (the causal forward at head dim 64 and 512 tokens; without the blocks' start-up
// median 6.0%, max 34.8%).
TEST(GpuMeasured, FlashAttention2OnH200WithinOperatorBounds) {
  const auto p = dse::io::resolve_platform("h200");
  std::vector<Row> rows;
  for (const AttentionRow& a : h200_attention_rows("flash")) rows.push_back(attention_row(p, a));
  EXPECT_EQ(rows.size(), 48u);
  check_rows("FlashAttention-2 on H200, BF16 (scripts/measure_gpu.py, SDPA flash backend)", rows, 0.08, 0.20);
}

// Head dim 256 on the H200 (run 12, h200/attention-d256/: the same shapes with 8 heads), outside
// the head dims the FlashAttention-2 model was set on. Forward: FlashAttention-2 on Hopper runs
// head dim 256 on 64 x 64 blocks of 4 warps (two per SM; the probe's grid: two blocks per 128
// queries), each warp reading 16 rows of Q and all of K and V from shared memory per key block:
// 11.6 FLOPs per byte, where the warp-MMA rate wants 16.2 per byte and clock of the SM's 128
// (pf::flash_forward_smem_factor: 1.39 on the H200 preset, 1 at head dims 64 and 128). Without
// that bound (and on the A100's 128 x 64 grid of 8 warps) the model was 20-21% fast on every
// unmasked forward and 13-20% on the causal ones; with it the 12 forwards are +0.8% to +5.7%.
TEST(GpuMeasured, FlashAttention2OnH200HeadDim256Forward) {
  const auto p = dse::io::resolve_platform("h200");
  namespace pf = dse::costmodel::platform;
  EXPECT_NEAR(pf::flash_forward_smem_factor(p.gpu, pf::AttentionKernel::flash2, 256, dse::costmodel::Precision::bf16),
              1.3885, 1e-4);
  EXPECT_DOUBLE_EQ(
      pf::flash_forward_smem_factor(p.gpu, pf::AttentionKernel::flash2, 128, dse::costmodel::Precision::bf16), 1.0);
  std::vector<Row> rows;
  for (const AttentionRow& a : h200_attention_rows("flash", "attention-d256"))
    if (a.pass == "forward") rows.push_back(attention_row(p, a));
  EXPECT_EQ(rows.size(), 12u);
  check_rows("FlashAttention-2 forward on H200, BF16, head dim 256 (scripts/measure_gpu.py --head-dims 256)", rows,
             0.08, 0.20);
}

// The backwards at head dim 256 were 20-24% fast unmasked at every length (12-21% causal) while the backward's
// matrix work ran at one share of the forward's rate (0.715, from the H100's head dim 128) whatever its grid. Not
// shared memory by the forward's count: the backward's grid there (Flash_bwd_kernel_traits<256, 64, 64, 8, 4, 2,
// 2>: 64 queries by 64 keys, 8 warps) moves 13.6 FLOPs per shared-memory byte over its five products, above the
// 11.6 its rate needs. Its blocks hold 64 keys where those of head dims 64 and 128 hold 128, so each FLOP adds
// twice the FP32 dQ partial sums to dQaccum; taking the shortfall behind 0.715 as that traffic
// (pf::flash_backward_matrix_share: 0.5565 at 64 keys, no constant fitted) and with the 64-key grid's start-up,
// the 12 rows are -7.2% to +6.7% (median 1.8%).
TEST(GpuMeasured, FlashAttention2OnH200HeadDim256Backward) {
  const auto p = dse::io::resolve_platform("h200");
  namespace pf = dse::costmodel::platform;
  EXPECT_NEAR(pf::flash_backward_matrix_share(p.gpu, pf::AttentionKernel::flash2, 256), 0.5565, 1e-4);
  EXPECT_DOUBLE_EQ(pf::flash_backward_matrix_share(p.gpu, pf::AttentionKernel::flash2, 128), 0.715);
  std::vector<Row> rows;
  for (const AttentionRow& a : h200_attention_rows("flash", "attention-d256"))
    if (a.pass == "backward") rows.push_back(attention_row(p, a));
  EXPECT_EQ(rows.size(), 12u);
  check_rows("FlashAttention-2 backward on H200, BF16, head dim 256 (scripts/measure_gpu.py --head-dims 256)", rows,
             0.08, 0.20);
}

// The FlashAttention-3 paper's cuDNN bars on the H100 (same figures as the FlashAttention-2 rows, 2024's cuDNN) as
// the model's native kernel (its products at the preset's sustained rate plus the online softmax's work), no
// constant set from them: 35 rows (the forward at head dim 128, 512 tokens, left out: two transcriptions swap its
// labels), median 4.7%, max 18.1% (the 512-token backward at head dim 64, -18.1%: the model gives a native kernel
// no start-up; the 512-token rows are -11% to -18%, the others -10.4% to +13.4%). Head dim 64 and 128 here; the
// head-dim-256 forwards are the next test.
TEST(GpuMeasured, CudnnAttentionOnH100WithinOperatorBounds) {
  const auto p = dse::io::resolve_platform("h100-sxm5");
  std::vector<Row> rows;
  for (const AttentionRow& a : h100_native_attention_rows("cudnn"))
    if (a.head_dim <= 128) rows.push_back(attention_row(p, a, dse::costmodel::platform::AttentionKernel::native));
  EXPECT_EQ(rows.size(), 35u);
  check_rows("cuDNN attention on H100 SXM5, BF16 (FlashAttention-3 paper, 512-16k tokens)", rows, 0.08, 0.20);
}

// The same figures' cuDNN forwards at head dim 256 (8 heads): 2024's cuDNN runs them at 470-581 TFLOP/s
// unmasked, below its own 595 at head dim 128, where the model's native kernel, whose softmax share halves from
// head dim 128 to 256, gives 660; the rows are 11.6% to 27.0% fast. cuDNN 9.19 on the H200 runs the same shapes
// at 533-740 TFLOP/s (h200/attention-d256/h200_fa2.csv), -17.2% to +12.1% against the same model, and
// FlashAttention-3 in the same figure reaches 756: the 2024 library's own head-dim-256 kernel, which the model
// does not describe (no source gives its grid).
TEST(KnownGap, CudnnAttentionOnH100HeadDim256Forward) {
  const auto p = dse::io::resolve_platform("h100-sxm5");
  std::vector<Row> rows;
  for (const AttentionRow& a : h100_native_attention_rows("cudnn"))
    if (a.head_dim == 256) rows.push_back(attention_row(p, a, dse::costmodel::platform::AttentionKernel::native));
  EXPECT_EQ(rows.size(), 12u);
  check_rows("cuDNN attention forward on H100 SXM5, BF16, head dim 256 (FlashAttention-3 paper)", rows, 0.08, 0.20,
             "2024's cuDNN runs head dim 256 below its head-dim-128 rate; the native kernel's rate rises with the "
             "head dim");
}

// FlashAttention-3's bars in the same figures: its forwards of 2k-16k tokens run 3-22% faster than the model's
// native kernel (products plus all of the online softmax's work): FlashAttention-3 overlaps one warpgroup's
// softmax with another's products (ping-pong) and, within a warpgroup, the softmax of one block with the
// products of the next (Shah et al. 2024, section 3.1-3.2); the model does not. Its 512-token rows are 10-26%
// fast (no start-up for a native kernel). 35 rows at head dim 64 and 128, median 13.1%, max 25.9%; with the 12
// forwards at head dim 256 (512 and 1k tokens -2.0% to -25.1%, unmasked 2k-16k +7.7% to +14.5%, causal 2k-16k
// -1.0% to -7.6%) 47 rows, median 11.7%.
TEST(KnownGap, FlashAttention3OnH100WithinOperatorBounds) {
  const auto p = dse::io::resolve_platform("h100-sxm5");
  std::vector<Row> rows;
  for (const AttentionRow& a : h100_native_attention_rows("fa3"))
    rows.push_back(attention_row(p, a, dse::costmodel::platform::AttentionKernel::native));
  EXPECT_EQ(rows.size(), 47u);
  check_rows("FlashAttention-3 on H100 SXM5, BF16 (FlashAttention-3 paper, 512-16k tokens)", rows, 0.08, 0.20,
             "FlashAttention-3 hides part of its softmax behind its products (ping-pong, intra-warpgroup "
             "pipelining); the model adds all of it");
}

// cuDNN's attention on the H200 (SDPA's cudnn backend: a persistent sm90 kernel, wgmma, one
// block per SM) as the model's native kernel: median 9.6%, max 23.9%. The forwards of 1k-16k
// tokens are +5% to +24% slow: the model adds the online softmax's exps and FLOPs to the matrix
// time, where Hopper-native kernels overlap one warpgroup's softmax with another's products
// (Shah et al. 2024, section 3.1); measured, about half of it stays exposed (head dim 128, 16k:
// 3.30 ms, the products alone at the preset's sustained rate about 2.8 ms, with all of the softmax
// work 4.03 ms). The 512-token backwards are 10-23% fast.
TEST(KnownGap, CudnnAttentionOnH200WithinOperatorBounds) {
  const auto p = dse::io::resolve_platform("h200");
  std::vector<Row> rows;
  for (const AttentionRow& a : h200_attention_rows("cudnn"))
    rows.push_back(attention_row(p, a, dse::costmodel::platform::AttentionKernel::native));
  EXPECT_EQ(rows.size(), 48u);
  check_rows("cuDNN attention on H200, BF16 (scripts/measure_gpu.py, SDPA cudnn backend)", rows, 0.08, 0.20,
             "the native kernel's softmax work is added to its products; Hopper-native kernels overlap part of it");
}

// The start-up of FlashAttention-2's thread blocks measured on the H200 (h200_fa2_blocks.csv,
// scripts/measure_gpu.py --sections fa2_blocks: one block per (batch, head) of 4 heads, forward
// over L = 128 .. 8192 keys, backward over L queries; the main kernel's CUPTI duration). Per
// pass, head dim and group count: the line through L >= 256 (its intercept: what the blocks
// cost besides their loop); then the intercepts' slope over the waves of blocks, waves >= 1
// (forward 264 .. 2112 groups on 264 places, backward 132 .. 2112 on 132): the measured start-up
// per wave, against pf::flash_block_startup_s for one wave. Forward: measured 4.07 us (head dim
// 128) and 3.40 us (64); derived 4.2 and 3.2.
// Least-squares line through (x, y) points: (intercept, slope).
std::pair<double, double> least_squares_line(const std::vector<std::pair<double, double>>& pts) {
  double sx = 0.0, sy = 0.0, sxx = 0.0, sxy = 0.0;
  for (const auto& [x, y] : pts) {
    sx += x;
    sy += y;
    sxx += x * x;
    sxy += x * y;
  }
  const double n = static_cast<double>(pts.size());
  const double slope = (n * sxy - sx * sy) / (n * sxx - sx * sx);
  return {(sy - slope * sx) / n, slope};
}

double measured_startup_per_wave_s(const std::string& pass, int head_dim) {
  const std::vector<std::vector<std::string>> rows =
      text_csv(std::string(DSE_SOURCE_DIR) + "/scenarios/validation/h200/attention/h200_fa2_blocks.csv",
               "pass, head_dim, groups, q_len, kv_len, kernels_us, kernels, main_kernel_us, main_grid");
  const double places = pass == "forward" ? 264.0 : 132.0;
  std::vector<std::pair<double, double>> intercepts;  // (waves, intercept us)
  for (const int groups : {132, 264, 528, 1056, 2112}) {
    if (groups < places) continue;
    std::vector<std::pair<double, double>> pts;  // (L, main kernel us)
    for (const auto& c : rows)
      if (c[0] == pass && std::stoi(c[1]) == head_dim && std::stoi(c[2]) == groups) {
        const double L = std::stod(pass == "forward" ? c[4] : c[3]);
        if (L >= 256) pts.emplace_back(L, std::stod(c[7]));
      }
    if (pts.size() < 3) continue;
    intercepts.emplace_back(static_cast<double>(groups) / places, least_squares_line(pts).first);
  }
  EXPECT_GE(intercepts.size(), 3u) << pass << " d" << head_dim;
  return least_squares_line(intercepts).second * 1e-6;
}

double derived_startup_per_wave_s(bool backward, int head_dim) {
  const auto p = dse::io::resolve_platform("h200");
  // One block per (batch, head): 128 query rows (forward) or 128 keys (backward), one wave.
  const std::int64_t places = backward ? p.gpu.core_count : 2 * p.gpu.core_count;
  return dse::costmodel::platform::flash_block_startup_s(p.gpu, dse::costmodel::platform::AttentionKernel::flash2,
                                                         backward, 128, 128, places, head_dim, 2.0);
}

// The measured and derived start-up per wave of one pass, at head dims 64 and 128, within 10%.
void expect_startup_matches_probe(const std::string& pass) {
  for (const int d : {64, 128}) {
    const double measured = measured_startup_per_wave_s(pass, d),
                 derived = derived_startup_per_wave_s(pass == "backward", d);
    std::printf("%s, head dim %d: start-up per wave measured %.2f us, derived %.2f us\n", pass.c_str(), d,
                measured * 1e6, derived * 1e6);
    EXPECT_NEAR(derived, measured, 0.10 * measured) << pass << ", head dim " << d;
  }
}

TEST(GpuMeasured, FlashForwardBlockStartupMatchesH200Probe) { expect_startup_matches_probe("forward"); }

// The backward's start-up per wave: measured 4.53 us at head dims 64 and 128, derived 3.2 and
// 4.2 us (K, V and the first Q and dO blocks, two round trips): at head dim 64, 30% short. The
// backward's rows above stay within the operator bounds; what else its blocks wait for at
// their start (the dK and dV stores of the block before, the log-sum-exp reads) is not modelled.
TEST(KnownGap, FlashBackwardBlockStartupMatchesH200Probe) { expect_startup_matches_probe("backward"); }

// The A100 GEMM bounds: median <= 8% and max <= 20%, both checked. The
// closest row is the smallest, 8192x64x64, overhead-bound: the model charges the
// published 21 us library-dispatch overhead (LLMCompass overhead_dict[A100].matmul)
// and ~2.8 us of device time against 29.6 us measured (-19.7%). Per-kernel start-up
// of tiny cuBLAS calls has no sourced constant in the hardware file, so the
// margin is small; no constant was fitted to this file.
TEST(GpuMeasured, A100GemmMedianWithinEightPercent) {
  const GpuHardware hw = load("a100-sxm4-80gb.yaml");
  check_rows("A100 GEMM (llmcompass_matmul_A100.csv)", gemm_rows(hw, "llmcompass_matmul_A100.csv"), 0.08, 0.0);
}

TEST(GpuMeasured, A100GemmMaxWithinTwentyPercent) {
  const GpuHardware hw = load("a100-sxm4-80gb.yaml");
  check_rows("A100 GEMM (llmcompass_matmul_A100.csv)", gemm_rows(hw, "llmcompass_matmul_A100.csv"), 0.08,
             0.20);
}

TEST(GpuMeasured, Mi210GemmMedianWithinEightPercent) {
  const GpuHardware hw = load("mi210.yaml");
  check_rows("MI210 GEMM (llmcompass_matmul_MI210.csv)", gemm_rows(hw, "llmcompass_matmul_MI210.csv"), 0.08, 0.0);
}

// The MI210's FP16 GEMMs run the kernel rocBLAS itself picks: the preset's
// gemm_library table (mi210-rocblas-hgemm-nn.csv, from rocBLAS's Tensile logic
// file for gfx90a) maps a shape to the solution of its nearest tuned size, with
// that solution's tile, tile order (WorkGroupMapping) and split. The skinny
// M <= 128 x 12288 x 12288 rows then run solution 47 (MT128x128x32, one wave of
// 96 tiles) at -9% to -15%, where the fastest tile of the list (128x128x64) gave
// -31% to -36%; with the same solution, M = 256-4096 x 12288 x 12288 tile the
// output in groups of two tile rows (WGM2), which halves the weight panels a
// wave streams (-2% to +9%). No constant was fitted to this file: the compute-
// bound rows use sustained_fraction 0.716 from an independent MI210 sweep.
TEST(GpuMeasured, Mi210GemmMaxWithinTwentyPercent) {
  const GpuHardware hw = load("mi210.yaml");
  check_rows("MI210 GEMM (llmcompass_matmul_MI210.csv)", gemm_rows(hw, "llmcompass_matmul_MI210.csv"), 0.08,
             0.20);
}

// The kernels the table gives for three of those shapes, as an independent scan
// of the logic file's size table finds them (a Python brute force over its 3,169
// entries with Tensile's key order I = N, J = M, batch, L = K): M x 12288 x 12288
// (M = 32) -> nearest size [8200, 1024, 1, 15296] -> solution 47 (MacroTile
// 128 x 128, DepthU 32, WorkGroupMapping 2); 8192^3 is a tuned size itself ->
// solution 117 (MacroTile0 128, MacroTile1 256, WGM1); 8192 x 32 x 32 ->
// [1024, 8192, 1, 256] -> solution 21 (MacroTile0 128, MacroTile1 96, WGM15).
TEST(GpuMeasured, Mi210LibraryTablePicksRocblasKernels) {
  const GpuHardware hw = load("mi210.yaml");
  ASSERT_EQ(hw.gemm_library.size(), 3169u);
  ASSERT_TRUE(hw.gemm_library_indexed);
  struct Want {
    std::int64_t m, n, k, solution, tile_m, tile_n, tile_k, group_m;
  };
  for (const Want& w : {Want{32, 12288, 12288, 47, 128, 128, 32, 2}, Want{8192, 8192, 8192, 117, 256, 128, 32, 1},
                        Want{8192, 32, 32, 21, 96, 128, 32, 15}}) {
    dse::costmodel::GemmShape s;
    s.m = w.m;
    s.n = w.n;
    s.k = w.k;
    const auto* e = dse::costmodel::library_kernel(hw, s);
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(e->solution, w.solution) << w.m << "x" << w.n << "x" << w.k;
    EXPECT_EQ(e->tile, (dse::costmodel::GemmTile{w.tile_m, w.tile_n, w.tile_k, w.group_m}));
    const auto c = dse::costmodel::evaluate_gemm(hw, s);
    EXPECT_EQ(c.library_solution, w.solution);
    EXPECT_EQ(c.tile, e->tile);
    s.precision = dse::costmodel::Precision::bf16;  // no BF16 table: the fastest tile of the list
    EXPECT_EQ(dse::costmodel::library_kernel(hw, s), nullptr);
    EXPECT_EQ(dse::costmodel::evaluate_gemm(hw, s).library_solution, -1);
  }
}

// H100 FP8 GEMMs (per-tensor scaled, torch._scaled_mm -> cuBLASLt), measured
// TFLOP/s of a five-shape sweep on an H100 (P: pytorch/pytorch issue 143465,
// "## H100" block, triton.testing.do_bench, 200 repeats). The preset's fp8
// sustained fraction 0.735 was worked back from the sweep's best shape,
// 16384x1024x8192 at 1347.08 TF (h100-sxm5.yaml); the other four rows are
// independent of it and are checked against the GEMM bounds (median
// <= 8%, max <= 20%). do_bench times kernels issued back to back, so the
// comparison is device time: the launch overhead is taken off the prediction.
TEST(GpuMeasured, H100Fp8GemmSweepWithinGemmBounds) {
  const std::vector<Row> rows = rate_rows(load("h100-sxm5.yaml"), dse::costmodel::Precision::fp8,
                                          {{16384, 8192, 1280, 1239.4133451945781},
                                           {16384, 8192, 7168, 1332.2623882545472},
                                           {16384, 3584, 8192, 1309.4453003269748},
                                           {8192, 8192, 8192, 1304.5406858844613}});
  check_rows("H100 FP8 GEMM (pytorch/pytorch issue 143465)", rows, 0.08, 0.20);
}

// Gaudi 2 BF16 GEMMs, measured TFLOP/s of a seven-shape sweep (P: NAVER-INTEL-Co-Lab/gaudi-perf
// matmul/README.md @ 6edb3c6, "Results for BF16 matrix multiplication", M x K x N; repeated GEMMs in
// one function, so device throughput). No figure of the preset was set from these rates (its
// sustained fraction 1.0 is the MAMF v1 table's 99.4% at 20224 x 19968 x 11520); 8192^3 set its
// FLOP energies (scripts/chip_power.py) and is left out. The rows test the MMEs' streamed tiles
// (gemm_waves_pipelined): with a prologue and C write per wave of 256 x 256 tiles the model ran
// them 9-61% slow (16384 x 8192 x 1024: 164.5 against 417.9 TFLOP/s); streamed, within the GEMM
// bounds (median <= 8%, max <= 20%). Unthrottled device time (evaluate_gemm), as measured.
TEST(GpuMeasured, Gaudi2Bf16GemmSweepWithinGemmBounds) {
  const std::vector<Row> rows = rate_rows(load("gaudi2.yaml"), dse::costmodel::Precision::bf16,
                                          {{16384, 1280, 8192, 395.4},
                                           {16384, 8192, 1024, 417.9},
                                           {16384, 7168, 8192, 425.2},
                                           {16384, 8192, 3584, 422.9},
                                           {4096, 4096, 4096, 408.2},
                                           {16384, 16384, 16384, 379.8}});
  check_rows("Gaudi 2 BF16 GEMM (NAVER-INTEL-Co-Lab/gaudi-perf)", rows, 0.08, 0.20);
}

// The H200's FP8 GEMMs measured by scripts/measure_gpu.py (torch._scaled_mm, per-tensor
// FP8 e4m3, BF16 out; device time of 20 back-to-back calls), runs 1 and 2 of
// scenarios/validation/h200 (h200_matmul_fp8_device.csv: M, N, K, device ms, TFLOP/s): the
// rows whose shape `keep` takes, as device-time rows of the H200 preset.
std::vector<Row> h200_fp8_rows(const std::function<bool(std::int64_t, std::int64_t, std::int64_t)>& keep) {
  const GpuHardware hw = load("h200.yaml");
  std::vector<Row> rows;
  for (const std::string run : {"", "repeat/"}) {
    const std::string path =
        std::string(DSE_SOURCE_DIR) + "/scenarios/validation/h200/" + run + "h200_matmul_fp8_device.csv";
    for (const auto& f : read_csv_file(path)) {
      EXPECT_EQ(f.size(), 5u) << path;
      if (f.size() != 5u) continue;
      const auto m = static_cast<std::int64_t>(f[0].first), n = static_cast<std::int64_t>(f[1].first),
                 k = static_cast<std::int64_t>(f[2].first);
      if (!keep(m, n, k)) continue;
      rows.push_back(device_gemm_row(hw, m, n, k, dse::costmodel::Precision::fp8, f[3].first * 1e-3,
                                     run.empty() ? "run1 " : "run2 "));
      EXPECT_TRUE(rows.back().predicted.feasible) << rows.back().label;
    }
  }
  return rows;
}

// The preset's fp8 sustained fraction 0.804 was worked back from 8192^3 (1,480.5 TFLOP/s, the
// mean of both runs, the sweep's best); the test takes the other compute-bound rows (M >= 1024)
// of both runs. cuBLASLt runs them at 1,206-1,463 TFLOP/s where the model, with one ceiling for
// every shape, gives 1,481-1,525: median 11.4%, above the 8% bound.
TEST(KnownGap, H200Fp8GemmSweepWithinGemmBounds) {
  const std::vector<Row> rows = h200_fp8_rows([](std::int64_t m, std::int64_t n, std::int64_t k) {
    return m >= 1024 && !(m == 8192 && n == 8192 && k == 8192);
  });
  ASSERT_EQ(rows.size(), 8u);
  check_rows("H200 FP8 GEMM (scripts/measure_gpu.py)", rows, 0.08, 0.20,
             "one FP8 ceiling per chip; cuBLASLt's rate on these shapes is 2-19% below its best shape's");
}

// The kernels scripts/measure_gpu.py --sections kernels recorded on the H200 (run 11,
// h200/kernels/h200_kernels.csv: case, kernel, grid, block, registers, shared memory, median
// CUPTI duration in us of 5 calls, calls; kernel names with commas are quoted; run 10's
// h200/attention/h200_kernels.csv, one call each, is within 6.5% of it, median 1.7%): the cases
// whose label starts with `prefix` and that ran one kernel, as (M, N, K, duration s).
struct KernelRow {
  std::int64_t m = 0, n = 0, k = 0;
  double seconds = 0.0;
  std::string kernel, grid;
};
std::vector<KernelRow> h200_kernel_rows(const std::string& prefix) {
  const std::string path = std::string(DSE_SOURCE_DIR) + "/scenarios/validation/h200/kernels/h200_kernels.csv";
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "cannot read " << path;
  std::vector<std::vector<std::string>> rows;
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> cells(1);
    bool quoted = false;
    for (const char ch : line) {
      if (ch == '"')
        quoted = !quoted;
      else if (ch == ',' && !quoted)
        cells.emplace_back();
      else
        cells.back() += ch;
    }
    rows.push_back(cells);
  }
  EXPECT_FALSE(rows.empty()) << path;
  std::map<std::string, int> kernels_per_case;
  for (std::size_t i = 1; i < rows.size(); ++i) ++kernels_per_case[rows[i].at(0)];
  std::vector<KernelRow> out;
  for (std::size_t i = 1; i < rows.size(); ++i) {
    const auto& c = rows[i];
    EXPECT_EQ(c.size(), 8u) << path << " row " << i + 1;
    if (c.size() != 8u || c[0].rfind(prefix, 0) != 0 || kernels_per_case[c[0]] != 1) continue;
    KernelRow r;
    if (std::sscanf(c[0].c_str() + prefix.size(), "%" SCNd64 "x%" SCNd64 "x%" SCNd64, &r.m, &r.n, &r.k) != 3) continue;
    r.seconds = std::stod(c[6]) * 1e-6;
    r.kernel = c[1];
    r.grid = c[2];
    out.push_back(r);
  }
  return out;
}

// The decode-shaped rows (M = 16-256 on Llama-3-8B's and -70B's weights, memory-bound), against
// the GEMM bounds, each kernel's own duration (CUPTI, the median of 5 calls after three
// warm-ups: run 11, h200/kernels/h200_kernels.csv), the model without its launch overhead. Runs 1 and 2 had timed these
// shapes by 20 back-to-back torch._scaled_mm calls, which the host's dispatch bounds where the kernel is shorter: 6144
// x 4096 took 22-26 us a call at every M, its kernels take 6.0-11.3 us (nvjet_sm90_qqtst, 96-128 blocks); 28672 x 4096
// took 35.5-52.4 us, its kernels 29.9-44.9. The H200 preset's FP8 kernels take 128 k elements a k-step
// (gemm_tile_k_scales_with_precision), which took the long-k rows (K = 28672) from +63..+77% to within 12% but M = 128;
// and as many k-steps in flight as the shared memory holds (gemm_pipeline_stages_max, gemm_stages), which took the 15
// rows from median 9.8%, max 41.7% (4 stages: the 6144 x 4096 weights up to +42%, 128 x 8192 x 28672 +26%) to
// median 5.9%, max 16.6% (128 x 8192 x 28672).
TEST(GpuMeasured, H200Fp8DecodeGemmKernelsWithinGemmBounds) {
  const GpuHardware hw = load("h200.yaml");
  std::vector<Row> rows;
  for (const KernelRow& k : h200_kernel_rows("fp8 ")) {
    if (k.m > 256) continue;
    rows.push_back(device_gemm_row(hw, k.m, k.n, k.k, dse::costmodel::Precision::fp8, k.seconds));
    EXPECT_TRUE(rows.back().predicted.feasible) << rows.back().label;
  }
  ASSERT_EQ(rows.size(), 15u);  // M = 16, 32, 64, 128, 256 on three weights
  check_rows("H200 decode-shaped FP8 GEMM kernels (scripts/measure_gpu.py --sections kernels)", rows, 0.08, 0.20);
}

// The BF16 decode-shaped GEMMs' kernels (M = 1-256 on 6144 x 4096 and 28672 x 4096, one kernel
// each; 8192 x 28672 runs split-k with a reduction kernel and is left out): median 5.3% (9.3%
// with 4 stages for every tile). The max is cuBLAS's choice for 128 x 28672 x 4096, a 448 x 64
// tile on 128 blocks at 2 stages (99.4 us, where M = 64 and 256 take 58.5 and 89.6 us): -41.8%.
std::vector<Row> h200_bf16_kernel_rows() {
  const GpuHardware hw = load("h200.yaml");
  std::vector<Row> rows;
  for (const KernelRow& k : h200_kernel_rows("bf16 "))
    if (k.m <= 256) rows.push_back(device_gemm_row(hw, k.m, k.n, k.k, dse::costmodel::Precision::bf16, k.seconds));
  EXPECT_EQ(rows.size(), 18u);
  return rows;
}

TEST(GpuMeasured, H200Bf16DecodeGemmKernelsMedianWithinEightPercent) {
  check_rows("H200 decode-shaped BF16 GEMM kernels (scripts/measure_gpu.py --sections kernels)",
             h200_bf16_kernel_rows(), 0.08, 0.0);
}

TEST(KnownGap, H200Bf16DecodeGemmKernelsMaxWithinTwentyPercent) {
  check_rows("H200 decode-shaped BF16 GEMM kernels (scripts/measure_gpu.py --sections kernels)",
             h200_bf16_kernel_rows(), 0.08, 0.20,
             "cuBLAS runs 128 x 28672 x 4096 on a 448 x 64 tile at 2 stages, 99.4 us, where M = 256 takes 89.6 us");
}

TEST(GpuMeasured, A100GeluWithinFifteenPercentMedian) {
  const GpuHardware hw = load("a100-sxm4-80gb.yaml");
  std::vector<Row> rows;
  for (const auto& f : read_csv("llmcompass_gelu_A100.csv")) {
    EXPECT_EQ(f.size(), 2u);
    const auto n = static_cast<std::int64_t>(f[0].first);
    Row r;
    r.label = std::to_string(n);
    r.measured_s = static_cast<double>(n) / (f[1].first * 1e9);
    auto shape = dse::costmodel::gelu_shape(n);
    shape.dispatch = dse::costmodel::DispatchPath::compiled;  // gelu.py: @torch.compile gelu_gpu
    r.predicted = dse::costmodel::evaluate_elementwise(hw, shape);
    rows.push_back(r);
  }
  check_rows("A100 GELU (llmcompass_gelu_A100.csv)", rows, 0.15, 0.0);
}

TEST(GpuMeasured, A100LayerNormWithinFifteenPercentMedian) {
  const GpuHardware hw = load("a100-sxm4-80gb.yaml");
  check_rows("A100 LayerNorm (llmcompass_layernorm_A100.csv)",
             row_kernel_rows("llmcompass_layernorm_A100.csv",
                             [&](std::int64_t m, std::int64_t n) {
                               // layernorm.py: @torch.compile layernorm_gpu
                               return dse::costmodel::evaluate_layernorm(
                                   hw, {m, n, dse::costmodel::Precision::fp16,
                                        dse::costmodel::DispatchPath::compiled});
                             }),
             0.15, 0.0,
             "rows of 16384 and 32768 elements re-read the row from HBM in the looped reduction's "
             "second pass (864 rows in flight x 32 / 64 KB > one 20 MB L2 partition); the 32768 "
             "row is still ~20% fast (the measurement implies about one more pass than modelled).");
}

// Where the looped LayerNorm's second pass comes from, by hand for the A100
// preset: 108 SMs x floor(2048 / 256) = 864 rows in flight; one L2 partition is
// 41,943,040 / 2 = 20,971,520 B; fp16 rows fit while 864 x 2 x L <= 20,971,520,
// i.e. L <= 12,136 elements. So 4096 rows of 12,136 read each row once from HBM
// (2 x 4096 x 12136 x 2 B with the write) and rows of 12,137 read it twice.
TEST(GpuMeasured, A100LayerNormSecondPassLeavesL2PastOnePartition) {
  const GpuHardware hw = load("a100-sxm4-80gb.yaml");
  const auto hbm = [&](std::int64_t len) {
    return dse::costmodel::evaluate_layernorm(
               hw, {4096, len, dse::costmodel::Precision::fp16, dse::costmodel::DispatchPath::compiled})
        .hbm_bytes;
  };
  EXPECT_DOUBLE_EQ(hbm(12136), 2.0 * 4096 * 12136 * 2);
  EXPECT_DOUBLE_EQ(hbm(12137), 3.0 * 4096 * 12137 * 2);
  // Without the occupancy figures the second pass is served by L2, as before.
  GpuHardware plain = hw;
  plain.compiled_reduction_threads_per_block = 0;
  EXPECT_DOUBLE_EQ(dse::costmodel::evaluate_layernorm(
                       plain, {4096, 32768, dse::costmodel::Precision::fp16, dse::costmodel::DispatchPath::compiled})
                       .hbm_bytes,
                   2.0 * 4096 * 32768 * 2);
}

TEST(GpuMeasured, A100SoftmaxWithinFifteenPercentMedian) {
  const GpuHardware hw = load("a100-sxm4-80gb.yaml");
  check_rows("A100 Softmax (llmcompass_softmax_A100.csv)",
             row_kernel_rows("llmcompass_softmax_A100.csv",
                             [&](std::int64_t m, std::int64_t n) {
                               // softmax.py: eager torch.softmax
                               return dse::costmodel::evaluate_softmax(
                                   hw, {m, n, dse::costmodel::Precision::fp16,
                                        dse::costmodel::DispatchPath::eager});
                             }),
             0.15, 0.0);
}

}  // namespace

// FP8 GEMMs with Transformer Engine's casts against BF16 GEMMs, on the H200 preset: TE's own
// benchmark (NVIDIA/TransformerEngine @ d0067d0 docs/examples/gemm_profiling/gemm_profiling.rst,
// "Worked Example: 5B Model on H200", an H200 NVL, CUDA events over 100 calls): the 12 GEMMs
// of one layer of hidden 4096, intermediate 16384 and 31 x 512 tokens (benchmark_gemm.py
// compute_gemm_shapes: the forward, data-gradient and weight-gradient shapes, each run as a
// te.Linear forward) take 32.014 ms in BF16 and 18.978 ms in FP8 under DelayedScaling autocast,
// 1.69x. Each te.Linear call under autocast casts its input (delayed scaling: one read; row-wise
// and, for the weight gradient it would feed, column-wise: 2 B in, 2 x 1 B out) and its weight
// (is_first_microbatch unset: every call; row-wise only, the input needing no gradient: 2 B in,
// 1 B out) before the FP8 GEMM (linear.py @ d0067d0). The model's ratio from its GEMM kernels
// and memory-bound casts (busy time, the calls back to back) is checked within 10%; nothing is
// set from this figure (the H200 NVL runs at up to 600 W, the preset's part at 700 W: the ratio,
// not the times, is compared).
TEST(GpuMeasured, TransformerEngineFp8LayerGemmsOnH200) {
  namespace pf = dse::costmodel::platform;
  const pf::Platform p = dse::io::resolve_platform("h200");
  const std::int64_t M = 31 * 512, H = 4096, I = 16384;
  const std::vector<std::array<std::int64_t, 3>> shapes = {
      {M, H, 3 * H}, {M, H, H}, {M, H, I}, {M, I, H},       // forward (m, k, n)
      {M, 3 * H, H}, {M, H, H}, {M, I, H}, {M, H, I},       // data gradient
      {H, M, 3 * H}, {H, M, H}, {H, M, I}, {I, M, H}};      // weight gradient
  const auto busy = [](const GpuKernelCost& c) { return c.latency_s - c.overhead_s; };
  double bf16 = 0.0, fp8 = 0.0, gemms_only = 0.0;
  for (const auto& [m, k, n] : shapes) {
    using dse::costmodel::Precision;
    bf16 += busy(dse::costmodel::evaluate_gemm(p.gpu, {m, n, k, 1, Precision::bf16}));
    gemms_only += busy(dse::costmodel::evaluate_gemm(p.gpu, {m, n, k, 1, Precision::fp8}));
    dse::costmodel::ElementwiseShape in{m * k, 3.0, 0.0, Precision::bf16, 1, 0};
    in.extra_bytes_per_element = 2.0;  // the row-wise and column-wise FP8 copies
    dse::costmodel::ElementwiseShape w{k * n, 3.0, 0.0, Precision::bf16, 1, 0};
    w.extra_bytes_per_element = 1.0;
    fp8 += busy(dse::costmodel::evaluate_elementwise(p.gpu, in)) + busy(dse::costmodel::evaluate_elementwise(p.gpu, w));
  }
  fp8 += gemms_only;
  const double measured = 32.014 / 18.978;
  std::printf("TE H200 layer GEMMs: model BF16 %.3f ms, FP8 GEMMs %.3f ms, with casts %.3f ms, ratio %.3f (measured %.3f)\n",
              bf16 * 1e3, gemms_only * 1e3, fp8 * 1e3, bf16 / fp8, measured);
  EXPECT_NEAR(bf16 / fp8 / measured, 1.0, 0.10);
  // Without the casts the FP8 GEMMs alone would be faster than the measured ratio allows.
  EXPECT_GT(bf16 / gemms_only / measured, 1.10);
}
