#include "costmodel/workload/presets.hpp"

namespace dse::costmodel::workload {

namespace {

TransformerSpec llama(std::string name, std::int64_t hidden, std::int64_t layers, std::int64_t heads,
                      std::int64_t kv_heads, std::int64_t ffn, std::int64_t vocab) {
  TransformerSpec s;
  s.name = std::move(name);
  s.arch = Arch::decoder;
  s.hidden = hidden;
  s.layers = layers;
  s.heads = heads;
  s.kv_heads = kv_heads;
  s.ffn_hidden = ffn;
  s.vocab = vocab;
  s.ffn = Ffn::swiglu;
  s.norm = OpKind::rmsnorm;
  s.position = PositionEncoding::rope;
  s.bias = false;
  s.tied_embeddings = false;
  return s;
}

TransformerSpec bert(std::string name, std::int64_t hidden, std::int64_t layers, std::int64_t heads) {
  TransformerSpec s;
  s.name = std::move(name);
  s.arch = Arch::encoder;
  s.hidden = hidden;
  s.layers = layers;
  s.heads = heads;
  s.kv_heads = heads;
  s.ffn_hidden = 4 * hidden;
  s.vocab = 30522;  // WordPiece vocabulary of bert-base-uncased (Hugging Face config.json)
  s.max_positions = 512;
  s.type_vocab = 2;
  s.ffn = Ffn::gelu;
  s.norm = OpKind::layernorm;
  s.position = PositionEncoding::learned;
  s.bias = true;
  s.final_norm = false;  // post-LN: the norms sit inside the layers
  s.lm_head = false;
  s.pooler = true;
  return s;
}

TransformerSpec gpt3_175b() {
  // Brown et al. 2020, "Language Models are Few-Shot Learners", Table 2.1: 96 layers,
  // d_model 12288, 96 heads of 128, context 2048, FFN 4*d_model; GPT-2 architecture
  // (Radford et al. 2019): LayerNorm, GELU, learned positions, biases, tied
  // embeddings, 50257-token BPE vocabulary.
  TransformerSpec s;
  s.name = "gpt3-175b";
  s.hidden = 12288;
  s.layers = 96;
  s.heads = 96;
  s.kv_heads = 96;
  s.head_dim = 128;
  s.ffn_hidden = 4 * 12288;
  s.vocab = 50257;
  s.max_positions = 2048;
  s.ffn = Ffn::gelu;
  s.norm = OpKind::layernorm;
  s.position = PositionEncoding::learned;
  s.bias = true;
  s.tied_embeddings = true;
  // Training with dropout 0.1 on the attention probabilities: Megatron-LM's
  // default (--attention-dropout, default 0.1, in its arguments.py), and the
  // "softmax dropout" whose 1-byte mask (as^2 b bytes) Korthikanti et al. 2022
  // (arXiv 2205.05198, section 4.1) count in the 175B runs' activation memory.
  // Their hidden dropouts run inside the fused bias-dropout-add kernels (a 1-byte
  // mask write on the residual stream) and are not modelled.
  s.attention_dropout = 0.1;
  return s;
}

VitSpec vit_b16() {
  // Dosovitskiy et al. 2021, "An Image is Worth 16x16 Words", Table 1: ViT-Base
  // 12 layers, hidden 768, MLP 3072, 12 heads, 86M parameters; patch 16 at 224x224.
  VitSpec v;
  v.name = "vit-b16";
  v.image_size = 224;
  v.patch = 16;
  v.channels = 3;
  v.classes = 1000;
  TransformerSpec& e = v.encoder;
  e.name = "vit-b16";
  e.arch = Arch::encoder;
  e.hidden = 768;
  e.layers = 12;
  e.heads = 12;
  e.kv_heads = 12;
  e.ffn_hidden = 3072;
  e.ffn = Ffn::gelu;
  e.norm = OpKind::layernorm;
  e.position = PositionEncoding::none;  // learned positions are added in the ViT embedding
  e.bias = true;
  e.final_norm = false;
  e.lm_head = false;
  return v;
}

}  // namespace

std::vector<std::string> workload_preset_names() {
  return {"gpt3-175b",  "llama2-7b",    "llama2-13b", "llama2-70b", "llama3-8b", "llama3-70b",
          "llama3-405b", "mixtral-8x7b", "bert-base",  "bert-large", "vit-b16",   "resnet50"};
}

std::optional<WorkloadSpec> workload_preset(std::string_view name) {
  if (name == "gpt3-175b") return gpt3_175b();
  // Llama 2: Touvron et al. 2023, "Llama 2: Open Foundation and Fine-Tuned Chat Models",
  // Table 1 and the released config.json of meta-llama/Llama-2-{7b,13b,70b}-hf:
  // hidden_size, num_hidden_layers, num_attention_heads, num_key_value_heads,
  // intermediate_size, vocab_size 32000; SwiGLU, RMSNorm, RoPE, no biases, untied.
  if (name == "llama2-7b") return llama("llama2-7b", 4096, 32, 32, 32, 11008, 32000);
  if (name == "llama2-13b") return llama("llama2-13b", 5120, 40, 40, 40, 13824, 32000);
  if (name == "llama2-70b") return llama("llama2-70b", 8192, 80, 64, 8, 28672, 32000);
  // Llama 3: Dubey et al. 2024, "The Llama 3 Herd of Models", Table 3 (layers, model
  // dimension, FFN dimension, heads, 8 KV heads, 128K vocabulary = 128256 in config.json).
  if (name == "llama3-8b") return llama("llama3-8b", 4096, 32, 32, 8, 14336, 128256);
  if (name == "llama3-70b") return llama("llama3-70b", 8192, 80, 64, 8, 28672, 128256);
  if (name == "llama3-405b") return llama("llama3-405b", 16384, 126, 128, 8, 53248, 128256);
  if (name == "mixtral-8x7b") {
    // Jiang et al. 2024, "Mixtral of Experts", Table 1: dim 4096, 32 layers, head_dim 128,
    // hidden_dim 14336, 32 heads, 8 KV heads, vocab 32000, 8 experts, top-2 routing.
    TransformerSpec s = llama("mixtral-8x7b", 4096, 32, 32, 8, 14336, 32000);
    s.experts = 8;
    s.top_k = 2;
    return s;
  }
  // BERT: Devlin et al. 2019, "BERT: Pre-training of Deep Bidirectional Transformers",
  // Section 3: BASE L=12, H=768, A=12 (110M); LARGE L=24, H=1024, A=16 (340M); FFN 4H.
  if (name == "bert-base") return bert("bert-base", 768, 12, 12);
  if (name == "bert-large") return bert("bert-large", 1024, 24, 16);
  if (name == "vit-b16") return vit_b16();
  if (name == "resnet50") {
    // He et al. 2016, "Deep Residual Learning for Image Recognition", Table 1
    // (50-layer: bottleneck stages of 3, 4, 6, 3 blocks), in torchvision's v1.5
    // layout (stride on the 3x3 conv): 25.6M parameters, 4.1 GMACs at 224x224.
    ResNetSpec r;
    r.name = "resnet50";
    return r;
  }
  return std::nullopt;
}

}  // namespace dse::costmodel::workload
