// The workload library's graphs, phases and memory footprints.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "costmodel/workload/footprint.hpp"
#include "costmodel/workload/graph.hpp"
#include "costmodel/workload/presets.hpp"
#include "costmodel/workload/spec.hpp"

namespace wl = dse::costmodel::workload;

namespace {

wl::TransformerSpec llama(const char* name) { return std::get<wl::TransformerSpec>(*wl::workload_preset(name)); }

wl::PhaseSpec phase(wl::Phase p, std::int64_t batch, std::int64_t seq, std::int64_t context = 0) {
  wl::PhaseSpec ph;
  ph.phase = p;
  ph.batch = batch;
  ph.seq = seq;
  ph.context = context;
  return ph;
}

std::vector<std::string> names(const wl::Block& b) {
  std::vector<std::string> out;
  for (const auto& n : b.nodes) out.push_back(n.op.name);
  return out;
}

}  // namespace

TEST(WorkloadKvCache, Llama2_70bBytesPerTokenByHand) {
  // 80 layers x 2 (K and V) x 8 KV heads x 128 head dim x 2 bytes (bf16) = 327,680 B.
  const auto s = llama("llama2-70b");
  EXPECT_DOUBLE_EQ(wl::kv_cache_bytes_per_token(s, wl::Precision::bf16), 327680.0);
  // A decode step of 4 sequences after 1023 cached tokens holds and reads 4 * 1024 tokens.
  const auto g = wl::build_graph(s, phase(wl::Phase::decode, 4, 1, 1023));
  EXPECT_DOUBLE_EQ(g.kv_cache_bytes, 4.0 * 1024.0 * 327680.0);
  EXPECT_DOUBLE_EQ(wl::totals(g).kv_cache_read_bytes, 4.0 * 1024.0 * 327680.0);
  // Each step appends one token per sequence.
  EXPECT_DOUBLE_EQ(wl::totals(g).kv_cache_write_bytes, 4.0 * 327680.0);
  // Prefill of 4 prompts of 512 tokens writes 4 * 512 tokens and reads none.
  const auto p = wl::build_graph(s, phase(wl::Phase::prefill, 4, 512));
  EXPECT_DOUBLE_EQ(p.kv_cache_bytes, 4.0 * 512.0 * 327680.0);
  EXPECT_DOUBLE_EQ(wl::totals(p).kv_cache_read_bytes, 0.0);
  // With 8-way tensor parallelism each device keeps one KV head: 327,680 / 8.
  auto tp = s;
  tp.tensor_parallel = 8;
  EXPECT_DOUBLE_EQ(wl::kv_cache_bytes_per_token(tp, wl::Precision::bf16), 40960.0);
  // An fp8 cache halves it.
  EXPECT_DOUBLE_EQ(wl::kv_cache_bytes_per_token(s, wl::Precision::fp8), 163840.0);
}

TEST(WorkloadGraph, StandardNamesInsideTheDecoderBlock) {
  auto s = llama("llama2-70b");
  s.tensor_parallel = 8;
  const auto g = wl::build_graph(s, phase(wl::Phase::decode, 8, 1, 2047));
  ASSERT_EQ(g.blocks.size(), 3u);
  EXPECT_EQ(g.blocks[0].name, "embedding");
  EXPECT_EQ(g.blocks[1].repeat, 80);
  const std::vector<std::string> expected{"norm_attn",    "qkv_proj", "attn_rope",      "attn_qk",
                                          "attn_softmax", "attn_av",  "out_proj",       "allreduce_attn",
                                          "residual_attn", "norm_ffn", "ffn_gate",      "ffn_up",
                                          "ffn_act",      "ffn_down", "allreduce_ffn", "residual_ffn"};
  EXPECT_EQ(names(g.blocks[1]), expected);
  EXPECT_NE(wl::find_op(g, "embedding").op, nullptr);
  EXPECT_NE(wl::find_op(g, "lm_head").op, nullptr);
  // Tensor parallelism divides heads and FFN: 64/8 heads of 128, 1 KV head, 28672/8.
  const auto* qkv = wl::find_op(g, "qkv_proj").op;
  EXPECT_EQ(qkv->n, (8 + 2 * 1) * 128);
  EXPECT_EQ(wl::find_op(g, "ffn_up").op->n, 28672 / 8);
  const auto* ar = wl::find_op(g, "allreduce_ffn").op;
  EXPECT_EQ(ar->kind, wl::OpKind::all_reduce);
  EXPECT_EQ(ar->participants, 8);
  EXPECT_EQ(ar->layer, wl::LayerType::collective);
  // Decode: one query row per sequence and head against 2048 cached tokens.
  const auto* qk = wl::find_op(g, "attn_qk").op;
  EXPECT_EQ(qk->batch, 8 * 8);
  EXPECT_EQ(qk->m, 1);
  EXPECT_EQ(qk->n, 2048);
  EXPECT_EQ(qk->k, 128);
}

TEST(WorkloadGraph, TensorParallelAllReducesCarryTheSixteenBitGemmOutput) {
  // Under FP8 the row-parallel GEMM quantizes its input only and writes its output in the
  // 16-bit model type, which the all-reduce sums (TensorRT-LLM FP8RowLinear.forward;
  // Habana HQT PatchedLinearAllReduce: matmul_fp8(.., out_dtype=hp_dtype), then all_reduce).
  // Llama-2-70B, TP 2, decode of 896 sequences: 896 x 8192 elements of 2 bytes per all-reduce.
  auto s = llama("llama2-70b");
  s.tensor_parallel = 2;
  auto ph = phase(wl::Phase::decode, 896, 1, 400);
  ph.precision = wl::Precision::fp8;
  const auto g = wl::build_graph(s, ph);
  for (const char* name : {"allreduce_embed", "allreduce_attn", "allreduce_ffn"}) {
    const auto* ar = wl::find_op(g, name).op;
    ASSERT_NE(ar, nullptr) << name;
    EXPECT_EQ(ar->precision, wl::Precision::bf16) << name;
    EXPECT_DOUBLE_EQ(wl::bytes(ar->tensors[0]), 896.0 * 8192.0 * 2.0) << name;
  }
  EXPECT_EQ(wl::find_op(g, "out_proj").op->precision, wl::Precision::fp8);  // the GEMM stays FP8
  // A 16- or 32-bit step reduces in its own type.
  ph.precision = wl::Precision::fp32;
  EXPECT_EQ(wl::find_op(wl::build_graph(s, ph), "allreduce_ffn").op->precision, wl::Precision::fp32);
}

TEST(WorkloadGraph, DecodeKernelWithoutGqaSharingReadsEachKvHeadPerQueryHead) {
  // Llama-2-70B (64 query heads, 8 KV heads of 128), TP 2: 32 query and 4 KV heads per chip.
  // Decode of 64 sequences over 3072 cached tokens (kv_len 3073): K holds
  // 64 x 4 x 3073 x 128 elements; a kernel that streams it once per query head reads 8 times that.
  auto s = llama("llama2-70b");
  s.tensor_parallel = 2;
  auto ph = phase(wl::Phase::decode, 64, 1, 3072);
  ph.precision = wl::Precision::fp8;
  const auto shared = wl::build_graph(s, ph);
  ph.kv_read_per_query_head = true;
  const auto per_head = wl::build_graph(s, ph);
  const double stored = 64.0 * 4.0 * 3073.0 * 128.0;
  for (const char* name : {"attn_qk", "attn_av"}) {
    const auto& kv1 = wl::find_op(shared, name).op->tensors.at(1);
    const auto& kv8 = wl::find_op(per_head, name).op->tensors.at(1);
    EXPECT_DOUBLE_EQ(static_cast<double>(kv1.elements), stored) << name;
    EXPECT_DOUBLE_EQ(static_cast<double>(kv8.elements), 8.0 * stored) << name;
    EXPECT_DOUBLE_EQ(static_cast<double>(wl::resident_elements(kv8)), stored) << name;  // stored once
  }
  EXPECT_DOUBLE_EQ(per_head.kv_cache_bytes, shared.kv_cache_bytes);
  EXPECT_DOUBLE_EQ(wl::totals(per_head).kv_cache_read_bytes, 8.0 * wl::totals(shared).kv_cache_read_bytes);
  // MHA (Llama-2-7B: a KV head per query head) and prefill are unchanged.
  auto mha = phase(wl::Phase::decode, 8, 1, 1023);
  const double mha_bytes = wl::totals(wl::build_graph(llama("llama2-7b"), mha)).kv_cache_read_bytes;
  mha.kv_read_per_query_head = true;
  EXPECT_DOUBLE_EQ(wl::totals(wl::build_graph(llama("llama2-7b"), mha)).kv_cache_read_bytes, mha_bytes);
  auto pre = phase(wl::Phase::prefill, 2, 512);
  pre.kv_read_per_query_head = true;
  EXPECT_EQ(wl::find_op(wl::build_graph(s, pre), "attn_qk").op->tensors.at(1).elements, 2 * 4 * 512 * 128);
}

TEST(WorkloadGraph, ReplicatedVocabularyKeepsTheWholeHeadOnEveryTensorParallelRank) {
  // Llama-2-7B (vocabulary 32,000, width 4,096), TP 8, one decode token. Vocabulary-parallel: the
  // embedding table and lm_head hold 32,000 / 8 = 4,000 rows each and the embedding's partial rows are
  // all-reduced. Replicated (gpt-fast's tp.py shards only the blocks' linears): 32,000 rows each, no
  // all-reduce, and the blocks are sharded as before.
  auto s = llama("llama2-7b");
  s.tensor_parallel = 8;
  auto ph = phase(wl::Phase::decode, 1, 1, 205);
  const auto par = wl::build_graph(s, ph);
  ph.vocab_parallel = false;
  const auto rep = wl::build_graph(s, ph);
  EXPECT_NE(wl::find_op(par, "allreduce_embed").op, nullptr);
  EXPECT_EQ(wl::find_op(rep, "allreduce_embed").op, nullptr);
  EXPECT_EQ(wl::find_op(par, "lm_head").op->n, 4000);
  EXPECT_EQ(wl::find_op(rep, "lm_head").op->n, 32000);
  // Resident weights grow by 7/8 of each 32,000 x 4,096 bf16 table: 2 x 229,376,000 B.
  const double grown = wl::memory_footprint(rep, ph).weight_bytes - wl::memory_footprint(par, ph).weight_bytes;
  EXPECT_DOUBLE_EQ(grown, 2.0 * 7.0 / 8.0 * 32000.0 * 4096.0 * 2.0);
  EXPECT_EQ(wl::find_op(rep, "ffn_up").op->n, 11008 / 8);  // the blocks stay sharded
  // Without tensor parallelism the flag changes nothing.
  s.tensor_parallel = 1;
  EXPECT_DOUBLE_EQ(wl::totals(wl::build_graph(s, ph)).weight_bytes_read,
                   wl::totals(wl::build_graph(s, phase(wl::Phase::decode, 1, 1, 205))).weight_bytes_read);
}

TEST(WorkloadGraph, TotalsAreAdditiveOverLayersAndBlocks) {
  auto one = llama("llama2-7b");
  one.layers = 1;
  auto two = one;
  two.layers = 2;
  auto all = one;
  all.layers = 32;
  const auto ph = phase(wl::Phase::prefill, 2, 256);
  const auto t1 = wl::totals(wl::build_graph(one, ph));
  const auto t2 = wl::totals(wl::build_graph(two, ph));
  const auto t32 = wl::totals(wl::build_graph(all, ph));
  const double layer_flops = t2.flops - t1.flops;
  EXPECT_DOUBLE_EQ(t32.flops, t1.flops + 31.0 * layer_flops);
  EXPECT_DOUBLE_EQ(t32.bytes, t1.bytes + 31.0 * (t2.bytes - t1.bytes));
  EXPECT_DOUBLE_EQ(t32.parameters, t1.parameters + 31.0 * (t2.parameters - t1.parameters));
  // The graph total is the sum of its blocks times their repeats, and a block the
  // sum of its operators.
  const auto g = wl::build_graph(all, ph);
  double flops = 0.0, bytes = 0.0;
  for (const auto& b : g.blocks) {
    const auto tb = wl::totals(b);
    double op_flops = 0.0;
    for (const auto& n : b.nodes) op_flops += wl::flops(n.op);
    EXPECT_DOUBLE_EQ(tb.flops, op_flops);
    flops += static_cast<double>(b.repeat) * tb.flops;
    bytes += static_cast<double>(b.repeat) * tb.bytes;
  }
  EXPECT_DOUBLE_EQ(wl::totals(g).flops, flops);
  EXPECT_DOUBLE_EQ(wl::totals(g).bytes, bytes);
}

TEST(WorkloadGraph, OperatorCountsByHand) {
  // qkv_proj of Llama-2-7B prefill, 2 x 256 tokens, bf16: M = 512, N = 3*4096, K = 4096.
  const auto g = wl::build_graph(llama("llama2-7b"), phase(wl::Phase::prefill, 2, 256));
  const auto* qkv = wl::find_op(g, "qkv_proj").op;
  EXPECT_DOUBLE_EQ(wl::macs(*qkv), 512.0 * 12288.0 * 4096.0);
  EXPECT_DOUBLE_EQ(wl::flops(*qkv), 2.0 * 512.0 * 12288.0 * 4096.0);
  // Bytes: x 512*4096 + W 4096*12288 + q 512*4096 + kv 512*8192, 2 bytes each.
  EXPECT_DOUBLE_EQ(wl::bytes(*qkv), 2.0 * (512.0 * 4096 + 4096.0 * 12288 + 512.0 * 4096 + 512.0 * 8192));
  // Softmax over 2 x 32 heads x 256 rows of 256 scores: 5 flops per element.
  const auto* sm = wl::find_op(g, "attn_softmax").op;
  EXPECT_DOUBLE_EQ(wl::flops(*sm), 5.0 * 2 * 32 * 256 * 256);
  // Precisions: int4 weights take half a byte.
  EXPECT_DOUBLE_EQ(wl::bytes_per_element(wl::Precision::int4), 0.5);
  EXPECT_DOUBLE_EQ(wl::bytes_per_element(wl::Precision::fp8), 1.0);
}

TEST(WorkloadGraph, ValidateFindsProblems) {
  wl::OperatorGraph g;
  g.blocks.push_back(wl::Block{"b", 1, false, {}});
  g.blocks[0].nodes.push_back({wl::make_linear("a", wl::LayerType::ffn, 4, 4, 4, wl::Precision::bf16), {}});
  g.blocks[0].nodes.push_back({wl::make_linear("b", wl::LayerType::ffn, 4, 4, 4, wl::Precision::bf16), {"a"}});
  EXPECT_EQ(wl::validate(g), "");
  g.blocks[0].nodes.push_back({wl::make_linear("a", wl::LayerType::ffn, 4, 4, 4, wl::Precision::bf16), {}});
  EXPECT_NE(wl::validate(g).find("used twice"), std::string::npos);
  g.blocks[0].nodes.back().op.name = "c";
  g.blocks[0].nodes.back().inputs = {"later"};
  EXPECT_NE(wl::validate(g).find("not an earlier operator"), std::string::npos);
}

TEST(WorkloadPhases, BadSpecsAreRefusedWithAReason) {
  EXPECT_NE(wl::check(*wl::workload_preset("bert-base"), phase(wl::Phase::decode, 1, 1, 10)), "");
  auto s = llama("llama2-7b");
  s.tensor_parallel = 3;
  EXPECT_NE(wl::check(s, phase(wl::Phase::prefill, 1, 16)).find("tensor_parallel"), std::string::npos);
  EXPECT_THROW((void)wl::build_graph(s, phase(wl::Phase::prefill, 1, 16)), std::invalid_argument);
  EXPECT_NE(wl::check(llama("llama2-7b"), phase(wl::Phase::prefill, 0, 16)), "");
}

// A learned position table has one row per position (BERT: 512, GPT-3: 2,048): a step whose
// tokens reach past it is refused; rotary positions (Llama) have no table to pass.
TEST(WorkloadPhases, TokensPastALearnedPositionTableAreRefused) {
  const auto bert = *wl::workload_preset("bert-base");
  EXPECT_EQ(wl::check(bert, phase(wl::Phase::prefill, 1, 512)), "");
  EXPECT_NE(wl::check(bert, phase(wl::Phase::prefill, 1, 513)).find("context + seq (513 tokens) passes its learned "
                                                                     "position table (max_positions 512)"),
            std::string::npos);
  const auto gpt3 = *wl::workload_preset("gpt3-175b");
  EXPECT_EQ(wl::check(gpt3, phase(wl::Phase::decode, 1, 1, 2047)), "");  // the 2,048th token
  EXPECT_NE(wl::check(gpt3, phase(wl::Phase::decode, 1, 1, 2048)).find("max_positions 2048"), std::string::npos);
  EXPECT_EQ(wl::check(llama("llama2-7b"), phase(wl::Phase::decode, 1, 1, 100000)), "");
}

TEST(WorkloadFootprint, TrainingAdamIsSixteenBytesPerParameter) {
  // Rajbhandari et al. 2020 (ZeRO), Section 3.1: mixed-precision Adam keeps 2 + 2 + 12
  // = 16 bytes per parameter (fp16 weights and gradients, fp32 master, momentum, variance).
  const auto ph = phase(wl::Phase::training, 1, 128);
  const auto g = wl::build_graph(llama("llama2-7b"), ph);
  const auto f = wl::memory_footprint(g, ph);
  const double n = 6738415616.0;
  EXPECT_DOUBLE_EQ(f.weight_bytes + f.gradient_bytes + f.optimizer_bytes, 16.0 * n);
  EXPECT_DOUBLE_EQ(f.kv_cache_bytes, 0.0);
  EXPECT_GT(f.activation_bytes, 0.0);
  // Recomputation keeps less.
  auto rph = ph;
  rph.recompute = true;
  const auto fr = wl::memory_footprint(wl::build_graph(llama("llama2-7b"), rph), rph);
  EXPECT_LT(fr.activation_bytes, f.activation_bytes);
  // Per layer without recomputation: at least the layer input; with it, the layer input
  // (1 x 128 x 4096 x 2 bytes) per layer plus one layer's saved set.
  EXPECT_GT(fr.activation_bytes, 32.0 * 128.0 * 4096.0 * 2.0);
}

TEST(WorkloadFootprint, GptLayerActivationsAreKorthikantisFormula) {
  // Korthikanti et al. 2022 (arXiv 2205.05198), section 4.1, equation 1: a GPT layer
  // without parallelism keeps sbh (34 + 5 a s / h) bytes for the backward pass in 16-bit
  // training (s sequence, b micro-batch, h hidden, a heads; dropout masks 1 byte): the
  // attention block 11 sbh + 5 a s^2 b, the MLP 19 sbh, the two LayerNorms 4 sbh. The
  // graph has no hidden (residual) dropouts (presets.cpp: they run fused into
  // bias-dropout-add), so the two masks of sbh each are absent: 32 sbh + 5 a s^2 b per
  // layer. GPT-3 175B, s = 2048, b = 1, h = 12288, a = 96; one layer = the difference
  // between 2 and 1 layers.
  auto s = std::get<wl::TransformerSpec>(*wl::workload_preset("gpt3-175b"));
  const auto ph = phase(wl::Phase::training, 1, 2048);
  const auto at = [&](std::int64_t layers, wl::PhaseSpec p, bool sp = false) {
    s.layers = layers;
    return wl::memory_footprint(wl::build_graph(s, p), p, {false, sp}).activation_bytes;
  };
  const double sbh = 2048.0 * 1.0 * 12288.0, as2b = 96.0 * 2048.0 * 2048.0 * 1.0;
  EXPECT_DOUBLE_EQ(at(2, ph) - at(1, ph), 32.0 * sbh + 5.0 * as2b);
  // Selective recomputation (section 4.2): the 5 a s^2 b term goes, 34 sbh stays (32 here).
  auto sel = ph;
  sel.recompute_attention = true;
  EXPECT_DOUBLE_EQ(at(2, sel) - at(1, sel), 32.0 * sbh);
  // Tensor parallelism over t (equation 2): sbh (10 + 24 / t + 5 a s / (h t)); the 10
  // replicated sbh hold the two masks, so 8 here. t = 8: 11 sbh + 5 a s^2 b / 8.
  s.tensor_parallel = 8;
  EXPECT_DOUBLE_EQ(at(2, ph) - at(1, ph), 11.0 * sbh + 5.0 * as2b / 8.0);
  // With sequence parallelism (equation 4): sbh (34 / t + 5 a s / (h t)), 32 / t here; and
  // with selective recomputation as well (equation 5 without the masks): 32 sbh / t.
  EXPECT_DOUBLE_EQ(at(2, ph, true) - at(1, ph, true), 4.0 * sbh + 5.0 * as2b / 8.0);
  EXPECT_DOUBLE_EQ(at(2, sel, true) - at(1, sel, true), 4.0 * sbh);
  // Full recomputation keeps each layer's input, 2 sbh, sharded over t as well (section 5:
  // 2 sbh L / t with sequence parallelism), plus one layer's saved set while it reruns.
  auto full = ph;
  full.recompute = true;
  EXPECT_DOUBLE_EQ(at(2, full, true) - at(1, full, true), 2.0 * sbh / 8.0);
  EXPECT_DOUBLE_EQ(at(2, full) - at(1, full), 2.0 * sbh);
  // Without tensor parallelism nothing is replicated: sequence parallelism changes nothing.
  s.tensor_parallel = 1;
  EXPECT_DOUBLE_EQ(at(2, ph, true) - at(1, ph, true), 32.0 * sbh + 5.0 * as2b);
}

TEST(WorkloadFootprint, DotsPolicyKeepsLayerInputsAndProjectionOutputs) {
  // JAX's checkpoint_dots_with_no_batch_dims (MaxText's remat_policy minimal) saves the outputs of
  // the dots without batch dimensions, the layer's projections, and the remat region's input; the
  // rest reruns. A GPT-3 175B layer (s = 2048, b = 1, h = 12288, 16-bit): the input 2 sbh, the QKV
  // projection's 3h outputs 6 sbh, the attention output projection's 2 sbh, the FFN's 4h 8 sbh and
  // its output projection's 2 sbh: 20 sbh per layer. Under tensor parallelism over t = 8 the
  // column-parallel outputs (QKV, FFN up) are 1/t per chip; the row-parallel ones (attention out,
  // FFN down) are whole partial sums before their all-reduce, and the layer input whole: 14 sbh / t
  // + 6 sbh. With sequence parallelism those three are kept as the reduce-scatter leaves them, 1/t:
  // 20 sbh / t. One layer = the difference between 2 and 1 layers (one layer's live set while it
  // reruns is in both).
  auto s = std::get<wl::TransformerSpec>(*wl::workload_preset("gpt3-175b"));
  auto ph = phase(wl::Phase::training, 1, 2048);
  ph.recompute_non_matmul = true;
  const auto at = [&](std::int64_t layers, bool sp = false) {
    s.layers = layers;
    return wl::memory_footprint(wl::build_graph(s, ph), ph, {false, sp}).activation_bytes;
  };
  const double sbh = 2048.0 * 1.0 * 12288.0;
  EXPECT_DOUBLE_EQ(at(2) - at(1), 20.0 * sbh);
  s.tensor_parallel = 8;
  EXPECT_DOUBLE_EQ(at(2) - at(1), 14.0 * sbh / 8.0 + 6.0 * sbh);
  EXPECT_DOUBLE_EQ(at(2, true) - at(1, true), 20.0 * sbh / 8.0);
  // Full recomputation wins over it: the layer inputs only (2 sbh / t with sequence parallelism).
  ph.recompute = true;
  EXPECT_DOUBLE_EQ(at(2, true) - at(1, true), 2.0 * sbh / 8.0);
}

TEST(WorkloadFootprint, FlashAttentionSavesNoScoreShapedTensor) {
  // FlashAttention never writes S = Q K^T or P = softmax(S) to memory and its backward
  // recomputes P from the row log-sum-exp it saves (Dao et al. 2022, section 3.1;
  // FlashAttention-2 saves L = m + log l, one fp32 per query row and head). Eager
  // attention saves softmax's input S and the AV product's input P, each heads x s x s
  // bf16 per sequence and layer. Llama-2-7B: 32 layers, 32 heads, no dropout.
  const double layers = 32.0, heads = 32.0, s = 128.0, b = 2.0;
  const auto ph = phase(wl::Phase::training, 2, 128);
  const auto g = wl::build_graph(llama("llama2-7b"), ph);
  const auto eager = wl::memory_footprint(g, ph);
  const auto flash = wl::memory_footprint(g, ph, {true});
  const double scores = b * heads * s * s * 2.0;  // one of S or P, one layer
  const double lse = b * heads * s * 4.0;
  EXPECT_DOUBLE_EQ(eager.activation_bytes - flash.activation_bytes, layers * (2.0 * scores - lse));
  EXPECT_DOUBLE_EQ(eager.weight_bytes + eager.optimizer_bytes, flash.weight_bytes + flash.optimizer_bytes);

  // Selective recomputation (Korthikanti et al. 2022, section 4.2) keeps Q, K, V of the
  // recomputed core and no score-shaped tensor, nor the log-sum-exp.
  auto sel = ph;
  sel.recompute_attention = true;
  const auto fs = wl::memory_footprint(wl::build_graph(llama("llama2-7b"), sel), sel);
  EXPECT_DOUBLE_EQ(eager.activation_bytes - fs.activation_bytes, layers * 2.0 * scores);

  // With attention dropout (GPT-style training), its 1-byte mask goes too.
  auto gpt = llama("llama2-7b");
  gpt.attention_dropout = 0.1;
  const auto gd = wl::build_graph(gpt, ph);
  EXPECT_DOUBLE_EQ(wl::memory_footprint(gd, ph).activation_bytes - wl::memory_footprint(gd, ph, {true}).activation_bytes,
                   layers * (2.5 * scores - lse));

  // Inference: at a long prompt the eager peak is softmax's S in and P out
  // (2 x 32 x 4096^2 x 2 bytes = 2.1 GB); the fused kernel's live set is Q, K, V, O.
  const auto pf = phase(wl::Phase::prefill, 1, 4096);
  const auto gp = wl::build_graph(llama("llama2-7b"), pf);
  EXPECT_DOUBLE_EQ(wl::memory_footprint(gp, pf).activation_bytes, 2.0 * 32.0 * 4096.0 * 4096.0 * 2.0);
  const double fp = wl::memory_footprint(gp, pf, {true}).activation_bytes;
  EXPECT_GE(fp, 4.0 * 4096.0 * 4096.0 * 2.0);
  EXPECT_LT(fp, 32.0 * 4096.0 * 4096.0 * 2.0);
}

TEST(WorkloadFootprint, Llama2_70bNeedsTensorParallelismOn80GB) {
  // Weights alone: 68,976,648,192 parameters x 2 bytes = 138 GB > 80 GB.
  const double capacity = 80e9;
  const auto ph = phase(wl::Phase::decode, 1, 1, 4095);
  auto s = llama("llama2-70b");
  const auto f = wl::memory_footprint(wl::build_graph(s, ph), ph);
  EXPECT_DOUBLE_EQ(f.weight_bytes, 2.0 * 68976648192.0);
  EXPECT_DOUBLE_EQ(f.kv_cache_bytes, 4096.0 * 327680.0);
  const auto c = wl::check_capacity(f, capacity);
  EXPECT_FALSE(c.feasible);
  EXPECT_EQ(c.reason, wl::FootprintStatus::exceeds_capacity);
  EXPECT_DOUBLE_EQ(c.shortfall_bytes, f.total_bytes() - capacity);
  s.tensor_parallel = 8;
  const auto f8 = wl::memory_footprint(wl::build_graph(s, ph), ph);
  EXPECT_TRUE(wl::check_capacity(f8, capacity).feasible);
  // int4 with the head in bf16 (the default): 32000 x 8192 = 262,144,000 head parameters
  // at 2 bytes, the other 68,714,504,192 at half a byte.
  auto ph4 = ph;
  ph4.precision = wl::Precision::int4;
  const auto f4 = wl::memory_footprint(wl::build_graph(llama("llama2-70b"), ph4), ph4);
  EXPECT_DOUBLE_EQ(f4.weight_bytes, 0.5 * 68714504192.0 + 2.0 * 262144000.0);
  // int4 everywhere: half a byte per parameter.
  ph4.head_precision = wl::Precision::int4;
  const auto f4all = wl::memory_footprint(wl::build_graph(llama("llama2-70b"), ph4), ph4);
  EXPECT_DOUBLE_EQ(f4all.weight_bytes, 0.5 * 68976648192.0);
}

TEST(WorkloadExplicit, SymbolicDimensionsFollowThePhase) {
  wl::ExplicitSpec e;
  e.name = "tiny";
  wl::ExplicitBlock b;
  b.name = "layer";
  b.repeat = 4;
  wl::ExplicitOp proj;
  proj.name = "proj";
  proj.kind = wl::OpKind::gemm;
  proj.m = {1, {"tokens"}};
  proj.n = {1024, {}};
  proj.k = {512, {}};
  wl::ExplicitOp scores;
  scores.name = "scores";
  scores.kind = wl::OpKind::batched_gemm;
  scores.layer = wl::LayerType::attention;
  scores.batch = {8, {"batch"}};
  scores.m = {1, {"seq"}};
  scores.n = {1, {"kv_len"}};
  scores.k = {64, {}};
  scores.after = {"proj"};
  b.ops = {proj, scores};
  e.blocks = {b};
  const auto g = wl::build_graph(e, phase(wl::Phase::decode, 3, 2, 100));
  EXPECT_EQ(wl::validate(g), "");
  const auto* p = wl::find_op(g, "proj").op;
  EXPECT_EQ(p->m, 6);
  const auto* s = wl::find_op(g, "scores").op;
  EXPECT_EQ(s->batch, 24);
  EXPECT_EQ(s->n, 102);
  EXPECT_DOUBLE_EQ(wl::totals(g).macs, 4.0 * (6.0 * 1024 * 512 + 24.0 * 2 * 102 * 64));
}

// Under an 8-bit precision the output head stays in bf16 (as TensorRT-Model-Optimizer's
// FP8 config leaves "*lm_head*"): Llama-2-70B at TP 8, its 32000/8 = 4000 x 8192 weight
// is 4000 * 8192 * 2 = 65,536,000 bytes (by hand), a layer GEMM's stays 1 byte per
// element (ffn_up 8192 x 3584); head_precision overrides it, a 16-bit run is unchanged.
TEST(WorkloadGraph, QuantizedRunsKeepTheHeadIn16Bits) {
  auto s = llama("llama2-70b");
  s.tensor_parallel = 8;
  auto ph = phase(wl::Phase::decode, 8, 1, 2047);
  ph.precision = wl::Precision::fp8;
  auto weight_bytes = [](const wl::Operator& op) {
    for (const auto& t : op.tensors)
      if (t.role == wl::TensorRole::weight) return wl::bytes(t);
    return 0.0;
  };
  const auto g = wl::build_graph(s, ph);
  const auto* lm = wl::find_op(g, "lm_head").op;
  ASSERT_NE(lm, nullptr);
  EXPECT_EQ(lm->precision, wl::Precision::bf16);
  EXPECT_DOUBLE_EQ(weight_bytes(*lm), 65'536'000.0);
  EXPECT_DOUBLE_EQ(weight_bytes(*wl::find_op(g, "ffn_up").op), 8192.0 * 3584.0);
  ph.head_precision = wl::Precision::fp8;
  EXPECT_DOUBLE_EQ(weight_bytes(*wl::find_op(wl::build_graph(s, ph), "lm_head").op), 32'768'000.0);
  ph.head_precision.reset();
  ph.precision = wl::Precision::fp16;
  EXPECT_EQ(wl::find_op(wl::build_graph(s, ph), "lm_head").op->precision, wl::Precision::fp16);
}

// The causal mask marks decoder attention over its own tokens (prefill, training), not
// decode (one query row against the cache) nor an encoder (BERT attends both ways).
TEST(WorkloadGraph, CausalMaskOnDecoderPrefillAndTrainingOnly) {
  const auto s = llama("llama2-7b");
  EXPECT_TRUE(wl::find_op(wl::build_graph(s, phase(wl::Phase::prefill, 1, 512)), "attn_qk").op->causal);
  EXPECT_TRUE(wl::find_op(wl::build_graph(s, phase(wl::Phase::training, 1, 512)), "attn_av").op->causal);
  EXPECT_FALSE(wl::find_op(wl::build_graph(s, phase(wl::Phase::decode, 1, 1, 511)), "attn_qk").op->causal);
  const auto bert = *wl::workload_preset("bert-base");
  EXPECT_FALSE(wl::find_op(wl::build_graph(bert, phase(wl::Phase::prefill, 1, 128)), "attn_qk").op->causal);
}
