// The cases of `dse validate` that a workload drives through the system model (model_case):
// offline LLM serving throughput (llm_offline), vision and encoder throughput (vision_offline,
// encoder_offline), one decode step's latency (decode_latency) and training MFU or tokens/s/chip
// (training_mfu). model_case_setup reads what every kind shares (platform, system, parallelism,
// stack, precision); one function per kind poses its step and reads its prediction.
#include <algorithm>
#include <optional>

#include "costmodel/platform/system.hpp"
#include "dse/error.hpp"
#include "dse/io/platform_reader.hpp"
#include "dse/validate/validate_cases.hpp"

namespace dse::cli::validation {

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

// What every model-driven kind reads from its case before it poses its step: the chip, the
// system and the request (workload, parallelism, stack, precision), the case's figures and the
// constants line so far.
struct ModelCase {
  CaseResult cr;
  std::string kind;
  pf::Platform p;
  pf::SystemSpec sys;
  pf::SystemRequest r;
  int tp = 1, pp = 1, dp = 1, micro = 1, virtual_stages = 1;
  std::int64_t max_positions = 0;  // the run's learned position table (0: the workload's own)
  int prompt = 0, output = 0;      // llm_offline: tokens per sample
  bool per_chip = false;           // llm_offline: output tokens/s per chip of the TP group
};

// The case's chip and system: a system preset or file (`system`), else a switch of the tp x pp x dp
// chips of the `hardware` preset on the chip's own links; also that switch when the pipeline is
// longer than the system preset (e.g. PP across DGX nodes: stage sends are small).
void read_system(const io::MapReader& c, ModelCase& mc) {
  const int chips = mc.tp * mc.pp * mc.dp;
  if (c.has("system")) {
    io::SystemFile sf = io::resolve_system(io::preset_at(c, "system", "systems"));
    mc.p = sf.chip;
    mc.sys = sf.system;
  } else {
    mc.p = platform_of(c);
    mc.sys = pf::default_system(mc.p, chips);
  }
  if (chips > mc.sys.chips) mc.sys = pf::default_system(mc.p, chips);
}

// max_positions (training_mfu): the learned position table of the run, for a benchmark that sizes
// it to each run's length (llm-foundry's max_seq_len); the workload file gives the model's own.
void read_max_positions(const io::MapReader& c, ModelCase& mc) {
  mc.max_positions = c.has("max_positions") ? c.positive_integer("max_positions") : 0;
  if (mc.max_positions <= 0) return;
  auto* t = std::get_if<wl::TransformerSpec>(&mc.r.spec);
  if (t == nullptr || t->position != wl::PositionEncoding::learned)
    io::fail(c.place("max_positions"), c.node("max_positions"), "a key of workloads with learned positions only",
             c.string("workload"));
  t->max_positions = mc.max_positions;
}

// The request's parallelism: degrees, state sharding (`sharding`, already checked) and its
// hybrid `shard_group`, the hidden share of the data-parallel collectives, sequence parallelism
// and the pipeline's micro-batches and virtual stages.
void read_parallelism(const io::MapReader& c, const std::string& sharding, bool shard_states, ModelCase& mc) {
  pf::SystemRequest& r = mc.r;
  r.degrees.tp = mc.tp;
  r.degrees.pp = mc.pp;
  r.degrees.dp = mc.dp;
  r.shard_states = shard_states;
  r.flat_parameter = pf::flat_parameter_sharding(sharding);
  // shard_group (training_mfu, with sharding): hybrid sharding, the states sharded over groups of
  // this many of the dp chips and the dp / shard_group copies all-reducing their shards.
  if (c.has("shard_group")) {
    const std::int64_t g = c.positive_integer("shard_group");
    if (!shard_states)
      io::fail(c.place("shard_group"), c.node("shard_group"), "a key of cases with sharding full or fsdp", sharding);
    if (mc.dp % g != 0)
      io::fail(c.place("shard_group"), c.node("shard_group"), "expected a divisor of dp = " + std::to_string(mc.dp),
               std::to_string(g));
    r.shard_group = static_cast<int>(g);
  }
  // overlap_data (training_mfu): the share of the data-parallel collectives hidden under
  // compute (system::OverlapFractions::data; default 0, all exposed).
  if (c.has("overlap_data")) r.overlap.data = c.fraction("overlap_data");
  // sequence_parallel: true (training_mfu): Megatron-LM's sequence parallelism (memory only).
  r.sequence_parallel = c.boolean_or("sequence_parallel", false);
  r.micro_batches = mc.micro;
  r.virtual_stages = mc.virtual_stages;
}

// How the measured stack's decode kernels read memory (llm_offline and decode_latency only).
void read_decode_kernels(const io::MapReader& c, const std::string& kind, pf::SystemRequest& r) {
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
}

// The measured stack's kernels: its fusions and launch (the method's end-to-end ones unless the
// case or, for training, the method's training block names others), attention kernel, optimizer
// update, gradient-reduction precision and loss kernel.
void read_stack(const io::MapReader& c, const std::string& kind, const Method& m, pf::SystemRequest& r) {
  // A training case's stack: the method's training fusion at the end-to-end launch, or the
  // measured stack's own `fusions` (the kinds it applies) and `launch` (framework: eager PyTorch).
  // An llm_offline case may name its stack's fusions too (torch.compile: norm_residual and the
  // attention, no GEMM epilogues), in place of the end-to-end method's aggressive set, and its
  // launch (vLLM's --enforce-eager: framework).
  if (kind == "training_mfu" && m.train_fusion) r.options.fusion = *m.train_fusion;
  if ((kind == "training_mfu" || kind == "llm_offline") && c.has("fusions")) r.options.fusion_kinds = fusions_of(c);
  if ((kind == "training_mfu" || kind == "llm_offline") && c.has("launch")) r.options.launch = launch_of(c);
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
}

// The constants line every model-driven kind starts with: the chip's constants at the stack's
// launch and fusions, its attention kernel, the TP degree, and a precision the chip's matrix
// engine lacks, run at the one the model falls back to (pf::kernel_precision: fp8 on an A100
// runs bf16 kernels).
std::string stack_constants(const ModelCase& mc) {
  const pf::Platform& p = mc.p;
  const pf::SystemRequest& r = mc.r;
  std::string s = (r.options.fusion_kinds ? constants_text(p, r.options.launch, kinds_text(*r.options.fusion_kinds))
                                          : constants_text(p, r.options.launch, r.options.fusion)) +
                  attention_text(p, r.options.attention_kernel) + ", tp " + std::to_string(mc.tp);
  const std::string kernel_prec(dse::costmodel::to_string(pf::kernel_precision(p.gpu, r.phase.precision)));
  if (kernel_prec != wl::to_string(r.phase.precision))
    s += ", " + std::string(wl::to_string(r.phase.precision)) + " kernels run as " + kernel_prec;
  return s;
}

// llm_offline's lengths and per_chip (keys of that kind only), and the unit each inference kind
// predicts in (a wrong one compared numbers of different kinds; training_mfu checks its own two).
void read_inference_keys(const io::MapReader& c, const Method& m, ModelCase& mc) {
  const std::string& kind = mc.kind;
  // llm_offline lengths: the method's (the MLPerf dataset means) unless the case gives its
  // own (a benchmark run at fixed input and output lengths).
  mc.prompt = static_cast<int>(c.positive_integer_or("prompt_tokens", m.prompt));
  mc.output = static_cast<int>(c.positive_integer_or("output_tokens", m.output));
  if (kind != "llm_offline")
    for (const char* key : {"prompt_tokens", "output_tokens", "per_chip"})
      if (c.has(key)) io::fail(c.place(key), c.node(key), "a key of llm_offline cases only", kind);
  // per_chip (llm_offline): the measurement is output tokens/s per chip of the TP group (as
  // TensorRT-LLM's performance tables give it), not of the whole system.
  mc.per_chip = c.boolean_or("per_chip", false);
  if (kind == "llm_offline" || kind == "vision_offline" || kind == "encoder_offline" || kind == "decode_latency") {
    const std::string want = kind == "decode_latency" ? "s"
                             : kind != "llm_offline"  ? "samples/s"
                             : mc.per_chip            ? "tokens/s/GPU"
                                                      : "tokens/s";
    if (mc.cr.unit != want)
      io::fail(c.place("unit"), c.node("unit"),
               "expected " + want + " (the unit of " + kind + " cases" + (mc.per_chip ? " with per_chip: true" : "") +
                   ")",
               mc.cr.unit);
  }
}

// Everything a model-driven case reads before its kind poses the step, in the order its keys are
// checked (the first bad key is the one reported).
ModelCase model_case_setup(const io::MapReader& c, const std::string& suite_dir, const Method& m) {
  ModelCase mc;
  mc.cr = case_of(c);
  mc.kind = c.string("kind");
  mc.tp = static_cast<int>(c.positive_integer_or("tp", 1));
  mc.pp = static_cast<int>(c.positive_integer_or("pp", 1));
  mc.micro = static_cast<int>(c.positive_integer_or("micro_batches", 1));
  mc.virtual_stages = static_cast<int>(c.positive_integer_or("virtual_stages", 1));
  // dp, sharding (training_mfu cases): data-parallel replicas and whether they shard the
  // states (full: ZeRO-3 / FSDP FULL_SHARD, costmodel/system/parallelism.hpp).
  mc.dp = static_cast<int>(c.positive_integer_or("dp", 1));
  const std::string sharding = c.string_or("sharding", "none");
  const std::optional<bool> shard_states = pf::shard_states_from_string(sharding);
  if (!shard_states) io::fail(c.place("sharding"), c.node("sharding"), "expected none, full or fsdp", sharding);
  read_system(c, mc);
  mc.r.spec = case_workload(c, suite_dir);
  read_max_positions(c, mc);
  read_parallelism(c, sharding, *shard_states, mc);
  mc.r.options.fusion = m.e2e_fusion;
  mc.r.options.launch = m.e2e_launch;
  const auto prec = wl::precision_from_string(c.string_or("precision", "bf16"));
  if (!prec) throw InputError(mc.cr.name + ": unknown precision");
  mc.r.phase.precision = *prec;
  mc.r.serving.enabled = false;
  read_decode_kernels(c, mc.kind, mc.r);
  read_stack(c, mc.kind, m, mc.r);
  mc.cr.constants = stack_constants(mc);
  read_inference_keys(c, m, mc);
  return mc;
}

pf::SystemEval evaluate_or_throw(const ModelCase& mc) {
  pf::SystemEval e = pf::evaluate_system(mc.p, mc.sys, mc.r);
  if (!e.feasible) throw InputError(mc.cr.name + ": " + e.reason);
  return e;
}

// llm_offline's serving sweep: the batch sizes it tries (the method's, or the case's one static
// `batch`, or the method's below the submitter's `max_batch` and that limit), the lengths and a
// static-shape stack as the submitter configured it (ServingOptions).
void pose_offline_serving(const io::MapReader& c, const Method& m, ModelCase& mc) {
  pf::SystemRequest& r = mc.r;
  r.phase.phase = wl::Phase::decode;
  r.phase.batch = 1;
  r.phase.seq = 1;
  r.phase.context = mc.prompt;
  r.serving.enabled = true;
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
  r.serving.prompt_tokens = mc.prompt;
  r.serving.output_tokens = mc.output;
  r.serving.static_kv_tokens = static_cast<int>(c.positive_integer_or("static_kv_tokens", 0));
  r.serving.prompt_bucket_tokens = static_cast<int>(c.positive_integer_or("prompt_bucket_tokens", 0));
  // stack: the serving runtime the submitter ran (scenarios/stacks; its per-step and per-sequence
  // host cost on every prefill and decode step), default the system file's.
  if (c.has("stack")) r.serving.stack = io::resolve_stack(c.string("stack"));
  // A static cache shorter than a request is the case's static_kv_tokens; any other reason the
  // sweep cannot run (a TP degree that does not divide the heads, a learned position table
  // shorter than the request) is said as it is, not as a memory or cache-length problem.
  const std::string shape = pf::serving_shape_problem(r.serving);
  if (c.has("static_kv_tokens") && shape.rfind("static_kv_tokens", 0) == 0)
    io::fail(c.place("static_kv_tokens"), c.node("static_kv_tokens"), "expected at least prompt + output tokens",
             shape);
}

// llm_offline: the best throughput of the sweep's batches that fit memory, per chip or times the
// system's replicas (its chips over the TP group).
void llm_offline_case(const io::MapReader& c, const Method& m, ModelCase& mc) {
  pose_offline_serving(c, m, mc);
  const pf::SystemRequest& r = mc.r;
  const pf::SystemEval e = evaluate_or_throw(mc);
  if (!e.serving.reason.empty()) throw InputError(mc.cr.name + ": " + e.serving.reason);
  double best = 0.0;
  int best_b = 0;
  for (const auto& s : e.serving.sweep) {
    const double rate = mc.per_chip ? s.tokens_per_s_per_chip : s.tokens_per_s_system;
    if (s.batch <= std::max(1, e.serving.max_batch_fitting) && rate > best) {
      best = rate;
      best_b = s.batch;
    }
  }
  if (best_b == 0)
    throw InputError(mc.cr.name + ": no batch of the case fits memory (at most " +
                     std::to_string(e.serving.max_batch_fitting) + " sequences)");
  const int replicas = mc.per_chip ? 1 : std::max(1, mc.sys.chips / mc.tp);
  mc.cr.predicted = best * replicas;
  mc.cr.constants +=
      (c.has("batch") ? ", static batch " : ", best static batch ") + std::to_string(best_b) +
      (c.has("max_batch") ? " (of at most " + std::to_string(r.serving.batch_sizes.back()) + ")" : std::string()) +
      (mc.per_chip ? ", per chip" : ", " + std::to_string(replicas) + " replica(s)") + ", " +
      std::to_string(mc.prompt) + " + " + std::to_string(mc.output) + " tokens per sample" +
      (r.serving.stack ? ", stack " + r.serving.stack->name + " (" + fmt(r.serving.stack->step_s * 1e3) + " ms + " +
                             fmt(r.serving.stack->per_sequence_s * 1e3) + " ms per sequence each iteration)"
                       : std::string()) +
      (r.serving.prompt_bucket_tokens > 0
           ? ", prompts padded to multiples of " + std::to_string(r.serving.prompt_bucket_tokens)
           : std::string()) +
      (r.serving.static_kv_tokens > 0
           ? ", static KV cache of " + std::to_string(r.serving.static_kv_tokens) + " positions"
           : std::string()) +
      (r.phase.kv_read_per_query_head ? ", decode attention reads KV per query head" : std::string()) +
      (!r.phase.vocab_parallel && mc.tp > 1 ? ", embedding and lm_head replicated on every chip" : std::string());
}

// vision_offline, encoder_offline: samples/s of one prefill step at the method's batch.
void offline_batch_case(const io::MapReader& c, const Method& m, ModelCase& mc) {
  mc.r.phase.phase = wl::Phase::prefill;
  mc.r.phase.batch = m.vision_batch;
  mc.r.phase.seq = c.positive_integer_or("seq", 1);
  const pf::SystemEval e = evaluate_or_throw(mc);
  mc.cr.predicted = static_cast<double>(m.vision_batch) / e.step_latency_s;
  mc.cr.constants += ", batch " + std::to_string(m.vision_batch) + memory_text(mc.p, e);
}

// decode_latency: one decode step's time at the case's batch and context.
void decode_latency_case(const io::MapReader& c, ModelCase& mc) {
  mc.r.phase.phase = wl::Phase::decode;
  mc.r.phase.batch = c.positive_integer_or("batch", 1);
  mc.r.phase.seq = 1;
  mc.r.phase.context = c.positive_integer("context");
  const pf::SystemEval e = evaluate_or_throw(mc);
  mc.cr.predicted = e.step_latency_s;
  mc.cr.constants += memory_text(mc.p, e);
}

// A training step's data parallelism as the constants say it: the states sharded (over hybrid
// groups, FSDP's FlatParameter copies) or the gradient all-reduce, and its collectives' time per
// step and hidden share ("" for one replica without sharding).
std::string data_parallel_text(const ModelCase& mc, const pf::SystemEval& e) {
  const pf::SystemRequest& r = mc.r;
  const std::string dp_comm = fmt(1e3 * e.step.dp_comm_s, 4) + " ms per step, " +
                              (r.overlap.data > 0 ? fmt(100 * r.overlap.data, 3) + "% hidden)" : "exposed)");
  const std::string hybrid = r.shard_group > 0 && r.shard_group < mc.dp
                                 ? " over groups of " + std::to_string(r.shard_group) + ", all-reduce across the " +
                                       std::to_string(mc.dp / r.shard_group) + " copies " +
                                       fmt(1e3 * e.step.dp_replica_comm_s, 4) + " ms per step"
                                 : std::string();
  if (r.shard_states)
    return (r.flat_parameter ? " (states sharded" + hybrid + ": FSDP FlatParameter, copies " +
                                   fmt(1e3 * e.step.shard_copies_s, 4) + " ms exposed, collectives "
                             : " (states sharded" + hybrid + ": ZeRO-3 / FSDP, collectives ") +
           dp_comm;
  if (mc.dp > 1) return " (gradient all-reduce " + dp_comm;
  return "";
}

// The rest of a training case's constants line: pipeline, data parallelism, micro-batches and
// bubble, recomputation, optimizer and loss, and where the step's time goes (to tell a
// compute-phase gap from a communication or power one: the micro-batches' compute share of the
// step at the nominal clock, and the clock the TDP allows).
std::string training_constants(const ModelCase& mc, const pf::SystemEval& e, const std::string& recompute) {
  const pf::SystemRequest& r = mc.r;
  const double optimizer_bytes =
      pf::optimizer_update_bytes_per_parameter(r.optimizer, r.phase.precision != wl::Precision::fp32);
  return ", pp " + std::to_string(mc.pp) + (mc.dp > 1 ? ", dp " + std::to_string(mc.dp) : std::string()) +
         data_parallel_text(mc, e) +
         (mc.virtual_stages > 1 ? " interleaved x" + std::to_string(mc.virtual_stages) : std::string()) +
         (r.gradient_reduce_precision
              ? ", gradients reduced in " + std::string(wl::to_string(*r.gradient_reduce_precision))
              : std::string()) +
         (mc.max_positions > 0 ? ", learned position table " + std::to_string(mc.max_positions) : std::string()) +
         ", micro-batches " + std::to_string(mc.micro) + " of " + std::to_string(r.phase.batch) + " (bubble " +
         fmt(100 * e.step.bubble_fraction, 3) + "%), recompute " + recompute + ", optimizer " +
         std::string(pf::to_string(r.optimizer)) + " (" + fmt(optimizer_bytes, 3) + " B per parameter, " +
         fmt(1e3 * e.step.optimizer_s, 4) + " ms per step)" + ", loss " +
         std::string(wl::to_string(r.phase.loss_kernel)) +
         (r.phase.logit_metrics > 0
              ? ", logit metrics " + std::to_string(r.phase.logit_metrics) + " per micro-batch (" +
                    fmt(1e3 * logit_metrics_s(e.chip) * static_cast<double>(mc.micro), 4) + " ms per step)"
              : std::string()) +
         ", compute " + fmt(e.step.step_time_s > 0 ? 100 * e.step.compute_s / e.step.step_time_s : 0.0, 3) +
         "% of the step, clock " + fmt(100 * e.power.throttle_factor, 3) + "% of nominal" + memory_text(mc.p, e);
}

// training_mfu: one training step of m micro-batches at the case's batch, length and recomputation.
// unit mfu: model FLOPs of the m micro-batches on one TP rank of the pipeline (the chip graph is
// the whole model at TP degree tp, so each of the pp stages holds 1/pp of it) / (pp x step time x
// peak). The step holds the (p-1)/(m+p-1) pipeline bubble, stage sends and exposed collectives.
// Model FLOPs exclude the recomputed forward operators (they count in HFU, not MFU); the step
// time includes them. unit tokens/s/chip: the step's tokens (m micro-batches of `batch` sequences
// of `seq`) over its time, per chip of the tp x pp chips that run them (what training benchmark
// tables such as llm-foundry's give as tokens/s/GPU).
void training_mfu_case(const io::MapReader& c, ModelCase& mc) {
  pf::SystemRequest& r = mc.r;
  CaseResult& cr = mc.cr;
  r.phase.phase = wl::Phase::training;
  r.phase.batch = c.positive_integer("batch");
  r.phase.seq = c.positive_integer("seq");
  // Activation recomputation of the cited run: none, selective (attention
  // core, Korthikanti et al. 2022), minimal (all but the projections and
  // collectives, JAX's dots policy) or full (every checkpointed layer).
  const std::string rc = c.string_or("recompute", "none");
  if (!wl::apply_recompute(rc, r.phase))
    io::fail(c.place("recompute"), c.node("recompute"), "expected none, selective, minimal or full", rc);
  const pf::SystemEval e = evaluate_or_throw(mc);
  if (cr.unit != "mfu" && cr.unit != "tokens/s/chip")
    io::fail(c.place("unit"), c.node("unit"), "expected mfu or tokens/s/chip (a training_mfu case)", cr.unit);
  const double peak = mc.p.gpu.peak_matrix_flops_per_s(pf::kernel_precision(mc.p.gpu, r.phase.precision));
  const double micro = static_cast<double>(mc.micro);
  if (cr.unit == "mfu")
    cr.predicted = e.step_latency_s > 0 && peak > 0
                       ? model_flops(e.chip) * micro / (static_cast<double>(mc.pp) * e.step_latency_s * peak)
                       : 0.0;
  else
    cr.predicted = e.step_latency_s > 0 ? micro * static_cast<double>(r.phase.batch) *
                                              static_cast<double>(r.phase.seq) /
                                              (e.step_latency_s * static_cast<double>(mc.tp) *
                                               static_cast<double>(mc.pp))
                                        : 0.0;
  cr.constants += training_constants(mc, e, rc);
}

// The benchmark a throughput case belongs to, for the rank-order check ("" for none): an offline
// kind and its workload; training throughput of one workload, micro-batch and length on several
// platforms; an llm_offline run at its own lengths is its own benchmark (rank order within it only).
std::string benchmark_of(const io::MapReader& c, const ModelCase& mc) {
  const std::string& kind = mc.kind;
  std::string b;
  if (kind == "llm_offline" || kind == "vision_offline" || kind == "encoder_offline")
    b = kind + ":" + c.string("workload");
  if (kind == "training_mfu" && mc.cr.unit == "tokens/s/chip")
    b = kind + ":" + c.string("workload") + ":b" + std::to_string(mc.r.phase.batch) + ":s" +
        std::to_string(mc.r.phase.seq);
  if (kind == "llm_offline" && (c.has("prompt_tokens") || c.has("output_tokens")))
    b += ":" + std::to_string(mc.prompt) + "/" + std::to_string(mc.output);
  return b;
}

}  // namespace

CaseResult model_case(const io::MapReader& c, const std::string& suite_dir, const Method& m) {
  ModelCase mc = model_case_setup(c, suite_dir, m);
  if (mc.kind == "llm_offline")
    llm_offline_case(c, m, mc);
  else if (mc.kind == "vision_offline" || mc.kind == "encoder_offline")
    offline_batch_case(c, m, mc);
  else if (mc.kind == "decode_latency")
    decode_latency_case(c, mc);
  else if (mc.kind == "training_mfu")
    training_mfu_case(c, mc);
  else
    throw InputError(mc.cr.name + ": unknown kind " + mc.kind);
  mc.cr.benchmark = benchmark_of(c, mc);
  mc.cr.error = (mc.cr.predicted - mc.cr.measured) / mc.cr.measured;
  return mc.cr;
}

}  // namespace dse::cli::validation
