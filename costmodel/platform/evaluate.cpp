#include "costmodel/platform/evaluate.hpp"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "costmodel/platform/evaluate_detail.hpp"
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

using detail::Kernel;
using detail::matrix_flop_energy;

bool supported(const Platform& p, FusionKind f) {
  return std::find(p.supported_fusions.begin(), p.supported_fusions.end(), f) != p.supported_fusions.end();
}

void note_fusion_kind(GraphEval& out, const Platform& p, FusionKind f) {
  ++out.fusion_groups;
  if (!supported(p, f)) ++out.unsupported_fusion_groups;
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

// One conv_stage group, blocks first..last, as one kernel: its layer, and each member block's
// share of its latency.
void add_conv_stage(GraphEval& out, const Platform& platform, const wl::OperatorGraph& graph, std::size_t first,
                    std::size_t last, detail::KernelLowering& ev, double bw, double overhead) {
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
  r.energy_j = matrix_flops * matrix_flop_energy(platform.energy, prec) + vector_flops * platform.energy.vector_flop_j +
               traffic * (platform.energy.hbm_byte_j + platform.energy.l2_byte_j);
  note_fusion_kind(out, platform, FusionKind::conv_stage);
  // Each member block's share of the kernel, per occurrence (by matrix time).
  for (std::size_t k = first; k <= last; ++k) {
    const double share = matrix_s > 0 ? block_matrix_s[k - first] / matrix_s : 1.0 / double(last - first + 1);
    out.block_latency_s.push_back(r.latency_s * share);
    out.block_collective_s.push_back(0.0);
    out.block_attention_s.push_back(0.0);
  }
  out.layers.push_back(std::move(r));
}

// The graph's totals from its layers, and its memory footprint.
void sum_totals(GraphEval& out, const Platform& platform, const wl::OperatorGraph& graph, const EvalOptions& options) {
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
}

}  // namespace

// GEMM epilogue: GEMM-like -> its only consumer, an element-wise op with one
// activation input (bias / scale-shift / activation), and so on down a chain.
// A two-input element-wise op (residual add) also joins the chain when no
// norm reads it (norm_residual keeps those): the epilogue reads the other
// operand from HBM (its bytes added at HBM bandwidth), as cuDNN / TensorRT
// conv + bias + add + ReLU and CUTLASS residual epilogues do.
std::optional<LayerResult> detail::BlockWalk::fuse_gemm_epilogue(std::size_t i, bool norm_residual) {
  const wl::Operator& op = b.nodes[i].op;
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
  if (!wl::is_gemm_like(op.kind) || next_epilogue(i) >= b.nodes.size()) return std::nullopt;
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
  return r;
}

// norm + residual: a two-input element-wise op (residual add) and the norm that reads it, one
// kernel: the norm's read of its input and its launch go.
std::optional<LayerResult> detail::BlockWalk::fuse_norm_residual(std::size_t i) {
  const wl::Operator& op = b.nodes[i].op;
  if (op.kind != wl::OpKind::elementwise || op.tensors.size() != 3) return std::nullopt;
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
    return r;
  }
  return std::nullopt;
}

namespace {

// What every block's walk shares: the fusions the options apply and the platform's figures.
struct WalkSettings {
  bool epilogues = false;
  bool norm_residual = false;
  bool flash = false;
  double bw = 0.0;        // HBM bandwidth, bytes/s
  double overhead = 0.0;  // one kernel launch under the launch mode, s
  double attention_matrix_share = 1.0;
};

// One block's operators in order, each the head of a fused group the options allow (flash
// attention backward, then forward; a GEMM with its epilogue; a residual add with its norm)
// or a kernel of its own: one layer each, and the block's latency, collective and attention time.
void walk_block(GraphEval& out, const Platform& platform, const EvalOptions& options, detail::KernelLowering& ev,
                const wl::Block& b, const WalkSettings& w) {
  const auto cons = wl::consumers(b);
  std::vector<detail::Kernel> ks;
  ks.reserve(b.nodes.size());
  for (const auto& n : b.nodes) ks.push_back(ev.lower(n.op));
  std::vector<bool> done(b.nodes.size(), false);
  detail::BlockWalk walk{platform, options, ev, b, cons, ks, done, w.bw, w.overhead, w.attention_matrix_share};
  double block_s = 0.0, block_coll = 0.0, block_attn = 0.0;
  auto push = [&](LayerResult r, bool coll) {
    block_s += r.latency_s;
    if (coll) block_coll += r.latency_s;
    out.layers.push_back(std::move(r));
  };
  // A fused group: one layer, its kind counted (and whether the platform's stack lists it).
  auto push_fused = [&](LayerResult r, FusionKind f) {
    note_fusion_kind(out, platform, f);
    if (f == FusionKind::flash_attention) block_attn += r.latency_s;
    push(std::move(r), false);
  };
  for (std::size_t i = 0; i < b.nodes.size(); ++i) {
    if (done[i]) continue;
    if (w.flash) {
      if (auto r = walk.fuse_flash_backward(i)) {
        push_fused(std::move(*r), FusionKind::flash_attention);
        continue;
      }
      if (auto r = walk.fuse_flash_forward(i)) {
        push_fused(std::move(*r), FusionKind::flash_attention);
        continue;
      }
    }
    if (w.epilogues) {
      if (auto r = walk.fuse_gemm_epilogue(i, w.norm_residual)) {
        push_fused(std::move(*r), FusionKind::gemm_epilogue);
        continue;
      }
    }
    if (w.norm_residual) {
      if (auto r = walk.fuse_norm_residual(i)) {
        push_fused(std::move(*r), FusionKind::norm_residual);
        continue;
      }
    }
    push(detail::layer_of(platform, b.nodes[i].op, b.repeat, ks[i]), ks[i].collective);
  }
  out.block_latency_s.push_back(block_s);
  out.block_collective_s.push_back(block_coll);
  out.block_attention_s.push_back(block_attn);
}

}  // namespace

GraphEval evaluate_graph(const Platform& platform, const wl::OperatorGraph& graph, const EvalOptions& options,
                         KernelCache* cache) {
  KernelCache local;
  KernelCache& kc = cache != nullptr ? *cache : local;
  const std::int64_t hits0 = kc.hits, misses0 = kc.misses;
  detail::KernelLowering ev(platform, options, kc);
  GraphEval out;
  WalkSettings w;
  w.epilogues = applies_fusion(options, FusionKind::gemm_epilogue);
  w.norm_residual = applies_fusion(options, FusionKind::norm_residual);
  w.flash = applies_fusion(options, FusionKind::flash_attention);
  w.attention_matrix_share =
      attention_kernel_uses_warp_mma(options.attention_kernel) ? platform.gpu.warp_mma_fraction : 1.0;
  w.bw = platform.gpu.hbm_bandwidth_bytes_per_s();
  w.overhead = options.launch == LaunchMode::graph ? platform.graph_kernel_overhead_s
                                                   : platform.gpu.launch_overhead_s(DispatchPath::library);

  // conv_stage groups (aggressive or named; inference): one kernel per group, costed
  // before the per-block walk, which then skips the member blocks.
  std::vector<std::pair<std::size_t, std::size_t>> stages;
  if (applies_fusion(options, FusionKind::conv_stage) && options.phase.phase != wl::Phase::training)
    stages = conv_stages(graph, platform.gpu.sram_bytes_per_core);
  std::size_t next_stage = 0;

  for (std::size_t bi = 0; bi < graph.blocks.size(); ++bi) {
    if (next_stage < stages.size() && stages[next_stage].first == bi) {
      const auto [first, last] = stages[next_stage++];
      add_conv_stage(out, platform, graph, first, last, ev, w.bw, w.overhead);
      bi = last;
      continue;
    }
    walk_block(out, platform, options, ev, graph.blocks[bi], w);
  }
  sum_totals(out, platform, graph, options);
  out.cache_hits = kc.hits - hits0;
  out.cache_misses = kc.misses - misses0;
  return out;
}

}  // namespace dse::costmodel::platform
