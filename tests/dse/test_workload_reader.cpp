// Workload files: presets with overrides, builders, explicit operator lists, the
// shipped examples, and one-line errors for bad input.
#include <gtest/gtest.h>

#include <cstddef>
#include <string>
#include <utility>

#include "costmodel/workload/presets.hpp"
#include "dse/error.hpp"
#include "dse/io/workload_reader.hpp"

namespace wl = dse::costmodel::workload;

namespace {

const std::string kWorkloads = std::string(DSE_SOURCE_DIR) + "/scenarios/workloads/";

std::string error_of(const std::string& text) {
  try {
    (void)dse::io::parse_workload_text(text, "w.yaml");
  } catch (const dse::ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

wl::PhaseSpec prefill(std::int64_t batch, std::int64_t seq) {
  wl::PhaseSpec p;
  p.batch = batch;
  p.seq = seq;
  return p;
}

// Each workload file of `dir` has its row's parameter count (at 2,048 tokens, one sequence).
template <std::size_t N>
void expect_parameter_counts(const std::string& dir, const std::pair<const char*, double> (&rows)[N]) {
  for (const auto& [f, params] : rows) {
    const auto spec = dse::io::read_workload_file(dir + f);
    EXPECT_DOUBLE_EQ(wl::totals(wl::build_graph(spec, prefill(1, 2048))).parameters, params) << f;
  }
}

}  // namespace

TEST(WorkloadReader, PresetWithOverrides) {
  const auto spec = dse::io::parse_workload_text("preset: llama2-70b\ntensor_parallel: 8\nname: shard\n", "w.yaml");
  const auto& t = std::get<wl::TransformerSpec>(spec);
  EXPECT_EQ(t.name, "shard");
  EXPECT_EQ(t.hidden, 8192);
  EXPECT_EQ(t.kv_heads, 8);
  EXPECT_EQ(t.tensor_parallel, 8);
}

TEST(WorkloadReader, BuilderFileMatchesThePreset) {
  // scenarios/workloads/llama2-7b.yaml spells out the preset's hyperparameters.
  const auto file = dse::io::read_workload_file(kWorkloads + "llama2-7b.yaml");
  const auto preset = *wl::workload_preset("llama2-7b");
  const auto a = wl::totals(wl::build_graph(file, prefill(2, 64)));
  const auto b = wl::totals(wl::build_graph(preset, prefill(2, 64)));
  EXPECT_DOUBLE_EQ(a.parameters, 6738415616.0);
  EXPECT_DOUBLE_EQ(a.flops, b.flops);
  EXPECT_DOUBLE_EQ(a.bytes, b.bytes);
}

TEST(WorkloadReader, MptFilesHaveTheBenchmarkTablesParameterCounts) {
  // scenarios/validation/mpt-*.yaml against the NumParams column of llm-foundry's training
  // benchmark tables (P: mosaicml/llm-foundry scripts/train/benchmarking/README.md, the
  // 2,048-token rows): the learned position table, linear biases and layer-norm biases included.
  const std::string dir = std::string(DSE_SOURCE_DIR) + "/scenarios/validation/";
  const std::pair<const char*, double> rows[] = {{"mpt-125m.yaml", 125311488.0},  {"mpt-350m.yaml", 355985408.0},
                                                 {"mpt-760m.yaml", 760470528.0},  {"mpt-1b.yaml", 1315950592.0},
                                                 {"mpt-3b.yaml", 2651837440.0},   {"mpt-7b.yaml", 6658859008.0},
                                                 {"mpt-13b.yaml", 12853954560.0}};
  expect_parameter_counts(dir, rows);
}

TEST(WorkloadReader, MaxTextFilesHaveItsScaledModelsParameterCounts) {
  // scenarios/validation/maxtext-*b.yaml against MaxText's own scaling of its base model (P:
  // AI-Hypercomputer/maxtext MaxText/configs/base.yml, base_emb_dim 2048, 16 heads of 128, base_mlp_dim 7168,
  // 16 layers, vocabulary 32,000, SwiGLU, untied logits; pyconfig.get_individual_scales: log2(scale) =
  // 3 b + r, heads and MLP x 2^(b + [r > 0]), embedding x 2^(b + [r > 1]), layers x 2^b), counted by hand as
  // max_utils.calculate_num_params_from_pytree counts them: per layer 4 E H 128 (q, k, v, out) + 3 E M (two
  // input projections and the output) + 2 E (two RMSNorm scales), then 2 E V (embedding and logits) + E (final
  // norm). E.g. 32B (scale 32 = 3 x 1 + 2: E 8192, H 64, M 28672, L 32): 32 x (268,435,456 + 704,643,072 +
  // 16,384) + 524,288,000 + 8,192 = 31,663,333,376.
  const std::string dir = std::string(DSE_SOURCE_DIR) + "/scenarios/validation/";
  const std::pair<const char*, double> rows[] = {
      {"maxtext-16b.yaml", 15831666688.0},   {"maxtext-32b.yaml", 31663333376.0},
      {"maxtext-64b.yaml", 62802370560.0},   {"maxtext-128b.yaml", 125079396352.0},
      {"maxtext-256b.yaml", 250158792704.0}, {"maxtext-512b.yaml", 499268993024.0},
      {"maxtext-1024b.yaml", 997485199360.0}};
  expect_parameter_counts(dir, rows);
}

TEST(WorkloadReader, ShippedExamplesParseAndBuild) {
  for (const char* f : {"llama2-7b.yaml", "llama2-70b-tp8.yaml", "mixtral-8x7b.yaml", "tiny-explicit.yaml"}) {
    const auto spec = dse::io::read_workload_file(kWorkloads + f);
    wl::PhaseSpec d;
    d.phase = wl::Phase::decode;
    d.batch = 4;
    d.context = 128;
    EXPECT_EQ(wl::validate(wl::build_graph(spec, d)), "") << f;
  }
}

TEST(WorkloadReader, ExplicitOperatorsAreSymbolic) {
  const auto spec = dse::io::read_workload_file(kWorkloads + "tiny-explicit.yaml");
  wl::PhaseSpec d;
  d.phase = wl::Phase::decode;
  d.batch = 3;
  d.seq = 1;
  d.context = 99;
  const auto g = wl::build_graph(spec, d);
  const auto scores = wl::find_op(g, "scores");
  ASSERT_NE(scores.op, nullptr);
  EXPECT_EQ(scores.repeat, 4);
  EXPECT_EQ(scores.op->batch, 24);  // 8*batch
  EXPECT_EQ(scores.op->n, 100);     // kv_len = context + seq
  EXPECT_EQ(wl::find_op(g, "qkv").op->m, 3);  // tokens
  EXPECT_EQ(wl::find_op(g, "qkv").op->layer, wl::LayerType::attention);
  // MACs by hand: per layer qkv 3*1536*512 + scores 24*1*100*64 + mix 24*1*64*100
  // + out 3*512*512 + up 3*2048*512 + down 3*512*2048, times 4 layers.
  const double layer = 3.0 * 1536 * 512 + 2 * 24.0 * 100 * 64 + 3.0 * 512 * 512 + 2 * 3.0 * 2048 * 512;
  EXPECT_DOUBLE_EQ(wl::totals(g).macs, 4.0 * layer);
}

TEST(WorkloadReader, BuilderForms) {
  const auto enc = dse::io::parse_workload_text(
      "name: small-bert\nbuilder: encoder\nhidden: 256\nlayers: 4\nheads: 4\nffn_hidden: 1024\nvocab: 1000\n"
      "max_positions: 128\n",
      "w.yaml");
  const auto& t = std::get<wl::TransformerSpec>(enc);
  EXPECT_EQ(t.arch, wl::Arch::encoder);
  EXPECT_EQ(t.ffn, wl::Ffn::gelu);
  const auto r = dse::io::parse_workload_text("name: r18ish\nbuilder: resnet\nstage_blocks: [2, 2, 2, 2]\n", "w.yaml");
  EXPECT_EQ(std::get<wl::ResNetSpec>(r).stage_blocks.size(), 4u);
  const auto v = dse::io::parse_workload_text(
      "name: vit-tiny\nbuilder: vit\nhidden: 192\nlayers: 12\nheads: 3\nffn_hidden: 768\n", "w.yaml");
  // ViT-Ti/16 (timm vit_tiny_patch16_224 model card: 5.7M parameters).
  EXPECT_NEAR(wl::totals(wl::build_graph(v, prefill(1, 1))).parameters, 5.7e6, 0.01 * 5.7e6);
}

TEST(WorkloadReaderErrors, UnknownKeyWithDidYouMean) {
  EXPECT_EQ(error_of("preset: llama2-7b\ntensor_paralel: 2\n"),
            "w.yaml:2:1: tensor_paralel: unknown key, did you mean 'tensor_parallel'? (got 'tensor_paralel')");
}

TEST(WorkloadReaderErrors, UnknownPreset) {
  EXPECT_EQ(error_of("preset: llama2-7\n"),
            "w.yaml:1:9: preset: expected a preset name, did you mean 'llama2-7b'? (got \"llama2-7\")");
}

TEST(WorkloadReaderErrors, BadSymbolInADimension) {
  const std::string e = error_of("name: x\nops:\n  - {name: a, kind: gemm, m: tokenz, n: 4, k: 4}\n");
  EXPECT_NE(e.find("w.yaml:3:"), std::string::npos) << e;
  EXPECT_NE(e.find("ops[0].m"), std::string::npos) << e;
  EXPECT_NE(e.find("did you mean 'tokens'"), std::string::npos) << e;
}

TEST(WorkloadReaderErrors, InconsistentHyperparameters) {
  const std::string e = error_of("preset: llama2-7b\ntensor_parallel: 3\n");
  EXPECT_NE(e.find("expected consistent hyperparameters"), std::string::npos) << e;
  EXPECT_NE(e.find("tensor_parallel"), std::string::npos) << e;
}

TEST(WorkloadReaderErrors, OperatorListProblems) {
  EXPECT_NE(error_of("name: x\nops:\n  - {name: a, kind: relu, rows: 4, cols: 4}\n").find("ops[0].kind"),
            std::string::npos);
  EXPECT_NE(error_of("name: x\nops:\n  - {name: a, kind: softmax, rows: 4, cols: 4}\n"
                     "  - {name: a, kind: softmax, rows: 4, cols: 4}\n")
                .find("ops[1].name: expected a name not used before"),
            std::string::npos);
  EXPECT_NE(error_of("name: x\nops:\n  - {name: a, kind: softmax, rows: 4, cols: 4, after: b}\n")
                .find("ops[0].after: expected the name of an earlier operator"),
            std::string::npos);
  EXPECT_NE(error_of("name: x\nops:\n  - {name: a, kind: softmax, rows: 4, m: 4}\n").find("unknown key"),
            std::string::npos);
  EXPECT_NE(error_of("name: x\nbuildr: decoder\n").find("did you mean 'builder'"), std::string::npos);
  EXPECT_NE(error_of("name: x\nbuilder: decoder\nhidden: 64\n").find("missing required key"), std::string::npos);
}
