#include "costmodel/gpu/gpu.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace dse::costmodel {

namespace {

std::int64_t ceil_div(std::int64_t a, std::int64_t b) noexcept { return (a + b - 1) / b; }
double d(std::int64_t v) noexcept { return static_cast<double>(v); }

GpuKernelCost infeasible(GpuKernelKind kind, GpuCheck why) noexcept {
  GpuKernelCost c;
  c.feasible = false;
  c.reason = why;
  c.kind = kind;
  return c;
}

// Fill latency, stall fraction, achieved rate and bottleneck from the parts.
// `busy_s` is the kernel's time on the device without launch overhead;
// `overhead_s` is the launch/dispatch overhead of the kernel's dispatch path.
void finish(double busy_s, double overhead_s, double peak_flops_per_s, GpuKernelCost& c) {
  c.overhead_s = overhead_s;
  c.latency_s = busy_s + overhead_s;
  c.memory_stall_fraction = c.latency_s > 0.0 ? (c.latency_s - c.compute_time_s) / c.latency_s : 0.0;
  c.memory_stall_fraction = std::clamp(c.memory_stall_fraction, 0.0, 1.0);
  c.achieved_flops_per_s = c.latency_s > 0.0 ? c.flops / c.latency_s : 0.0;
  c.pct_of_peak = peak_flops_per_s > 0.0 ? 100.0 * c.achieved_flops_per_s / peak_flops_per_s : 0.0;
  const double memory_s = std::max(c.l2_time_s, c.hbm_time_s);
  if (c.overhead_s >= busy_s) {
    c.bottleneck = Bottleneck::overhead;
    c.bottleneck_detail = "overhead";
  } else if (c.compute_time_s >= memory_s) {
    c.bottleneck = Bottleneck::compute;
    c.bottleneck_detail = "compute";
  } else {
    c.bottleneck = Bottleneck::memory;
    c.bottleneck_detail = c.hbm_time_s >= c.l2_time_s ? "memory:hbm" : "memory:l2";
  }
  c.feasible = true;
}

// Special-function ops (exp, tanh, rsqrt) the chip issues per second.
double special_function_ops_per_s(const GpuHardware& hw) noexcept {
  return hw.special_function_ops_per_cycle_per_core * d(hw.core_count) * hw.clock_hz;
}

double vector_peak_flops_per_s(const GpuHardware& hw, Precision p) noexcept {
  const double per_core = (p == Precision::fp16 || p == Precision::bf16)
                              ? hw.vector_fp16_flops_per_cycle_per_core
                              : hw.vector_fp32_flops_per_cycle_per_core;
  return per_core * d(hw.core_count) * hw.clock_hz;
}

// Time for a streaming kernel that reads `read_hbm_bytes` from HBM, re-reads
// `read_l2_bytes` that the same kernel brought on chip moments before (served
// by L2), writes `write_bytes`, and does `vector_flops` and `special_ops`.
// A kernel's operands start in HBM: a single call is not assumed to find its
// inputs in L2 (LLMCompass charges every operator's input and output to the
// memory interface too: software_model/{softmax,layernorm,gelu}.py,
// simulate_l2_tile_io_cycle_count). Written bytes go to HBM. Compute and
// memory overlap across cores except one memory round trip to fill and drain
// the pipeline.
struct StreamParts {
  double read_hbm_bytes = 0.0;
  double read_l2_bytes = 0.0;  // re-reads that hit L2
  double write_bytes = 0.0;
  double vector_flops = 0.0;
  double special_ops = 0.0;
};

double stream_time(const GpuHardware& hw, const StreamParts& s, Precision p, GpuKernelCost& c) {
  const double hbm_bytes = s.read_hbm_bytes + s.write_bytes;
  const double l2_bytes = s.read_hbm_bytes + s.read_l2_bytes + s.write_bytes;
  c.hbm_bytes = hbm_bytes;
  c.l2_bytes = l2_bytes;
  c.hbm_time_s = hbm_bytes / hw.hbm_bandwidth_bytes_per_s();
  c.l2_time_s = l2_bytes / hw.l2_bandwidth_bytes_per_s;
  const double vector_s = s.vector_flops / vector_peak_flops_per_s(hw, p);
  const double sfu_rate = special_function_ops_per_s(hw);
  const double sfu_s = sfu_rate > 0.0 ? s.special_ops / sfu_rate : 0.0;
  c.compute_time_s = vector_s + sfu_s;  // vector and SFU issue from the same schedulers
  return std::max({c.compute_time_s, c.hbm_time_s, c.l2_time_s}) + hw.hbm_latency_s;
}

}  // namespace

std::string_view to_string(Precision p) {
  switch (p) {
    case Precision::fp32: return "fp32";
    case Precision::tf32: return "tf32";
    case Precision::fp16: return "fp16";
    case Precision::bf16: return "bf16";
    case Precision::fp8: return "fp8";
    case Precision::int8: return "int8";
  }
  return "?";
}

double bytes_per_element(Precision p) noexcept {
  switch (p) {
    case Precision::fp32:
    case Precision::tf32: return 4.0;
    case Precision::fp16:
    case Precision::bf16: return 2.0;
    case Precision::fp8:
    case Precision::int8: return 1.0;
  }
  return 4.0;
}

std::string_view to_string(DispatchPath p) {
  switch (p) {
    case DispatchPath::library: return "library";
    case DispatchPath::eager: return "eager";
    case DispatchPath::compiled: return "compiled";
  }
  return "?";
}

std::string_view to_string(GpuCheck c) {
  switch (c) {
    case GpuCheck::ok: return "ok";
    case GpuCheck::no_cores: return "no_cores";
    case GpuCheck::no_clock: return "no_clock";
    case GpuCheck::no_memory: return "no_memory";
    case GpuCheck::no_tiles: return "no_tiles";
    case GpuCheck::bad_fraction: return "bad_fraction";
  }
  return "?";
}

double GpuHardware::peak_matrix_flops_per_s(Precision p) const noexcept {
  return 2.0 * matrix_macs_per_cycle_per_core[static_cast<std::size_t>(p)] * d(core_count) * clock_hz;
}

double GpuHardware::ridge_flops_per_byte(Precision p) const noexcept {
  const double bw = hbm_bandwidth_bytes_per_s();
  return bw > 0.0 ? peak_matrix_flops_per_s(p) / bw : std::numeric_limits<double>::infinity();
}

GpuCheck check(const GpuHardware& hw) noexcept {
  if (hw.core_count <= 0) return GpuCheck::no_cores;
  if (!(hw.clock_hz > 0.0)) return GpuCheck::no_clock;
  if (!(hw.hbm_peak_bandwidth_bytes_per_s > 0.0) || !(hw.l2_bandwidth_bytes_per_s > 0.0) ||
      !(hw.sram_bytes_per_core > 0.0))
    return GpuCheck::no_memory;
  if (!(hw.hbm_achievable_fraction > 0.0) || hw.hbm_achievable_fraction > 1.0 ||
      !(hw.matrix_sustained_fraction > 0.0) || hw.matrix_sustained_fraction > 1.0)
    return GpuCheck::bad_fraction;
  for (const double f : hw.matrix_sustained_fraction_by_precision)
    if (!(f >= 0.0 && f <= 1.0)) return GpuCheck::bad_fraction;  // 0 = not set; NaN fails too
  if (hw.gemm_tiles.empty()) return GpuCheck::no_tiles;
  return GpuCheck::ok;
}

ElementwiseShape gelu_shape(std::int64_t elements, Precision p) noexcept {
  ElementwiseShape s;
  s.elements = elements;
  // x*x, *0.044715, +1, *x, *0.79788456, (tanh), +1, *x, *0.5: 8 vector ops,
  // one of them fused away as an FMA -> 7 vector FLOPs and one tanh.
  s.vector_flops_per_element = 7.0;
  s.special_ops_per_element = 1.0;
  s.precision = p;
  return s;
}

namespace {

// A GEMM's grid of output tiles on one tile shape: tiles per dimension, k-steps, waves over
// the cores, and the bytes a tile loads per k-step (real rows and columns: the padded part of a
// tile loads nothing).
struct GemmGrid {
  std::int64_t tiles_m, tiles_n, k_steps, tiles, full_waves, last_wave;
  std::int64_t slots;  // tiles a full wave holds: core_count / t.cores
  std::int64_t group;  // rows of tiles in a rasterisation group (t.group_m, at most all)
  std::int64_t rows_of_tiles;  // tiles_m x batch
  double rows, cols, k_step_bytes, e;
};

GemmGrid gemm_grid(const GpuHardware& hw, const GemmShape& s, const GemmTile& t) noexcept {
  GemmGrid g{};
  g.tiles_m = ceil_div(s.m, t.m);
  g.tiles_n = ceil_div(s.n, t.n);
  g.k_steps = ceil_div(s.k, t.k);
  g.tiles = g.tiles_m * g.tiles_n * s.batch;
  g.slots = std::max<std::int64_t>(1, hw.core_count / std::max<std::int64_t>(1, t.cores));
  g.full_waves = g.tiles / g.slots;
  g.last_wave = g.tiles % g.slots;
  g.rows_of_tiles = g.tiles_m * s.batch;
  g.group = std::min(std::max<std::int64_t>(1, t.group_m), g.rows_of_tiles);
  g.e = bytes_per_element(s.precision);
  g.rows = d(std::min(t.m, s.m));
  g.cols = d(std::min(t.n, s.n));
  g.k_step_bytes = d(t.k) * g.e;
  return g;
}

// The A and B panel bytes a wave of `active` tiles loads per k-step. The kernel's tile order
// (t.group_m) sets which panels a wave shares: row by row, a wave of `active` tiles spans
// ceil(active / tiles_n) rows of tiles; in groups of g rows, a wave within one group spans g rows
// and ceil(active / g) columns.
inline double wave_panel_bytes_per_step(const GemmGrid& g, std::int64_t active) noexcept {
  std::int64_t dn = std::min(active, g.tiles_n);
  std::int64_t dm = std::min(ceil_div(active, g.tiles_n), g.rows_of_tiles);
  if (g.group > 1 && active <= g.group * g.tiles_n) {
    dm = g.group;
    dn = std::min(g.tiles_n, ceil_div(active, g.group));
  } else if (g.group > 1) {
    dm = std::min(g.rows_of_tiles, g.group * ceil_div(active, g.group * g.tiles_n));
  }
  return (d(dm) * g.rows + d(dn) * g.cols) * g.k_step_bytes;
}

// The A and B bytes the kernel reads from HBM (`panel_total`: the panels its waves load,
// summed). L2 reuse: within a wave, tiles that share an A row panel or a B column panel fetch it
// from HBM once (rasterisation along n). When both operands fit in L2 together, each is fetched
// from HBM once for the whole kernel. L2 blocking across waves (grouped rasterisation: CUTLASS's
// threadblock swizzle, Triton's GROUP_SIZE_M ordering): tiles are visited in g x g groups whose
// g A row panels and g B column panels (each the whole k) fit in L2 together, so each group reads
// its panels from HBM once. Matters where a wave is a few tiles (a chip with a few large matrix
// engines) and the L2 holds several panels; g = 1 gives no reuse beyond the wave's.
inline double operand_hbm_bytes(const GpuHardware& hw, const GemmShape& s, const GemmGrid& g,
                                double panel_total) noexcept {
  const double a_bytes = d(s.m) * d(s.k) * g.e * d(s.batch);
  const double b_bytes = d(s.k) * d(s.n) * g.e * d(s.batch);
  const bool operands_resident = a_bytes + b_bytes <= hw.l2_bytes;
  const double panel_pair_bytes = (g.rows + g.cols) * d(g.k_steps) * g.k_step_bytes;
  const double groups = std::clamp(std::floor(hw.l2_bytes / panel_pair_bytes), 1.0,
                                   d(std::max<std::int64_t>(1, std::min(g.tiles_m, g.tiles_n))));
  const double grouped_total = d(g.tiles) * panel_pair_bytes / groups;
  const double reuse_total = std::min(panel_total, grouped_total);
  return operands_resident ? std::min(a_bytes + b_bytes, reuse_total) : reuse_total;
}

// One wave's time in parts: how they add depends on whether the engine streams its tiles.
struct WaveTime {
  double prologue = 0.0;
  double steps = 0.0;      // the k-steps
  double epilogue = 0.0;   // the C write
  double hbm_steps = 0.0;  // the k-steps' HBM transfers alone
  [[nodiscard]] double serial() const noexcept { return prologue + steps + epilogue; }
  // hw.gemm_waves_pipelined: the next wave's first loads are fetched and this wave's C written
  // while its k-steps run; the write shares the HBM with the loads.
  [[nodiscard]] double overlapped() const noexcept { return std::max(steps, hbm_steps + epilogue); }
};

// One wave of `active` tiles: a prologue that fills the first pipeline stage (not overlapped),
// k-steps each bounded by the slowest of matrix engine, L2, HBM and the load stream, and an
// epilogue that writes the C tiles. The load stream: a core keeps stages - 1 k-steps of loads in
// flight, and one k-step's loads complete a round trip plus their own transfer after issue (the
// wave's active cores share the HBM bandwidth, so a core's share of one step moves in hbm_step).
// By Little's law a step then takes at least (latency + hbm_step) / (stages - 1): with one step
// in flight, latency and transfer add, which is what a single wave of memory-bound tiles waits
// for (a skinny GEMM with one block per core); deeper pipelines hide the latency. `hbm_scale`:
// the HBM bytes per panel byte loaded (L2 reuse).
inline WaveTime gemm_wave_time(const GpuHardware& hw, const GemmGrid& g, std::int64_t active, double step_compute_s,
                               double hbm_scale, std::int64_t stages) noexcept {
  const double hbm_bw = hw.hbm_bandwidth_bytes_per_s();
  const double a = d(active);
  const double l2_step = a * (g.rows + g.cols) * g.k_step_bytes / hw.l2_bandwidth_bytes_per_s;
  const double hbm_step = wave_panel_bytes_per_step(g, active) * hbm_scale / hbm_bw;
  const double latency_step = (hw.hbm_latency_s + hbm_step) / d(stages - 1);
  const double step = std::max({step_compute_s, l2_step, hbm_step, latency_step});
  WaveTime w;
  w.prologue = hw.hbm_latency_s + std::max(l2_step, hbm_step);
  w.steps = d(g.k_steps) * step;
  w.epilogue = a * g.rows * g.cols * g.e / hbm_bw;
  w.hbm_steps = d(g.k_steps) * hbm_step;
  return w;
}

// The device busy time of the kernel's waves: each wave in turn (prologue, k-steps, epilogue), or,
// where the engine streams its tiles (hw.gemm_waves_pipelined), one prologue, every wave's
// overlapped time and one epilogue.
inline double gemm_waves_time(const GpuHardware& hw, const GemmGrid& g, double step_compute_s, double hbm_scale,
                              std::int64_t stages) noexcept {
  const WaveTime full = g.full_waves > 0 ? gemm_wave_time(hw, g, g.slots, step_compute_s, hbm_scale, stages)
                                         : WaveTime{};
  const WaveTime last = g.last_wave > 0 ? gemm_wave_time(hw, g, g.last_wave, step_compute_s, hbm_scale, stages)
                                        : WaveTime{};
  if (!hw.gemm_waves_pipelined) {
    double busy = 0.0;
    if (g.full_waves > 0) busy += d(g.full_waves) * full.serial();
    if (g.last_wave > 0) busy += last.serial();
    return busy;
  }
  const WaveTime& first = g.full_waves > 0 ? full : last;
  const WaveTime& final_wave = g.last_wave > 0 ? last : full;
  return first.prologue + d(g.full_waves) * full.overlapped() + (g.last_wave > 0 ? last.overlapped() : 0.0) +
         final_wave.epilogue;
}

// evaluate_gemm_with_tile for a description that passed check() (evaluate_gemm
// checks once for all its tiles).
GpuKernelCost gemm_tile(const GpuHardware& hw, const GemmShape& s, const GemmTile& t) noexcept {
  const double macs_per_cycle = hw.matrix_macs_per_cycle_per_core[static_cast<std::size_t>(s.precision)];
  if (!(macs_per_cycle > 0.0) || s.m <= 0 || s.n <= 0 || s.k <= 0 || s.batch <= 0 || t.m <= 0 ||
      t.n <= 0 || t.k <= 0 || t.cores <= 0 || t.cores > hw.core_count)
    return infeasible(GpuKernelKind::gemm, GpuCheck::no_tiles);
  // The pipelined k-steps of both operand tiles must fit the core's SRAM.
  const std::int64_t stages = gemm_stages(hw, t, s.precision);
  if (stages == 0) return infeasible(GpuKernelKind::gemm, GpuCheck::no_tiles);

  const GemmGrid g = gemm_grid(hw, s, t);
  GpuKernelCost c;
  c.kind = GpuKernelKind::gemm;
  c.tile = t;
  c.tile_count = g.tiles;
  c.waves = g.full_waves + (g.last_wave > 0 ? 1 : 0);
  // Tile quantisation: a core (or the tile's t.cores together) computes the whole padded tile.
  const double step_compute_s = d(t.m) * d(t.n) * d(t.k) /
                                (macs_per_cycle * d(t.cores) * hw.sustained_fraction(s.precision)) / hw.clock_hz;
  const double panel_total = d(g.full_waves) * d(g.k_steps) * wave_panel_bytes_per_step(g, g.slots) +
                             (g.last_wave > 0 ? d(g.k_steps) * wave_panel_bytes_per_step(g, g.last_wave) : 0.0);
  const double ab_hbm_total = operand_hbm_bytes(hw, s, g, panel_total);
  const double hbm_scale = panel_total > 0.0 ? ab_hbm_total / panel_total : 0.0;
  const double busy = gemm_waves_time(hw, g, step_compute_s, hbm_scale, stages);

  const double c_bytes = d(s.m) * d(s.n) * g.e * d(s.batch);
  c.compute_time_s = d(c.waves) * d(g.k_steps) * step_compute_s;
  c.l2_bytes = d(g.tiles) * d(g.k_steps) * (g.rows + g.cols) * g.k_step_bytes;
  c.hbm_bytes = ab_hbm_total + c_bytes;
  c.l2_time_s = c.l2_bytes / hw.l2_bandwidth_bytes_per_s;
  c.hbm_time_s = c.hbm_bytes / hw.hbm_bandwidth_bytes_per_s();
  c.flops = 2.0 * d(s.m) * d(s.n) * d(s.k) * d(s.batch);
  finish(busy, hw.launch_overhead_s(s.dispatch), hw.peak_matrix_flops_per_s(s.precision), c);
  return c;
}

}  // namespace

GemmTile preset_tile(const GpuHardware& hw, const GemmTile& t, Precision p) noexcept {
  GemmTile out = t;
  if (!hw.gemm_tile_k_scales_with_precision) return out;
  const double e = bytes_per_element(p);
  if (e < 2.0) out.k = t.k * 2;
  if (e > 2.0) out.k = std::max<std::int64_t>(1, t.k / 2);
  return out;
}

std::int64_t gemm_stages(const GpuHardware& hw, const GemmTile& t, Precision p) noexcept {
  // A core's share of a k-step's operands (a tile of t.cores cores splits them).
  const double stage_bytes = d(t.m + t.n) * d(t.k) * bytes_per_element(p) / d(std::max<std::int64_t>(1, t.cores));
  const std::int64_t base = std::max<std::int64_t>(2, hw.gemm_pipeline_stages);
  if (!(stage_bytes > 0.0) || d(base) * stage_bytes > hw.sram_bytes_per_core) return 0;
  if (hw.gemm_pipeline_stages_max <= base) return base;
  const double fit = std::floor((hw.sram_bytes_per_core - hw.gemm_stage_carveout_bytes) / stage_bytes);
  return std::clamp(static_cast<std::int64_t>(std::max(fit, 0.0)), base, hw.gemm_pipeline_stages_max);
}

GpuKernelCost evaluate_gemm_with_tile(const GpuHardware& hw, const GemmShape& s,
                                      const GemmTile& t) noexcept {
  if (const GpuCheck why = check(hw); why != GpuCheck::ok) return infeasible(GpuKernelKind::gemm, why);
  return gemm_tile(hw, s, t);
}

namespace {

// The fastest tile of hw.gemm_tiles (hw passed check()).
GpuKernelCost fastest_tile(const GpuHardware& hw, const GemmShape& s) noexcept {
  GpuKernelCost best = infeasible(GpuKernelKind::gemm, GpuCheck::no_tiles);
  for (const GemmTile& t : hw.gemm_tiles) {
    GpuKernelCost c = gemm_tile(hw, s, preset_tile(hw, t, s.precision));
    if (c.feasible && (!best.feasible || c.latency_s < best.latency_s)) best = std::move(c);
  }
  return best;
}

// evaluate_gemm_split for a description that passed check().
GpuKernelCost split_gemm(const GpuHardware& hw, const GemmShape& s, std::int64_t parts, const GemmTile* tile) {
  if (parts <= 1) return tile != nullptr ? gemm_tile(hw, s, *tile) : fastest_tile(hw, s);
  GemmShape slice = s;
  slice.k = ceil_div(s.k, parts);
  slice.batch = s.batch * parts;
  GpuKernelCost c = tile != nullptr ? gemm_tile(hw, slice, *tile) : fastest_tile(hw, slice);
  if (!c.feasible) return c;
  const double partial = 2.0 * 4.0 * d(parts) * d(s.m) * d(s.n) * d(s.batch);
  const double extra = partial / hw.hbm_bandwidth_bytes_per_s();
  c.latency_s += extra;
  c.hbm_time_s += extra;
  c.hbm_bytes += partial;
  c.flops = 2.0 * d(s.m) * d(s.n) * d(s.k) * d(s.batch);
  c.achieved_flops_per_s = c.flops / c.latency_s;
  const double peak = hw.peak_matrix_flops_per_s(s.precision);
  c.pct_of_peak = peak > 0.0 ? 100.0 * c.achieved_flops_per_s / peak : 0.0;
  c.memory_stall_fraction = std::clamp((c.latency_s - c.compute_time_s) / c.latency_s, 0.0, 1.0);
  c.bottleneck_detail = "split_k=" + std::to_string(parts);
  return c;
}

// The four coordinates of a tuned size, as library_kernel compares them.
std::int64_t coord(const GemmLibraryEntry& e, int dim) noexcept {
  switch (dim) {
    case 0: return e.m;
    case 1: return e.n;
    case 2: return e.batch;
    default: return e.k;
  }
}
std::int64_t coord(const GemmShape& s, int dim) noexcept {
  switch (dim) {
    case 0: return s.m;
    case 1: return s.n;
    case 2: return s.batch;
    default: return s.k;
  }
}

struct Nearest {
  const GemmLibraryEntry* entry = nullptr;
  double d2 = std::numeric_limits<double>::infinity();
  void offer(const GemmLibraryEntry& e, const GemmShape& s) noexcept {
    double d2e = 0.0;
    for (int dim = 0; dim < 4; ++dim) {
      const double x = d(coord(e, dim) - coord(s, dim));
      d2e += x * x;
    }
    if (d2e < d2 || (d2e == d2 && entry != nullptr && e.order < entry->order)) {
      d2 = d2e;
      entry = &e;
    }
  }
};

// Ranges of at most this many entries are leaves, scanned in full.
constexpr std::size_t kLeaf = 8;

// The implicit k-d tree: the node of [lo, hi) is its middle entry, split on
// dimension depth % 4; the left part holds coordinates <= the node's, the right
// part >= (index_gemm_library). A part is searched when the query's distance to
// the splitting plane does not exceed the best distance so far (ties included).
void search(const std::vector<GemmLibraryEntry>& t, std::size_t lo, std::size_t hi, int depth,
            const GemmShape& s, Nearest& best) noexcept {
  if (hi - lo <= kLeaf) {
    for (std::size_t i = lo; i < hi; ++i) best.offer(t[i], s);
    return;
  }
  const std::size_t mid = lo + (hi - lo) / 2;
  const int dim = depth % 4;
  best.offer(t[mid], s);
  const double diff = d(coord(s, dim) - coord(t[mid], dim));
  const bool left_first = diff <= 0.0;
  search(t, left_first ? lo : mid + 1, left_first ? mid : hi, depth + 1, s, best);
  if (diff * diff <= best.d2)
    search(t, left_first ? mid + 1 : lo, left_first ? hi : mid, depth + 1, s, best);
}

void build(std::vector<GemmLibraryEntry>& t, std::size_t lo, std::size_t hi, int depth) {
  if (hi - lo <= kLeaf) return;
  const std::size_t mid = lo + (hi - lo) / 2;
  const int dim = depth % 4;
  std::nth_element(t.begin() + static_cast<std::ptrdiff_t>(lo), t.begin() + static_cast<std::ptrdiff_t>(mid),
                   t.begin() + static_cast<std::ptrdiff_t>(hi),
                   [dim](const GemmLibraryEntry& a, const GemmLibraryEntry& b) { return coord(a, dim) < coord(b, dim); });
  build(t, lo, mid, depth + 1);
  build(t, mid + 1, hi, depth + 1);
}

}  // namespace

const GemmLibraryEntry* library_kernel(const GpuHardware& hw, const GemmShape& s) noexcept {
  if (hw.gemm_library.empty() || s.precision != hw.gemm_library_precision) return nullptr;
  Nearest best;
  if (hw.gemm_library_indexed) {
    search(hw.gemm_library, 0, hw.gemm_library.size(), 0, s, best);
  } else {
    for (const GemmLibraryEntry& e : hw.gemm_library) best.offer(e, s);
  }
  return best.entry;
}

void index_gemm_library(GpuHardware& hw) {
  build(hw.gemm_library, 0, hw.gemm_library.size(), 0);
  hw.gemm_library_indexed = true;
}

GpuKernelCost evaluate_gemm_split(const GpuHardware& hw, const GemmShape& s, std::int64_t parts,
                                  const GemmTile* tile) noexcept {
  if (const GpuCheck why = check(hw); why != GpuCheck::ok) return infeasible(GpuKernelKind::gemm, why);
  return split_gemm(hw, s, parts, tile);
}

GpuKernelCost evaluate_gemm(const GpuHardware& hw, const GemmShape& s) noexcept {
  if (const GpuCheck why = check(hw); why != GpuCheck::ok) return infeasible(GpuKernelKind::gemm, why);
  if (const GemmLibraryEntry* e = library_kernel(hw, s)) {
    GpuKernelCost c = split_gemm(hw, s, e->split_k, &e->tile);
    if (c.feasible) {
      c.library_solution = e->solution;
      return c;
    }
  }
  return fastest_tile(hw, s);
}

GpuKernelCost evaluate_elementwise(const GpuHardware& hw, const ElementwiseShape& s) noexcept {
  if (const GpuCheck why = check(hw); why != GpuCheck::ok)
    return infeasible(GpuKernelKind::elementwise, why);
  GpuKernelCost c;
  c.kind = GpuKernelKind::elementwise;
  const double e = bytes_per_element(s.precision);
  const double n = d(s.elements);
  StreamParts p;
  p.read_hbm_bytes = n * e * d(s.inputs);
  p.write_bytes = n * (e * d(s.outputs) + s.extra_bytes_per_element);
  p.vector_flops = n * s.vector_flops_per_element;
  p.special_ops = n * s.special_ops_per_element;
  c.flops = p.vector_flops + p.special_ops;
  const double busy = stream_time(hw, p, s.precision, c);
  finish(busy, hw.launch_overhead_s(s.dispatch), vector_peak_flops_per_s(hw, s.precision), c);
  return c;
}

namespace {

// Softmax and layer norm: every row is read from HBM once and written once;
// `extra_hbm_reads` more full reads of the input come from HBM again and
// `extra_l2_reads` from L2 (see the kernel structure in the callers).
GpuKernelCost evaluate_rows(const GpuHardware& hw, const RowShape& s, GpuKernelKind kind,
                            double vector_flops_per_element, double special_ops_per_element, double special_ops_per_row,
                            double extra_hbm_reads, double extra_l2_reads, double row_writes = 1.0) {
  if (const GpuCheck why = check(hw); why != GpuCheck::ok) return infeasible(kind, why);
  GpuKernelCost c;
  c.kind = kind;
  const double e = bytes_per_element(s.precision);
  const double n = d(s.rows) * d(s.row_length);
  StreamParts p;
  p.read_hbm_bytes = (1.0 + extra_hbm_reads) * n * e;
  p.read_l2_bytes = extra_l2_reads * n * e;
  p.write_bytes = row_writes * n * e;
  p.vector_flops = n * vector_flops_per_element;
  p.special_ops = n * special_ops_per_element + d(s.rows) * special_ops_per_row;
  c.flops = p.vector_flops + p.special_ops;
  const double busy = stream_time(hw, p, s.precision, c);
  finish(busy, hw.launch_overhead_s(s.dispatch), vector_peak_flops_per_s(hw, s.precision), c);
  return c;
}

}  // namespace

GpuKernelCost evaluate_softmax(const GpuHardware& hw, const RowShape& s) noexcept {
  // Online softmax: max and rescaled sum (compare, sub, mul, add = 4 FLOPs and
  // one exp per element), then normalise (sub, exp, mul = 2 FLOPs and one exp).
  //
  // Kernel structure (PyTorch aten/src/ATen/native/cuda/SoftMax.cu,
  // host_softmax): a row of at most 1024 elements and 4096 bytes is handled by
  // one warp holding the row in registers (dispatch_softmax_forward): one HBM
  // read, one write. A longer row goes to a block-per-row kernel
  // (cunn_SoftMaxForward) that walks the row again for the normalised output;
  // its traffic is counted as two input reads and one write from HBM, as
  // LLMCompass's softmax model counts it (software_model/softmax.py,
  // roofline_model: io_count = M * N * word_size * 3).
  const double row_bytes = d(s.row_length) * bytes_per_element(s.precision);
  const bool single_pass = s.row_length <= hw.eager_softmax_single_pass_max_row_elements &&
                           row_bytes <= hw.eager_softmax_single_pass_max_row_bytes;
  return evaluate_rows(hw, s, GpuKernelKind::softmax, 6.0, 2.0, 1.0, single_pass ? 0.0 : 1.0, 0.0);
}

double fused_score_work_time_s(const GpuHardware& hw, double scores, double fp32_flops, double special_ops) noexcept {
  const double vector_rate = vector_peak_flops_per_s(hw, Precision::fp32);
  const double sfu_rate = special_function_ops_per_s(hw);
  return (vector_rate > 0.0 ? scores * fp32_flops / vector_rate : 0.0) +
         (sfu_rate > 0.0 ? scores * special_ops / sfu_rate : 0.0);
}

GpuKernelCost evaluate_cross_entropy(const GpuHardware& hw, const RowShape& s, bool backward) noexcept {
  // The fused softmax cross-entropy of flash-attn 1.x (csrc/xentropy, Apex's xentropy kernel,
  // block-per-row like PyTorch's cunn_SoftMaxForward). Forward (cunn_SoftMaxXEntropyForward):
  // one pass over the row for its max (and sum), a second for the sum of exp(x - max); it
  // writes only the row's loss and log-sum-exp. The second pass is counted from HBM, as the
  // softmax's is. About 5 FLOPs and one exp per element, a log per row. Backward
  // (cunn_SoftMaxXEntropyBackward): one pass, exp(x - lse) minus the one-hot, times the
  // loss's gradient, written as the logits' gradient: one read, one write, about 4 FLOPs and
  // one exp per element.
  if (backward) return evaluate_rows(hw, s, GpuKernelKind::softmax, 4.0, 1.0, 0.0, 0.0, 0.0, 1.0);
  return evaluate_rows(hw, s, GpuKernelKind::softmax, 5.0, 1.0, 1.0, 1.0, 0.0, 0.0);
}

GpuKernelCost evaluate_layernorm(const GpuHardware& hw, const RowShape& s) noexcept {
  // Welford mean/variance (about 5 FLOPs per element), then (x - mean) * rstd
  // * gamma + beta (4 FLOPs); one rsqrt per row.
  //
  // Kernel structure (torch.compile / Inductor, torch/_inductor/codegen/
  // triton.py should_use_persistent_reduction): a row of at most 1024
  // elements is a persistent reduction held on chip (one read, one write);
  // a longer row is a looped reduction that reads the row a second time to
  // normalise it, moments after the statistics loop. LLMCompass's layer-norm
  // model counts one read and one write (software_model/layernorm.py,
  // roofline_model: io_count = M * N * word_size * 2).
  //
  // The second pass finds the row in L2 only while the rows in flight (cores x
  // resident blocks, one row per block) fit in one L2 partition: every other
  // resident block streams its own row in between. Past that the row is read
  // from HBM again (known when the file gives resident threads per core and
  // the reduction's block size; otherwise L2 is assumed).
  const bool single_pass = s.row_length <= hw.compiled_reduction_single_pass_max_row_elements;
  bool second_pass_in_l2 = true;
  if (!single_pass && hw.max_threads_per_core > 0 && hw.compiled_reduction_threads_per_block > 0) {
    const double blocks_per_core =
        std::floor(d(hw.max_threads_per_core) / d(hw.compiled_reduction_threads_per_block));
    const double in_flight_bytes =
        d(hw.core_count) * blocks_per_core * d(s.row_length) * bytes_per_element(s.precision);
    second_pass_in_l2 = in_flight_bytes <= hw.l2_bytes / d(std::max<std::int64_t>(1, hw.l2_partitions));
  }
  const double extra_hbm = !single_pass && !second_pass_in_l2 ? 1.0 : 0.0;
  const double extra_l2 = !single_pass && second_pass_in_l2 ? 1.0 : 0.0;
  return evaluate_rows(hw, s, GpuKernelKind::layernorm, 9.0, 0.0, 1.0, extra_hbm, extra_l2);
}

GpuKernelCost evaluate_layernorm_backward(const GpuHardware& hw, const RowShape& s) noexcept {
  // PyTorch aten/src/ATen/native/cuda/layer_norm_kernel.cu (LayerNormBackwardKernelImplInternal,
  // the same two kernels in the 2023 and current versions): layer_norm_grad_input_kernel(dY, X,
  // mean, rstd, gamma, dX) reads dY and X (each row's two sums, then dX from registers or
  // L1) and writes dX; GammaBetaBackwardCUDAKernel(M, N, dY, X, mean, rstd, dg, db) reads dY
  // and X again, column-wise, for dgamma and dbeta. Apex's fused layer norm (Megatron-LM) has
  // the same split (cuComputeGradInput, cuComputePartGradGammaBeta). Counted from HBM: dY and X
  // twice (four reads) and one write; about 8 FLOPs per element for dX and 3 for the weight
  // gradients; the second kernel's launch is left out.
  return evaluate_rows(hw, s, GpuKernelKind::layernorm, 11.0, 0.0, 1.0, 3.0, 0.0);
}

}  // namespace dse::costmodel
