#include "dse/io/onnx_import.hpp"

#include "dse/error.hpp"

#if DSE_WITH_ONNX

#include <onnx/defs/schema.h>
#include <onnx/defs/shape_inference.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <unordered_map>
#include <utility>

namespace dse::io {

namespace wl = costmodel::workload;

namespace {

struct TensorInfo {
  std::vector<std::int64_t> shape;
  int elem_type = 0;
  bool known = false;
};

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::optional<std::int64_t> bind_dim(const std::string& name, const OnnxImportOptions& o) {
  if (const auto it = o.dims.find(name); it != o.dims.end()) return it->second;
  const std::string l = lower(name);
  if (l.find("batch") != std::string::npos || l == "n" || l == "b" || l == "bs") return o.batch;
  if (l.find("seq") != std::string::npos || l.find("sequence") != std::string::npos ||
      l.find("len") != std::string::npos) {
    return o.seq;
  }
  return std::nullopt;
}

wl::Precision precision_of(int elem_type) {
  switch (elem_type) {
    case onnx::TensorProto_DataType_FLOAT16: return wl::Precision::fp16;
    case onnx::TensorProto_DataType_BFLOAT16: return wl::Precision::bf16;
    case onnx::TensorProto_DataType_INT8:
    case onnx::TensorProto_DataType_UINT8: return wl::Precision::int8;
    case onnx::TensorProto_DataType_INT32:
    case onnx::TensorProto_DataType_INT64: return wl::Precision::int32;
    default: return wl::Precision::fp32;
  }
}

// ONNX's shape inference for the convolutions (libonnx 1.12: convPoolShapeInference for Conv,
// ConvInteger and QLinearConv, convTransposeShapeInference for ConvTranspose), when no
// kernel_shape attribute is given, takes the kernel's rank from the weight and indexes the
// input's dimensions and the dilations with it: a weight whose rank differs from the input's
// reads past both (a crash, found by fuzz_onnx). This registry hands out those schemas with
// a check in front of their inference function that refuses such a node as a shape
// inference error; every other schema is the library's own.
class GuardedSchemaRegistry final : public onnx::ISchemaRegistry {
 public:
  const onnx::OpSchema* GetSchema(const std::string& key, const int max_inclusive_version,
                                  const std::string& domain) const override {
    const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(key, max_inclusive_version, domain);
    const int weight = weight_input(key, domain);
    if (schema == nullptr || weight < 0) return schema;
    const std::lock_guard<std::mutex> lock(mutex_);
    auto& guarded = guarded_[schema];
    if (!guarded) {
      guarded = std::make_unique<onnx::OpSchema>(*schema);
      const onnx::InferenceFunction inner = schema->GetTypeAndShapeInferenceFunction();
      guarded->TypeAndShapeInferenceFunction([inner, weight](onnx::InferenceContext& ctx) {
        if (ctx.getAttribute("kernel_shape") == nullptr && onnx::hasInputShape(ctx, 0) &&
            onnx::hasInputShape(ctx, static_cast<size_t>(weight))) {
          const int x_rank = onnx::getInputShape(ctx, 0).dim_size();
          const int w_rank = onnx::getInputShape(ctx, static_cast<size_t>(weight)).dim_size();
          if (x_rank >= 2 && w_rank != x_rank)
            fail_shape_inference("the weight has rank ", w_rank, " where the input has rank ", x_rank,
                                 " (a convolution's weight is M x C/group x kernel, one kernel axis per input axis "
                                 "after the first two)");
        }
        if (inner) inner(ctx);
      });
    }
    return guarded.get();
  }

 private:
  // The weight's input index of the convolutions inferred as above, or -1.
  static int weight_input(const std::string& op, const std::string& domain) {
    if (!domain.empty() && domain != "ai.onnx") return -1;
    if (op == "Conv" || op == "ConvInteger" || op == "ConvTranspose") return 1;
    if (op == "QLinearConv") return 3;
    return -1;
  }
  mutable std::mutex mutex_;
  mutable std::map<const onnx::OpSchema*, std::unique_ptr<onnx::OpSchema>> guarded_;
};

std::int64_t numel(const std::vector<std::int64_t>& s) {
  std::int64_t n = 1;
  for (const std::int64_t d : s) n *= d;
  return n;
}

std::int64_t prod(const std::vector<std::int64_t>& s, std::size_t from, std::size_t to) {
  std::int64_t n = 1;
  for (std::size_t i = from; i < to && i < s.size(); ++i) n *= s[i];
  return n;
}

const onnx::AttributeProto* attribute(const onnx::NodeProto& n, const std::string& name) {
  for (const auto& a : n.attribute()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

std::int64_t int_attr(const onnx::NodeProto& n, const std::string& name, std::int64_t fallback) {
  const auto* a = attribute(n, name);
  return a != nullptr ? a->i() : fallback;
}

std::vector<std::int64_t> ints_attr(const onnx::NodeProto& n, const std::string& name) {
  const auto* a = attribute(n, name);
  if (a == nullptr) return {};
  return {a->ints().begin(), a->ints().end()};
}

const std::set<std::string, std::less<>> elementwise_ops{
    "Add",   "Sub",     "Mul",       "Div",         "Pow",     "Sqrt",     "Exp",     "Log",      "Neg",
    "Abs",   "Relu",    "LeakyRelu", "Sigmoid",     "Tanh",    "Erf",      "Gelu",    "Clip",     "Max",
    "Min",   "Where",   "Identity",  "Cast",        "Reciprocal", "HardSigmoid", "HardSwish", "Softplus", "Elu",
    "Selu",  "PRelu",   "Not",       "Equal",       "Less",    "Greater",  "And",     "Or",       "Floor",
    "Ceil",  "Round",   "Sign",      "Sin",         "Cos",     "Dropout",  "BatchNormalization", "Mish"};
const std::set<std::string, std::less<>> reduction_ops{
    "ReduceMean", "ReduceSum",    "ReduceMax",       "ReduceMin",         "ReduceProd",    "ReduceL1",
    "ReduceL2",   "ReduceSumSquare", "ReduceLogSumExp", "GlobalAveragePool", "GlobalMaxPool", "ArgMax",
    "ArgMin",     "MaxPool",      "AveragePool"};

class Importer {
 public:
  Importer(const std::string& path, const OnnxImportOptions& o) : path_(path), options_(o) {}

  OnnxImport run() {
    load();
    bind_inputs();
    infer();
    collect_shapes();
    OnnxImport out;
    out.graph.name = model_.graph().name().empty() ? std::filesystem::path(path_).stem().string()
                                                   : model_.graph().name();
    wl::Block block;
    block.name = "onnx";
    for (int i = 0; i < model_.graph().node_size(); ++i) {
      const onnx::NodeProto& node = model_.graph().node(i);
      // Constant and ConstantOfShape (a tensor of one value, its shape given) are data: their
      // outputs are read like initializers, as weights.
      if (node.op_type() == "Constant" || node.op_type() == "ConstantOfShape") {
        for (const auto& o : node.output()) constants_.insert(o);
        continue;
      }
      std::string name = node.name().empty() ? node.op_type() + "_" + std::to_string(i) : node.name();
      if (used_names_.count(name) != 0) name += "_" + std::to_string(i);
      used_names_.insert(name);
      wl::Operator op = map_node(node, name, out.warnings);
      std::vector<std::string> inputs;
      for (const auto& in : node.input()) {
        const auto it = producer_.find(in);
        if (it != producer_.end() && std::find(inputs.begin(), inputs.end(), it->second) == inputs.end()) {
          inputs.push_back(it->second);
        }
      }
      for (const auto& o : node.output()) producer_[o] = name;
      block.nodes.push_back(wl::Node{std::move(op), std::move(inputs)});
    }
    out.graph.blocks.push_back(std::move(block));
    const std::string problem = wl::validate(out.graph);
    if (!problem.empty()) throw InputError(path_ + ": " + problem);
    return out;
  }

 private:
  [[noreturn]] void node_error(const onnx::NodeProto& node, const std::string& name, const std::string& why) const {
    throw InputError(path_ + ": node '" + name + "' (op " + node.op_type() + "): " + why);
  }

  void load() {
    // A FIFO or device would block or stream forever: regular files only (issue 58 item 8).
    std::error_code ec;
    if (std::filesystem::exists(path_, ec) && !std::filesystem::is_regular_file(path_, ec))
      throw InputError(path_ + ": not a regular file (an ONNX model is read from a file)");
    std::ifstream in(path_, std::ios::binary);
    if (!in) throw InputError(path_ + ": cannot open the ONNX model");
    if (!model_.ParseFromIstream(&in)) throw InputError(path_ + ": not an ONNX model (protobuf parse failed)");
  }

  void bind_inputs() {
    std::set<std::string, std::less<>> initializers;
    for (const auto& t : model_.graph().initializer()) initializers.insert(t.name());
    for (auto& input : *model_.mutable_graph()->mutable_input()) {
      if (initializers.count(input.name()) != 0 || !input.type().has_tensor_type()) continue;
      auto* shape = input.mutable_type()->mutable_tensor_type()->mutable_shape();
      for (int d = 0; d < shape->dim_size(); ++d) {
        auto* dim = shape->mutable_dim(d);
        if (dim->has_dim_value()) continue;
        const std::string param = dim->has_dim_param() ? dim->dim_param() : "";
        const auto value = bind_dim(param, options_);
        if (!value) {
          throw InputError(path_ + ": input '" + input.name() + "' dimension " + std::to_string(d) +
                           (param.empty() ? " has no size" : " ('" + param + "') is not batch or sequence") +
                           "; give its value with a dims entry");
        }
        dim->set_dim_value(*value);
      }
    }
  }

  void infer() {
    try {
      onnx::ShapeInferenceOptions opts(false, 1, true);
      static const GuardedSchemaRegistry registry;
      onnx::shape_inference::InferShapes(model_, &registry, opts);
    } catch (const std::exception& e) {
      throw InputError(path_ + ": ONNX shape inference failed: " + e.what());
    }
  }

  void record(const onnx::ValueInfoProto& v) {
    if (!v.type().has_tensor_type()) return;
    const auto& tt = v.type().tensor_type();
    TensorInfo info;
    info.elem_type = tt.elem_type();
    info.known = tt.has_shape();
    for (const auto& d : tt.shape().dim()) {
      if (!d.has_dim_value()) {
        info.known = false;
        break;
      }
      info.shape.push_back(d.dim_value());
    }
    shapes_[v.name()] = info;
  }

  void collect_shapes() {
    for (const auto& v : model_.graph().input()) record(v);
    for (const auto& v : model_.graph().value_info()) record(v);
    for (const auto& v : model_.graph().output()) record(v);
    for (const auto& t : model_.graph().initializer()) {
      TensorInfo info;
      info.elem_type = t.data_type();
      info.known = true;
      info.shape.assign(t.dims().begin(), t.dims().end());
      shapes_[t.name()] = info;
      weights_.insert(t.name());
    }
  }

  const TensorInfo& shape_of(const onnx::NodeProto& node, const std::string& name, const std::string& tensor) const {
    const auto it = shapes_.find(tensor);
    if (it == shapes_.end() || !it->second.known) {
      node_error(node, name, "the shape of tensor '" + tensor + "' is unknown after shape inference");
    }
    // Element counts are int64 products of the dimensions (numel, prod): refuse shapes whose
    // product would wrap (found by fuzz_onnx: 4805565465600000 * 4567).
    constexpr std::int64_t kMaxElements = std::int64_t{1} << 62;
    std::int64_t count = 1;
    for (const std::int64_t d : it->second.shape) {
      if (d < 0) node_error(node, name, "tensor '" + tensor + "' has a negative dimension");
      if (d != 0 && count > kMaxElements / d) {
        node_error(node, name, "tensor '" + tensor + "' has more than 2^62 elements");
      }
      count *= d;
    }
    return it->second;
  }

  bool is_weight(const std::string& tensor) const {
    return weights_.count(tensor) != 0 || constants_.count(tensor) != 0;
  }

  wl::Precision precision(const TensorInfo& t) const {
    if (options_.precision && t.elem_type != onnx::TensorProto_DataType_INT64 &&
        t.elem_type != onnx::TensorProto_DataType_INT32) {
      return *options_.precision;
    }
    return precision_of(t.elem_type);
  }

  // Every input and output as a tensor of the operator, with its real size.
  void add_tensors(wl::Operator& op, const onnx::NodeProto& node, const std::string& name) const {
    op.tensors.clear();
    for (const auto& in : node.input()) {
      if (in.empty()) continue;
      const TensorInfo& t = shape_of(node, name, in);
      op.tensors.push_back(wl::Tensor{in, is_weight(in) ? wl::TensorRole::weight : wl::TensorRole::input, numel(t.shape),
                                      precision(t), -1});
    }
    for (const auto& o : node.output()) {
      if (o.empty()) continue;
      const TensorInfo& t = shape_of(node, name, o);
      op.tensors.push_back(wl::Tensor{o, wl::TensorRole::output, numel(t.shape), precision(t), -1});
    }
  }

  wl::Operator map_node(const onnx::NodeProto& node, const std::string& name, std::vector<std::string>& warnings) {
    const std::string& type = node.op_type();
    if (node.output_size() == 0) node_error(node, name, "has no output");
    const TensorInfo& out = shape_of(node, name, node.output(0));
    wl::Operator op;
    op.name = name;
    op.precision = precision(out);
    if (type == "MatMul" || type == "Gemm") {
      map_matmul(node, name, op);
    } else if (type == "Conv") {
      map_conv(node, name, op);
    } else if (type == "Softmax" || type == "LayerNormalization") {
      const TensorInfo& x = shape_of(node, name, node.input(0));
      const auto rank = static_cast<std::int64_t>(x.shape.size());
      std::int64_t axis = int_attr(node, "axis", type == "Softmax" && opset() < 13 ? 1 : -1);
      if (axis < 0) axis += rank;
      if (axis < 0 || axis >= rank) node_error(node, name, "axis out of range");
      const auto a = static_cast<std::size_t>(axis);
      // Softmax before opset 13 and LayerNormalization normalise over axis..end;
      // Softmax from opset 13 over the one axis.
      const bool single = type == "Softmax" && opset() >= 13;
      op.cols = single ? x.shape[a] : prod(x.shape, a, x.shape.size());
      op.rows = numel(x.shape) / std::max<std::int64_t>(1, op.cols);
      op.kind = type == "Softmax" ? wl::OpKind::softmax : wl::OpKind::layernorm;
      op.layer = type == "Softmax" ? wl::LayerType::attention : wl::LayerType::norm;
    } else if (elementwise_ops.count(type) != 0) {
      op.kind = wl::OpKind::elementwise;
      op.layer = type == "BatchNormalization" ? wl::LayerType::norm : wl::LayerType::elementwise;
      op.rows = 1;
      op.cols = numel(out.shape);
      op.flops_per_element = type == "BatchNormalization" ? 2.0 : 1.0;
    } else if (reduction_ops.count(type) != 0) {
      const TensorInfo& x = shape_of(node, name, node.input(0));
      op.kind = wl::OpKind::reduction;
      op.layer = wl::LayerType::elementwise;
      op.rows = numel(out.shape);
      op.cols = std::max<std::int64_t>(1, numel(x.shape) / std::max<std::int64_t>(1, op.rows));
      if (type == "MaxPool" || type == "AveragePool") {
        const auto kernel = ints_attr(node, "kernel_shape");
        op.cols = numel(kernel);
      }
    } else if (options_.unknown_as_elementwise) {
      op.kind = wl::OpKind::elementwise;
      op.layer = wl::LayerType::elementwise;
      op.rows = 1;
      op.cols = numel(out.shape);
      warnings.push_back(path_ + ": node '" + name + "' (op " + type +
                         ") is not supported; counted as element-wise over its output");
    } else {
      node_error(node, name,
                 "op type not supported (supported: MatMul, Gemm, Conv, Softmax, LayerNormalization, element-wise "
                 "and reduction ops; pass the unknown-as-element-wise option to count it as element-wise)");
    }
    if (op.kind != wl::OpKind::gemm && op.kind != wl::OpKind::batched_gemm && op.kind != wl::OpKind::conv2d) {
      add_tensors(op, node, name);
    }
    return op;
  }

  void map_matmul(const onnx::NodeProto& node, const std::string& name, wl::Operator& op) const {
    if (node.input_size() < 2) node_error(node, name, "needs two inputs");
    std::vector<std::int64_t> a = shape_of(node, name, node.input(0)).shape;
    std::vector<std::int64_t> b = shape_of(node, name, node.input(1)).shape;
    const std::vector<std::int64_t>& c = shape_of(node, name, node.output(0)).shape;
    if (a.empty() || b.empty()) node_error(node, name, "scalar operands are not a matrix product");
    if (node.op_type() == "Gemm") {
      if (a.size() != 2 || b.size() != 2) node_error(node, name, "Gemm needs 2-D operands");
      if (int_attr(node, "transA", 0) != 0) std::swap(a[0], a[1]);
      if (int_attr(node, "transB", 0) != 0) std::swap(b[0], b[1]);
    }
    if (a.size() == 1) a.insert(a.begin(), 1);
    if (b.size() == 1) b.push_back(1);
    const std::int64_t m = a[a.size() - 2];
    const std::int64_t k = a.back();
    const std::int64_t n = b.back();
    if (b[b.size() - 2] != k) node_error(node, name, "inner dimensions differ");
    const bool weight = is_weight(node.input(1)) && b.size() == 2;
    if (weight) {
      op.kind = wl::OpKind::gemm;
      op.layer = wl::LayerType::ffn;
      op.m = numel(a) / k;  // leading dimensions fold into the rows
      op.n = n;
      op.k = k;
    } else {
      op.kind = wl::OpKind::batched_gemm;
      op.layer = wl::LayerType::attention;
      std::int64_t mn = 0;  // m * n can pass int64 even when each tensor fits
      if (__builtin_mul_overflow(m, n, &mn)) mn = std::numeric_limits<std::int64_t>::max();
      op.batch = std::max<std::int64_t>(1, numel(c) / std::max<std::int64_t>(1, mn));
      op.m = m;
      op.n = n;
      op.k = k;
    }
    add_tensors(op, node, name);
  }

  void map_conv(const onnx::NodeProto& node, const std::string& name, wl::Operator& op) const {
    const auto& x = shape_of(node, name, node.input(0)).shape;
    const auto& w = shape_of(node, name, node.input(1)).shape;
    const auto& y = shape_of(node, name, node.output(0)).shape;
    if (x.size() != 4 || w.size() != 4) node_error(node, name, "only 2-D convolutions (NCHW) are supported");
    for (const std::int64_t d : ints_attr(node, "dilations")) {
      if (d != 1) node_error(node, name, "dilated convolutions are not supported");
    }
    const auto strides = ints_attr(node, "strides");
    const auto pads = ints_attr(node, "pads");
    const std::int64_t stride = strides.empty() ? 1 : strides[0];
    if (!strides.empty() && std::any_of(strides.begin(), strides.end(), [&](std::int64_t s) { return s != stride; })) {
      node_error(node, name, "unequal strides are not supported");
    }
    const std::int64_t pad = pads.empty() ? 0 : pads[0];
    if (!pads.empty() && std::any_of(pads.begin(), pads.end(), [&](std::int64_t p) { return p != pad; })) {
      node_error(node, name, "asymmetric padding is not supported");
    }
    op.kind = wl::OpKind::conv2d;
    op.layer = wl::LayerType::conv;
    op.conv = wl::ConvShape{x[0], x[1], x[2], x[3], w[0], w[2], w[3], stride, pad, int_attr(node, "group", 1)};
    if (y.size() != 4 || op.conv.out_h() != y[2] || op.conv.out_w() != y[3]) {
      node_error(node, name, "output shape disagrees with the convolution attributes (auto_pad is not supported)");
    }
    add_tensors(op, node, name);
  }

  std::int64_t opset() const {
    for (const auto& o : model_.opset_import()) {
      if (o.domain().empty() || o.domain() == "ai.onnx") return o.version();
    }
    return 1;
  }

  std::string path_;
  OnnxImportOptions options_;
  onnx::ModelProto model_;
  std::unordered_map<std::string, TensorInfo> shapes_;
  std::set<std::string, std::less<>> weights_;
  std::set<std::string, std::less<>> constants_;
  std::set<std::string, std::less<>> used_names_;
  std::unordered_map<std::string, std::string> producer_;
};

}  // namespace

bool onnx_support_built() noexcept { return true; }

OnnxImport import_onnx(const std::string& path, const OnnxImportOptions& options) {
  if (options.batch < 1 || options.seq < 1) throw InputError(path + ": batch and seq must be >= 1");
  return Importer(path, options).run();
}

}  // namespace dse::io

#else

namespace dse::io {

bool onnx_support_built() noexcept { return false; }

OnnxImport import_onnx(const std::string& path, const OnnxImportOptions&) {
  throw InputError(path + ": this dse was built without ONNX support (configure with -DDSE_WITH_ONNX=ON and "
                          "libonnx-dev installed)");
}

}  // namespace dse::io

#endif
