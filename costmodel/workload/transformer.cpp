// Transformer builders: decoder-only (MHA or GQA, SwiGLU or GELU, RMSNorm or
// LayerNorm, optional top-k MoE, tensor parallelism) and encoders. The shared
// layer builder is also used by ViT (vision.cpp).
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>

#include "costmodel/workload/spec.hpp"
#include "costmodel/workload/transformer_parts.hpp"

namespace dse::costmodel::workload {

namespace {

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// The training loop's logging cross-entropies (PhaseSpec::logit_metrics), run after the
// micro-batch's backward pass under torch.no_grad, so nothing of them is kept or derived.
// Each is torch.nn.CrossEntropyLoss on the logits under autocast. cross_entropy calls
// log_softmax in the logits' own dtype ("at::log_softmax(self, class_dim,
// self.scalar_type())", aten/src/ATen/native/LossNLL.cpp), which autocast keeps (its
// fp32_set_opt_dtype policy: "If the user has explicity specified a dtype, respect it",
// autocast_mode.h), then nll_loss, which autocast runs in fp32 ("KERNEL_CUDA(nll_loss,
// fp32)", autocast_mode.cpp): a copy of the log-probabilities cast to fp32 (none when they
// are fp32 already). nll_loss's gather of one log-probability per row is left out.
Block logit_metrics(std::int64_t rows, std::int64_t vocab, const PhaseSpec& phase) {
  Block b;
  b.name = "logit_metrics";
  b.repeat = phase.logit_metrics;
  Operator ls = make_softmax("metric_log_softmax", LayerType::elementwise, rows, vocab, phase.precision);
  ls.saves_inputs = false;
  b.nodes.push_back(Node{std::move(ls), {}});
  if (phase.precision != Precision::fp32) {
    Operator cast =
        make_elementwise("metric_log_probs_fp32", LayerType::elementwise, rows, vocab, 0.0, 1, Precision::fp32);
    cast.tensors = {Tensor{"log_probs", TensorRole::input, rows * vocab, phase.precision, -1},
                    Tensor{"log_probs_fp32", TensorRole::output, rows * vocab, Precision::fp32, -1}};
    cast.saves_inputs = false;
    b.nodes.push_back(Node{std::move(cast), {"metric_log_softmax"}});
  }
  return b;
}

}  // namespace

Precision reduce_precision(Precision p) noexcept {
  return bytes_per_element(p) < 2.0 ? Precision::bf16 : p;
}

std::int64_t local_kv_heads(const TransformerSpec& s) noexcept {
  const std::int64_t kv = s.kv_heads > 0 ? s.kv_heads : s.heads;
  return std::max<std::int64_t>(1, kv / std::max<std::int64_t>(1, s.tensor_parallel));
}

std::int64_t head_dim_of(const TransformerSpec& s) noexcept {
  return s.head_dim > 0 ? s.head_dim : (s.heads > 0 ? s.hidden / s.heads : 0);
}

std::string check_transformer(const TransformerSpec& s) {
  const std::string who = "transformer '" + s.name + "': ";
  if (s.hidden <= 0 || s.layers <= 0 || s.heads <= 0 || s.ffn_hidden <= 0) {
    return who + "hidden, layers, heads and ffn_hidden must be > 0";
  }
  const std::int64_t kv = s.kv_heads > 0 ? s.kv_heads : s.heads;
  if (s.heads % kv != 0) return who + "heads must be a multiple of kv_heads";
  if (s.head_dim <= 0 && s.hidden % s.heads != 0) return who + "hidden must be a multiple of heads";
  if (s.norm != OpKind::rmsnorm && s.norm != OpKind::layernorm) return who + "norm must be rmsnorm or layernorm";
  const std::int64_t tp = s.tensor_parallel;
  if (tp < 1) return who + "tensor_parallel must be >= 1";
  if (s.heads % tp != 0) return who + "heads must be divisible by tensor_parallel";
  if (kv % tp != 0 && tp % kv != 0) return who + "kv_heads and tensor_parallel must divide one another";
  if (s.ffn_hidden % tp != 0) return who + "ffn_hidden must be divisible by tensor_parallel";
  if (s.experts < 0 || (s.experts > 0 && (s.top_k < 1 || s.top_k > s.experts))) {
    return who + "MoE needs 1 <= top_k <= experts";
  }
  if (s.experts == 0 && s.top_k != 0) return who + "top_k needs experts > 0";
  const bool needs_vocab = s.arch == Arch::decoder || s.vocab > 0;
  if (needs_vocab && s.vocab <= 0) return who + "vocab must be > 0";
  if (s.position == PositionEncoding::learned && s.max_positions <= 0) {
    return who + "learned positions need max_positions > 0";
  }
  return "";
}

double kv_cache_bytes_per_token(const TransformerSpec& spec, Precision kv_precision) noexcept {
  if (spec.arch != Arch::decoder) return 0.0;
  return static_cast<double>(spec.layers) * 2.0 * static_cast<double>(local_kv_heads(spec)) *
         static_cast<double>(head_dim_of(spec)) * bytes_per_element(kv_precision);
}

namespace {

// One transformer layer as it is built: the spec, the bound dimensions, the block its nodes go
// into (in order), and the per-chip sizes under tensor parallelism.
struct LayerBuilder {
  const TransformerSpec& s;
  const LayerDims& d;
  Block& b;
  std::int64_t tp, D, hd, h, kvh, F, T;
  Precision p, kvp, cp;  // GEMM, KV-cache and all-reduce precisions

  LayerBuilder(const TransformerSpec& spec, const LayerDims& dims, Block& block)
      : s(spec), d(dims), b(block), tp(spec.tensor_parallel), D(spec.hidden), hd(head_dim_of(spec)),
        h(spec.heads / spec.tensor_parallel), kvh(local_kv_heads(spec)), F(spec.ffn_hidden / spec.tensor_parallel),
        T(dims.batch * dims.seq), p(dims.precision), kvp(dims.kv_precision), cp(reduce_precision(dims.precision)) {}

  void add(Operator op, std::vector<std::string> inputs) {
    b.nodes.push_back(Node{std::move(op), std::move(inputs)});
  }
  // The ops whose inputs every chip of the TP group holds whole (Operator::input_replicas).
  Operator replicated(Operator op) const {
    op.input_replicas = static_cast<int>(tp);
    return op;
  }
};

// The attention's norm, QKV projection and rotary embedding; returns the node the queries come from.
std::string add_qkv(LayerBuilder& L) {
  const std::int64_t T = L.T, h = L.h, kvh = L.kvh, hd = L.hd;
  L.add(L.replicated(make_norm("norm_attn", L.s.norm, T, L.D, L.p)), {});
  Operator qkv = make_linear("qkv_proj", LayerType::attention, T, (h + 2 * kvh) * hd, L.D, L.p, L.s.bias);
  qkv.tensors.pop_back();  // y: split into q and the new keys and values
  qkv.tensors.push_back(Tensor{"q", TensorRole::output, T * h * hd, L.p, -1});
  qkv.tensors.push_back(Tensor{"kv", L.d.write_cache ? TensorRole::kv_cache_write : TensorRole::output,
                               T * 2 * kvh * hd, L.kvp, -1});
  L.add(L.replicated(std::move(qkv)), {"norm_attn"});
  if (L.s.position != PositionEncoding::rope) return "qkv_proj";
  // Rotary embedding of q and k: x*cos + rotate(x)*sin, 3 flops per element.
  L.add(make_elementwise("attn_rope", LayerType::attention, T, (h + kvh) * hd, 3.0, 1, L.p), {"qkv_proj"});
  return "attn_rope";
}

// Where one attention core reads: its query and KV heads per chip, and the nodes its queries and
// its keys and values come from.
struct AttentionInputs {
  std::int64_t heads, kv_heads;
  std::string q_source, kv_source;
};

// One attention core: batch x heads x (m queries by n keys) scores, its K and V read from
// `kv_source`; `steps` > 1 for ring steps (each one more set of heads' scores).
// A ring core keeps nothing for the backward pass: the backward brings the key-value blocks
// round again (saves_inputs false; TE's backward p2p_comm_buffers of [kv, dkv]).
void add_attention_core(LayerBuilder& L, const AttentionInputs& in, const std::string& prefix, std::int64_t steps,
                        std::int64_t m, std::int64_t n, bool causal) {
  const LayerDims& d = L.d;
  const std::int64_t hd = L.hd;
  const TensorRole kv_role = d.read_cache ? TensorRole::kv_cache_read : TensorRole::input;
  const bool ring = steps > 1 || prefix == "attn_ring_";
  const auto keep = [ring](Operator op) {
    op.saves_inputs = !ring;
    return op;
  };
  const std::int64_t heads = d.batch * in.heads * steps;
  const std::int64_t kv_elements = d.batch * in.kv_heads * steps * n * hd;
  // Elements the attention reads: once per KV head, or once per query head when the
  // decode kernel does not share a KV head across its group (the cache still stores it once).
  const std::int64_t kv_read_elements = d.kv_read_per_query_head ? heads * n * hd : kv_elements;
  Operator qk = make_batched_gemm(prefix + "qk", LayerType::attention, heads, m, n, hd, L.p);
  qk.tensors[1] = Tensor{"k", kv_role, kv_read_elements, L.kvp, kv_elements};
  qk.causal = causal;
  L.add(keep(std::move(qk)), {in.q_source});
  L.add(keep(make_softmax(prefix + "softmax", LayerType::attention, heads * m, n, L.p)), {prefix + "qk"});
  std::string probs = prefix + "softmax";
  if (d.training && L.s.attention_dropout > 0.0) {
    L.add(keep(make_dropout(prefix + "dropout", LayerType::attention, heads * m, n, L.p)), {probs});
    probs = prefix + "dropout";
  }
  Operator av = make_batched_gemm(prefix + "av", LayerType::attention, heads, m, hd, n, L.p);
  av.tensors[1] = Tensor{"v", kv_role, kv_read_elements, L.kvp, kv_elements};
  av.causal = causal;
  L.add(keep(std::move(av)), {probs, in.kv_source});
}

// The attention itself under context parallelism; returns the node its output comes from.
// all_to_all runs the attention on heads / cp heads over the whole sequence (between two
// all-to-alls); ring keeps the chip's own tokens and adds the steps over the blocks the ring
// brings: the chip's d.seq queries against half of each of the other chips' key-value blocks'
// keys, unmasked, then each step's output merged into the running one (out x exp(lse - lse') +
// out_step x exp(lse_step - lse'): read both, write one).
std::string add_attention(LayerBuilder& L, const std::string& q_source) {
  const LayerDims& d = L.d;
  const bool a2a = d.cp > 1 && d.cp_comm == ContextParallel::all_to_all;
  AttentionInputs in{a2a ? L.h / d.cp : L.h, a2a ? L.kvh / d.cp : L.kvh, q_source, "qkv_proj"};
  const std::int64_t aseq = a2a ? d.seq * d.cp : d.seq, akv = a2a ? d.kv_len * d.cp : d.kv_len;
  if (a2a) {
    L.add(make_collective("attn_a2a_qkv", OpKind::all_to_all, L.T, (L.h + 2 * L.kvh) * L.hd, static_cast<int>(d.cp),
                          L.p),
          {in.q_source});
    in.q_source = in.kv_source = "attn_a2a_qkv";
  }
  add_attention_core(L, in, "attn_", 1, aseq, akv, d.causal);
  if (d.cp > 1 && !a2a) {
    add_attention_core(L, in, "attn_ring_", d.cp - 1, d.seq, d.kv_len / 2, false);
    Operator merge =
        make_elementwise("attn_ring_correction", LayerType::attention, L.T * (d.cp - 1), L.h * L.hd, 4.0, 2, L.p);
    merge.saves_inputs = false;  // the backward reads the merged output and the log-sum-exps
    L.add(std::move(merge), {"attn_av", "attn_ring_av"});
    return "attn_ring_correction";
  }
  if (!a2a) return "attn_av";
  L.add(make_collective("attn_a2a_out", OpKind::all_to_all, L.T, L.h * L.hd, static_cast<int>(d.cp), L.p),
        {"attn_av"});
  return "attn_a2a_out";
}

// The attention's output projection, its TP all-reduce, the residual add and the FFN's norm.
void add_attention_output(LayerBuilder& L, const std::string& attn) {
  L.add(make_linear("out_proj", LayerType::attention, L.T, L.D, L.h * L.hd, L.p, L.s.bias), {attn});
  std::string attn_out = "out_proj";
  if (L.tp > 1) {
    L.add(make_collective("allreduce_attn", OpKind::all_reduce, L.T, L.D, static_cast<int>(L.tp), L.cp), {"out_proj"});
    attn_out = "allreduce_attn";
  }
  L.add(make_add("residual_attn", LayerType::elementwise, L.T, L.D, 2, L.p), {attn_out});
  L.add(L.replicated(make_norm("norm_ffn", L.s.norm, L.T, L.D, L.p)), {"residual_attn"});
}

// A top-k MoE FFN. Uniform routing: T tokens each pick top_k of E experts, so an expert is hit
// with probability 1 - (1 - k/E)^T; the active experts share the T*k routed token slots. Weights
// of every expert stay resident; only active ones are read.
void add_moe_ffn(LayerBuilder& L) {
  const TransformerSpec& s = L.s;
  const std::int64_t T = L.T, F = L.F, D = L.D;
  L.add(L.replicated(make_linear("moe_router", LayerType::ffn, T, s.experts, D, L.p, false)), {"norm_ffn"});
  const double e = static_cast<double>(s.experts);
  const double k_over_e = static_cast<double>(s.top_k) / e;
  const double active = e * (1.0 - std::pow(1.0 - k_over_e, static_cast<double>(T)));
  const std::int64_t ea =
      std::clamp<std::int64_t>(static_cast<std::int64_t>(std::ceil(active - 1e-9)), 1, s.experts);
  const std::int64_t tokens_per_expert = ceil_div(T * s.top_k, ea);
  auto expert = [&](std::string name, std::int64_t n, std::int64_t k) {
    Operator op = make_batched_gemm(std::move(name), LayerType::ffn, ea, tokens_per_expert, n, k, L.p);
    op.tensors[1] = Tensor{"w", TensorRole::weight, ea * k * n, L.p, s.experts * k * n};
    return op;
  };
  const std::int64_t routed = ea * tokens_per_expert;
  if (s.ffn == Ffn::swiglu) {
    L.add(expert("ffn_gate", F, D), {"moe_router"});
    L.add(expert("ffn_up", F, D), {"moe_router"});
    L.add(make_elementwise("ffn_act", LayerType::ffn, routed, F, 5.0, 2, L.p), {"ffn_gate", "ffn_up"});
  } else {
    L.add(expert("ffn_up", F, D), {"moe_router"});
    L.add(make_elementwise("ffn_act", LayerType::ffn, routed, F, 8.0, 1, L.p), {"ffn_up"});
  }
  L.add(expert("ffn_down", D, F), {"ffn_act"});
}

// A dense FFN: SwiGLU (silu(gate) * up: x * sigmoid(x), about 4 flops, and a multiply) or GELU
// with the tanh approximation (about 8 flops per element).
void add_dense_ffn(LayerBuilder& L) {
  const TransformerSpec& s = L.s;
  const std::int64_t T = L.T, F = L.F, D = L.D;
  if (s.ffn == Ffn::swiglu) {
    L.add(L.replicated(make_linear("ffn_gate", LayerType::ffn, T, F, D, L.p, s.bias)), {"norm_ffn"});
    L.add(L.replicated(make_linear("ffn_up", LayerType::ffn, T, F, D, L.p, s.bias)), {"norm_ffn"});
    L.add(make_elementwise("ffn_act", LayerType::ffn, T, F, 5.0, 2, L.p), {"ffn_gate", "ffn_up"});
  } else {
    L.add(L.replicated(make_linear("ffn_up", LayerType::ffn, T, F, D, L.p, s.bias)), {"norm_ffn"});
    L.add(make_elementwise("ffn_act", LayerType::ffn, T, F, 8.0, 1, L.p), {"ffn_up"});
  }
  L.add(make_linear("ffn_down", LayerType::ffn, T, D, F, L.p, s.bias), {"ffn_act"});
}

// The FFN's TP all-reduce and the residual add that ends the layer.
void add_ffn_output(LayerBuilder& L) {
  std::string ffn_out = "ffn_down";
  if (L.tp > 1) {
    L.add(make_collective("allreduce_ffn", OpKind::all_reduce, L.T, L.D, static_cast<int>(L.tp), L.cp), {ffn_out});
    ffn_out = "allreduce_ffn";
  }
  L.add(make_add("residual_ffn", LayerType::elementwise, L.T, L.D, 2, L.p), {ffn_out, "residual_attn"});
}

}  // namespace

Block transformer_layers(const TransformerSpec& s, const LayerDims& d, std::string block_name) {
  Block b;
  b.name = std::move(block_name);
  b.repeat = s.layers;
  b.checkpoint = true;
  LayerBuilder L(s, d, b);
  add_attention_output(L, add_attention(L, add_qkv(L)));
  if (s.experts > 0)
    add_moe_ffn(L);
  else
    add_dense_ffn(L);
  add_ffn_output(L);
  return b;
}

namespace {

// The layer stack's dimensions of a phase: one chip's share of the sequence under context
// parallelism, what the KV cache does, and the mask.
LayerDims layer_dims(const TransformerSpec& s, const PhaseSpec& phase) {
  LayerDims d;
  d.batch = phase.batch;
  d.cp = phase.context_parallel;
  d.cp_comm = phase.context_parallel_comm;
  d.seq = phase.seq / d.cp;  // context parallelism: one chip's share of the sequence
  d.precision = phase.precision;
  d.kv_precision = phase.kv_precision.value_or(phase.precision);
  const bool decoder = s.arch == Arch::decoder;
  d.write_cache = decoder && phase.phase != Phase::training;
  d.training = phase.phase == Phase::training;
  d.read_cache = decoder && phase.phase == Phase::decode;
  d.kv_read_per_query_head = d.read_cache && phase.kv_read_per_query_head;
  d.causal = decoder && phase.phase != Phase::decode;
  d.kv_len = phase.phase == Phase::decode ? phase.context + phase.seq : d.seq;
  return d;
}

// The embedding block: token rows of the chip's share of the vocabulary (`vocab_tp` chips split
// it), learned positions of the new tokens (decode: at offset context) and token types; BERT's
// LayerNorm of the summed embeddings; a vocabulary-parallel embedding's partial rows summed
// across the group.
Block embedding_block(const TransformerSpec& s, const LayerDims& d, std::int64_t vocab_tp) {
  const std::int64_t T = d.batch * d.seq;
  const std::int64_t D = s.hidden;
  const Precision p = d.precision;
  Block embed;
  embed.name = "embedding";
  Operator e = make_embedding("embedding", T, D, ceil_div(s.vocab, vocab_tp), p);
  if (s.position == PositionEncoding::learned)
    e.tensors.push_back(Tensor{"positions", TensorRole::weight, std::min(d.seq, s.max_positions) * D, p,
                               s.max_positions * D});
  if (s.type_vocab > 0) e.tensors.push_back(Tensor{"token_types", TensorRole::weight, D, p, s.type_vocab * D});
  embed.nodes.push_back(Node{std::move(e), {}});
  std::string last = "embedding";
  if (s.arch != Arch::decoder) {
    embed.nodes.push_back(Node{make_norm("norm_embed", s.norm, T, D, p), {last}});
    last = "norm_embed";
  }
  if (vocab_tp > 1)
    embed.nodes.push_back(Node{make_collective("allreduce_embed", OpKind::all_reduce, T, D,
                                               static_cast<int>(s.tensor_parallel), reduce_precision(p)),
                               {last}});
  return embed;
}

// The head block: the final norm, a decoder's lm_head (and in training the loss over the local
// vocabulary) or an encoder's pooler. Rows that reach a decoder's head: every token in training
// and decode; in prefill only each prompt's last token needs logits (serving engines skip the
// rest). Empty when the model has none of them.
Block head_block(const TransformerSpec& s, const PhaseSpec& phase, const LayerDims& d, std::int64_t vocab_tp) {
  const std::int64_t T = d.batch * d.seq;
  const std::int64_t D = s.hidden;
  const Precision p = phase.precision;
  const bool decoder = s.arch == Arch::decoder;
  Block head;
  head.name = "head";
  const std::int64_t head_rows = phase.phase == Phase::prefill ? d.batch : T;
  std::string head_in;
  if (s.final_norm) {
    head.nodes.push_back(Node{make_norm("norm_final", s.norm, decoder ? head_rows : T, D, p), {}});
    head_in = "norm_final";
  }
  auto after = [&head_in]() { return head_in.empty() ? std::vector<std::string>{} : std::vector{head_in}; };
  if (decoder && s.lm_head) {
    const Precision hp = phase.head_precision.value_or(bytes_per_element(p) < 2.0 ? Precision::bf16 : p);
    Operator lm = make_linear("lm_head", LayerType::ffn, head_rows, ceil_div(s.vocab, vocab_tp), D, hp, false);
    if (s.tied_embeddings) lm.tensors[1].role = TensorRole::weight_tied;
    head.nodes.push_back(Node{std::move(lm), after()});
    if (phase.phase == Phase::training) {  // cross-entropy over the (local) vocabulary
      head.nodes.push_back(
          phase.loss_kernel == LossKernel::fused
              ? Node{make_cross_entropy("loss_cross_entropy", T, ceil_div(s.vocab, vocab_tp), p), {"lm_head"}}
              : Node{make_softmax("loss_softmax", LayerType::elementwise, T, ceil_div(s.vocab, vocab_tp), p),
                     {"lm_head"}});
    }
  }
  if (!decoder && s.pooler) {
    head.nodes.push_back(Node{make_linear("pooler", LayerType::ffn, d.batch, D, D, p, true), after()});
    head.nodes.push_back(
        Node{make_elementwise("pooler_act", LayerType::elementwise, d.batch, D, 4.0, 1, p), {"pooler"}});
  }
  return head;
}

}  // namespace

OperatorGraph build_transformer(const TransformerSpec& s, const PhaseSpec& phase) {
  const std::string problem = check(WorkloadSpec{s}, phase);
  if (!problem.empty()) throw std::invalid_argument(problem);
  const LayerDims d = layer_dims(s, phase);
  const bool decoder = s.arch == Arch::decoder;
  // Chips the vocabulary is split over: the TP group, or 1 where it is replicated.
  const std::int64_t vocab_tp = phase.vocab_parallel ? s.tensor_parallel : 1;

  OperatorGraph g;
  g.name = s.name;
  g.blocks.push_back(embedding_block(s, d, vocab_tp));
  g.blocks.push_back(transformer_layers(s, d, decoder ? "decoder" : "encoder"));
  Block head = head_block(s, phase, d, vocab_tp);
  if (!head.nodes.empty()) g.blocks.push_back(std::move(head));

  if (phase.phase == Phase::training) {
    append_backward(g, phase);
    if (decoder && s.lm_head && phase.logit_metrics > 0)
      g.blocks.push_back(logit_metrics(d.batch * d.seq, ceil_div(s.vocab, vocab_tp), phase));
  } else if (decoder) {
    g.kv_cache_bytes = kv_cache_bytes_per_token(s, d.kv_precision) * static_cast<double>(d.batch) *
                       static_cast<double>(d.kv_len);
  }
  return g;
}

}  // namespace dse::costmodel::workload
