// Vision builders: ViT (patch embedding + transformer encoder) and ResNet
// (bottleneck stages, torchvision v1.5 layout: the stride sits on the 3x3 conv).
#include <algorithm>
#include <stdexcept>
#include <utility>

#include "costmodel/workload/spec.hpp"
#include "costmodel/workload/transformer_parts.hpp"

namespace dse::costmodel::workload {

OperatorGraph build_vit(const VitSpec& s, const PhaseSpec& phase) {
  const std::string problem = check(WorkloadSpec{s}, phase);
  if (!problem.empty()) throw std::invalid_argument(problem);
  const Precision p = phase.precision;
  const std::int64_t B = phase.batch;
  const std::int64_t D = s.encoder.hidden;
  const std::int64_t grid = s.image_size / s.patch;
  const std::int64_t tokens = grid * grid + 1;  // patches + [CLS]

  OperatorGraph g;
  g.name = s.name;
  Block embed;
  embed.name = "embedding";
  ConvShape patch{B, s.channels, s.image_size, s.image_size, D, s.patch, s.patch, s.patch, 0, 1};
  embed.nodes.push_back(Node{make_conv2d("patch_embed", LayerType::embedding, patch, p, true), {}});
  // Prepend [CLS] and add the learned position embeddings.
  Operator pos = make_add("pos_embed", LayerType::embedding, B * tokens, D, 1, p);
  pos.tensors.push_back(Tensor{"positions", TensorRole::weight, tokens * D, p, -1});
  pos.tensors.push_back(Tensor{"cls", TensorRole::weight, D, p, -1});
  embed.nodes.push_back(Node{std::move(pos), {"patch_embed"}});
  g.blocks.push_back(std::move(embed));

  LayerDims d;
  d.batch = B;
  d.seq = tokens;
  d.kv_len = tokens;
  d.precision = p;
  d.kv_precision = p;
  g.blocks.push_back(transformer_layers(s.encoder, d, "encoder"));

  Block head;
  head.name = "head";
  head.nodes.push_back(Node{make_norm("norm_final", s.encoder.norm, B, D, p), {}});  // on [CLS]
  head.nodes.push_back(Node{make_linear("classifier", LayerType::ffn, B, s.classes, D, p, true), {"norm_final"}});
  g.blocks.push_back(std::move(head));
  if (phase.phase == Phase::training) append_backward(g, phase);
  return g;
}

namespace {

// conv + batch norm (+ ReLU). Batch norm is scale and shift per channel at
// inference (2 flops per element, gamma and beta); ReLU is 1 flop per element.
struct ConvChain {
  Block& block;
  Precision p;
  std::string prefix;

  std::string conv_bn(const std::string& name, const ConvShape& c, const std::string& input, bool relu) {
    const std::string conv_name = prefix + name;
    block.nodes.push_back(
        Node{make_conv2d(conv_name, LayerType::conv, c, p, false), input.empty() ? std::vector<std::string>{}
                                                                                 : std::vector{input}});
    const std::int64_t rows = c.n * c.k;
    const std::int64_t cols = c.out_h() * c.out_w();
    Operator bn = make_elementwise(prefix + "bn_" + name, LayerType::norm, rows, cols, 2.0, 1, p);
    bn.tensors.push_back(Tensor{"gamma", TensorRole::weight, c.k, p, -1});
    bn.tensors.push_back(Tensor{"beta", TensorRole::weight, c.k, p, -1});
    block.nodes.push_back(Node{std::move(bn), {conv_name}});
    std::string last = prefix + "bn_" + name;
    if (relu) {
      block.nodes.push_back(
          Node{make_elementwise(prefix + "relu_" + name, LayerType::elementwise, rows, cols, 1.0, 1, p), {last}});
      last = prefix + "relu_" + name;
    }
    return last;
  }
};

// One bottleneck: 1x1 (c_in -> w), 3x3 stride s (w -> w), 1x1 (w -> 4w), plus a
// 1x1 stride-s projection of the shortcut when the shape changes.
Block bottleneck(std::string name, std::int64_t repeat, std::int64_t n, std::int64_t c_in, std::int64_t hw,
                 std::int64_t width, std::int64_t stride, bool project, Precision p) {
  Block b;
  b.name = name;
  b.repeat = repeat;
  b.checkpoint = true;
  ConvChain chain{b, p, name + "."};
  const std::int64_t out_hw = hw / stride;
  const std::string a = chain.conv_bn("conv1", ConvShape{n, c_in, hw, hw, width, 1, 1, 1, 0, 1}, "", true);
  const std::string m =
      chain.conv_bn("conv2", ConvShape{n, width, hw, hw, width, 3, 3, stride, 1, 1}, a, true);
  const std::string o =
      chain.conv_bn("conv3", ConvShape{n, width, out_hw, out_hw, 4 * width, 1, 1, 1, 0, 1}, m, false);
  std::vector<std::string> add_inputs{o};
  if (project) {
    add_inputs.push_back(
        chain.conv_bn("downsample", ConvShape{n, c_in, hw, hw, 4 * width, 1, 1, stride, 0, 1}, "", false));
  }
  const std::int64_t rows = n * 4 * width;
  const std::int64_t cols = out_hw * out_hw;
  b.nodes.push_back(Node{make_add(name + ".add", LayerType::elementwise, rows, cols, 2, p), add_inputs});
  b.nodes.push_back(
      Node{make_elementwise(name + ".relu", LayerType::elementwise, rows, cols, 1.0, 1, p), {name + ".add"}});
  return b;
}

}  // namespace

OperatorGraph build_resnet(const ResNetSpec& s, const PhaseSpec& phase) {
  const std::string problem = check(WorkloadSpec{s}, phase);
  if (!problem.empty()) throw std::invalid_argument(problem);
  const Precision p = phase.precision;
  const std::int64_t n = phase.batch;
  OperatorGraph g;
  g.name = s.name;

  Block stem;
  stem.name = "stem";
  ConvChain chain{stem, p, ""};
  const ConvShape conv1{n, 3, s.image_size, s.image_size, s.base_width, 7, 7, 2, 3, 1};
  const std::string r = chain.conv_bn("conv1", conv1, "", true);
  const std::int64_t hw1 = conv1.out_h();
  const std::int64_t hw = (hw1 + 2 - 3) / 2 + 1;  // 3x3 max pool, stride 2, pad 1
  // The 3x3 windows at stride 2 overlap: a pooling kernel loads each input
  // element once, so the reduction reads the input (hw1 x hw1 = 4 x hw x hw per
  // channel) once -- cols = hw1^2 / hw^2 -- rather than 9 elements per output.
  const std::int64_t pool_cols = std::max<std::int64_t>(1, (hw1 * hw1) / (hw * hw));
  Operator pool = make_reduction("maxpool", LayerType::elementwise, n * s.base_width * hw * hw, pool_cols, p);
  stem.nodes.push_back(Node{std::move(pool), {r}});
  g.blocks.push_back(std::move(stem));

  std::int64_t c_in = s.base_width;
  std::int64_t size = hw;
  for (std::size_t i = 0; i < s.stage_blocks.size(); ++i) {
    const std::int64_t width = s.base_width << i;
    const std::int64_t stride = i == 0 ? 1 : 2;
    const std::string stage = "layer" + std::to_string(i + 1);
    g.blocks.push_back(bottleneck(stage + ".0", 1, n, c_in, size, width, stride, true, p));
    size /= stride;
    c_in = 4 * width;
    if (s.stage_blocks[i] > 1) {
      g.blocks.push_back(bottleneck(stage + ".rest", s.stage_blocks[i] - 1, n, c_in, size, width, 1, false, p));
    }
  }

  Block head;
  head.name = "head";
  head.nodes.push_back(Node{make_reduction("avgpool", LayerType::elementwise, n * c_in, size * size, p), {}});
  head.nodes.push_back(Node{make_linear("fc", LayerType::ffn, n, s.classes, c_in, p, true), {"avgpool"}});
  g.blocks.push_back(std::move(head));
  if (phase.phase == Phase::training) append_backward(g, phase);
  return g;
}

}  // namespace dse::costmodel::workload
