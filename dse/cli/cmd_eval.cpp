// `dse eval`: one workload on one GPU-class platform (one chip or a system),
// with a per-layer mapping sheet, totals, serving, power and risk.
//
// The command reads its options into EvalArgs, then builds the request in steps, each
// refusing the options that do not apply (a training option on a decode step, a
// serving option where no serving sweep runs): the phase, the kernels and fusion, the
// platform and system, the serving sweep. A served point of `dse run` is this command
// with --phase decode --batch B --max-batch B and the point's knobs (docs/cli.md).
#include <boost/program_options.hpp>

#include <chrono>
#include <cmath>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <variant>
#include <vector>

#include "costmodel/platform/system.hpp"
#include "dse/cli/commands.hpp"
#include "dse/error.hpp"
#include "dse/io/lengths_reader.hpp"
#include "dse/io/overrides.hpp"
#include "dse/io/platform_reader.hpp"
#include "dse/io/platform_report.hpp"
#include "dse/io/workload_reader.hpp"
#include "dse/io/yaml_reader.hpp"

namespace po = boost::program_options;

namespace dse::cli {

namespace pf = dse::costmodel::platform;
namespace wl = dse::costmodel::workload;
namespace cs = dse::costmodel::system;

namespace {

struct EvalArgs {
  std::string hardware, workload, system_name, phase_name = "decode", precision_name = "bf16",
                                               fusion_name = "standard", launch_name = "graph", fusions_list,
                                               decode_attention = "per_kv_head", recompute = "none",
                                               sharding = "none", attention_kernel = "native",
                                               optimizer_name = "fused", loss_kernel = "softmax",
                                               vocab = "parallel", gradient_reduce_name, cp_comm = "ring";
  int tp = 1, pp = 1, dp = 1, ep = 1, cp = 1, static_kv = 0, prompt_bucket = 0, micro_batches = 1, virtual_stages = 1,
      logit_metrics = 0, max_batch = 0, requests = 2000;
  std::string prompt = "1024", output = "256", lengths_file, batching = "continuous", stack;
  std::vector<std::string> overrides;  // --override PATH=VALUE (dse/io/overrides.hpp)
  std::int64_t batch = 1, seq = -1, context = -1;
  std::uint64_t seed = 1;
  double rate = 0.0, sla_ttft_ms = 0.0, sla_tpot_ms = 0.0, sla_e2e_ms = 0.0, sla_p99_ms = 0.0,
         batch_timeout_ms = 0.0, overlap_data = 0.0;
  int shard_group = 0;
};

void add_model_options(po::options_description& named, EvalArgs& a) {
  named.add_options()("help,h", "print this help")(
      "hardware", po::value<std::string>(&a.hardware),
      "hardware preset name (scenarios/hardware, see 'dse presets') or a kind: gpu file; "
      "optional when --system names its chip")(
      "workload", po::value<std::string>(&a.workload)->required(), "workload preset name or workload file")(
      "system", po::value<std::string>(&a.system_name),
      "system preset name (scenarios/systems) or file; default: a switch of tp*cp*pp*dp chips on the chip's links")(
      "override", po::value<std::vector<std::string>>(&a.overrides)->composing(),
      "with --system, repeatable: PATH=VALUE sets a number of the system file (system.<keys>) or of its chip's "
      "hardware file or platform sidecar (chip.<keys>), read by their own checks, as a scenario's overrides: "
      "set it (scenarios/README.md, \"Overrides\"); e.g. --override chip.memory.hbm_peak_bandwidth_bytes_per_s=6e12")(
      "tp", po::value<int>(&a.tp)->default_value(1), "tensor-parallel degree")(
      "pp", po::value<int>(&a.pp)->default_value(1), "pipeline-parallel degree")(
      "dp", po::value<int>(&a.dp)->default_value(1), "data-parallel (replica) degree")(
      "ep", po::value<int>(&a.ep)->default_value(1), "expert-parallel degree (must divide tp*dp)")(
      "cp", po::value<int>(&a.cp)->default_value(1),
      "context-parallel degree (train, prefill; transformers): the sequence split over cp chips, each "
      "running every layer on seq / cp tokens (Megatron-LM --context-parallel-size); the chips tp*cp*pp*dp")(
      "cp-comm", po::value<std::string>(&a.cp_comm)->default_value("ring"),
      "with --cp: ring (Megatron-LM's p2p: key-value blocks passed around the CP group, each step's send "
      "overlapped with its attention; seq a multiple of 2 cp) | all_to_all (DeepSpeed-Ulysses: all-to-alls "
      "to heads / cp heads over the whole sequence and back; heads and KV heads per TP chip divisible by cp)")(
      "phase", po::value<std::string>(&a.phase_name)->default_value("decode"), "prefill | decode | train")(
      "batch", po::value<std::int64_t>(&a.batch)->default_value(1), "sequences (or images) per step")(
      "seq", po::value<std::int64_t>(&a.seq),
      "tokens per sequence (prefill/train: prompt length, default 1024; decode: new tokens, default 1)")(
      "context", po::value<std::int64_t>(&a.context), "decode: tokens already in the KV cache (default 1024)")(
      "precision", po::value<std::string>(&a.precision_name)->default_value("bf16"),
      "fp32 | bf16 | fp16 | fp8 | int8 | int4");
}

void add_training_options(po::options_description& named, EvalArgs& a) {
  named.add_options()(
      "recompute", po::value<std::string>(&a.recompute)->default_value("none"),
      "train: activation recomputation, none | selective (the attention core of each layer, "
      "Korthikanti et al. 2022) | minimal (all but each layer's projections and collectives: JAX's "
      "checkpoint_dots_with_no_batch_dims, MaxText's remat_policy minimal) | full (each layer's forward)")(
      "micro-batches", po::value<int>(&a.micro_batches)->default_value(1),
      "train: micro-batches of --batch sequences per step (the pipeline schedule's m)")(
      "virtual-stages", po::value<int>(&a.virtual_stages)->default_value(1),
      "train with --pp: model chunks per chip, > 1 for the interleaved 1F1B schedule")(
      "sharding", po::value<std::string>(&a.sharding)->default_value("none"),
      "train with --dp: none (replicated states, one gradient all-reduce per step) | full (ZeRO-3 / "
      "FSDP FULL_SHARD: states partitioned over --dp, per micro-batch two parameter all-gathers and "
      "a gradient reduce-scatter) | fsdp (full as PyTorch FSDP's FlatParameter runs it, with its "
      "gradient and shard copies around the collectives)")(
      "shard-group", po::value<int>(&a.shard_group),
      "train with --sharding full or fsdp: shard the states over groups of N (this value) of the --dp chips, "
      "N a divisor of --dp; the --dp / N groups keep copies and all-reduce their shards after each "
      "reduce-scatter (hybrid sharding: PyTorch FSDP HYBRID_SHARD, MaxText's FSDP within a TPU slice with "
      "data parallelism across slices); default all of --dp")(
      "sequence-parallel",
      "train with --tp: Megatron-LM sequence parallelism (norm and GEMM-input activations sharded over "
      "the TP group; the same collective bytes)")(
      "overlap-data", po::value<double>(&a.overlap_data)->default_value(0.0),
      "train with --dp: fraction of the data-parallel collectives (all-reduce, or with --sharding full the "
      "all-gathers and reduce-scatters, and with fsdp the copies beside them) hidden under compute, 0..1; "
      "default 0, all exposed")(
      "optimizer", po::value<std::string>(&a.optimizer_name)->default_value("fused"),
      "training: the Adam update's kernels, on each chip's own parameters: fused (one multi-tensor kernel, "
      "Apex FusedAdam / Megatron-LM: 32 B per parameter) | unfused (eager, a kernel per arithmetic step, "
      "e.g. Composer's DecoupledAdamW: 92 B); 6 B more each for a 16-bit step's master copy")(
      "gradient-reduce-precision", po::value<std::string>(&a.gradient_reduce_name),
      "training with --dp: the precision the data-parallel gradient reduction moves, where it is not the "
      "weights' (Megatron-LM reduces a bf16 run's gradients in fp32); default: the weights' precision")(
      "loss-kernel", po::value<std::string>(&a.loss_kernel)->default_value("softmax"),
      "training: the loss over the logits: softmax (a softmax and its gradient) | fused (one fused "
      "cross-entropy kernel each way, flash-attn's CrossEntropyLoss: llm-foundry's fused_crossentropy)")(
      "logit-metrics", po::value<int>(&a.logit_metrics)->default_value(0),
      "training: cross-entropies of the logits the training loop computes per micro-batch for logging, "
      "outside autograd (Composer's train metrics LanguageCrossEntropy and LanguagePerplexity: 2)");
}

void add_kernel_options(po::options_description& named, EvalArgs& a) {
  named.add_options()(
      "fusion", po::value<std::string>(&a.fusion_name)->default_value("standard"), "none | standard | aggressive")(
      "fusions", po::value<std::string>(&a.fusions_list),
      "comma-separated fusion kinds the stack applies, replacing --fusion's set: gemm_epilogue, "
      "norm_residual, flash_attention, conv_stage (e.g. TorchInductor with SDPA: "
      "norm_residual,flash_attention); empty: none")(
      "launch", po::value<std::string>(&a.launch_name)->default_value("graph"),
      "graph (CUDA/HPU graphs, XLA: the platform's graph_kernel_overhead_s per kernel) | framework "
      "(PyTorch eager dispatch overheads of the hardware file)")(
      "attention-kernel", po::value<std::string>(&a.attention_kernel)->default_value("native"),
      "the stack's fused attention kernel (prefill, training): native (FlashAttention-2-class, built for "
      "the chip) | flash2 (FlashAttention-2 itself: on Hopper its matrix work at the hardware file's "
      "warp_mma_fraction) | flash1 (FlashAttention v1 or the 2022-23 Triton FlashAttention, e.g. "
      "llm-foundry's attn_impl: triton: twice flash2's compute time, Dao 2023)")(
      "decode-attention", po::value<std::string>(&a.decode_attention)->default_value("per_kv_head"),
      "per_kv_head (FlashDecoding, XQA, FlashInfer: a GQA group reads its KV head once) | per_query_head "
      "(a block per query head streams its KV head: TensorRT-LLM's masked MHA before XQA, v0.8)")(
      "vocab", po::value<std::string>(&a.vocab)->default_value("parallel"),
      "with --tp: parallel (the embedding and lm_head split over the TP group by vocabulary, the "
      "embedding's rows all-reduced: Megatron-LM, vLLM, TensorRT-LLM) | replicated (every chip holds and "
      "computes the whole vocabulary: gpt-fast's tp.py)");
}

void add_serving_options(po::options_description& named, EvalArgs& a) {
  named.add_options()(
      "prompt", po::value<std::string>(&a.prompt)->default_value("1024"),
      "serving: prompt tokens per request, N or a uniform range LOW-HIGH (e.g. 128-1024)")(
      "output", po::value<std::string>(&a.output)->default_value("256"),
      "serving: output tokens per request, N or a uniform range LOW-HIGH")(
      "lengths", po::value<std::string>(&a.lengths_file),
      "serving: a request-length histogram (CSV tokens,prompt_requests,output_requests; scenarios/README.md) "
      "instead of --prompt and --output")(
      "max-batch", po::value<int>(&a.max_batch),
      "serving: the scheduler's cap on requests in flight per replica; the latency table covers 1, 2, 4, ... up "
      "to it (default: the largest of 1, 2, 4, ..., 256 that fits)")(
      "batching", po::value<std::string>(&a.batching)->default_value("continuous"),
      "serving: continuous (iteration-level) | static (batches that start when full or after --batch-timeout-ms)")(
      "batch-timeout-ms", po::value<double>(&a.batch_timeout_ms),
      "serving with --batching static: the longest the oldest request waits for its batch to fill")(
      "stack", po::value<std::string>(&a.stack),
      "serving: the serving stack whose per-iteration overhead the steps carry (scenarios/stacks, a file, or "
      "none); default: the system file's")(
      "requests", po::value<int>(&a.requests)->default_value(2000), "serving: requests simulated per replica")(
      "seed", po::value<std::uint64_t>(&a.seed)->default_value(1), "serving: the simulation's random seed")(
      "static-kv-tokens", po::value<int>(&a.static_kv),
      "serving: a static-shape stack whose KV cache holds this many positions per sequence, all "
      "attended every decode step (TGI on Gaudi: --max-total-tokens); default: paged, at each "
      "sequence's length")(
      "prompt-bucket-tokens", po::value<int>(&a.prompt_bucket),
      "serving: prompts run padded to round_up(prompt + 1, this) tokens (TGI on Gaudi: "
      "PAD_SEQUENCE_TO_MULTIPLE_OF); default: unpadded")(
      "rate", po::value<double>(&a.rate), "serving: simulate at this arrival rate (requests/s, whole system)")(
      "sla-ttft-ms", po::value<double>(&a.sla_ttft_ms),
      "serving: find the largest rate whose p99 time to first token <= this (ms), with the other SLAs given")(
      "sla-tpot-ms", po::value<double>(&a.sla_tpot_ms),
      "serving: ... whose p99 time per output token <= this (ms)")(
      "sla-e2e-p99-ms", po::value<double>(&a.sla_e2e_ms),
      "serving: ... whose p99 end-to-end request latency <= this (ms)")(
      "sla-p99-ms", po::value<double>(&a.sla_p99_ms), "serving: the same as --sla-e2e-p99-ms")(
      "no-serving", "skip the serving sweep")("json", "print one JSON object instead of tables")(
      "time", "print the evaluation wall time to stderr");
}

// An option the user gave (not its default).
bool given(const po::variables_map& vm, const char* name) { return vm.count(name) != 0 && !vm[name].defaulted(); }

wl::PhaseSpec read_phase(const EvalArgs& a, const po::variables_map& vm) {
  wl::PhaseSpec phase;
  if (a.phase_name == "train" || a.phase_name == "training") phase.phase = wl::Phase::training;
  else if (a.phase_name == "prefill") phase.phase = wl::Phase::prefill;
  else if (a.phase_name == "decode") phase.phase = wl::Phase::decode;
  else throw InputError("--phase: expected prefill, decode or train (got " + a.phase_name + ")");
  const auto prec = wl::precision_from_string(a.precision_name);
  if (!prec || *prec == wl::Precision::int32) throw InputError("--precision: unknown precision " + a.precision_name);
  phase.precision = *prec;
  phase.batch = a.batch;
  const bool dec = phase.phase == wl::Phase::decode;
  if (vm.count("seq") != 0 && a.seq < 1) throw InputError("--seq must be >= 1 (got " + std::to_string(a.seq) + ")");
  if (vm.count("context") != 0 && !dec)
    throw InputError("--context applies to --phase decode (tokens already in the KV cache); " + a.phase_name +
                     " starts from an empty cache");
  if (vm.count("context") != 0 && a.context < 0)
    throw InputError("--context must be >= 0 (got " + std::to_string(a.context) + ")");
  phase.seq = a.seq > 0 ? a.seq : (dec ? 1 : 1024);
  phase.context = dec ? (a.context >= 0 ? a.context : 1024) : 0;
  const auto per_query_head = wl::kv_read_per_query_head_from_string(a.decode_attention);
  if (!per_query_head)
    throw InputError("--decode-attention: expected per_kv_head or per_query_head (got " + a.decode_attention + ")");
  phase.kv_read_per_query_head = *per_query_head;
  const auto vocab_parallel = wl::vocab_parallel_from_string(a.vocab);
  if (!vocab_parallel) throw InputError("--vocab: expected parallel or replicated (got " + a.vocab + ")");
  phase.vocab_parallel = *vocab_parallel;
  if (a.batch < 1 || phase.seq < 1 || a.tp < 1 || a.pp < 1 || a.dp < 1 || a.ep < 1 || a.cp < 1)
    throw InputError("--batch, --seq, --tp, --pp, --dp, --ep and --cp must be >= 1");
  const auto cp_kind = wl::context_parallel_from_string(a.cp_comm);
  if (!cp_kind) throw InputError("--cp-comm: expected ring or all_to_all (got " + a.cp_comm + ")");
  if (a.cp > 1 && dec)
    throw InputError("--cp applies to --phase train and prefill (the sequence split over the CP group); decode runs one "
                     "new token");
  if (a.cp == 1 && given(vm, "cp-comm")) throw InputError("--cp-comm acts on context parallelism; give --cp > 1");
  phase.context_parallel = a.cp;
  phase.context_parallel_comm = *cp_kind;
  if (a.micro_batches < 1 || a.virtual_stages < 1) throw InputError("--micro-batches and --virtual-stages must be >= 1");
  if (!wl::apply_recompute(a.recompute, phase))
    throw InputError("--recompute: expected none, selective, minimal or full (got " + a.recompute + ")");
  const auto loss = wl::loss_kernel_from_string(a.loss_kernel);
  if (!loss) throw InputError("--loss-kernel: expected softmax or fused (got " + a.loss_kernel + ")");
  if (a.logit_metrics < 0) throw InputError("--logit-metrics must be >= 0");
  phase.loss_kernel = *loss;
  phase.logit_metrics = a.logit_metrics;
  return phase;
}

// The serving options the user gave, "--prompt, --rate" (empty when none).
std::string serving_options_given(const po::variables_map& vm) {
  std::string out;
  for (const char* name : {"prompt", "output", "lengths", "max-batch", "batching", "batch-timeout-ms", "stack",
                           "requests", "seed", "static-kv-tokens", "prompt-bucket-tokens", "rate", "sla-ttft-ms",
                           "sla-tpot-ms", "sla-e2e-p99-ms", "sla-p99-ms"})
    if (given(vm, name)) out += (out.empty() ? "--" : ", --") + std::string(name);
  return out;
}

// Options that act on a phase other than the one asked for are refused, not ignored.
void check_phase_options(const EvalArgs& a, const po::variables_map& vm, const wl::PhaseSpec& phase,
                         bool shard_states) {
  const bool training = phase.phase == wl::Phase::training;
  if (!training &&
      (a.recompute != "none" || a.micro_batches > 1 || a.virtual_stages > 1 || shard_states || a.overlap_data > 0.0 ||
       vm.count("sequence-parallel") != 0 || given(vm, "optimizer") || phase.loss_kernel != wl::LossKernel::softmax ||
       a.logit_metrics > 0 || vm.count("gradient-reduce-precision") != 0 || vm.count("shard-group") != 0))
    throw InputError(
        "--recompute, --micro-batches, --virtual-stages, --sharding, --shard-group, --sequence-parallel, "
        "--overlap-data, --optimizer, --loss-kernel, --logit-metrics and --gradient-reduce-precision apply to "
        "--phase train");
  // The serving sweep's options, where given: refused where no sweep runs (a training step,
  // --no-serving, a workload that is not a decoder) rather than silently ignored.
  const std::string serving = serving_options_given(vm);
  if (!serving.empty() && training)
    throw InputError(serving + ": serving options (decoder inference); --phase train runs no serving sweep");
  if (!serving.empty() && vm.count("no-serving") != 0)
    throw InputError(serving + ": serving options; --no-serving skips the serving sweep");
  if (training && !phase.vocab_parallel)
    throw InputError("--vocab replicated applies to inference: the gradient all-reduce a replicated vocabulary "
                     "needs across the TP group in training is not modelled");
  if (training && given(vm, "decode-attention"))
    throw InputError("--decode-attention applies to decode steps (--phase decode, or the serving sweep of --phase "
                     "prefill); --phase train has none");
}

pf::EvalOptions read_kernel_options(const EvalArgs& a, const po::variables_map& vm) {
  pf::EvalOptions o;
  const auto fusion = pf::fusion_strategy_from_string(a.fusion_name);
  if (!fusion) throw InputError("--fusion: expected none, standard or aggressive (got " + a.fusion_name + ")");
  o.fusion = *fusion;
  if (vm.count("fusions") != 0) {
    o.fusion_kinds.emplace();
    std::stringstream ss(a.fusions_list);
    for (std::string k; std::getline(ss, k, ',');) {
      k.erase(0, k.find_first_not_of(' '));
      k.erase(k.find_last_not_of(' ') + 1);
      if (k.empty()) continue;
      const auto kind = pf::fusion_kind_from_string(k);
      if (!kind) throw InputError("--fusions: expected " + pf::fusion_kind_names() + " (got " + k + ")");
      o.fusion_kinds->push_back(*kind);
    }
  }
  const auto launch = pf::launch_mode_from_string(a.launch_name);
  if (!launch) throw InputError("--launch: expected graph or framework (got " + a.launch_name + ")");
  o.launch = *launch;
  const auto attention = pf::attention_kernel_from_string(a.attention_kernel);
  if (!attention)
    throw InputError("--attention-kernel: expected native, flash2 or flash1 (got " + a.attention_kernel + ")");
  o.attention_kernel = *attention;
  return o;
}

// The chip and the system it runs on: a system preset (its chip, or --hardware's), or one
// chip's default switch of tp*pp*dp.
std::pair<pf::Platform, pf::SystemSpec> read_platform(const EvalArgs& a) {
  if (!a.overrides.empty()) {
    if (a.system_name.empty() || !a.hardware.empty())
      throw InputError("--override: give it with --system (and without --hardware): it changes the system's files");
    std::vector<io::OverrideValue> values;
    for (const auto& o : a.overrides) values.push_back(io::parse_override_option(o));
    io::SystemFile sf = io::load_system_with_overrides(io::resolve_system_path(a.system_name), values);
    return {sf.chip, sf.system};
  }
  if (!a.system_name.empty()) {
    io::SystemFile sf = io::resolve_system(a.system_name);
    return {a.hardware.empty() ? sf.chip : io::resolve_platform(a.hardware), sf.system};
  }
  if (a.hardware.empty()) throw InputError("give --hardware or --system");
  pf::Platform platform = io::resolve_platform(a.hardware);
  pf::SystemSpec system = pf::default_system(platform, a.tp * a.cp * a.pp * a.dp);
  return {std::move(platform), std::move(system)};
}

// Training's own options on the request.
void read_training(const EvalArgs& a, const po::variables_map& vm, bool shard_states, pf::SystemRequest& req) {
  req.micro_batches = a.micro_batches;
  req.virtual_stages = a.virtual_stages;
  req.shard_states = shard_states;
  req.flat_parameter = pf::flat_parameter_sharding(a.sharding);
  req.shard_group = a.shard_group;
  req.overlap.data = a.overlap_data;
  req.sequence_parallel = vm.count("sequence-parallel") != 0;
  const auto optimizer = pf::optimizer_kernel_from_string(a.optimizer_name);
  if (!optimizer) throw InputError("--optimizer: expected fused or unfused (got " + a.optimizer_name + ")");
  req.optimizer = *optimizer;
  if (vm.count("gradient-reduce-precision") != 0) {
    const auto g = wl::precision_from_string(a.gradient_reduce_name);
    if (!g || *g == wl::Precision::int32)
      throw InputError("--gradient-reduce-precision: expected fp32, bf16, fp16, fp8, int8 or int4 (got " +
                       a.gradient_reduce_name + ")");
    req.gradient_reduce_precision = *g;
  }
  const bool training = req.phase.phase == wl::Phase::training;
  if (training && a.dp == 1 && (shard_states || a.overlap_data > 0.0 || given(vm, "gradient-reduce-precision")))
    throw InputError(
        "--sharding, --overlap-data and --gradient-reduce-precision act on data parallelism; give --dp > 1");
  if (vm.count("shard-group") != 0) {
    if (!shard_states) throw InputError("--shard-group acts on sharded states; give --sharding full or fsdp");
    if (a.shard_group < 1 || a.dp % a.shard_group != 0)
      throw InputError("--shard-group: expected a divisor of --dp = " + std::to_string(a.dp) + " (got " +
                       std::to_string(a.shard_group) + ")");
  }
  if (a.tp == 1 && (req.sequence_parallel || !req.phase.vocab_parallel))
    throw InputError("--sequence-parallel and --vocab replicated act on tensor parallelism; give --tp > 1");
}

// A length option: N or LOW-HIGH; returns the nominal length and sets the distribution of a range.
int read_length_option(const char* option, const std::string& text, std::optional<cs::LengthDistribution>& dist) {
  std::string why;
  const auto d = io::parse_length_text(text, why);
  if (!d) throw InputError(std::string("--") + option + ": " + why + " (got " + text + ")");
  if (d->kind != cs::LengthDistribution::Kind::fixed) dist = d;
  return d->nominal();
}

double finite_positive(const char* option, double v, const char* what) {
  if (!(v > 0.0 && std::isfinite(v)))
    throw InputError(std::string("--") + option + " must be a finite number > 0" + what + " (got " +
                     io::format_number(v) + ")");
  return v;
}

// The SLA bounds: --sla-ttft-ms, --sla-tpot-ms, --sla-e2e-p99-ms (or its alias --sla-p99-ms).
cs::SlaBounds read_sla(const EvalArgs& a, const po::variables_map& vm) {
  cs::SlaBounds b;
  if (vm.count("sla-ttft-ms") != 0) b.ttft_p99_s = finite_positive("sla-ttft-ms", a.sla_ttft_ms, "") * 1e-3;
  if (vm.count("sla-tpot-ms") != 0) b.tpot_p99_s = finite_positive("sla-tpot-ms", a.sla_tpot_ms, "") * 1e-3;
  if (vm.count("sla-e2e-p99-ms") != 0) b.e2e_p99_s = finite_positive("sla-e2e-p99-ms", a.sla_e2e_ms, "") * 1e-3;
  if (vm.count("sla-p99-ms") != 0) {
    const double v = finite_positive("sla-p99-ms", a.sla_p99_ms, "") * 1e-3;
    if (b.e2e_p99_s && *b.e2e_p99_s != v)
      throw InputError("--sla-p99-ms is --sla-e2e-p99-ms: give one of them, or the same value");
    b.e2e_p99_s = v;
  }
  return b;
}

// The serving sweep's request shape, simulation and SLA search.
void read_serving(const EvalArgs& a, const po::variables_map& vm, pf::ServingOptions& so) {
  so.enabled = vm.count("no-serving") == 0;
  if (vm.count("lengths") != 0) {
    if (given(vm, "prompt") || given(vm, "output"))
      throw InputError("--lengths gives the request lengths: leave out --prompt and --output");
    const io::LengthHistogram h = io::read_length_histogram(a.lengths_file);
    so.prompt_lengths = h.prompt;
    so.output_lengths = h.output;
    so.prompt_tokens = h.prompt.nominal();
    so.output_tokens = h.output.nominal();
  } else {
    so.prompt_tokens = read_length_option("prompt", a.prompt, so.prompt_lengths);
    so.output_tokens = read_length_option("output", a.output, so.output_lengths);
  }
  if (vm.count("static-kv-tokens") != 0 && a.static_kv <= 0) throw InputError("--static-kv-tokens must be positive");
  if (vm.count("prompt-bucket-tokens") != 0 && a.prompt_bucket <= 0)
    throw InputError("--prompt-bucket-tokens must be positive");
  so.static_kv_tokens = a.static_kv;
  so.prompt_bucket_tokens = a.prompt_bucket;
  if (vm.count("max-batch") != 0 && a.max_batch < 1)
    throw InputError("--max-batch must be >= 1 (got " + std::to_string(a.max_batch) + ")");
  so.max_batch = a.max_batch;
  if (a.requests < 1) throw InputError("--requests must be >= 1 (got " + std::to_string(a.requests) + ")");
  so.requests = a.requests;
  so.seed = a.seed;
  if (a.batching == "static") {
    so.policy = cs::BatchingPolicy::static_timeout;
    if (vm.count("batch-timeout-ms") != 0 && !(a.batch_timeout_ms >= 0.0 && std::isfinite(a.batch_timeout_ms)))
      throw InputError("--batch-timeout-ms must be a finite number >= 0 (got " + io::format_number(a.batch_timeout_ms) +
                       ")");
    so.batch_timeout_s = a.batch_timeout_ms * 1e-3;
  } else if (a.batching != "continuous") {
    throw InputError("--batching: expected continuous or static (got " + a.batching + ")");
  } else if (vm.count("batch-timeout-ms") != 0) {
    throw InputError("--batch-timeout-ms applies to --batching static");
  }
  if (vm.count("stack") != 0) {
    if (a.stack != "none") {
      if (const std::string why = io::unknown_preset(a.stack, "stacks"); !why.empty())
        throw InputError("--stack: " + why + " (got '" + a.stack + "')");
    }
    so.stack = io::resolve_stack(a.stack);
  }
  const long long prompt_and_output = static_cast<long long>(so.prompt_tokens) + so.output_tokens;
  if (so.enabled && a.static_kv > 0 && a.static_kv < prompt_and_output)
    throw InputError("dse eval: --static-kv-tokens " + std::to_string(a.static_kv) + " is below --prompt + --output (" +
                     std::to_string(prompt_and_output) + ")");
  // The checks above name the options; every request that passes them is a shape the model serves.
  if (const std::string problem = so.enabled ? pf::serving_shape_problem(so) : std::string(); !problem.empty())
    throw InputError("dse eval: " + problem);
  if (vm.count("rate") != 0) so.rate_per_s = finite_positive("rate", a.rate, " requests/s");
  so.sla = read_sla(a, vm);
}

// The fused-attention options describe a kernel that must run in this request.
void check_kernel_options(const po::variables_map& vm, const pf::SystemRequest& req) {
  const auto* transformer = std::get_if<wl::TransformerSpec>(&req.spec);
  if (given(vm, "fusion") && req.options.fusion_kinds)
    throw InputError("give --fusion or --fusions, not both (--fusions replaces the strategy's set of kinds)");
  if (given(vm, "decode-attention") || given(vm, "attention-kernel")) {
    if (transformer == nullptr || !pf::applies_fusion(req.options, pf::FusionKind::flash_attention))
      throw InputError("--decode-attention and --attention-kernel describe the fused attention kernel: a transformer "
                       "with --fusion aggressive or --fusions flash_attention (unfused, each query head's batched "
                       "GEMM reads its own K and V)");
    if (given(vm, "decode-attention") && req.phase.phase == wl::Phase::prefill && vm.count("no-serving") != 0)
      throw InputError("--decode-attention applies to decode steps: --phase decode, or the serving sweep that "
                       "--no-serving skips");
  }
}

// A name that is neither a preset nor a file, said at its option with the presets it may have meant.
void check_names(const EvalArgs& a) {
  const auto check_name = [](const std::string& option, const std::string& name, const std::string& why) {
    if (!why.empty()) throw InputError(option + ": " + why + " (got '" + name + "')");
  };
  if (!a.system_name.empty()) check_name("--system", a.system_name, io::unknown_preset(a.system_name, "systems"));
  if (!a.hardware.empty()) check_name("--hardware", a.hardware, io::unknown_preset(a.hardware, "hardware"));
  check_name("--workload", a.workload, io::unknown_workload(a.workload));
}

pf::SystemRequest read_request(const EvalArgs& a, const po::variables_map& vm) {
  pf::SystemRequest req;
  req.phase = read_phase(a, vm);
  if (!(a.overlap_data >= 0.0 && a.overlap_data <= 1.0))
    throw InputError("--overlap-data: expected a fraction in [0, 1] (got " + io::format_number(a.overlap_data) + ")");
  const std::optional<bool> shard_states = pf::shard_states_from_string(a.sharding);
  if (!shard_states) throw InputError("--sharding: expected none, full or fsdp (got " + a.sharding + ")");
  check_phase_options(a, vm, req.phase, *shard_states);
  req.options = read_kernel_options(a, vm);
  check_names(a);
  req.spec = io::resolve_workload(a.workload);
  const auto* transformer = std::get_if<wl::TransformerSpec>(&req.spec);
  if (a.ep > 1 && (transformer == nullptr || transformer->experts == 0))
    throw InputError("--ep applies to mixture-of-experts transformers (experts per layer > 0); " + a.workload +
                     " has none");
  const std::string serving = serving_options_given(vm);
  if (!serving.empty() && (transformer == nullptr || transformer->arch != wl::Arch::decoder))
    throw InputError(serving + ": serving options; the serving sweep is for decoder workloads and " + a.workload +
                     " is not one");
  req.degrees = {a.tp, a.pp, a.dp, a.ep, a.cp};
  if (a.cp > 1 && transformer == nullptr)
    throw InputError("--cp applies to transformer workloads; " + a.workload + " is not one");
  if (a.cp > 1 && req.phase.phase == wl::Phase::prefill && vm.count("no-serving") == 0 &&
      transformer->arch == wl::Arch::decoder)
    throw InputError("--cp with --phase prefill evaluates the prefill step alone: give --no-serving (the serving "
                     "sweep's decode steps run no context parallelism)");
  read_training(a, vm, *shard_states, req);
  read_serving(a, vm, req.serving);
  check_kernel_options(vm, req);
  return req;
}

}  // namespace

int cmd_eval(const Args& args) {
  EvalArgs a;
  po::options_description named(
      "dse eval --hardware H --workload W [options]\n\n"
      "Evaluates one step of a workload on a GPU-class platform (per-layer mapping sheet and\n"
      "totals), and for decoder inference a serving sweep, simulation and SLA search.\n\noptions");
  add_model_options(named, a);
  add_training_options(named, a);
  add_kernel_options(named, a);
  add_serving_options(named, a);
  po::variables_map vm;
  if (!parse_options(args, named, no_positionals(), vm)) return kExitOk;
  const pf::SystemRequest req = read_request(a, vm);
  const auto [platform, system] = read_platform(a);
  const auto t0 = std::chrono::steady_clock::now();
  const pf::SystemEval e = pf::evaluate_system(platform, system, req);
  const auto t1 = std::chrono::steady_clock::now();
  if (vm.count("time") != 0)
    std::cerr << "eval wall time " << std::chrono::duration<double, std::milli>(t1 - t0).count() << " ms\n";
  if (vm.count("json") != 0) io::print_eval_json(e, std::cout);
  else io::print_eval_text(e, std::cout);
  return e.feasible ? kExitOk : kExitFailure;
}

}  // namespace dse::cli
