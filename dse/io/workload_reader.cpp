#include "dse/io/workload_reader.hpp"

#include <cmath>
#include <filesystem>
#include <set>
#include <sstream>
#include <stdexcept>

#include "costmodel/workload/presets.hpp"

namespace dse::io {

namespace wl = costmodel::workload;

namespace {

const std::vector<std::string> transformer_keys{
    "hidden", "layers", "heads", "kv_heads", "head_dim", "ffn_hidden", "vocab", "max_positions", "type_vocab",
    "ffn", "norm", "position", "bias", "tied_embeddings", "final_norm", "lm_head", "pooler", "experts", "top_k",
    "attention_dropout",
    "tensor_parallel"};
const std::vector<std::string> vit_keys{"image_size", "patch", "channels", "classes"};
const std::vector<std::string> resnet_keys{"image_size", "classes", "stage_blocks", "base_width"};
const std::vector<std::string> symbols{"batch", "seq", "context", "kv_len", "tokens"};

std::vector<std::string> keys(std::initializer_list<std::vector<std::string>> parts) {
  std::vector<std::string> out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

// A whole number >= 0 (experts, top_k, pad): checked before the cast, since converting a
// double past int64 (or a fraction) would be undefined or silently truncated.
std::int64_t whole_non_negative(const MapReader& m, const std::string& key) {
  const double v = m.non_negative(key);
  if (v != std::floor(v) || v > 9007199254740992.0) {  // 2^53
    fail(m.place(key), m.node(key), "expected a whole number from 0 to 2^53", describe(m.node(key)));
  }
  return static_cast<std::int64_t>(v);
}

std::int64_t integer_or(const MapReader& m, const std::string& key, std::int64_t fallback) {
  return m.has(key) ? m.positive_integer(key) : fallback;
}

// Layers and block repeats: the serving model lays out every repeated layer (one pipeline work
// item each, costmodel/platform/system.cpp), so `repeat: 1e9` allocated 12.6 GB before failing.
// Published models have at most a few hundred layers (GPT-3 96, PaLM 540B 118); 10^5 leaves room.
constexpr std::int64_t kMaxLayers = 100'000;

std::int64_t layer_count(const YAML::Node& n, const Place& at) {
  const std::int64_t v = as_positive_integer(n, at);
  if (v > kMaxLayers) fail(at, n, "expected at most " + std::to_string(kMaxLayers) + " layers", describe(n));
  return v;
}

std::int64_t layer_count_or(const MapReader& m, const std::string& key, std::int64_t fallback) {
  return m.has(key) ? layer_count(m.node(key), m.place(key)) : fallback;
}

template <class E>
E choice(const MapReader& m, const std::string& key, E fallback,
         const std::vector<std::pair<std::string, E>>& options) {
  if (!m.has(key)) return fallback;
  const YAML::Node n = m.node(key);
  const std::string s = as_string(n, m.place(key));
  std::vector<std::string> names;
  for (const auto& [name, value] : options) {
    if (name == s) return value;
    names.push_back(name);
  }
  const std::string hint = did_you_mean(s, names);
  fail(m.place(key), n, "expected one of " + join(names) + (hint.empty() ? "" : " (did you mean '" + hint + "'?)"),
       excerpt(s));
}

// Reads the transformer hyperparameters present in m over the defaults in s.
void read_transformer(const MapReader& m, wl::TransformerSpec& s) {
  s.hidden = integer_or(m, "hidden", s.hidden);
  s.layers = layer_count_or(m, "layers", s.layers);
  s.heads = integer_or(m, "heads", s.heads);
  s.kv_heads = integer_or(m, "kv_heads", s.kv_heads);
  s.head_dim = integer_or(m, "head_dim", s.head_dim);
  s.ffn_hidden = integer_or(m, "ffn_hidden", s.ffn_hidden);
  s.vocab = integer_or(m, "vocab", s.vocab);
  s.max_positions = integer_or(m, "max_positions", s.max_positions);
  s.type_vocab = integer_or(m, "type_vocab", s.type_vocab);
  s.ffn = choice<wl::Ffn>(m, "ffn", s.ffn, {{"swiglu", wl::Ffn::swiglu}, {"gelu", wl::Ffn::gelu}});
  s.norm = choice<wl::OpKind>(m, "norm", s.norm, {{"rmsnorm", wl::OpKind::rmsnorm}, {"layernorm", wl::OpKind::layernorm}});
  s.position = choice<wl::PositionEncoding>(m, "position", s.position,
                                            {{"rope", wl::PositionEncoding::rope},
                                             {"learned", wl::PositionEncoding::learned},
                                             {"none", wl::PositionEncoding::none}});
  s.bias = m.boolean_or("bias", s.bias);
  s.tied_embeddings = m.boolean_or("tied_embeddings", s.tied_embeddings);
  s.final_norm = m.boolean_or("final_norm", s.final_norm);
  s.lm_head = m.boolean_or("lm_head", s.lm_head);
  s.pooler = m.boolean_or("pooler", s.pooler);
  if (m.has("attention_dropout")) s.attention_dropout = m.fraction("attention_dropout");
  if (m.has("experts")) {
    const std::int64_t e = whole_non_negative(m, "experts");
    s.experts = e;
  }
  if (m.has("top_k")) s.top_k = whole_non_negative(m, "top_k");
  s.tensor_parallel = integer_or(m, "tensor_parallel", s.tensor_parallel);
}

void read_vit(const MapReader& m, wl::VitSpec& v) {
  v.image_size = integer_or(m, "image_size", v.image_size);
  v.patch = integer_or(m, "patch", v.patch);
  v.channels = integer_or(m, "channels", v.channels);
  v.classes = integer_or(m, "classes", v.classes);
  read_transformer(m, v.encoder);
}

void read_resnet(const MapReader& m, wl::ResNetSpec& r) {
  r.image_size = integer_or(m, "image_size", r.image_size);
  r.classes = integer_or(m, "classes", r.classes);
  r.base_width = integer_or(m, "base_width", r.base_width);
  if (m.has("stage_blocks")) {
    const YAML::Node n = m.sequence("stage_blocks");
    r.stage_blocks.clear();
    for (std::size_t i = 0; i < n.size(); ++i) {
      r.stage_blocks.push_back(layer_count(n[i], m.place("stage_blocks").item(i)));
    }
  }
}

wl::TransformerSpec builder_defaults(wl::Arch arch) {
  wl::TransformerSpec s;
  s.arch = arch;
  if (arch == wl::Arch::encoder) {
    s.ffn = wl::Ffn::gelu;
    s.norm = wl::OpKind::layernorm;
    s.position = wl::PositionEncoding::learned;
    s.bias = true;
    s.final_norm = false;
    s.lm_head = false;
  }
  return s;
}

wl::SymbolicDim as_dim(const YAML::Node& n, const Place& at) {
  const std::string expected = "expected an integer > 0 or a product of integers and " + join(symbols);
  if (!n.IsScalar()) fail(at, n, expected, describe(n));
  wl::SymbolicDim d;
  std::stringstream in(n.Scalar());
  std::string factor;
  bool any = false;
  while (std::getline(in, factor, '*')) {
    const auto b = factor.find_first_not_of(" \t");
    const auto e = factor.find_last_not_of(" \t");
    if (b == std::string::npos) fail(at, n, expected, describe(n));
    factor = factor.substr(b, e - b + 1);
    if (wl::is_symbol(factor)) {
      d.symbols.push_back(factor);
    } else {
      std::size_t used = 0;
      long long v = 0;
      try {
        v = std::stoll(factor, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used != factor.size() || v <= 0) {
        const std::string hint = did_you_mean(factor, symbols);
        fail(at, n, expected + (hint.empty() ? "" : " (did you mean '" + hint + "'?)"), describe(n));
      }
      if (__builtin_mul_overflow(d.coefficient, static_cast<std::int64_t>(v), &d.coefficient)) {
        fail(at, n, "expected a product of at most 2^63-1", describe(n));
      }
    }
    any = true;
  }
  if (!any) fail(at, n, expected, describe(n));
  return d;
}

// An operator's kind (its `kind` key), with a did-you-mean for a misspelt one.
wl::OpKind read_kind(const YAML::Node& node, const Place& at) {
  if (!node.IsMap()) fail(at, node, "expected a mapping", describe(node));
  const YAML::Node kind_node = node["kind"];
  if (!kind_node.IsDefined()) fail(at.child("kind"), node, "missing required key", "nothing");
  const std::string kind_s = as_string(kind_node, at.child("kind"));
  const auto kind = wl::op_kind_from_string(kind_s);
  if (!kind) {
    std::vector<std::string> kinds{"gemm",    "batched_gemm", "conv2d",    "elementwise", "softmax",  "layernorm",
                                   "rmsnorm", "reduction",    "cross_entropy", "embedding", "all_reduce", "all_to_all"};
    const std::string hint = did_you_mean(kind_s, kinds);
    fail(at.child("kind"), kind_node,
         "expected one of " + join(kinds) + (hint.empty() ? "" : " (did you mean '" + hint + "'?)"),
         excerpt(kind_s));
  }
  return *kind;
}

// The keys an operator of this kind may have.
std::vector<std::string> op_keys(wl::OpKind kind) {
  std::vector<std::string> allowed{"name", "kind", "layer", "precision", "after"};
  switch (kind) {
    case wl::OpKind::gemm: allowed.insert(allowed.end(), {"m", "n", "k", "batch", "weight", "bias"}); break;
    case wl::OpKind::batched_gemm: allowed.insert(allowed.end(), {"batch", "m", "n", "k"}); break;
    case wl::OpKind::conv2d:
      allowed.insert(allowed.end(),
                     {"batch", "in_channels", "height", "width", "out_channels", "kernel", "stride", "pad", "groups", "bias"});
      break;
    case wl::OpKind::elementwise: allowed.insert(allowed.end(), {"rows", "cols", "flops_per_element", "inputs"}); break;
    case wl::OpKind::embedding: allowed.insert(allowed.end(), {"rows", "cols", "table_rows"}); break;
    case wl::OpKind::all_reduce:
    case wl::OpKind::all_to_all: allowed.insert(allowed.end(), {"rows", "cols", "participants"}); break;
    default: allowed.insert(allowed.end(), {"rows", "cols"}); break;
  }
  return allowed;
}

// A conv2d's geometry: channels, input size, kernel, stride, padding and groups, checked to fit.
void read_conv(const MapReader& m, wl::ExplicitOp& op) {
  op.conv.c = m.positive_integer("in_channels");
  op.conv.h = m.positive_integer("height");
  op.conv.w = m.positive_integer("width");
  op.conv.k = m.positive_integer("out_channels");
  op.conv.r = op.conv.s = m.positive_integer("kernel");
  op.conv.stride = m.positive_integer_or("stride", 1);
  op.conv.pad = m.has("pad") ? whole_non_negative(m, "pad") : 0;
  op.conv.groups = m.positive_integer_or("groups", 1);
  op.bias = m.boolean_or("bias", false);
  if (op.conv.c % op.conv.groups != 0 || op.conv.k % op.conv.groups != 0) {
    fail(m.place("groups"), m.node("groups"), "expected a divisor of in_channels and out_channels",
         std::to_string(op.conv.groups));
  }
  if (op.conv.out_h() < 1 || op.conv.out_w() < 1) {
    fail(m.place("kernel"), m.node("kernel"), "expected a kernel that fits the padded input",
         std::to_string(op.conv.r));
  }
}

// The operator's sizes, by kind: GEMM m, n, k (and batch); conv2d geometry; rows x cols for the rest.
void read_sizes(const MapReader& m, wl::ExplicitOp& op) {
  auto dim = [&m](const std::string& key, wl::SymbolicDim& d, bool required) {
    if (m.has(key)) d = as_dim(m.node(key), m.place(key));
    else if (required) (void)m.node(key);  // throws "missing required key"
  };
  switch (op.kind) {
    case wl::OpKind::gemm:
    case wl::OpKind::batched_gemm:
      dim("batch", op.batch, op.kind == wl::OpKind::batched_gemm);
      dim("m", op.m, true);
      dim("n", op.n, true);
      dim("k", op.k, true);
      op.weight = op.kind == wl::OpKind::gemm && m.boolean_or("weight", true);
      op.bias = m.boolean_or("bias", false);
      break;
    case wl::OpKind::conv2d:
      dim("batch", op.batch, true);
      read_conv(m, op);
      break;
    default:
      dim("rows", op.rows, true);
      dim("cols", op.cols, true);
      if (m.has("flops_per_element")) op.flops_per_element = m.non_negative("flops_per_element");
      op.inputs = m.positive_int_or("inputs", 1);
      if (op.kind == wl::OpKind::embedding) op.table_rows = m.positive_integer("table_rows");
      op.participants = m.positive_int_or("participants", 2);
      break;
  }
}

wl::ExplicitOp read_op(const YAML::Node& node, const Place& at) {
  const wl::OpKind kind = read_kind(node, at);
  const MapReader m(node, at, op_keys(kind));
  wl::ExplicitOp op;
  op.name = m.string("name");
  op.kind = kind;
  op.layer = wl::default_layer_type(kind);
  if (m.has("layer")) {
    const std::string s = m.string("layer");
    const auto layer = wl::layer_type_from_string(s);
    if (!layer) {
      fail(m.place("layer"), m.node("layer"),
           "expected one of attention, ffn, conv, norm, elementwise, embedding, collective", excerpt(s));
    }
    op.layer = *layer;
  }
  if (m.has("precision")) op.precision = as_precision(m.node("precision"), m.place("precision"));
  read_sizes(m, op);
  if (m.has("after")) {
    const YAML::Node a = m.node("after");
    if (a.IsScalar()) {
      op.after.push_back(as_string(a, m.place("after")));
    } else if (a.IsSequence()) {
      for (std::size_t i = 0; i < a.size(); ++i) op.after.push_back(as_string(a[i], m.place("after").item(i)));
    } else {
      fail(m.place("after"), a, "expected an operator name or a list of them", describe(a));
    }
  }
  return op;
}

wl::ExplicitBlock read_block(const YAML::Node& ops, const Place& at, std::string name, std::int64_t repeat,
                             std::set<std::string>& seen) {
  wl::ExplicitBlock b;
  b.name = std::move(name);
  b.repeat = repeat;
  if (!ops.IsSequence() || ops.size() == 0) fail(at, ops, "expected a non-empty list of operators", describe(ops));
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const Place p = at.item(i);
    wl::ExplicitOp op = read_op(ops[i], p);
    for (std::size_t j = 0; j < op.after.size(); ++j) {
      if (seen.count(op.after[j]) == 0) {
        const YAML::Node a = ops[i]["after"];
        fail(p.child("after"), a, "expected the name of an earlier operator", excerpt(op.after[j]));
      }
    }
    if (!seen.insert(op.name).second) {
      fail(p.child("name"), ops[i]["name"], "expected a name not used before", excerpt(op.name));
    }
    b.ops.push_back(std::move(op));
  }
  return b;
}

wl::ExplicitSpec read_explicit(const MapReader& m, std::string name) {
  wl::ExplicitSpec e;
  e.name = std::move(name);
  std::set<std::string> seen;
  if (m.has("ops")) {
    e.blocks.push_back(read_block(m.node("ops"), m.place("ops"), "ops", 1, seen));
  } else {
    const YAML::Node blocks = m.sequence("blocks");
    for (std::size_t i = 0; i < blocks.size(); ++i) {
      const MapReader b(blocks[i], m.place("blocks").item(i), {"name", "repeat", "ops"});
      e.blocks.push_back(
          read_block(b.node("ops"), b.place("ops"), b.string("name"), layer_count_or(b, "repeat", 1), seen));
    }
  }
  return e;
}

}  // namespace

wl::Precision as_precision(const YAML::Node& n, const Place& at) {
  const std::string s = as_string(n, at);
  const auto p = wl::precision_from_string(s);
  if (!p || *p == wl::Precision::int32) {
    const std::string hint = did_you_mean(s, {"fp32", "bf16", "fp16", "fp8", "int8", "int4"});
    fail(at, n, "expected one of fp32, bf16, fp16, fp8, int8, int4" + (hint.empty() ? "" : " (did you mean '" + hint + "'?)"),
         excerpt(s));
  }
  return *p;
}

wl::Phase as_phase(const YAML::Node& n, const Place& at) {
  const std::string s = as_string(n, at);
  const auto p = wl::phase_from_string(s);
  if (!p) fail(at, n, "expected one of training, prefill, decode", excerpt(s));
  return *p;
}

namespace {

// `preset: NAME`: a built-in workload, its hyperparameters overridable by the keys beside it.
wl::WorkloadSpec from_preset(const YAML::Node& node, const Place& at) {
  const std::string name = as_string(node["preset"], at.child("preset"));
  const auto preset = wl::workload_preset(name);
  if (!preset) {
    const auto names = wl::workload_preset_names();
    const std::string hint = did_you_mean(name, names);
    fail(at.child("preset"), node["preset"],
         hint.empty() ? "expected one of " + join(names) : "expected a preset name, did you mean '" + hint + "'?",
         excerpt(name));
  }
  wl::WorkloadSpec spec = *preset;
  if (auto* t = std::get_if<wl::TransformerSpec>(&spec)) {
    const MapReader m(node, at, keys({{"preset", "name"}, transformer_keys}));
    read_transformer(m, *t);
    t->name = m.string_or("name", t->name);
  } else if (auto* v = std::get_if<wl::VitSpec>(&spec)) {
    const MapReader m(node, at, keys({{"preset", "name"}, vit_keys, transformer_keys}));
    read_vit(m, *v);
    v->name = m.string_or("name", v->name);
  } else if (auto* r = std::get_if<wl::ResNetSpec>(&spec)) {
    const MapReader m(node, at, keys({{"preset", "name"}, resnet_keys}));
    read_resnet(m, *r);
    r->name = m.string_or("name", r->name);
  }
  return spec;
}

// `builder: decoder|encoder|vit|resnet`: a model from its hyperparameters, the sizes required.
wl::WorkloadSpec from_builder(const YAML::Node& node, const Place& at) {
  const YAML::Node b = node["builder"];
  const std::string builder = as_string(b, at.child("builder"));
  if (builder == "decoder" || builder == "encoder") {
    const MapReader m(node, at, keys({{"builder", "name"}, transformer_keys}));
    wl::TransformerSpec t = builder_defaults(builder == "decoder" ? wl::Arch::decoder : wl::Arch::encoder);
    t.name = m.string("name");
    for (const char* k : {"hidden", "layers", "heads", "ffn_hidden"}) (void)m.node(k);
    if (t.arch == wl::Arch::decoder) (void)m.node("vocab");
    read_transformer(m, t);
    return t;
  }
  if (builder == "vit") {
    const MapReader m(node, at, keys({{"builder", "name"}, vit_keys, transformer_keys}));
    wl::VitSpec v;
    v.name = m.string("name");
    v.encoder = builder_defaults(wl::Arch::encoder);
    v.encoder.position = wl::PositionEncoding::none;
    v.encoder.name = v.name;
    for (const char* k : {"hidden", "layers", "heads", "ffn_hidden"}) (void)m.node(k);
    read_vit(m, v);
    return v;
  }
  if (builder == "resnet") {
    const MapReader m(node, at, keys({{"builder", "name"}, resnet_keys}));
    wl::ResNetSpec r;
    r.name = m.string("name");
    read_resnet(m, r);
    return r;
  }
  const std::string hint = did_you_mean(builder, {"decoder", "encoder", "vit", "resnet"});
  fail(at.child("builder"), b,
       "expected one of decoder, encoder, vit, resnet" + (hint.empty() ? "" : " (did you mean '" + hint + "'?)"),
       excerpt(builder));
}

// Hyperparameters that are each valid may still not fit together.
void check_consistent(const wl::WorkloadSpec& spec, const YAML::Node& node, const Place& at) {
  wl::PhaseSpec probe;
  probe.phase = wl::Phase::prefill;
  probe.context = 1;
  const std::string problem = wl::check(spec, probe);
  if (!problem.empty()) fail(at, node, "expected consistent hyperparameters", "\"" + problem + "\"");
  if (const auto* e = std::get_if<wl::ExplicitSpec>(&spec)) {
    try {
      (void)wl::build_explicit(*e, probe);
    } catch (const std::invalid_argument& err) {
      fail(at, node, "expected a well-formed operator list", "\"" + std::string(err.what()) + "\"");
    }
  }
}

}  // namespace

wl::WorkloadSpec parse_workload(const YAML::Node& node, const Place& at) {
  if (!node.IsMap()) fail(at, node, "expected a mapping", describe(node));
  wl::WorkloadSpec spec;
  if (node["preset"].IsDefined()) {
    spec = from_preset(node, at);
  } else if (node["builder"].IsDefined()) {
    spec = from_builder(node, at);
  } else if (node["ops"].IsDefined() || node["blocks"].IsDefined()) {
    const MapReader m(node, at, {"name", "ops", "blocks"});
    if (m.has("ops") && m.has("blocks")) fail(m.place("blocks"), m.node("blocks"), "expected ops or blocks, not both", "both");
    spec = read_explicit(m, m.string("name"));
  } else {
    // Report an unknown key first (a misspelt 'preset' or 'builder'), else what is missing.
    const MapReader known(node, at, keys({{"preset", "builder", "name", "ops", "blocks"}, transformer_keys,
                                          vit_keys, resnet_keys}));
    (void)known;
    fail(at, node, "expected one of the keys preset, builder, ops or blocks", "none of them");
  }
  check_consistent(spec, node, at);
  return spec;
}

wl::WorkloadSpec parse_workload_text(const std::string& text, const std::string& file) {
  const YAML::Node root = parse_yaml(text, file);
  return parse_workload(root, Place{file, ""});
}

wl::WorkloadSpec read_workload_file(const std::string& path) {
  return parse_workload_text(read_text_file(path, "workload"), path);
}

std::string unknown_workload(const std::string& name_or_path) {
  std::error_code ec;  // a name the system cannot look up (too long, say) does not exist
  if (wl::workload_preset(name_or_path) || std::filesystem::exists(name_or_path, ec)) return {};
  const std::string hint = did_you_mean(name_or_path, wl::workload_preset_names());
  return hint.empty() ? "expected a workload preset name or a readable file"
                      : "expected a workload preset or file, did you mean '" + hint + "'?";
}

wl::WorkloadSpec resolve_workload(const std::string& name_or_path) {
  if (const auto preset = wl::workload_preset(name_or_path)) return *preset;
  if (const std::string why = unknown_workload(name_or_path); !why.empty())
    throw ConfigError(name_or_path, 1, 1, "workload", why, excerpt(name_or_path));
  return read_workload_file(name_or_path);
}

}  // namespace dse::io
