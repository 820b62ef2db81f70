// Workload specifications: a model's hyperparameters (or an explicit operator
// list) with batch and sequence left symbolic, and the phase that binds them.
// `build_graph(spec, phase)` turns the pair into an OperatorGraph, so one spec
// serves a whole sweep of batch sizes, prompt lengths and contexts. Pure.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "costmodel/workload/graph.hpp"
#include "costmodel/workload/operator.hpp"

namespace dse::costmodel::workload {

enum class Phase { training, prefill, decode };
std::string_view to_string(Phase p) noexcept;
std::optional<Phase> phase_from_string(std::string_view s) noexcept;
// How a decode attention kernel reads the KV cache under GQA (PhaseSpec::kv_read_per_query_head):
// "per_kv_head" -> false, "per_query_head" -> true; anything else -> nullopt.
std::optional<bool> kv_read_per_query_head_from_string(std::string_view s) noexcept;
// The vocabulary's layout under tensor parallelism (PhaseSpec::vocab_parallel): "parallel"
// -> true, "replicated" -> false; anything else -> nullopt.
std::optional<bool> vocab_parallel_from_string(std::string_view s) noexcept;

// Training: how the language-model loss over the logits runs.
//   softmax: a softmax over the logits and its gradient, each a block-per-row kernel
//            (the default);
//   fused:   one fused softmax cross-entropy kernel each way (flash-attn's CrossEntropyLoss,
//            llm-foundry's loss_fn fused_crossentropy): the forward reads the logits and writes
//            a loss and log-sum-exp per row, the backward reads them and writes their gradient.
enum class LossKernel { softmax, fused };
std::optional<LossKernel> loss_kernel_from_string(std::string_view s) noexcept;
std::string_view to_string(LossKernel k) noexcept;

// How context-parallel attention communicates (PhaseSpec::context_parallel):
//  ring        Megatron-LM's default (--cp-comm-type p2p), Transformer Engine's
//              AttnFuncWithCPAndKVP2P (pytorch/attention/dot_product_attention/
//              context_parallel.py @ d0067d0): "Exchange KV between CP ranks with P2P in ring
//              topology. Split attention compute into multiple steps, and overlap current-step
//              compute with next-step communication." Each chip keeps two sequence chunks,
//              i and 2 cp - 1 - i, for a balanced causal load (get_seq_chunk_ids_for_
//              reordering_before_attn); in cp steps it attends its queries to its own chunks
//              (causal) and then to the cp - 1 key-value blocks the ring brings, each step
//              half of a block's scores unmasked, its partial outputs merged by the
//              log-sum-exp correction (flash_attn_fwd_out_correction). The backward sends
//              each block's K, V and its dK, dV on (p2p_comm_buffers of [kv, dkv]).
//  all_to_all  DeepSpeed-Ulysses (Jacobs et al. 2023, arXiv 2309.14509), TE's
//              AttnFuncWithCPAndQKVOA2A ("Like Ulysses, applying A2A to QKVO"): an all-to-all
//              turns the sequence-split Q, K, V into head-split ones over the whole sequence,
//              the attention runs on heads / cp heads, and an all-to-all turns its output back;
//              the backward does the same to the gradients. Not overlapped.
enum class ContextParallel { ring, all_to_all };
std::optional<ContextParallel> context_parallel_from_string(std::string_view s) noexcept;
std::string_view to_string(ContextParallel k) noexcept;

// The binding of the symbolic dimensions.
//   training: batch sequences of seq tokens, forward + backward (+ recompute).
//   prefill:  batch prompts of seq tokens (for encoders and vision: one inference).
//   decode:   one step: batch sequences each adding seq new tokens (1 unless
//             speculative) after context tokens already in the KV cache.
struct PhaseSpec {
  Phase phase = Phase::prefill;
  std::int64_t batch = 1;
  std::int64_t seq = 1;
  std::int64_t context = 0;
  Precision precision = Precision::bf16;     // weights and activations
  std::optional<Precision> kv_precision;     // KV cache; default: precision
  // The decoder's output head (lm_head GEMM). Default: precision, except that under an
  // 8- or 4-bit precision the head stays in bf16, as quantization toolkits leave it
  // (TensorRT-Model-Optimizer's FP8/INT8/INT4 configs disable the "*lm_head*" quantizer).
  std::optional<Precision> head_precision;
  bool recompute = false;                    // training: full activation recomputation
  // training: selective recomputation (Korthikanti et al. 2022): only the
  // attention core of each checkpointed block (its batched GEMMs and softmax,
  // QK^T -> softmax -> AV) is recomputed in the backward pass. Ignored when
  // `recompute` (full) is set.
  bool recompute_attention = false;
  // training: JAX's checkpoint_dots_with_no_batch_dims policy (MaxText's remat_policy
  // minimal): of each checkpointed block only the outputs of its matrix products without a
  // batch dimension (OpKind::gemm, conv2d: the projections) are saved; every other forward
  // operator the backward reads except the collectives (norms, element-wise work, the
  // attention core) is recomputed in the backward pass. Ignored when `recompute` (full) is set.
  bool recompute_non_matmul = false;
  // decode: the attention kernel runs one thread block per (sequence, query head), each
  // streaming its KV head's whole cache, so under GQA every KV head is read once per query
  // head sharing it and no query heads are packed into one matrix tile (TensorRT-LLM's
  // masked MHA kernel before XQA, v0.8: decoderMaskedMultiheadAttentionTemplate.h,
  // "hi{blockIdx.x}", "hi_kv{hi / qhead_per_kv}"). Default: the KV head is read once for
  // its group (FlashDecoding, XQA, FlashInfer).
  bool kv_read_per_query_head = false;
  // training: the loss kernel (see LossKernel).
  LossKernel loss_kernel = LossKernel::softmax;
  // training: cross-entropies of the logits the training loop evaluates per micro-batch
  // outside autograd, for logging (Composer's train metrics: LanguageCrossEntropy and
  // LanguagePerplexity each compute one). Each is forward only: a log-softmax in the logits'
  // precision, then the copy of its output in fp32 that autocast makes for nll_loss. 0: none.
  int logit_metrics = 0;
  // Under tensor parallelism (TransformerSpec::tensor_parallel > 1): true, the embedding
  // table and the decoder's lm_head are vocabulary-parallel, each chip holding 1/tp of the
  // vocabulary and the embedding's partial rows summed by an all-reduce (Megatron-LM, vLLM,
  // TensorRT-LLM); false, both are replicated, each chip holding and computing all of the
  // vocabulary with no all-reduce (gpt-fast's tp.py shards only the attention and FFN
  // linears of each block). No effect without tensor parallelism.
  bool vocab_parallel = true;
  // Context parallelism (transformers, training and prefill): the sequence split over
  // context_parallel chips (Megatron-LM --context-parallel-size), each running every layer on
  // seq / cp tokens (activations, and the KV of prefill, split by the sequence) and the
  // attention as context_parallel_comm says (ContextParallel). The graph is one chip's; its
  // collectives run over the CP group, the ring's sends are the platform layer's. seq must be a
  // multiple of 2 cp (ring: two chunks per chip) or of cp (all_to_all, whose chips must also
  // split the heads and the KV heads of their tensor-parallel share). 1: none.
  int context_parallel = 1;
  ContextParallel context_parallel_comm = ContextParallel::ring;
};
// Training's activation recomputation by name: "none", "selective" (PhaseSpec::
// recompute_attention), "minimal" (PhaseSpec::recompute_non_matmul) or "full"
// (PhaseSpec::recompute) set the phase's flags and return true; anything else returns
// false and leaves the phase as it was.
bool apply_recompute(std::string_view s, PhaseSpec& phase) noexcept;
// An operator that PhaseSpec::recompute_non_matmul does not recompute: a matrix product
// without a batch dimension (gemm, conv2d), whose output the policy saves, or a collective
// (under GSPMD the collectives lie beside the saved products, outside the program the
// policy reruns).
bool kept_by_dots_policy(const Operator& op) noexcept;

enum class Arch { decoder, encoder };
enum class Ffn { swiglu, gelu };
// none: positions are handled outside the layers (ViT adds them to the patch embeddings).
enum class PositionEncoding { rope, learned, none };

struct TransformerSpec {
  std::string name;
  Arch arch = Arch::decoder;
  std::int64_t hidden = 0;
  std::int64_t layers = 0;
  std::int64_t heads = 0;
  std::int64_t kv_heads = 0;     // 0: = heads (multi-head attention)
  std::int64_t head_dim = 0;     // 0: hidden / heads
  std::int64_t ffn_hidden = 0;   // per expert for MoE
  std::int64_t vocab = 0;
  std::int64_t max_positions = 0;   // learned position embeddings table
  std::int64_t type_vocab = 0;      // token-type embeddings (BERT: 2)
  Ffn ffn = Ffn::swiglu;
  OpKind norm = OpKind::rmsnorm;    // rmsnorm or layernorm
  PositionEncoding position = PositionEncoding::rope;
  bool bias = false;                // biases in the linear layers
  bool tied_embeddings = false;     // lm_head shares the embedding table
  bool final_norm = true;           // a norm before the head
  bool lm_head = true;              // decoder: vocabulary projection
  bool pooler = false;              // encoder: BERT pooler (dense + tanh on [CLS])
  std::int64_t experts = 0;         // 0: dense FFN; else MoE experts per layer
  std::int64_t top_k = 0;           // experts per token
  std::int64_t tensor_parallel = 1; // devices sharing each layer (Megatron-style)
  // Training only: dropout on the attention probabilities (Megatron-LM
  // --attention-dropout): one more element-wise kernel on the score matrix that
  // writes a 1-byte mask, and its backward. 0 = none (inference never has it).
  double attention_dropout = 0.0;
};

struct VitSpec {
  std::string name;
  std::int64_t image_size = 224;
  std::int64_t patch = 16;
  std::int64_t channels = 3;
  std::int64_t classes = 1000;
  TransformerSpec encoder;  // hidden, layers, heads, ffn_hidden, gelu, layernorm, bias
};

struct ResNetSpec {
  std::string name;
  std::int64_t image_size = 224;
  std::int64_t classes = 1000;
  std::vector<std::int64_t> stage_blocks{3, 4, 6, 3};  // ResNet-50
  std::int64_t base_width = 64;
};

// A dimension of an explicit operator: coefficient times a product of symbols.
// Symbols: batch, seq, context, kv_len (= context + seq), tokens (= batch * seq).
struct SymbolicDim {
  std::int64_t coefficient = 1;
  std::vector<std::string> symbols;
};
std::int64_t evaluate(const SymbolicDim& d, const PhaseSpec& phase) noexcept;
bool is_symbol(std::string_view s) noexcept;

// One operator of an explicit list. Dimensions that a kind does not use are ignored.
struct ExplicitOp {
  std::string name;
  OpKind kind = OpKind::gemm;
  LayerType layer = LayerType::ffn;
  std::optional<Precision> precision;  // default: the phase's precision
  SymbolicDim batch, m, n, k;          // gemm, batched_gemm
  SymbolicDim rows, cols;              // the other kinds
  ConvShape conv;                      // conv2d; conv.n is replaced by the batch
  bool weight = true;                  // gemm: the k x n operand is a weight
  bool bias = false;
  double flops_per_element = 1.0;      // elementwise
  int inputs = 1;                      // elementwise
  std::int64_t table_rows = 0;         // embedding
  int participants = 2;                // collectives
  std::vector<std::string> after;      // inputs (names of earlier operators)
};

struct ExplicitBlock {
  std::string name;
  std::int64_t repeat = 1;
  std::vector<ExplicitOp> ops;
};

struct ExplicitSpec {
  std::string name;
  std::vector<ExplicitBlock> blocks;
};

using WorkloadSpec = std::variant<TransformerSpec, VitSpec, ResNetSpec, ExplicitSpec>;

std::string workload_name(const WorkloadSpec& spec);

// "" when the spec (with this phase) can be built, else why not: a missing or
// inconsistent hyperparameter, heads or FFN not divisible by the tensor-parallel
// degree, decode of a model without a KV cache, an empty batch or sequence.
std::string check(const WorkloadSpec& spec, const PhaseSpec& phase);

// The operator graph of one step of the phase on one device (a tensor-parallel
// shard when tensor_parallel > 1). Throws std::invalid_argument with check()'s
// message when the spec cannot be built.
OperatorGraph build_graph(const WorkloadSpec& spec, const PhaseSpec& phase);

// Builders for each kind of spec (called by build_graph; checked first).
OperatorGraph build_transformer(const TransformerSpec& spec, const PhaseSpec& phase);
OperatorGraph build_vit(const VitSpec& spec, const PhaseSpec& phase);
OperatorGraph build_resnet(const ResNetSpec& spec, const PhaseSpec& phase);
OperatorGraph build_explicit(const ExplicitSpec& spec, const PhaseSpec& phase);

// Training: appends, for every forward block, a backward block with the data and
// weight gradients of each operator (each GEMM-like operator's two gradients
// cost its forward FLOPs each) and, for each checkpointed block, the forward operators
// the phase's recomputation reruns, copied at the head of its backward block:
// phase.recompute all of them; recompute_attention only the attention core (batched_gemm
// and softmax operators: selective recomputation); recompute_non_matmul all but its gemm
// and conv2d operators, its collectives and those whose output only leaves the block.
void append_backward(OperatorGraph& g, const PhaseSpec& phase);
// FP8 training as Transformer Engine runs it (Megatron-LM / NeMo with --fp8, delayed scaling;
// TE @ d0067d0, transformer_engine/pytorch/module/{linear,layernorm_linear,layernorm_mlp}.py):
// only the GEMMs against a weight inside the transformer layers run in FP8 (TE's Linear,
// LayerNormLinear, LayerNormMLP, GroupedLinear; not the router, the embedding or the output
// layer); every other operator, the attention core included (recipe fp8_dpa = False by
// default, common/recipe/__init__.py), runs in bf16 on bf16 tensors. An FP8 GEMM reads FP8
// operands and writes bf16. On Hopper an FP8 GEMM takes both operands K-major, so each
// quantized tensor is written twice, row-wise and column-wise (transposed) (TE docs,
// features/low_precision_training/performance_considerations: "Hopper: cannot efficiently
// access elements in columnwise fashion, so columnwise tensors need to be physically
// transposed"); delayed scaling reads a tensor once per quantization (fp8_delayed_scaling.rst:
// "reduces tensor reads per quantization from two to one"). So:
//  - forward, per FP8 GEMM: its activation input quantized row-wise and column-wise. Where the
//    input is a norm's or an activation's output, the norm or activation kernel writes it
//    quantized (LayerNormLinear's quantized norm, with_quantized_norm; LayerNormMLP's
//    activation with the fc2 input quantizer): 2 x 1 B in place of 2 B, no extra kernel.
//    Otherwise (the attention output into the projection) a cast kernel <gemm>.fp8_cast reads
//    2 B and writes 2 x 1 B per element (linear.py: input_quantizer.set_usage(rowwise=True,
//    columnwise=backward_needs_input); inputmat = input_quantizer(inputmat)). The FP8
//    column-wise input is what the backward keeps (1 B per element);
//  - backward, per FP8 GEMM: its output gradient quantized both ways (linear.py:
//    grad_output_quantizer.set_usage(rowwise=True, columnwise=True)) by a cast kernel
//    <gemm>.bwd_fp8_cast (2 B in, 2 x 1 B out) before the data-gradient GEMM, except where the
//    GEMM's forward output feeds an activation, whose backward writes it quantized
//    (LayerNormMLP's dact with the quantizer); a bias's gradient is fused into that quantization
//    (base.py grad_output_preprocess: tex.bgrad_quantize), so <gemm>.bwd_bias goes;
//  - per step: the weights cast to FP8 both ways on the first micro-batch only (linear.py:
//    update_workspace = is_first_microbatch is None or is_first_microbatch), 2 B in and 2 x 1 B
//    out per weight element (OperatorGraph::fp8_weight_elements; costed by the platform layer).
// The amax history update (one fused kernel per step over every tensor's history) and its
// all-reduce of a few floats per GEMM are left out. Applied by append_backward when the phase
// is training at fp8.
void apply_fp8_training(OperatorGraph& g);

// KV cache bytes one token adds on one device: layers * 2 * kv_heads/tp * head_dim
// * bytes per element; 0 for encoders.
double kv_cache_bytes_per_token(const TransformerSpec& spec, Precision kv_precision) noexcept;

}  // namespace dse::costmodel::workload
