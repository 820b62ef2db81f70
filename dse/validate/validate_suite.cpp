// `dse validate`'s suite read and evaluated: the method block, the cases that a workload or a
// loop-nest network drives (inference, serving, training MFU, research silicon), and the dispatch of
// each case to its kind.
#include <algorithm>
#include <filesystem>
#include <optional>
#include <set>

#include "costmodel/mapper/memo.hpp"
#include "costmodel/platform/system.hpp"
#include "dse/error.hpp"
#include "dse/io/op_spec.hpp"
#include "dse/io/platform_reader.hpp"
#include "dse/io/timeloop_writer.hpp"
#include "dse/validate/validate_cases.hpp"

namespace fs = std::filesystem;

namespace dse::cli::validation {

std::string kinds_text(const std::vector<pf::FusionKind>& kinds) {
  std::string s;
  for (const auto k : kinds) s += (s.empty() ? "" : "+") + std::string(pf::to_string(k));
  return s.empty() ? "none" : s;
}

std::string constants_text(const pf::Platform& p, pf::LaunchMode launch, const std::string& fusion) {
  const auto& g = p.gpu;
  std::string s = g.name + ": matrix sustained " + fmt(g.matrix_sustained_fraction);
  for (std::size_t i = 0; i < g.matrix_sustained_fraction_by_precision.size(); ++i)
    if (g.matrix_sustained_fraction_by_precision[i] > 0.0)
      s += " (" + std::string(costmodel::to_string(static_cast<costmodel::Precision>(i))) + " " +
           fmt(g.matrix_sustained_fraction_by_precision[i]) + ")";
  s += ", HBM " + fmt(g.hbm_achievable_fraction) + " of peak";
  if (!g.gemm_library.empty())
    s += ", " + std::string(costmodel::to_string(g.gemm_library_precision)) + " GEMM kernels from the library table (" +
         std::to_string(g.gemm_library.size()) + " tuned sizes)";
  s += ", launch " + std::string(pf::to_string(launch));
  if (launch == pf::LaunchMode::framework)
    s += " (lib " + fmt(g.launch_overhead_library_s * 1e6) + " / eager " + fmt(g.launch_overhead_eager_s * 1e6) +
         " / compiled " + fmt(g.launch_overhead_compiled_s * 1e6) + " us)";
  else
    s += " (" + fmt(p.graph_kernel_overhead_s * 1e6) + " us/kernel)";
  return s + ", fusion " + fusion;
}
std::string constants_text(const pf::Platform& p, pf::LaunchMode launch, pf::FusionStrategy fusion) {
  return constants_text(p, launch, std::string(pf::to_string(fusion)));
}

std::string attention_text(const pf::Platform& p, pf::AttentionKernel k) {
  if (k == pf::AttentionKernel::native) return "";
  return ", attention kernel " + std::string(pf::to_string(k)) +
         (k == pf::AttentionKernel::flash1 ? " (2x FlashAttention-2's compute time)" : "") +
         (pf::attention_kernel_uses_warp_mma(k) && p.gpu.warp_mma_fraction < 1.0
              ? ", its matrix work at " + fmt(p.gpu.warp_mma_fraction) + " of the rate (warp MMA)"
              : std::string());
}

pf::Platform platform_of(const io::MapReader& c) {
  return io::resolve_platform(io::preset_at(c, "hardware", "hardware"));
}

wl::WorkloadSpec case_workload(const io::MapReader& c, const std::string& suite_dir) {
  std::string name = c.string("workload");
  if (name.find(".yaml") != std::string::npos) name = (fs::path(suite_dir) / name).string();
  if (const std::string why = io::unknown_workload(name); !why.empty())
    io::fail(c.place("workload"), c.node("workload"), why, excerpt(name));
  return io::resolve_workload(name);
}

std::vector<pf::FusionKind> fusions_of(const io::MapReader& r) {
  std::vector<pf::FusionKind> out;
  const YAML::Node fs_node = r.sequence("fusions");
  for (std::size_t i = 0; i < fs_node.size(); ++i) {
    const auto k = pf::fusion_kind_from_string(fs_node[i].as<std::string>(""));
    if (!k) io::fail(r.place("fusions").item(i), fs_node[i], "expected " + pf::fusion_kind_names(), fs_node[i].as<std::string>(""));
    out.push_back(*k);
  }
  return out;
}

namespace {

// A step whose modelled memory exceeds the chip's, as the constants line says it ("" when it fits):
// the measured run fitted, so the model's memory for it is high (it is not refused: time and
// MFU do not depend on it).
std::string memory_text(const pf::Platform& p, const pf::SystemEval& e) {
  if (e.chip.fits_memory) return "";
  return ", modelled memory " + fmt(e.chip.totals.memory_bytes / 1e9, 4) + " GB of the chip's " +
         fmt(p.gpu.hbm_bytes / 1e9, 4) + " (does not fit)";
}

// The training loop's logging cross-entropies (wl::PhaseSpec::logit_metrics) in a chip graph.
bool is_logit_metric(const pf::LayerResult& l) { return l.name.rfind("metric_", 0) == 0; }

// FLOPs of a training step without the recomputed forward operators (named
// "<op>.recompute" by workload::append_backward; a fused group carries its
// first operator's name) and without the logging cross-entropies.
double model_flops(const pf::GraphEval& g) {
  const std::string suffix = ".recompute";
  double f = 0.0;
  for (const auto& l : g.layers) {
    const bool rec = l.name.size() >= suffix.size() &&
                     l.name.compare(l.name.size() - suffix.size(), suffix.size(), suffix) == 0;
    if (!rec && !is_logit_metric(l)) f += l.flops * static_cast<double>(l.repeat);
  }
  return f;
}

// One micro-batch's logging cross-entropies on a chip (s).
double logit_metrics_s(const pf::GraphEval& g) {
  double s = 0.0;
  for (const auto& l : g.layers)
    if (is_logit_metric(l)) s += l.latency_s * static_cast<double>(l.repeat);
  return s;
}

pf::FusionStrategy fusion_of(const io::MapReader& m) {
  return choice_of(m, "fusion", pf::fusion_strategy_from_string, "expected none, standard or aggressive");
}
pf::LaunchMode launch_of(const io::MapReader& m) {
  return choice_of(m, "launch", pf::launch_mode_from_string, "expected framework or graph");
}

// A case's name, group, source, unit and measured value, as every model-driven kind reads them.
CaseResult case_of(const io::MapReader& c) {
  CaseResult cr;
  cr.name = c.string("name");
  cr.group = c.string("group");
  cr.source = c.string("source");
  cr.unit = c.string("unit");
  cr.measured = c.positive("measured");
  return cr;
}

// A network of operators on a loop-nest hardware (a research-design preset), run one
// operator after another as measured silicon runs its layers: each operator at the
// mapper's latency-optimal mapping (the best the dataflow allows at the preset's clock
// and bandwidths), its time and energy at that mapping. `layers`: operator texts as
// `dse map --op` takes them, each optionally prefixed "COUNT x " (e.g. a grouped
// convolution's groups); `images`: the frames one pass of the layers processes (their N).
// unit frames/s: images / the layers' summed latency; J/frame: their summed energy / images.
// `cache`: the run's mapper cache, shared by its loop-nest cases.
CaseResult loopnest_network_case(const io::MapReader& c, dse::costmodel::mapper::MapperCache& cache) {
  namespace lp = dse::costmodel::loopnest;
  namespace mp = dse::costmodel::mapper;
  CaseResult cr = case_of(c);
  if (cr.unit != "frames/s" && cr.unit != "J/frame")
    io::fail(c.place("unit"), c.node("unit"), "expected frames/s or J/frame (a loopnest_network case)", cr.unit);
  // A loop-nest hardware: a preset name (hardware/research, gpu-4level) or a file with a
  // `loopnest_hardware:` key; anything else is refused at the case's `hardware`.
  const std::string hw = io::resolve_loopnest_hardware_path(c.string("hardware"));
  std::error_code ec;
  bool loopnest = fs::is_regular_file(hw, ec);
  if (loopnest) {
    const YAML::Node probe = io::parse_yaml(io::read_text_file(hw, "hardware"), hw);
    loopnest = probe.IsMap() && probe["loopnest_hardware"].IsDefined();
  }
  if (!loopnest)
    io::fail(c.place("hardware"), c.node("hardware"),
             "expected a loop-nest hardware: a preset of hardware/research or gpu-4level ('dse presets'), "
             "or a file with a loopnest_hardware key",
             c.string("hardware"));
  const lp::Architecture arch = io::read_loopnest_hardware(hw);
  const int bits = arch.compute.rates[0].bits > 0 ? arch.compute.rates[0].bits : 8;
  const double images = static_cast<double>(c.positive_integer("images"));
  const YAML::Node layers = c.sequence("layers");
  mp::MapperOptions o;
  o.objective = mp::Objective::latency;
  double latency_s = 0.0, energy_j = 0.0, macs = 0.0;
  std::int64_t evaluated = 0, mapped = 0;
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const io::Place at = c.place("layers").item(i);
    std::string text = io::as_string(layers[i], at);
    // "COUNT x OP": COUNT digits only, 1 to 1,000,000.
    std::int64_t count = 1;
    if (const auto x = text.find(" x "); x != std::string::npos && x > 0 &&
                                         text.find_first_not_of("0123456789") == x) {
      const std::string digits = text.substr(0, x);
      count = digits.size() <= 7 ? std::stoll(digits) : 0;
      if (count < 1 || count > 1000000)
        io::fail(at, layers[i], "expected a count of 1 to 1000000 before ' x '", digits);
      text = text.substr(x + 3);
    }
    lp::Problem p;
    try {
      p = io::parse_loopnest_op(text, bits, "operator");
    } catch (const InputError& e) {
      io::fail(at, layers[i], e.what(), text);
    }
    const mp::MapResult r = cache.map(lp::bind_keep_roles(arch, p), p, mp::Constraints{}, o);
    if (!r.feasible)
      throw InputError(cr.name + ": " + text + " has no feasible mapping on " + arch.name + " (" +
                       lp::infeasible_name(r.reason) + ")");
    latency_s += static_cast<double>(count) * r.cost.latency_s;
    energy_j += static_cast<double>(count) * r.cost.energy_j;
    macs += static_cast<double>(count) * r.cost.macs;
    evaluated += r.evaluated;
    mapped += count;
  }
  cr.predicted = cr.unit == "frames/s" ? images / latency_s : energy_j / images;
  cr.constants = arch.name + ": loop-nest mapper, each operator at its latency-optimal mapping, clock " +
                 fmt(arch.clock_hz / 1e6, 4) + " MHz; " + std::to_string(mapped) +
                 (mapped == 1 ? " operator, " : " operators, ") + fmt(macs / images / 1e6, 4) + " M MACs per frame, " +
                 fmt(1e3 * latency_s, 4) + " ms and " + fmt(1e3 * energy_j, 4) + " mJ for " + fmt(images, 4) +
                 " frames (" + fmt(1e3 * energy_j / latency_s, 4) + " mW), " + std::to_string(evaluated) +
                 " mappings evaluated";
  cr.error = (cr.predicted - cr.measured) / cr.measured;
  return cr;
}

CaseResult model_case(const io::MapReader& c, const std::string& suite_dir, const Method& m) {
  CaseResult cr = case_of(c);
  const std::string kind = c.string("kind");
  pf::Platform p;
  pf::SystemSpec sys;
  const int tp = static_cast<int>(c.positive_integer_or("tp", 1));
  const int pp = static_cast<int>(c.positive_integer_or("pp", 1));
  const int micro = static_cast<int>(c.positive_integer_or("micro_batches", 1));
  const int virtual_stages = static_cast<int>(c.positive_integer_or("virtual_stages", 1));
  // dp, sharding (training_mfu cases): data-parallel replicas and whether they shard the
  // states (full: ZeRO-3 / FSDP FULL_SHARD, costmodel/system/parallelism.hpp).
  const int dp = static_cast<int>(c.positive_integer_or("dp", 1));
  const std::string sharding = c.string_or("sharding", "none");
  const std::optional<bool> shard_states = pf::shard_states_from_string(sharding);
  if (!shard_states) io::fail(c.place("sharding"), c.node("sharding"), "expected none, full or fsdp", sharding);
  if (c.has("system")) {
    io::SystemFile sf = io::resolve_system(io::preset_at(c, "system", "systems"));
    p = sf.chip;
    sys = sf.system;
  } else {
    p = platform_of(c);
    sys = pf::default_system(p, tp * pp * dp);
  }
  // A pipeline longer than the system preset (e.g. PP across DGX nodes): a
  // switch of tp x pp x dp chips on the chip's own links (stage sends are small).
  if (tp * pp * dp > sys.chips) sys = pf::default_system(p, tp * pp * dp);
  pf::SystemRequest r;
  r.spec = case_workload(c, suite_dir);
  // max_positions (training_mfu): the learned position table of the run, for a benchmark
  // that sizes it to each run's length (llm-foundry's max_seq_len); the workload file
  // gives the model's own.
  const std::int64_t max_positions = c.has("max_positions") ? c.positive_integer("max_positions") : 0;
  if (max_positions > 0) {
    auto* t = std::get_if<wl::TransformerSpec>(&r.spec);
    if (t == nullptr || t->position != wl::PositionEncoding::learned)
      io::fail(c.place("max_positions"), c.node("max_positions"), "a key of workloads with learned positions only",
               c.string("workload"));
    t->max_positions = max_positions;
  }
  r.degrees.tp = tp;
  r.degrees.pp = pp;
  r.degrees.dp = dp;
  r.shard_states = *shard_states;
  r.flat_parameter = pf::flat_parameter_sharding(sharding);
  // shard_group (training_mfu, with sharding): hybrid sharding, the states sharded over groups of
  // this many of the dp chips and the dp / shard_group copies all-reducing their shards.
  if (c.has("shard_group")) {
    const std::int64_t g = c.positive_integer("shard_group");
    if (!*shard_states)
      io::fail(c.place("shard_group"), c.node("shard_group"), "a key of cases with sharding full or fsdp", sharding);
    if (dp % g != 0)
      io::fail(c.place("shard_group"), c.node("shard_group"), "expected a divisor of dp = " + std::to_string(dp),
               std::to_string(g));
    r.shard_group = static_cast<int>(g);
  }
  // overlap_data (training_mfu): the share of the data-parallel collectives hidden under
  // compute (system::OverlapFractions::data; default 0, all exposed).
  if (c.has("overlap_data")) r.overlap.data = c.fraction("overlap_data");
  // sequence_parallel: true (training_mfu): Megatron-LM's sequence parallelism (memory only).
  r.sequence_parallel = c.boolean_or("sequence_parallel", false);
  r.micro_batches = micro;
  r.virtual_stages = virtual_stages;
  r.options.fusion = m.e2e_fusion;
  r.options.launch = m.e2e_launch;
  const auto prec = wl::precision_from_string(c.string_or("precision", "bf16"));
  if (!prec) throw InputError(cr.name + ": unknown precision");
  r.phase.precision = *prec;
  r.serving.enabled = false;
  // decode_attention: how the measured stack's decode attention kernel reads the KV cache
  // (wl::PhaseSpec::kv_read_per_query_head): per_kv_head (default) or per_query_head.
  if (c.has("decode_attention")) {
    if (kind != "llm_offline" && kind != "decode_latency")
      io::fail(c.place("decode_attention"), c.node("decode_attention"),
               "a key of llm_offline and decode_latency cases only", kind);
    r.phase.kv_read_per_query_head = choice_of(c, "decode_attention", wl::kv_read_per_query_head_from_string,
                                               "expected per_kv_head or per_query_head");
  }
  // vocab: the measured stack's vocabulary layout under tensor parallelism
  // (wl::PhaseSpec::vocab_parallel): parallel (default) or replicated.
  if (c.has("vocab") && kind != "llm_offline" && kind != "decode_latency")
    io::fail(c.place("vocab"), c.node("vocab"), "a key of llm_offline and decode_latency cases only", kind);
  if (c.has("vocab"))
    r.phase.vocab_parallel = choice_of(c, "vocab", wl::vocab_parallel_from_string, "expected parallel or replicated");
  // A training case's stack: the method's training fusion at the end-to-end launch, or the
  // measured stack's own `fusions` (the kinds it applies) and `launch` (framework: eager PyTorch).
  // An llm_offline case may name its stack's fusions too (torch.compile: norm_residual and the
  // attention, no GEMM epilogues), in place of the end-to-end method's aggressive set.
  if (kind == "training_mfu" && m.train_fusion) r.options.fusion = *m.train_fusion;
  if ((kind == "training_mfu" || kind == "llm_offline") && c.has("fusions")) r.options.fusion_kinds = fusions_of(c);
  if (kind == "training_mfu" && c.has("launch")) r.options.launch = launch_of(c);
  // attention_kernel (training_mfu): the measured stack's fused attention generation,
  // native (default), flash2 or flash1 (pf::AttentionKernel).
  if (c.has("attention_kernel"))
    r.options.attention_kernel =
        choice_of(c, "attention_kernel", pf::attention_kernel_from_string, "expected native, flash2 or flash1");
  // optimizer (training_mfu): the measured stack's Adam update, fused (default) or unfused
  // (pf::OptimizerKernel).
  if (c.has("optimizer"))
    r.optimizer = choice_of(c, "optimizer", pf::optimizer_kernel_from_string, "expected fused or unfused");
  // gradient_reduce_precision (training_mfu): the precision the data-parallel gradient
  // reduction moves where the stack does not reduce in the weights' (pf::SystemRequest).
  if (c.has("gradient_reduce_precision"))
    r.gradient_reduce_precision =
        io::as_precision(c.node("gradient_reduce_precision"), c.place("gradient_reduce_precision"));
  // loss_kernel (training_mfu): the measured stack's loss over the logits, softmax (default) or
  // fused (wl::LossKernel); logit_metrics: cross-entropies of the logits its training loop
  // evaluates per micro-batch for logging (wl::PhaseSpec::logit_metrics; default none).
  if (c.has("loss_kernel"))
    r.phase.loss_kernel = choice_of(c, "loss_kernel", wl::loss_kernel_from_string, "expected softmax or fused");
  if (c.has("logit_metrics")) r.phase.logit_metrics = static_cast<int>(c.positive_integer("logit_metrics"));
  cr.constants = (r.options.fusion_kinds ? constants_text(p, r.options.launch, kinds_text(*r.options.fusion_kinds))
                                         : constants_text(p, r.options.launch, r.options.fusion)) +
                 attention_text(p, r.options.attention_kernel) + ", tp " + std::to_string(tp);
  // A precision the chip's matrix engine lacks runs at the one the model falls back to
  // (pf::kernel_precision: fp8 on an A100 runs bf16 kernels): the constants say so.
  const std::string kernel_prec(dse::costmodel::to_string(pf::kernel_precision(p.gpu, r.phase.precision)));
  if (kernel_prec != wl::to_string(r.phase.precision))
    cr.constants += ", " + std::string(wl::to_string(r.phase.precision)) + " kernels run as " + kernel_prec;
  // llm_offline lengths: the method's (the MLPerf dataset means) unless the case gives its
  // own (a benchmark run at fixed input and output lengths).
  const int prompt = static_cast<int>(c.positive_integer_or("prompt_tokens", m.prompt));
  const int output = static_cast<int>(c.positive_integer_or("output_tokens", m.output));
  if (kind != "llm_offline")
    for (const char* key : {"prompt_tokens", "output_tokens", "per_chip"})
      if (c.has(key)) io::fail(c.place(key), c.node(key), "a key of llm_offline cases only", kind);
  // per_chip (llm_offline): the measurement is output tokens/s per chip of the TP group (as
  // TensorRT-LLM's performance tables give it), not of the whole system.
  const bool per_chip = c.boolean_or("per_chip", false);
  // The unit each kind predicts in (a wrong one compared numbers of different kinds).
  // training_mfu checks its own two below.
  if (kind == "llm_offline" || kind == "vision_offline" || kind == "encoder_offline" || kind == "decode_latency") {
    const std::string want = kind == "decode_latency" ? "s"
                             : kind != "llm_offline"  ? "samples/s"
                             : per_chip               ? "tokens/s/GPU"
                                                      : "tokens/s";
    if (cr.unit != want)
      io::fail(c.place("unit"), c.node("unit"),
               "expected " + want + " (the unit of " + kind + " cases" + (per_chip ? " with per_chip: true" : "") + ")",
               cr.unit);
  }
  if (kind == "llm_offline") {
    r.phase.phase = wl::Phase::decode;
    r.phase.batch = 1;
    r.phase.seq = 1;
    r.phase.context = prompt;
    r.serving.enabled = true;
    // The submitter's own batch limit where its configuration gives one (case key
    // max_batch): the sweep stops there and includes it. A run at one static batch
    // (case key batch) is costed at that batch only.
    r.serving.batch_sizes = m.batches;
    if (c.has("batch") && c.has("max_batch"))
      io::fail(c.place("batch"), c.node("batch"), "batch (one static batch) or max_batch (a limit), not both",
               "both given");
    if (c.has("batch")) r.serving.batch_sizes = {static_cast<int>(c.positive_integer("batch"))};
    if (c.has("max_batch")) {
      const int cap = static_cast<int>(c.positive_integer("max_batch"));
      std::erase_if(r.serving.batch_sizes, [cap](int b) { return b >= cap; });
      r.serving.batch_sizes.push_back(cap);
    }
    r.serving.prompt_tokens = prompt;
    r.serving.output_tokens = output;
    // A static-shape serving stack as the submitter configured it (ServingOptions).
    r.serving.static_kv_tokens = static_cast<int>(c.positive_integer_or("static_kv_tokens", 0));
    r.serving.prompt_bucket_tokens = static_cast<int>(c.positive_integer_or("prompt_bucket_tokens", 0));
    // A static cache shorter than a request is the case's static_kv_tokens; any other reason the
    // sweep cannot run (a TP degree that does not divide the heads, a learned position table
    // shorter than the request) is said as it is, not as a memory or cache-length problem.
    const std::string shape = pf::serving_shape_problem(r.serving);
    if (c.has("static_kv_tokens") && shape.rfind("static_kv_tokens", 0) == 0)
      io::fail(c.place("static_kv_tokens"), c.node("static_kv_tokens"), "expected at least prompt + output tokens",
               shape);
    const pf::SystemEval e = pf::evaluate_system(p, sys, r);
    if (!e.feasible) throw InputError(cr.name + ": " + e.reason);
    if (!e.serving.reason.empty()) throw InputError(cr.name + ": " + e.serving.reason);
    double best = 0.0;
    int best_b = 0;
    for (const auto& s : e.serving.sweep) {
      const double rate = per_chip ? s.tokens_per_s_per_chip : s.tokens_per_s_system;
      if (s.batch <= std::max(1, e.serving.max_batch_fitting) && rate > best) {
        best = rate;
        best_b = s.batch;
      }
    }
    if (best_b == 0)
      throw InputError(cr.name + ": no batch of the case fits memory (at most " +
                       std::to_string(e.serving.max_batch_fitting) + " sequences)");
    // replicas: the system's chips over the TP group (8 / tp)
    const int replicas = per_chip ? 1 : std::max(1, sys.chips / tp);
    cr.predicted = best * replicas;
    cr.constants += (c.has("batch") ? ", static batch " : ", best static batch ") + std::to_string(best_b) +
                    (c.has("max_batch") ? " (of at most " + std::to_string(r.serving.batch_sizes.back()) + ")" : std::string()) +
                    (per_chip ? ", per chip" : ", " + std::to_string(replicas) + " replica(s)") + ", " +
                    std::to_string(prompt) + " + " + std::to_string(output) + " tokens per sample" +
                    (r.serving.prompt_bucket_tokens > 0
                         ? ", prompts padded to multiples of " + std::to_string(r.serving.prompt_bucket_tokens)
                         : std::string()) +
                    (r.serving.static_kv_tokens > 0
                         ? ", static KV cache of " + std::to_string(r.serving.static_kv_tokens) + " positions"
                         : std::string()) +
                    (r.phase.kv_read_per_query_head ? ", decode attention reads KV per query head" : std::string()) +
                    (!r.phase.vocab_parallel && tp > 1 ? ", embedding and lm_head replicated on every chip"
                                                       : std::string());
  } else if (kind == "vision_offline" || kind == "encoder_offline") {
    r.phase.phase = wl::Phase::prefill;
    r.phase.batch = m.vision_batch;
    r.phase.seq = c.positive_integer_or("seq", 1);
    const pf::SystemEval e = pf::evaluate_system(p, sys, r);
    if (!e.feasible) throw InputError(cr.name + ": " + e.reason);
    cr.predicted = static_cast<double>(m.vision_batch) / e.step_latency_s;
    cr.constants += ", batch " + std::to_string(m.vision_batch) + memory_text(p, e);
  } else if (kind == "decode_latency") {
    r.phase.phase = wl::Phase::decode;
    r.phase.batch = c.positive_integer_or("batch", 1);
    r.phase.seq = 1;
    r.phase.context = c.positive_integer("context");
    const pf::SystemEval e = pf::evaluate_system(p, sys, r);
    if (!e.feasible) throw InputError(cr.name + ": " + e.reason);
    cr.predicted = e.step_latency_s;
    cr.constants += memory_text(p, e);
  } else if (kind == "training_mfu") {
    r.phase.phase = wl::Phase::training;
    r.phase.batch = c.positive_integer("batch");
    r.phase.seq = c.positive_integer("seq");
    // Activation recomputation of the cited run: none, selective (attention
    // core, Korthikanti et al. 2022), minimal (all but the projections and
    // collectives, JAX's dots policy) or full (every checkpointed layer).
    const std::string rc = c.string_or("recompute", "none");
    if (!wl::apply_recompute(rc, r.phase))
      io::fail(c.place("recompute"), c.node("recompute"), "expected none, selective, minimal or full", rc);
    const pf::SystemEval e = pf::evaluate_system(p, sys, r);
    if (!e.feasible) throw InputError(cr.name + ": " + e.reason);
    // MFU over the whole step: model FLOPs of m micro-batches on one TP rank of
    // the pipeline (the chip graph is the whole model at TP degree tp, so each of
    // the pp stages holds 1/pp of it) / (pp x step time x peak). The step holds
    // the (p-1)/(m+p-1) pipeline bubble, stage sends and exposed collectives.
    // Model FLOPs exclude the recomputed forward operators (they count in HFU,
    // not MFU); the step time includes them.
    // unit tokens/s/chip instead: the step's tokens (m micro-batches of `batch` sequences
    // of `seq`) over its time, per chip of the tp x pp chips that run them (what training
    // benchmark tables such as llm-foundry's give as tokens/s/GPU).
    if (cr.unit != "mfu" && cr.unit != "tokens/s/chip")
      io::fail(c.place("unit"), c.node("unit"), "expected mfu or tokens/s/chip (a training_mfu case)", cr.unit);
    const double peak = p.gpu.peak_matrix_flops_per_s(pf::kernel_precision(p.gpu, r.phase.precision));
    if (cr.unit == "mfu")
      cr.predicted = e.step_latency_s > 0 && peak > 0
                         ? model_flops(e.chip) * static_cast<double>(micro) /
                               (static_cast<double>(pp) * e.step_latency_s * peak)
                         : 0.0;
    else
      cr.predicted = e.step_latency_s > 0 ? static_cast<double>(micro) * static_cast<double>(r.phase.batch) *
                                                static_cast<double>(r.phase.seq) /
                                                (e.step_latency_s * static_cast<double>(tp) * static_cast<double>(pp))
                                          : 0.0;
    const double optimizer_bytes =
        pf::optimizer_update_bytes_per_parameter(r.optimizer, r.phase.precision != wl::Precision::fp32);
    // The data-parallel collectives: their time per step and how much of it is hidden.
    const std::string dp_comm = fmt(1e3 * e.step.dp_comm_s, 4) + " ms per step, " +
                                (r.overlap.data > 0 ? fmt(100 * r.overlap.data, 3) + "% hidden)" : "exposed)");
    std::string sharded;
    // Hybrid sharding: the groups the states are sharded over, and the all-reduce across their copies.
    const std::string hybrid = r.shard_group > 0 && r.shard_group < dp
                                   ? " over groups of " + std::to_string(r.shard_group) + ", all-reduce across the " +
                                         std::to_string(dp / r.shard_group) + " copies " +
                                         fmt(1e3 * e.step.dp_replica_comm_s, 4) + " ms per step"
                                   : std::string();
    if (r.shard_states)
      sharded = (r.flat_parameter ? " (states sharded" + hybrid + ": FSDP FlatParameter, copies " +
                                        fmt(1e3 * e.step.shard_copies_s, 4) + " ms exposed, collectives "
                                  : " (states sharded" + hybrid + ": ZeRO-3 / FSDP, collectives ") +
                dp_comm;
    else if (dp > 1)
      sharded = " (gradient all-reduce " + dp_comm;
    cr.constants += ", pp " + std::to_string(pp) + (dp > 1 ? ", dp " + std::to_string(dp) : std::string()) + sharded +
                    (virtual_stages > 1 ? " interleaved x" + std::to_string(virtual_stages) : std::string()) +
                    (r.gradient_reduce_precision
                         ? ", gradients reduced in " + std::string(wl::to_string(*r.gradient_reduce_precision))
                         : std::string()) +
                    (max_positions > 0 ? ", learned position table " + std::to_string(max_positions)
                                       : std::string()) +
                    ", micro-batches " + std::to_string(micro) + " of " +
                    std::to_string(r.phase.batch) + " (bubble " + fmt(100 * e.step.bubble_fraction, 3) +
                    "%), recompute " + rc + ", optimizer " + std::string(pf::to_string(r.optimizer)) + " (" +
                    fmt(optimizer_bytes, 3) + " B per parameter, " + fmt(1e3 * e.step.optimizer_s, 4) + " ms per step)" +
                    ", loss " + std::string(wl::to_string(r.phase.loss_kernel)) +
                    (r.phase.logit_metrics > 0
                         ? ", logit metrics " + std::to_string(r.phase.logit_metrics) + " per micro-batch (" +
                               fmt(1e3 * logit_metrics_s(e.chip) * static_cast<double>(micro), 4) + " ms per step)"
                         : std::string()) +
                    // Where the step's time goes (to tell a compute-phase gap from a
                    // communication or power one): the micro-batches' compute share of the
                    // step at the nominal clock, and the clock the TDP allows.
                    ", compute " + fmt(e.step.step_time_s > 0 ? 100 * e.step.compute_s / e.step.step_time_s : 0.0, 3) +
                    "% of the step, clock " + fmt(100 * e.power.throttle_factor, 3) + "% of nominal" +
                    memory_text(p, e);
  } else {
    throw InputError(cr.name + ": unknown kind " + kind);
  }
  if (kind == "llm_offline" || kind == "vision_offline" || kind == "encoder_offline")
    cr.benchmark = kind + ":" + c.string("workload");
  // Training throughput of one workload, micro-batch and length on several platforms.
  if (kind == "training_mfu" && cr.unit == "tokens/s/chip")
    cr.benchmark = kind + ":" + c.string("workload") + ":b" + std::to_string(r.phase.batch) + ":s" +
                   std::to_string(r.phase.seq);
  // A run at its own lengths is its own benchmark (rank order within it only).
  if (kind == "llm_offline" && (c.has("prompt_tokens") || c.has("output_tokens")))
    cr.benchmark += ":" + std::to_string(prompt) + "/" + std::to_string(output);
  cr.error = (cr.predicted - cr.measured) / cr.measured;
  return cr;
}

}  // namespace

std::vector<CaseResult> evaluate_suite(const std::string& path, const std::vector<std::string>& only) {
  const std::string text = io::read_text_file(path, "validation suite");
  const YAML::Node root = io::parse_yaml(text, path);
  const io::MapReader top(root, io::Place{path, ""}, {"measured_dir", "method", "cases"});
  const std::string suite_dir = fs::path(path).parent_path().string();
  std::string measured_dir = (fs::path(suite_dir) / top.string("measured_dir")).string();
  if (const char* e = std::getenv("DSE_ORACLES_DIR"); e != nullptr && *e != '\0')
    measured_dir = (fs::path(e) / "measured").string();

  Method m;
  if (top.has("method")) {
    const io::MapReader mr(top.node("method"), top.place("method"),
                           {"operators", "end_to_end", "training", "llm_steps", "llm_offline", "vision_batch"});
    const io::MapReader ops(mr.node("operators"), mr.place("operators"), {"launch", "fusion"});
    m.op_launch = launch_of(ops);
    m.op_fusion = fusion_of(ops);
    const io::MapReader e2e(mr.node("end_to_end"), mr.place("end_to_end"), {"launch", "fusion"});
    m.e2e_launch = launch_of(e2e);
    m.e2e_fusion = fusion_of(e2e);
    if (mr.has("training")) {
      const io::MapReader tr(mr.node("training"), mr.place("training"), {"fusion"});
      m.train_fusion = fusion_of(tr);
    }
    if (mr.has("llm_steps")) {
      const io::MapReader st(mr.node("llm_steps"), mr.place("llm_steps"), {"launch", "fusions"});
      m.step_launch = launch_of(st);
      if (st.has("fusions")) m.step_fusions = fusions_of(st);
    }
    const io::MapReader llm(mr.node("llm_offline"), mr.place("llm_offline"),
                            {"prompt_tokens", "output_tokens", "batches"});
    m.prompt = static_cast<int>(llm.positive_integer("prompt_tokens"));
    m.output = static_cast<int>(llm.positive_integer("output_tokens"));
    m.batches.clear();
    const YAML::Node bs = llm.sequence("batches");
    for (std::size_t i = 0; i < bs.size(); ++i)
      m.batches.push_back(static_cast<int>(io::as_positive_integer(bs[i], llm.place("batches").item(i))));
    m.vision_batch = mr.positive_integer("vision_batch");
  }

  std::vector<CaseResult> cases;
  std::set<std::string> suite_groups;  // every case's group, for --group's check
  // One cache for the run's loop-nest cases: a layer that several cases run (per layer, per network, frames/s
  // and J/frame) is mapped once; a cached result is the one a fresh search returns, its evaluations included.
  dse::costmodel::mapper::MapperCache mapper_cache;
  const YAML::Node list = top.sequence("cases");
  for (std::size_t i = 0; i < list.size(); ++i) {
    // A serving case takes its own keys (validate_cases.hpp kServingCaseKeys).
    if (list[i].IsMap() && list[i]["kind"].IsScalar() && is_serving_kind(list[i]["kind"].Scalar())) {
      const io::MapReader c(list[i], top.place("cases").item(i), kServingCaseKeys);
      suite_groups.insert(c.string("group"));
      if (only.empty() || std::find(only.begin(), only.end(), c.string("group")) != only.end())
        cases.push_back(serving_case(c, suite_dir, m));
      continue;
    }
    const io::MapReader c(list[i], top.place("cases").item(i),
                          {"name", "kind", "group", "op", "file", "dir", "hardware", "system", "workload", "precision",
                           "tp", "pp", "dp", "sharding", "shard_group", "sequence_parallel", "micro_batches",
                           "virtual_stages", "batch", "max_batch", "seq", "context", "recompute", "measured", "unit",
                           "static_kv_tokens", "prompt_bucket_tokens", "prompt_tokens", "output_tokens", "per_chip",
                           "decode_attention", "vocab", "column", "max_positions", "gradient_reduce_precision",
                           "fusions", "launch", "attention_kernel", "optimizer", "loss_kernel", "logit_metrics", "overlap_data",
                           "layers", "images", "backend", "ops", "phase", "at", "source"});
    if (c.has("fusions") && c.string("kind") != "llm_step_csv" && c.string("kind") != "training_mfu" &&
        c.string("kind") != "llm_offline" && c.string("kind") != "power")
      io::fail(c.place("fusions"), c.node("fusions"),
               "a key of llm_step_csv, training_mfu, llm_offline and power cases only", c.string("kind"));
    for (const char* key : {"ops", "phase", "at"})
      if (c.has(key) && c.string("kind") != "power")
        io::fail(c.place(key), c.node(key), "a key of power cases only", c.string("kind"));
    for (const char* key :
         {"launch", "dp", "sharding", "shard_group", "sequence_parallel", "attention_kernel", "optimizer",
          "loss_kernel", "logit_metrics", "overlap_data", "max_positions", "gradient_reduce_precision"})
      if (c.has(key) && c.string("kind") != "training_mfu" &&
          !(c.string("kind") == "attention_csv" && std::string(key) == "attention_kernel"))
        io::fail(c.place(key), c.node(key),
                 std::string("a key of training_mfu cases only") +
                     (std::string(key) == "attention_kernel" ? " (and attention_csv)" : ""),
                 c.string("kind"));
    if (c.has("backend") && c.string("kind") != "attention_csv")
      io::fail(c.place("backend"), c.node("backend"), "a key of attention_csv cases only", c.string("kind"));
    // A loopnest_network case takes its own keys only; `layers` and `images` are its keys alone.
    const bool network = c.string("kind") == "loopnest_network";
    for (const char* key : {"layers", "images"})
      if (c.has(key) && !network)
        io::fail(c.place(key), c.node(key), "a key of loopnest_network cases only", c.string("kind"));
    if (network)  // reopened with its keys only: any other is refused with the allowed list
      (void)io::MapReader(list[i], top.place("cases").item(i),
                          {"name", "kind", "group", "hardware", "layers", "images", "measured", "unit", "source"});
    suite_groups.insert(c.string("group"));
    if (!only.empty() && std::find(only.begin(), only.end(), c.string("group")) == only.end()) continue;
    if (c.string("kind") == "operator_csv") {
      // dir: oracles (default: data/oracles/measured) or suite (beside this file, e.g.
      // measurements written by scripts/measure_gpu.py).
      const std::string where = c.string_or("dir", "oracles");
      if (where != "oracles" && where != "suite") io::fail(c.place("dir"), c.node("dir"), "expected oracles or suite", where);
      operator_cases(c, where == "suite" ? suite_dir : measured_dir, m, cases);
    } else if (c.string("kind") == "loopnest_network") {
      cases.push_back(loopnest_network_case(c, mapper_cache));
    } else if (c.string("kind") == "attention_csv") {
      attention_cases(c, suite_dir, cases);
    } else if (c.string("kind") == "power") {
      cases.push_back(power_case(c, suite_dir, m));
    } else if (c.string("kind") == "llm_step_csv") {
      // Measurements written by scripts/measure_gpu.py, beside this file.
      llm_step_cases(c, suite_dir, m, cases);
    } else {
      cases.push_back(model_case(c, suite_dir, m));
    }
  }

  for (const auto& g : only) {
    if (suite_groups.count(g) != 0) continue;
    const std::vector<std::string> names(suite_groups.begin(), suite_groups.end());
    const std::string hint = io::did_you_mean(g, names);
    throw InputError("--group: expected a group of " + path + " (" + io::join(names) + ")" +
                     (hint.empty() ? std::string() : ", did you mean '" + hint + "'?") + " (got '" + g + "')");
  }
  return cases;
}

}  // namespace dse::cli::validation
