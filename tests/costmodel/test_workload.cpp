// The workload library against published figures: parameter counts, MACs and
// FLOPs of the presets. Every expected number says where it comes from.
#include <gtest/gtest.h>

#include <variant>

#include "costmodel/workload/footprint.hpp"
#include "costmodel/workload/graph.hpp"
#include "costmodel/workload/presets.hpp"
#include "costmodel/workload/spec.hpp"

namespace wl = dse::costmodel::workload;

namespace {

wl::WorkloadSpec preset(const char* name) {
  auto s = wl::workload_preset(name);
  EXPECT_TRUE(s.has_value()) << name;
  return *s;
}

wl::PhaseSpec phase(wl::Phase p, std::int64_t batch, std::int64_t seq, std::int64_t context = 0) {
  wl::PhaseSpec ph;
  ph.phase = p;
  ph.batch = batch;
  ph.seq = seq;
  ph.context = context;
  return ph;
}

double parameters(const char* name) {
  return wl::totals(wl::build_graph(preset(name), phase(wl::Phase::prefill, 1, 128))).parameters;
}

// Sum of 2*MACs over the GEMM-like operators (gemm, batched_gemm, conv2d).
double gemm_flops(const wl::OperatorGraph& g) {
  double f = 0.0;
  for (const auto& b : g.blocks) {
    for (const auto& n : b.nodes) {
      if (wl::is_gemm_like(n.op.kind)) f += static_cast<double>(b.repeat) * wl::flops(n.op);
    }
  }
  return f;
}

}  // namespace

TEST(WorkloadPresets, AllNamesBuildAndValidate) {
  for (const auto& name : wl::workload_preset_names()) {
    const auto spec = wl::workload_preset(name);
    ASSERT_TRUE(spec.has_value()) << name;
    const auto g = wl::build_graph(*spec, phase(wl::Phase::prefill, 2, 64));
    EXPECT_EQ(wl::validate(g), "") << name;
    EXPECT_GT(wl::totals(g).flops, 0.0) << name;
  }
  EXPECT_FALSE(wl::workload_preset("llama2-8b").has_value());
}

TEST(WorkloadPresets, ResNet50Parameters) {
  // torchvision resnet50 (IMAGENET1K_V1 model card): num_params 25,557,032; He et al.
  // 2016 give "25.6M". Conv weights, batch-norm gamma/beta and the fc layer.
  EXPECT_DOUBLE_EQ(parameters("resnet50"), 25557032.0);
}

TEST(WorkloadPresets, ResNet50MacsPerImage) {
  // torchvision resnet50 model card: 4.09 "GFLOPS" (counted as multiply-accumulates
  // by fvcore) for one 224x224 image; the figure usually quoted is about 4.1 GMACs.
  const auto g = wl::build_graph(preset("resnet50"), phase(wl::Phase::prefill, 1, 1));
  EXPECT_NEAR(wl::totals(g).macs, 4.09e9, 0.01 * 4.09e9);
  // Symbolic in the batch: 8 images cost 8 times one.
  const auto g8 = wl::build_graph(preset("resnet50"), phase(wl::Phase::prefill, 8, 1));
  EXPECT_DOUBLE_EQ(wl::totals(g8).macs, 8.0 * wl::totals(g).macs);
}

TEST(WorkloadPresets, BertBaseParameters) {
  // Devlin et al. 2019: BERT-BASE 110M. By hand (Hugging Face bert-base-uncased has the
  // same 109,482,240): embeddings 30522*768 + 512*768 + 2*768 + LN 2*768 = 23,837,184;
  // per layer qkv 768*2304+2304, out 768*768+768, ffn 768*3072+3072 + 3072*768+768,
  // two LN 2*1536 = 7,087,872, times 12 = 85,054,464; pooler 768*768+768 = 590,592.
  const double p = parameters("bert-base");
  EXPECT_DOUBLE_EQ(p, 23837184.0 + 85054464.0 + 590592.0);
  EXPECT_NEAR(p, 110e6, 0.01 * 110e6);
}

TEST(WorkloadPresets, BertLargeParameters) {
  // Devlin et al. 2019: BERT-LARGE 340M (the exact count, 335M, is 1.4% below).
  EXPECT_NEAR(parameters("bert-large"), 340e6, 0.02 * 340e6);
}

TEST(WorkloadPresets, Llama2_7bParameters) {
  // Touvron et al. 2023 (Llama 2), "7B"; the released checkpoint has 6,738,415,616.
  // By hand: per layer 4*4096^2 + 3*4096*11008 + 2*4096 = 202,383,360, times 32,
  // plus embedding and lm_head 2*32000*4096 and the final norm 4096.
  EXPECT_DOUBLE_EQ(parameters("llama2-7b"), 32.0 * 202383360.0 + 2.0 * 32000.0 * 4096.0 + 4096.0);
  EXPECT_NEAR(parameters("llama2-7b"), 6.74e9, 0.005e9);
}

TEST(WorkloadPresets, Llama2_70bParameters) {
  // Released checkpoint: 68,976,648,192. By hand: per layer attention 8192*(8192+2*1024)
  // + 8192*8192, MLP 3*8192*28672, norms 2*8192 = 855,654,400, times 80; embeddings
  // 2*32000*8192; final norm 8192.
  EXPECT_DOUBLE_EQ(parameters("llama2-70b"), 80.0 * 855654400.0 + 2.0 * 32000.0 * 8192.0 + 8192.0);
}

TEST(WorkloadPresets, Gpt3_175bParameters) {
  // Brown et al. 2020, Table 2.1: 175.0B. By hand: 96 layers of 12*d^2 + 13*d
  // (= 1,812,099,072 with d = 12288), token and position embeddings (50257 + 2048)*d,
  // final LN 2*d; the lm_head is tied to the token embedding: 174,604,259,328.
  const double p = parameters("gpt3-175b");
  EXPECT_DOUBLE_EQ(p, 96.0 * 1812099072.0 + (50257.0 + 2048.0) * 12288.0 + 2.0 * 12288.0);
  EXPECT_NEAR(p, 175e9, 0.01 * 175e9);
}

TEST(WorkloadPresets, Mixtral8x7bParameters) {
  // Jiang et al. 2024: 47B parameters in total (46.7B in the released checkpoint).
  EXPECT_NEAR(parameters("mixtral-8x7b"), 46.7e9, 0.005 * 46.7e9);
}

TEST(WorkloadPresets, VitB16Parameters) {
  // Dosovitskiy et al. 2021, Table 1: ViT-Base 86M (timm vit_base_patch16_224: 86,567,656).
  EXPECT_NEAR(parameters("vit-b16"), 86.6e6, 0.005 * 86.6e6);
}

TEST(WorkloadPresets, VitB16MacsPerImage) {
  // timm vit_base_patch16_224 model card: 17.6 GMACs per 224x224 image (fvcore count of
  // the patch conv, the 12 layers' GEMMs including QK^T and AV over 197 tokens, and the head).
  const auto g = wl::build_graph(preset("vit-b16"), phase(wl::Phase::prefill, 1, 1));
  EXPECT_NEAR(wl::totals(g).macs, 17.6e9, 0.01 * 17.6e9);
}

TEST(WorkloadPresets, Llama3Parameters) {
  // Dubey et al. 2024 (Llama 3), Table 3: 8B, 70B, 405B (released: 8.03B, 70.6B, 405.9B).
  EXPECT_NEAR(parameters("llama3-8b"), 8.03e9, 0.01 * 8.03e9);
  EXPECT_NEAR(parameters("llama3-70b"), 70.6e9, 0.01 * 70.6e9);
  EXPECT_NEAR(parameters("llama3-405b"), 405.9e9, 0.01 * 405.9e9);
}

TEST(WorkloadFlops, DecodeFlopsPerTokenAboutTwiceParameters) {
  // Kaplan et al. 2020 (Scaling Laws), Table 1: forward FLOPs per token are about
  // 2N + 2*n_layer*n_ctx*d_attn. For Llama-2-7B at a short context the GEMMs give
  // exactly 2*(matrix parameters of the layers + lm_head) + 2*2*L*(C+1)*d_attn
  // (QK^T and AV), and the total is within a few percent of 2 x parameters.
  const std::int64_t context = 127;
  const auto g = wl::build_graph(preset("llama2-7b"), phase(wl::Phase::decode, 1, 1, context));
  const double L = 32, D = 4096, F = 11008, V = 32000;
  const double kv_len = context + 1;
  const double expected_gemm = 2.0 * (L * (4.0 * D * D + 3.0 * D * F) + V * D) + 4.0 * L * kv_len * D;
  EXPECT_DOUBLE_EQ(gemm_flops(g), expected_gemm);
  const double two_n = 2.0 * 6738415616.0;
  EXPECT_NEAR(wl::totals(g).flops, two_n, 0.03 * two_n);
}

TEST(WorkloadFlops, TrainingIsThreeForwardsAndSixNPerToken) {
  // Backward = 2x forward GEMM FLOPs (data and weight gradients); Kaplan et al. 2020:
  // training compute C ~ 6N per token. Recomputation adds one forward of the layers.
  auto ph = phase(wl::Phase::training, 4, 128);
  const auto g = wl::build_graph(preset("llama2-7b"), ph);
  EXPECT_EQ(wl::validate(g), "");
  auto gemm_of_pass = [&](wl::Pass pass) {
    double f = 0.0;
    for (const auto& b : g.blocks) {
      for (const auto& n : b.nodes) {
        if (n.op.pass == pass && wl::is_gemm_like(n.op.kind)) f += static_cast<double>(b.repeat) * wl::flops(n.op);
      }
    }
    return f;
  };
  const double fwd = gemm_of_pass(wl::Pass::forward);
  const double bwd = gemm_of_pass(wl::Pass::backward_data) + gemm_of_pass(wl::Pass::backward_weight);
  EXPECT_DOUBLE_EQ(bwd, 2.0 * fwd);
  EXPECT_DOUBLE_EQ(gemm_of_pass(wl::Pass::recompute), 0.0);
  const double tokens = 4.0 * 128.0;
  EXPECT_NEAR(wl::totals(g).flops / tokens, 6.0 * 6.738e9, 0.03 * 6.0 * 6.738e9);

  ph.recompute = true;
  const auto gr = wl::build_graph(preset("llama2-7b"), ph);
  EXPECT_EQ(wl::validate(gr), "");
  // The recomputed forward is the layer stack's forward: all GEMMs but the lm_head.
  const double lm_head = 2.0 * tokens * 32000.0 * 4096.0;
  double recompute = 0.0;
  for (const auto& b : gr.blocks) {
    for (const auto& n : b.nodes) {
      if (n.op.pass == wl::Pass::recompute && wl::is_gemm_like(n.op.kind)) {
        recompute += static_cast<double>(b.repeat) * wl::flops(n.op);
      }
    }
  }
  EXPECT_DOUBLE_EQ(recompute, fwd - lm_head);
}

// A linear layer's bias gradient is dy summed over the rows, a reduction of its own (PyTorch's
// autograd engine reduces addmm's whole-dy bias gradient with at::sum_to; Megatron-LM sums
// grad_output over dim 0): GPT-3 175B's ffn_up (bias: true) at 4 x 128 tokens has a
// ffn_up.bwd_bias that reads dy, 512 x 49,152 bf16 elements, and writes the 49,152 bias
// gradients; its dW GEMM no longer carries the bias gradient. Llama-2 (no biases) has none.
TEST(WorkloadTraining, BiasGradientIsItsOwnReduction) {
  const auto g = wl::build_graph(preset("gpt3-175b"), phase(wl::Phase::training, 4, 128));
  EXPECT_EQ(wl::validate(g), "");
  const auto* r = wl::find_op(g, "ffn_up.bwd_bias").op;
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->kind, wl::OpKind::reduction);
  EXPECT_EQ(r->pass, wl::Pass::backward_weight);
  EXPECT_EQ(r->rows, 49152);
  EXPECT_EQ(r->cols, 512);
  ASSERT_EQ(r->tensors.size(), 2u);
  EXPECT_EQ(r->tensors[0].elements, 512 * 49152);
  EXPECT_EQ(r->tensors[1].role, wl::TensorRole::gradient);
  EXPECT_EQ(r->tensors[1].elements, 49152);
  const auto* dw = wl::find_op(g, "ffn_up.bwd_weight").op;
  ASSERT_NE(dw, nullptr);
  for (const auto& t : dw->tensors) EXPECT_NE(t.name, "dbias");
  const auto llama = wl::build_graph(preset("llama2-7b"), phase(wl::Phase::training, 4, 128));
  EXPECT_EQ(wl::find_op(llama, "ffn_up.bwd_bias").op, nullptr);
}

// The loss and the training loop's logging cross-entropies, Llama-2-7B at 2 x 256 = 512 tokens
// over its 32,000-token vocabulary (16,384,000 logits). The fused loss (flash-attn's xentropy):
// forward reads the logits and writes a loss and log-sum-exp per row (512 fp32 each), backward
// reads the logits and the log-sum-exp and writes the logits' gradient. Two logging metrics
// (Composer's LanguageCrossEntropy and LanguagePerplexity): one block after the backward, run
// twice, a bf16 log-softmax and its output copied to fp32 (2 B read, 4 B written per logit), kept
// for no backward pass (no activations held, no derived kernels) and absent from inference.
TEST(WorkloadTraining, FusedLossAndLogitMetrics) {
  auto ph = phase(wl::Phase::training, 2, 256);
  const auto plain = wl::build_graph(preset("llama2-7b"), ph);
  ASSERT_NE(wl::find_op(plain, "loss_softmax").op, nullptr);
  EXPECT_EQ(wl::find_op(plain, "loss_cross_entropy").op, nullptr);
  EXPECT_EQ(wl::find_op(plain, "metric_log_softmax").op, nullptr);
  ph.loss_kernel = wl::LossKernel::fused;
  ph.logit_metrics = 2;
  const auto g = wl::build_graph(preset("llama2-7b"), ph);
  EXPECT_EQ(wl::validate(g), "");
  EXPECT_EQ(wl::find_op(g, "loss_softmax").op, nullptr);
  const auto* ce = wl::find_op(g, "loss_cross_entropy").op;
  ASSERT_NE(ce, nullptr);
  EXPECT_EQ(ce->kind, wl::OpKind::cross_entropy);
  EXPECT_DOUBLE_EQ(wl::bytes(*ce), 16384000.0 * 2 + 2 * 512 * 4);
  EXPECT_DOUBLE_EQ(wl::flops(*ce), 5.0 * 16384000);
  const auto* ceb = wl::find_op(g, "loss_cross_entropy.bwd").op;
  ASSERT_NE(ceb, nullptr);
  EXPECT_EQ(ceb->pass, wl::Pass::backward_data);
  EXPECT_DOUBLE_EQ(wl::bytes(*ceb), 2 * 16384000.0 * 2 + 512 * 4);
  const wl::Block& m = g.blocks.back();
  EXPECT_EQ(m.name, "logit_metrics");
  EXPECT_EQ(m.repeat, 2);
  ASSERT_EQ(m.nodes.size(), 2u);
  EXPECT_EQ(m.nodes[0].op.name, "metric_log_softmax");
  EXPECT_EQ(m.nodes[0].op.kind, wl::OpKind::softmax);
  EXPECT_EQ(m.nodes[0].op.precision, wl::Precision::bf16);
  EXPECT_EQ(m.nodes[1].op.name, "metric_log_probs_fp32");
  EXPECT_DOUBLE_EQ(wl::bytes(m.nodes[1].op), 16384000.0 * (2 + 4));
  EXPECT_EQ(wl::find_op(g, "metric_log_softmax.bwd").op, nullptr);
  EXPECT_EQ(wl::find_op(g, "metric_log_probs_fp32.bwd").op, nullptr);
  EXPECT_EQ(wl::memory_footprint(g, ph).activation_bytes, wl::memory_footprint(plain, ph).activation_bytes);
  ph.precision = wl::Precision::fp32;  // fp32 logits: no copy
  const auto f32 = wl::build_graph(preset("llama2-7b"), ph);
  EXPECT_EQ(f32.blocks.back().nodes.size(), 1u);
  EXPECT_EQ(wl::find_op(f32, "metric_log_probs_fp32").op, nullptr);
}

// Two more kernels of the backward, GPT-3 175B at 4 x 128 = 512 tokens (hidden 12,288, 96 heads,
// no GQA): the fused QKV projection's output is split into q and the keys / values, so its
// gradient is assembled by a copy (PyTorch's split_with_sizes_backward: at::cat of the parts):
// qkv_proj.bwd_concat reads and writes 512 x 36,864 elements, before the projection's own
// backward GEMMs; out_proj (one output) has none. A residual add passes dy through; what runs
// is the accumulation of the residual stream's two gradients: dy and the other branch's read,
// their sum written, 512 x 12,288 each, one FLOP per element (it was charged as reading dy,
// both inputs and writing both input gradients).
TEST(WorkloadTraining, SplitGradientsAreConcatenatedAndResidualGradientsAccumulated) {
  const auto g = wl::build_graph(preset("gpt3-175b"), phase(wl::Phase::training, 4, 128));
  const auto* cat = wl::find_op(g, "qkv_proj.bwd_concat").op;
  ASSERT_NE(cat, nullptr);
  EXPECT_EQ(cat->kind, wl::OpKind::elementwise);
  EXPECT_EQ(cat->rows * cat->cols, 512 * 36864);
  ASSERT_EQ(cat->tensors.size(), 2u);
  EXPECT_EQ(cat->tensors[0].role, wl::TensorRole::input);
  EXPECT_EQ(cat->tensors[0].elements, 512 * 36864);
  EXPECT_EQ(cat->tensors[1].role, wl::TensorRole::output);
  EXPECT_EQ(cat->tensors[1].elements, 512 * 36864);
  EXPECT_EQ(wl::find_op(g, "out_proj.bwd_concat").op, nullptr);
  // In the backward block the concatenation comes before the projection's data gradient.
  for (const auto& b : g.blocks) {
    std::size_t at_cat = b.nodes.size(), at_dx = b.nodes.size();
    for (std::size_t i = 0; i < b.nodes.size(); ++i) {
      if (b.nodes[i].op.name == "qkv_proj.bwd_concat") at_cat = i;
      if (b.nodes[i].op.name == "qkv_proj.bwd_data") at_dx = i;
    }
    if (at_dx < b.nodes.size()) {
      EXPECT_LT(at_cat, at_dx);
    }
  }
  const auto* acc = wl::find_op(g, "residual_attn.bwd").op;
  ASSERT_NE(acc, nullptr);
  ASSERT_EQ(acc->tensors.size(), 3u);
  for (const auto& t : acc->tensors) EXPECT_EQ(t.elements, 512 * 12288);
  EXPECT_EQ(acc->tensors[2].role, wl::TensorRole::output);
  EXPECT_DOUBLE_EQ(wl::flops(*acc), 512.0 * 12288.0);
}

TEST(WorkloadFlops, MixtralRoutedTokenCounts) {
  // One token, top-2 of 8 experts: 2 experts active with one token each; the weights
  // read are the active parameters: per layer attention 4096*(4096+2*1024) + 4096^2,
  // two experts 2*3*4096*14336, router 4096*8, norms 2*4096; plus one embedding row,
  // the final norm and the lm_head 32000*4096 (Jiang et al. 2024: 13B active).
  const auto g = wl::build_graph(preset("mixtral-8x7b"), phase(wl::Phase::decode, 1, 1, 100));
  const auto* up = wl::find_op(g, "ffn_up").op;
  ASSERT_NE(up, nullptr);
  EXPECT_EQ(up->batch, 2);
  EXPECT_EQ(up->m, 1);
  const double per_layer = 4096.0 * (4096 + 2048) + 4096.0 * 4096 + 2.0 * 3 * 4096 * 14336 + 4096.0 * 8 + 2 * 4096;
  const double active = 32 * per_layer + 4096 + 4096 + 32000.0 * 4096;
  EXPECT_DOUBLE_EQ(wl::totals(g).weight_bytes_read, 2.0 * active);
  // A long prompt reaches every expert: 4096 tokens * 2 / 8 experts = 1024 each.
  const auto p = wl::build_graph(preset("mixtral-8x7b"), phase(wl::Phase::prefill, 1, 4096));
  const auto* up_p = wl::find_op(p, "ffn_up").op;
  EXPECT_EQ(up_p->batch, 8);
  EXPECT_EQ(up_p->m, 1024);
  ASSERT_NE(wl::find_op(p, "moe_router").op, nullptr);
}

// FP8 training as Transformer Engine runs it (wl::apply_fp8_training), by hand for Llama-2-7B
// (hidden 4096, 32 heads of 128, ffn 11008, SwiGLU, RMSNorm, no biases, 32 layers), one
// sequence of 256 tokens. Forward: the projection's input (the attention output, 256 x 4096)
// needs a cast kernel; QKV and gate/up read a norm, down reads the SwiGLU output, which write
// their outputs quantized. Backward: the output gradients of QKV (256 x 12288), the projection
// and down (256 x 4096 each) are cast; gate's and up's come quantized from the SwiGLU's
// backward. A cast reads 2 B and writes 2 x 1 B per element. The GEMMs against a weight run in
// FP8 with FP8 operands and bf16 outputs; the attention products, norms and element-wise ops in
// bf16; the lm_head in bf16. FP8 weights cast per step: 32 x (4096 x 12288 + 4096 x 4096 +
// 3 x 4096 x 11008) = 6,476,005,376 elements; the footprint's weights grow by 2 B each.
TEST(WorkloadTraining, Fp8TrainingCastsAsTransformerEngine) {
  auto ph = phase(wl::Phase::training, 1, 256);
  ph.precision = wl::Precision::fp8;
  const auto g = wl::build_graph(preset("llama2-7b"), ph);
  std::vector<std::string> casts;
  for (const auto& b : g.blocks)
    for (const auto& n : b.nodes)
      if (n.op.name.find("fp8_cast") != std::string::npos) casts.push_back(n.op.name);
  EXPECT_EQ(casts, (std::vector<std::string>{"out_proj.fp8_cast", "ffn_down.bwd_fp8_cast", "out_proj.bwd_fp8_cast",
                                             "qkv_proj.bwd_fp8_cast"}));
  const auto* c = wl::find_op(g, "out_proj.fp8_cast").op;
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->rows * c->cols, 256 * 4096);
  EXPECT_DOUBLE_EQ(wl::bytes(*c), 256.0 * 4096 * (2 + 2 * 1));
  EXPECT_EQ(wl::find_op(g, "qkv_proj.bwd_fp8_cast").op->rows * wl::find_op(g, "qkv_proj.bwd_fp8_cast").op->cols,
            256 * 12288);
  EXPECT_EQ(wl::find_op(g, "qkv_proj").op->precision, wl::Precision::fp8);
  EXPECT_EQ(wl::find_op(g, "ffn_up.bwd_weight").op->precision, wl::Precision::fp8);
  EXPECT_EQ(wl::find_op(g, "ffn_down.bwd_data").op->precision, wl::Precision::fp8);
  EXPECT_EQ(wl::find_op(g, "attn_qk").op->precision, wl::Precision::bf16);
  EXPECT_EQ(wl::find_op(g, "norm_attn").op->precision, wl::Precision::bf16);
  EXPECT_EQ(wl::find_op(g, "lm_head").op->precision, wl::Precision::bf16);
  const auto* qkv = wl::find_op(g, "qkv_proj").op;
  for (const auto& t : qkv->tensors)
    EXPECT_EQ(t.precision, t.role == wl::TensorRole::input ? wl::Precision::fp8 : wl::Precision::bf16) << t.name;
  // The projection reads the cast, the cast reads the attention.
  for (const auto& b : g.blocks)
    for (const auto& n : b.nodes)
      if (n.op.name == "out_proj") {
        EXPECT_EQ(n.inputs, std::vector<std::string>{"out_proj.fp8_cast"});
      }
  EXPECT_DOUBLE_EQ(g.fp8_weight_elements, 32.0 * (4096.0 * 12288 + 4096.0 * 4096 + 3.0 * 4096 * 11008));
  // The same step in bf16 has the same parameters and 2 B less per FP8 weight in its footprint.
  auto bf = ph;
  bf.precision = wl::Precision::bf16;
  const auto gb = wl::build_graph(preset("llama2-7b"), bf);
  EXPECT_DOUBLE_EQ(wl::totals(g).parameters, wl::totals(gb).parameters);
  EXPECT_DOUBLE_EQ(wl::memory_footprint(g, ph).weight_bytes - wl::memory_footprint(gb, bf).weight_bytes,
                   2.0 * g.fp8_weight_elements);
  EXPECT_EQ(gb.fp8_weight_elements, 0.0);
}

// With biases (GPT-3's layers), each FP8 GEMM's bias gradient is fused into the quantization of
// its output gradient (TE's bgrad_quantize): no <gemm>.bwd_bias reduction is left, and the
// backward chain still links (the graph validates).
TEST(WorkloadTraining, Fp8TrainingFusesBiasGradientsIntoTheCasts) {
  auto ph = phase(wl::Phase::training, 1, 128);
  ph.precision = wl::Precision::fp8;
  const auto g = wl::build_graph(preset("gpt3-175b"), ph);
  EXPECT_EQ(wl::validate(g), "");
  EXPECT_EQ(wl::find_op(g, "qkv_proj.bwd_bias").op, nullptr);
  EXPECT_EQ(wl::find_op(g, "ffn_down.bwd_bias").op, nullptr);
  ph.precision = wl::Precision::bf16;
  EXPECT_NE(wl::find_op(wl::build_graph(preset("gpt3-175b"), ph), "qkv_proj.bwd_bias").op, nullptr);
}

// Context parallelism, by hand for Llama-3-8B (32 heads, 8 KV heads of 128, hidden 4096) training
// on one sequence of 8,192 tokens over cp = 4 chips. Ring (Transformer Engine's P2P ring): each
// chip runs its 2,048 tokens through every layer; its own two chunks attend causally (2,048 x
// 2,048, masked), then the 3 blocks the ring brings, half of each block's keys unmasked (3 x
// 2,048 x 1,024); the kernel work, 2,048^2 / 2 + 3 x 2,048 x 1,024 = 8,388,608 scores per head,
// is a quarter of the whole sequence's causal 8,192^2 / 2. All-to-all (Ulysses): 8 heads and 2
// KV heads per chip over all 8,192 tokens, between an all-to-all of Q, K, V (2,048 x 6,144
// elements sent) and one of the output (2,048 x 4,096).
TEST(WorkloadTraining, ContextParallelSplitsTheSequence) {
  auto ph = phase(wl::Phase::training, 1, 8192);
  ph.context_parallel = 4;
  const auto g = wl::build_graph(preset("llama3-8b"), ph);
  EXPECT_EQ(wl::find_op(g, "qkv_proj").op->m, 2048);
  const auto* qk = wl::find_op(g, "attn_qk").op;
  EXPECT_EQ(qk->batch, 32);
  EXPECT_EQ(qk->m, 2048);
  EXPECT_EQ(qk->n, 2048);
  EXPECT_TRUE(qk->causal);
  const auto* ring = wl::find_op(g, "attn_ring_qk").op;
  ASSERT_NE(ring, nullptr);
  EXPECT_EQ(ring->batch, 96);
  EXPECT_EQ(ring->m, 2048);
  EXPECT_EQ(ring->n, 1024);
  EXPECT_FALSE(ring->causal);
  EXPECT_EQ(ring->tensors[1].elements, 8 * 3 * 1024 * 128);  // the K halves the ring brings
  EXPECT_FALSE(ring->saves_inputs);
  EXPECT_DOUBLE_EQ(static_cast<double>(qk->m) * static_cast<double>(qk->n) / 2.0 +
                       3.0 * static_cast<double>(ring->m) * static_cast<double>(ring->n),
                   8192.0 * 8192.0 / 2.0 / 4.0);
  const auto* merge = wl::find_op(g, "attn_ring_correction").op;
  ASSERT_NE(merge, nullptr);
  EXPECT_EQ(merge->rows * merge->cols, 3 * 2048 * 4096);
  EXPECT_NE(wl::find_op(g, "attn_ring_qk.bwd_a").op, nullptr);  // the ring's backward
  // Each chip holds a quarter of the activations of the unsplit sequence's chip (flash attention).
  auto one = ph;
  one.context_parallel = 1;
  const double whole = wl::memory_footprint(wl::build_graph(preset("llama3-8b"), one), one, {true, false}).activation_bytes;
  const double quarter = wl::memory_footprint(g, ph, {true, false}).activation_bytes;
  EXPECT_NEAR(quarter / whole, 0.25, 0.002);

  ph.context_parallel_comm = wl::ContextParallel::all_to_all;
  const auto a = wl::build_graph(preset("llama3-8b"), ph);
  const auto* a2a = wl::find_op(a, "attn_a2a_qkv").op;
  ASSERT_NE(a2a, nullptr);
  EXPECT_EQ(a2a->kind, wl::OpKind::all_to_all);
  EXPECT_EQ(a2a->participants, 4);
  EXPECT_EQ(a2a->rows * a2a->cols, 2048 * 6144);
  const auto* aqk = wl::find_op(a, "attn_qk").op;
  EXPECT_EQ(aqk->batch, 8);
  EXPECT_EQ(aqk->m, 8192);
  EXPECT_EQ(aqk->tensors[1].elements, 2 * 8192 * 128);
  EXPECT_EQ(wl::find_op(a, "attn_a2a_out").op->rows * wl::find_op(a, "attn_a2a_out").op->cols, 2048 * 4096);
  EXPECT_EQ(wl::find_op(a, "attn_ring_qk").op, nullptr);
  EXPECT_NEAR(wl::memory_footprint(a, ph, {true, false}).activation_bytes / whole, 0.25, 0.002);

  // Refused: a sequence that does not split in 2 cp chunks, decode, KV heads that do not split.
  ph.context_parallel_comm = wl::ContextParallel::ring;
  ph.seq = 8196;
  EXPECT_NE(wl::check(preset("llama3-8b"), ph).find("multiple of 2 x cp"), std::string::npos);
  ph.seq = 8192;
  ph.context_parallel_comm = wl::ContextParallel::all_to_all;
  ph.context_parallel = 16;
  EXPECT_NE(wl::check(preset("llama3-8b"), ph).find("divisible by cp"), std::string::npos);
  auto dec = phase(wl::Phase::decode, 1, 1, 100);
  dec.context_parallel = 2;
  EXPECT_NE(wl::check(preset("llama3-8b"), dec).find("not decode"), std::string::npos);
}
