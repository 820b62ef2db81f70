// Operators to kernels (evaluate.hpp's lowering table), memoised per shape in a KernelCache,
// and a standalone or fused kernel's layer of the mapping sheet.
#include <algorithm>
#include <cmath>

#include "costmodel/platform/evaluate_detail.hpp"

namespace dse::costmodel::platform::detail {

namespace wl = dse::costmodel::workload;

namespace {

std::string tile_text(const GpuKernelCost& c) {
  if (c.tile.m == 0) return "";
  const std::string split = c.bottleneck_detail.rfind("split_k", 0) == 0 ? c.bottleneck_detail + ", " : "";
  const std::string library =
      c.library_solution >= 0 ? ", library kernel " + std::to_string(c.library_solution) : std::string();
  const std::string pair = c.tile.cores > 1 ? " on " + std::to_string(c.tile.cores) + " cores" : std::string();
  return split + std::to_string(c.tile.m) + "x" + std::to_string(c.tile.n) + "x" + std::to_string(c.tile.k) + pair + ", " +
         std::to_string(c.tile_count) + " tiles, " + std::to_string(c.waves) + " waves" + library;
}

double dynamic_energy(const Platform& p, const Kernel& k, double flops, double hbm, double l2) {
  const ChipEnergy& e = p.energy;
  const double flop_e = k.matrix ? matrix_flop_energy(e, k.precision) : e.vector_flop_j;
  return flops * flop_e + hbm * e.hbm_byte_j + l2 * e.l2_byte_j;
}

}  // namespace

double matrix_flop_energy(const ChipEnergy& e, Precision p) noexcept {
  switch (p) {
    case Precision::fp32:
      return e.matrix_flop_fp32_j;
    case Precision::int8:
    case Precision::fp8:
      return e.matrix_flop_int8_j;
    default:
      return e.matrix_flop_fp16_j;
  }
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

void finish_fused(LayerResult& r, double compute_s, double traffic_bytes, double bw, double overhead_s, double peak,
                  double serial_bytes) {
  r.dram_bytes = traffic_bytes + serial_bytes;
  r.l2_bytes = traffic_bytes + serial_bytes;
  const double busy = std::max(compute_s, traffic_bytes / bw);
  r.latency_s = busy + serial_bytes / bw + overhead_s;
  r.bottleneck = overhead_s >= busy                ? Bottleneck::overhead
                 : compute_s >= traffic_bytes / bw ? Bottleneck::compute
                                                   : Bottleneck::memory;
  r.stall_fraction = r.latency_s > 0 ? std::clamp((r.latency_s - compute_s) / r.latency_s, 0.0, 1.0) : 0.0;
  r.pct_of_peak = peak > 0 && r.latency_s > 0 ? r.flops / r.latency_s / peak : 0.0;
}

GpuKernelCost KernelLowering::memo(const Key& key, const auto& compute) {
  if (const GpuKernelCost* c = cache_.find(key)) {
    ++cache_.hits;
    return *c;
  }
  ++cache_.misses;
  GpuKernelCost c = compute();
  cache_.put(key, c);
  return c;
}

namespace {

// An elementwise operator's kernel shape: its work per element and the tensors it streams.
ElementwiseShape elementwise_shape(const wl::Operator& op, Precision prec) {
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
  return s;
}

}  // namespace

Kernel KernelLowering::lower(const wl::Operator& op) {
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
      GemmShape s{c.n * c.out_h() * c.out_w(), c.k / g, (c.c / g) * c.r * c.s, g, prec, DispatchPath::library};
      k.cost = implicit_gemm_traffic(s, static_cast<double>(c.n * c.c * c.h * c.w), gemm(s));
      k.matrix = true;
      k.kernel = "conv2d->implicit_gemm";
      break;
    }
    case wl::OpKind::elementwise:
      k.cost = elementwise(elementwise_shape(op, prec), Memo::elementwise);
      k.kernel = "elementwise";
      break;
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

double KernelLowering::fused_gemm_compute_s(const GemmShape& s, double standalone_compute_s) {
  const GpuKernelCost c =
      memo(Key{static_cast<int>(Memo::fused_gemm), s.m, s.n, s.k, s.batch, static_cast<int>(s.precision), 0.0, 0}, [&] {
        GpuKernelCost best;
        for (const GemmTile& t : p_.gpu.gemm_tiles) {
          const GpuKernelCost k = evaluate_gemm_with_tile(p_.gpu, s, preset_tile(p_.gpu, t, s.precision));
          if (k.feasible && (!best.feasible || k.compute_time_s < best.compute_time_s)) best = k;
        }
        return best;
      });
  return c.feasible ? std::min(c.compute_time_s, standalone_compute_s) : standalone_compute_s;
}

// Implicit-GEMM convolution (cuDNN / CUTLASS / TensorRT): the kernel gathers
// the im2col rows on chip from the real input tensor, so the A operand's HBM
// traffic is the input (N*C*H*W elements) read once per column block of output
// tiles (ceil(N_gemm / tile_n) blocks; once in all when the input fits in L2
// beside the weights), not the unrolled M x K matrix the GEMM model counts.
// The A part of the GEMM's traffic is replaced and a memory-bound busy time
// shrinks in proportion (compute time is kept as its floor).
GpuKernelCost KernelLowering::implicit_gemm_traffic(const GemmShape& s, double input_elements, GpuKernelCost c) const {
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
  const double new_busy =
      c.hbm_time_s >= c.compute_time_s ? std::max({c.compute_time_s, new_hbm / bw, busy * new_hbm / old_hbm}) : busy;
  c.hbm_bytes = new_hbm;
  c.hbm_time_s = new_hbm / bw;
  c.latency_s = new_busy + c.overhead_s;
  c.achieved_flops_per_s = c.latency_s > 0 ? c.flops / c.latency_s : 0.0;
  c.memory_stall_fraction =
      c.latency_s > 0 ? std::clamp((c.latency_s - c.compute_time_s) / c.latency_s, 0.0, 1.0) : 0.0;
  return c;
}

GpuKernelCost KernelLowering::gemm(const GemmShape& s) {
  return memo(Key{static_cast<int>(Memo::gemm), s.m, s.n, s.k, s.batch, static_cast<int>(s.precision), 0.0, 0},
              [&] { return split_k_gemm(s); });
}

// Compulsory traffic floor: every operand is read and the output written at
// least once, (m k + k n + m n) x batch x bytes (the kernel model shares operand
// panels between the tiles of a wave, which undercounts distinct batches and
// split-K slices).
void KernelLowering::compulsory_floor(const GemmShape& s, double extra_bytes, GpuKernelCost& c) const {
  const double e = bytes_per_element(s.precision);
  const double b = static_cast<double>(s.batch);
  const double floor =
      (static_cast<double>(s.m) * static_cast<double>(s.k) + static_cast<double>(s.k) * static_cast<double>(s.n) +
       static_cast<double>(s.m) * static_cast<double>(s.n)) *
          b * e +
      extra_bytes;
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
GpuKernelCost KernelLowering::split_k_gemm(const GemmShape& s) const {
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

double KernelLowering::partial_bytes(const GemmShape& s, std::int64_t parts) {
  return 2.0 * 4.0 * static_cast<double>(parts * s.m * s.n * s.batch);
}

void KernelLowering::refresh_rates(const GemmShape& s, GpuKernelCost& c) const {
  if (!c.feasible || !(c.latency_s > 0.0)) return;
  c.achieved_flops_per_s = c.flops / c.latency_s;
  const double peak = p_.gpu.peak_matrix_flops_per_s(s.precision);
  c.pct_of_peak = peak > 0 ? 100.0 * c.achieved_flops_per_s / peak : 0.0;  // in percent, as GpuKernelCost's
  c.memory_stall_fraction = std::clamp((c.latency_s - c.compute_time_s) / c.latency_s, 0.0, 1.0);
}

GpuKernelCost KernelLowering::elementwise(const ElementwiseShape& s, Memo kind) {
  return memo(
      Key{static_cast<int>(kind), s.elements, s.inputs, s.outputs,
          static_cast<std::int64_t>(std::llround(s.extra_bytes_per_element * 8.0)), static_cast<int>(s.precision),
          s.vector_flops_per_element, static_cast<int>(s.special_ops_per_element)},
      [&] { return evaluate_elementwise(p_.gpu, s); });
}

GpuKernelCost KernelLowering::row(const RowShape& s, Memo kind) {
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

Kernel KernelLowering::collective(const wl::Operator& op) {
  Kernel k;
  k.collective = true;
  k.kernel = op.kind == wl::OpKind::all_reduce ? "all_reduce(ring)" : "all_to_all";
  k.precision = kernel_precision(p_.gpu, op.precision);  // the element type it moves
  k.cost.kind = GpuKernelKind::elementwise;
  k.cost.feasible = true;
  k.cost.flops = wl::flops(op);
  const double bytes = static_cast<double>(op.rows * op.cols) * wl::bytes_per_element(op.precision);
  system::Interconnect ic = o_.interconnect.value_or(p_.links);
  if (!o_.interconnect && system::chip_count(ic) < op.participants) ic = system::make_switch(op.participants, p_.links);
  system::Interconnect group;
  double t = 0.0;
  if (op.participants > 1 && system::subgroup(ic, op.participants, group)) {
    const auto kind =
        op.kind == wl::OpKind::all_reduce ? system::CollectiveKind::all_reduce : system::CollectiveKind::all_to_all;
    // The stack's own kernel where it serves this buffer and group, else the library's ring.
    system::CollectiveCost c;
    const bool custom_wanted = kind == system::CollectiveKind::all_reduce &&
                               o_.all_reduce_kernel == system::AllReduceKernel::custom &&
                               (o_.custom_all_reduce_max_bytes <= 0.0 || bytes <= o_.custom_all_reduce_max_bytes);
    if (custom_wanted) c = system::peer_all_reduce_cost(group, bytes);
    if (custom_wanted && c.feasible) {
      k.kernel = "all_reduce(custom)";
    } else {
      c = system::collective_cost(group, kind, system::CollectiveAlgorithm::ring, bytes);
    }
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
void KernelLowering::apply_launch_mode(Kernel& k) const {
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
  const double peak =
      k.matrix ? p_.gpu.peak_matrix_flops_per_s(k.precision)
               : p_.gpu.vector_fp32_flops_per_cycle_per_core * static_cast<double>(p_.gpu.core_count) * p_.gpu.clock_hz;
  c.pct_of_peak = peak > 0.0 ? c.achieved_flops_per_s / peak : 0.0;
  if (graph && !k.collective) {
    const double busy_max = std::max({c.compute_time_s, c.hbm_time_s, c.l2_time_s});
    if (c.overhead_s >= busy_max)
      c.bottleneck = Bottleneck::overhead;
    else if (c.compute_time_s >= std::max(c.hbm_time_s, c.l2_time_s))
      c.bottleneck = Bottleneck::compute;
    else
      c.bottleneck = Bottleneck::memory;
  }
}

}  // namespace dse::costmodel::platform::detail
