// costmodel/platform/attention_benchmark.hpp: one fused attention kernel at a benchmark's shape.
#include "costmodel/platform/attention_benchmark.hpp"

#include "costmodel/workload/spec.hpp"

namespace dse::costmodel::platform {

namespace wl = dse::costmodel::workload;

double attention_benchmark_latency_s(const Platform& p, const AttentionBenchmark& b) {
  // One layer; only its attention kernel is read. The rest of the layer (norms, FFN, biases)
  // does not change that kernel's cost.
  wl::TransformerSpec t;
  t.name = "attention_benchmark";
  t.arch = b.causal ? wl::Arch::decoder : wl::Arch::encoder;
  t.hidden = b.heads * b.head_dim;
  t.heads = b.heads;
  t.head_dim = b.head_dim;
  t.layers = 1;
  t.ffn_hidden = 4 * t.hidden;
  t.vocab = 32000;
  t.ffn = wl::Ffn::gelu;
  t.norm = wl::OpKind::layernorm;
  t.position = b.causal ? wl::PositionEncoding::rope : wl::PositionEncoding::learned;
  t.max_positions = b.seq;
  wl::PhaseSpec ph;
  ph.phase = wl::Phase::training;  // the backward kernel exists in a training step only
  ph.batch = b.batch;
  ph.seq = b.seq;
  ph.precision = wl::Precision::bf16;
  EvalOptions o;
  o.fusion_kinds = std::vector<FusionKind>{FusionKind::flash_attention};
  o.attention_kernel = b.kernel;
  o.launch = LaunchMode::graph;
  o.phase = ph;
  const GraphEval g = evaluate_graph(p, wl::build_graph(t, ph), o);
  // The fused forward carries the name of its first product, the backward that of the
  // first backward product (dP = dO V^T, "attn_av.bwd_a"): evaluate_graph's fused groups.
  const std::string name = b.backward ? "attn_av.bwd_a" : "attn_qk";
  for (const auto& l : g.layers)
    if (l.type == "fused_attention" && l.name == name) return l.latency_s;
  return 0.0;
}

double attention_benchmark_flops(const AttentionBenchmark& b) noexcept {
  const double fwd = 4.0 * static_cast<double>(b.seq) * static_cast<double>(b.seq) * static_cast<double>(b.head_dim) *
                     static_cast<double>(b.heads) * static_cast<double>(b.batch) * (b.causal ? 0.5 : 1.0);
  return b.backward ? 2.5 * fwd : fwd;
}

}  // namespace dse::costmodel::platform
