// `dse eval`: one workload on one GPU-class platform (one chip or a system),
// with a per-layer mapping sheet, totals, serving, power and risk.
// `dse presets`: the hardware, system and workload presets.
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
#include "costmodel/workload/presets.hpp"
#include "dse/cli/commands.hpp"
#include "dse/error.hpp"
#include "dse/io/platform_reader.hpp"
#include "dse/io/platform_report.hpp"
#include "dse/io/workload_reader.hpp"
#include "dse/io/yaml_reader.hpp"

namespace po = boost::program_options;

namespace dse::cli {

namespace pf = dse::costmodel::platform;
namespace wl = dse::costmodel::workload;

int cmd_eval(const Args& args) {
  std::string hardware, workload, system_name, phase_name = "decode", precision_name = "bf16",
                                               fusion_name = "standard", launch_name = "graph", fusions_list,
                                               decode_attention = "per_kv_head", recompute = "none",
                                               sharding = "none", attention_kernel = "native",
                                               optimizer_name = "fused", loss_kernel = "softmax",
                                               vocab = "parallel", gradient_reduce_name;
  int tp = 1, pp = 1, dp = 1, ep = 1, prompt = 1024, output = 256, static_kv = 0, prompt_bucket = 0,
      micro_batches = 1, virtual_stages = 1, logit_metrics = 0;
  std::int64_t batch = 1, seq = -1, context = -1;
  double rate = 0.0, sla_ms = 0.0, overlap_data = 0.0;
  int shard_group = 0;
  po::options_description named(
      "dse eval --hardware H --workload W [options]\n\n"
      "Evaluates one step of a workload on a GPU-class platform (per-layer mapping sheet and\n"
      "totals), and for decoder inference a serving sweep, simulation and SLA search.\n\noptions");
  named.add_options()("help,h", "print this help")(
      "hardware", po::value<std::string>(&hardware),
      "hardware preset name (scenarios/hardware, see 'dse presets') or a kind: gpu file; "
      "optional when --system names its chip")(
      "workload", po::value<std::string>(&workload)->required(), "workload preset name or workload file")(
      "system", po::value<std::string>(&system_name),
      "system preset name (scenarios/systems) or file; default: a switch of tp*pp*dp chips on the chip's links")(
      "tp", po::value<int>(&tp)->default_value(1), "tensor-parallel degree")(
      "pp", po::value<int>(&pp)->default_value(1), "pipeline-parallel degree")(
      "dp", po::value<int>(&dp)->default_value(1), "data-parallel (replica) degree")(
      "ep", po::value<int>(&ep)->default_value(1), "expert-parallel degree (must divide tp*dp)")(
      "phase", po::value<std::string>(&phase_name)->default_value("decode"), "prefill | decode | train")(
      "batch", po::value<std::int64_t>(&batch)->default_value(1), "sequences (or images) per step")(
      "seq", po::value<std::int64_t>(&seq),
      "tokens per sequence (prefill/train: prompt length, default 1024; decode: new tokens, default 1)")(
      "context", po::value<std::int64_t>(&context), "decode: tokens already in the KV cache (default 1024)")(
      "precision", po::value<std::string>(&precision_name)->default_value("bf16"),
      "fp32 | bf16 | fp16 | fp8 | int8 | int4")(
      "recompute", po::value<std::string>(&recompute)->default_value("none"),
      "train: activation recomputation, none | selective (the attention core of each layer, "
      "Korthikanti et al. 2022) | minimal (all but each layer's projections and collectives: JAX's "
      "checkpoint_dots_with_no_batch_dims, MaxText's remat_policy minimal) | full (each layer's forward)")(
      "micro-batches", po::value<int>(&micro_batches)->default_value(1),
      "train: micro-batches of --batch sequences per step (the pipeline schedule's m)")(
      "virtual-stages", po::value<int>(&virtual_stages)->default_value(1),
      "train with --pp: model chunks per chip, > 1 for the interleaved 1F1B schedule")(
      "sharding", po::value<std::string>(&sharding)->default_value("none"),
      "train with --dp: none (replicated states, one gradient all-reduce per step) | full (ZeRO-3 / "
      "FSDP FULL_SHARD: states partitioned over --dp, per micro-batch two parameter all-gathers and "
      "a gradient reduce-scatter) | fsdp (full as PyTorch FSDP's FlatParameter runs it, with its "
      "gradient and shard copies around the collectives)")(
      "shard-group", po::value<int>(&shard_group),
      "train with --sharding full or fsdp: shard the states over groups of N (this value) of the --dp chips, "
      "N a divisor of --dp; the --dp / N groups keep copies and all-reduce their shards after each "
      "reduce-scatter (hybrid sharding: PyTorch FSDP HYBRID_SHARD, MaxText's FSDP within a TPU slice with "
      "data parallelism across slices); default all of --dp")(
      "sequence-parallel",
      "train with --tp: Megatron-LM sequence parallelism (norm and GEMM-input activations sharded over "
      "the TP group; the same collective bytes)")(
      "overlap-data", po::value<double>(&overlap_data)->default_value(0.0),
      "train with --dp: fraction of the data-parallel collectives (all-reduce, or with --sharding full the "
      "all-gathers and reduce-scatters, and with fsdp the copies beside them) hidden under compute, 0..1; "
      "default 0, all exposed")(
      "fusion", po::value<std::string>(&fusion_name)->default_value("standard"), "none | standard | aggressive")(
      "fusions", po::value<std::string>(&fusions_list),
      "comma-separated fusion kinds the stack applies, replacing --fusion's set: gemm_epilogue, "
      "norm_residual, flash_attention, conv_stage (e.g. TorchInductor with SDPA: "
      "norm_residual,flash_attention); empty: none")(
      "launch", po::value<std::string>(&launch_name)->default_value("graph"),
      "graph (CUDA/HPU graphs, XLA: the platform's graph_kernel_overhead_s per kernel) | framework "
      "(PyTorch eager dispatch overheads of the hardware file)")(
      "attention-kernel", po::value<std::string>(&attention_kernel)->default_value("native"),
      "the stack's fused attention kernel (prefill, training): native (FlashAttention-2-class, built for "
      "the chip) | flash2 (FlashAttention-2 itself: on Hopper its matrix work at the hardware file's "
      "warp_mma_fraction) | flash1 (FlashAttention v1 or the 2022-23 Triton FlashAttention, e.g. "
      "llm-foundry's attn_impl: triton: twice flash2's compute time, Dao 2023)")(
      "optimizer", po::value<std::string>(&optimizer_name)->default_value("fused"),
      "training: the Adam update's kernels, on each chip's own parameters: fused (one multi-tensor kernel, "
      "Apex FusedAdam / Megatron-LM: 32 B per parameter) | unfused (eager, a kernel per arithmetic step, "
      "e.g. Composer's DecoupledAdamW: 92 B); 6 B more each for a 16-bit step's master copy")(
      "gradient-reduce-precision", po::value<std::string>(&gradient_reduce_name),
      "training with --dp: the precision the data-parallel gradient reduction moves, where it is not the "
      "weights' (Megatron-LM reduces a bf16 run's gradients in fp32); default: the weights' precision")(
      "loss-kernel", po::value<std::string>(&loss_kernel)->default_value("softmax"),
      "training: the loss over the logits: softmax (a softmax and its gradient) | fused (one fused "
      "cross-entropy kernel each way, flash-attn's CrossEntropyLoss: llm-foundry's fused_crossentropy)")(
      "logit-metrics", po::value<int>(&logit_metrics)->default_value(0),
      "training: cross-entropies of the logits the training loop computes per micro-batch for logging, "
      "outside autograd (Composer's train metrics LanguageCrossEntropy and LanguagePerplexity: 2)")(
      "prompt", po::value<int>(&prompt)->default_value(1024), "serving: prompt tokens per request")(
      "output", po::value<int>(&output)->default_value(256), "serving: output tokens per request")(
      "static-kv-tokens", po::value<int>(&static_kv),
      "serving: a static-shape stack whose KV cache holds this many positions per sequence, all "
      "attended every decode step (TGI on Gaudi: --max-total-tokens); default: paged, at each "
      "sequence's length")(
      "prompt-bucket-tokens", po::value<int>(&prompt_bucket),
      "serving: prompts run padded to round_up(prompt + 1, this) tokens (TGI on Gaudi: "
      "PAD_SEQUENCE_TO_MULTIPLE_OF); default: unpadded")(
      "decode-attention", po::value<std::string>(&decode_attention)->default_value("per_kv_head"),
      "per_kv_head (FlashDecoding, XQA, FlashInfer: a GQA group reads its KV head once) | per_query_head "
      "(a block per query head streams its KV head: TensorRT-LLM's masked MHA before XQA, v0.8)")(
      "vocab", po::value<std::string>(&vocab)->default_value("parallel"),
      "with --tp: parallel (the embedding and lm_head split over the TP group by vocabulary, the "
      "embedding's rows all-reduced: Megatron-LM, vLLM, TensorRT-LLM) | replicated (every chip holds and "
      "computes the whole vocabulary: gpt-fast's tp.py)")(
      "rate", po::value<double>(&rate), "serving: simulate at this arrival rate (requests/s, whole system)")(
      "sla-p99-ms", po::value<double>(&sla_ms), "serving: find the largest rate whose p99 TTFT <= this (ms)")(
      "no-serving", "skip the serving sweep")("json", "print one JSON object instead of tables")(
      "time", "print the evaluation wall time to stderr");
  po::variables_map vm;
  if (!parse_options(args, named, no_positionals(), vm)) return kExitOk;

  wl::PhaseSpec phase;
  if (phase_name == "train" || phase_name == "training") phase.phase = wl::Phase::training;
  else if (phase_name == "prefill") phase.phase = wl::Phase::prefill;
  else if (phase_name == "decode") phase.phase = wl::Phase::decode;
  else throw InputError("--phase: expected prefill, decode or train (got " + phase_name + ")");
  const auto prec = wl::precision_from_string(precision_name);
  if (!prec || *prec == wl::Precision::int32) throw InputError("--precision: unknown precision " + precision_name);
  phase.precision = *prec;
  phase.batch = batch;
  const bool dec = phase.phase == wl::Phase::decode;
  if (vm.count("seq") != 0 && seq < 1) throw InputError("--seq must be >= 1 (got " + std::to_string(seq) + ")");
  if (vm.count("context") != 0 && !dec)
    throw InputError("--context applies to --phase decode (tokens already in the KV cache); " + phase_name +
                     " starts from an empty cache");
  if (vm.count("context") != 0 && context < 0)
    throw InputError("--context must be >= 0 (got " + std::to_string(context) + ")");
  phase.seq = seq > 0 ? seq : (dec ? 1 : 1024);
  phase.context = dec ? (context >= 0 ? context : 1024) : 0;
  const auto per_query_head = wl::kv_read_per_query_head_from_string(decode_attention);
  if (!per_query_head)
    throw InputError("--decode-attention: expected per_kv_head or per_query_head (got " + decode_attention + ")");
  phase.kv_read_per_query_head = *per_query_head;
  const auto vocab_parallel = wl::vocab_parallel_from_string(vocab);
  if (!vocab_parallel) throw InputError("--vocab: expected parallel or replicated (got " + vocab + ")");
  phase.vocab_parallel = *vocab_parallel;
  if (batch < 1 || phase.seq < 1 || tp < 1 || pp < 1 || dp < 1 || ep < 1)
    throw InputError("--batch, --seq, --tp, --pp, --dp and --ep must be >= 1");
  if (micro_batches < 1 || virtual_stages < 1) throw InputError("--micro-batches and --virtual-stages must be >= 1");
  if (!wl::apply_recompute(recompute, phase))
    throw InputError("--recompute: expected none, selective, minimal or full (got " + recompute + ")");
  if (!(overlap_data >= 0.0 && overlap_data <= 1.0))
    throw InputError("--overlap-data: expected a fraction in [0, 1] (got " + io::format_number(overlap_data) + ")");
  const std::optional<bool> shard_states = pf::shard_states_from_string(sharding);
  if (!shard_states) throw InputError("--sharding: expected none, full or fsdp (got " + sharding + ")");
  const auto loss = wl::loss_kernel_from_string(loss_kernel);
  if (!loss) throw InputError("--loss-kernel: expected softmax or fused (got " + loss_kernel + ")");
  if (logit_metrics < 0) throw InputError("--logit-metrics must be >= 0");
  phase.loss_kernel = *loss;
  phase.logit_metrics = logit_metrics;
  // An option the user gave (not its default).
  const auto given = [&vm](const char* name) { return vm.count(name) != 0 && !vm[name].defaulted(); };
  const bool training = phase.phase == wl::Phase::training;
  if (!training &&
      (recompute != "none" || micro_batches > 1 || virtual_stages > 1 || *shard_states || overlap_data > 0.0 ||
       vm.count("sequence-parallel") != 0 || given("optimizer") || *loss != wl::LossKernel::softmax ||
       logit_metrics > 0 || vm.count("gradient-reduce-precision") != 0 || vm.count("shard-group") != 0))
    throw InputError(
        "--recompute, --micro-batches, --virtual-stages, --sharding, --shard-group, --sequence-parallel, "
        "--overlap-data, --optimizer, --loss-kernel, --logit-metrics and --gradient-reduce-precision apply to "
        "--phase train");
  // The serving sweep's options, where given: refused where no sweep runs (a training step,
  // --no-serving, a workload that is not a decoder) rather than silently ignored.
  std::string serving_given;
  for (const char* name : {"prompt", "output", "static-kv-tokens", "prompt-bucket-tokens", "rate", "sla-p99-ms"})
    if (given(name)) serving_given += (serving_given.empty() ? "--" : ", --") + std::string(name);
  if (!serving_given.empty() && training)
    throw InputError(serving_given + ": serving options (decoder inference); --phase train runs no serving sweep");
  if (!serving_given.empty() && vm.count("no-serving") != 0)
    throw InputError(serving_given + ": serving options; --no-serving skips the serving sweep");
  if (training && !phase.vocab_parallel)
    throw InputError("--vocab replicated applies to inference: the gradient all-reduce a replicated vocabulary "
                     "needs across the TP group in training is not modelled");
  if (training && given("decode-attention"))
    throw InputError("--decode-attention applies to decode steps (--phase decode, or the serving sweep of --phase "
                     "prefill); --phase train has none");
  const auto fusion = pf::fusion_strategy_from_string(fusion_name);
  if (!fusion) throw InputError("--fusion: expected none, standard or aggressive (got " + fusion_name + ")");
  std::optional<std::vector<pf::FusionKind>> fusion_kinds;
  if (vm.count("fusions") != 0) {
    fusion_kinds.emplace();
    std::stringstream ss(fusions_list);
    for (std::string k; std::getline(ss, k, ',');) {
      k.erase(0, k.find_first_not_of(' '));
      k.erase(k.find_last_not_of(' ') + 1);
      if (k.empty()) continue;
      const auto kind = pf::fusion_kind_from_string(k);
      if (!kind) throw InputError("--fusions: expected " + pf::fusion_kind_names() + " (got " + k + ")");
      fusion_kinds->push_back(*kind);
    }
  }
  const auto launch = pf::launch_mode_from_string(launch_name);
  if (!launch) throw InputError("--launch: expected graph or framework (got " + launch_name + ")");
  const auto attention = pf::attention_kernel_from_string(attention_kernel);
  if (!attention)
    throw InputError("--attention-kernel: expected native, flash2 or flash1 (got " + attention_kernel + ")");
  const auto optimizer = pf::optimizer_kernel_from_string(optimizer_name);
  if (!optimizer) throw InputError("--optimizer: expected fused or unfused (got " + optimizer_name + ")");

  // A name that is neither a preset nor a file, said at its option with the presets it may have meant.
  const auto check_name = [](const std::string& option, const std::string& name, const std::string& why) {
    if (!why.empty()) throw InputError(option + ": " + why + " (got '" + name + "')");
  };
  if (!system_name.empty()) check_name("--system", system_name, io::unknown_preset(system_name, "systems"));
  if (!hardware.empty()) check_name("--hardware", hardware, io::unknown_preset(hardware, "hardware"));
  check_name("--workload", workload, io::unknown_workload(workload));

  pf::Platform platform;
  pf::SystemSpec system;
  if (!system_name.empty()) {
    io::SystemFile sf = io::resolve_system(system_name);
    platform = hardware.empty() ? sf.chip : io::resolve_platform(hardware);
    system = sf.system;
  } else {
    if (hardware.empty()) throw InputError("give --hardware or --system");
    platform = io::resolve_platform(hardware);
    system = pf::default_system(platform, tp * pp * dp);
  }

  pf::SystemRequest req;
  req.spec = io::resolve_workload(workload);
  const auto* transformer = std::get_if<wl::TransformerSpec>(&req.spec);
  if (ep > 1 && (transformer == nullptr || transformer->experts == 0))
    throw InputError("--ep applies to mixture-of-experts transformers (experts per layer > 0); " + workload +
                     " has none");
  if (!serving_given.empty() && (transformer == nullptr || transformer->arch != wl::Arch::decoder))
    throw InputError(serving_given + ": serving options; the serving sweep is for decoder workloads and " + workload +
                     " is not one");
  req.phase = phase;
  req.degrees = {tp, pp, dp, ep};
  req.micro_batches = micro_batches;
  req.virtual_stages = virtual_stages;
  req.shard_states = *shard_states;
  req.flat_parameter = pf::flat_parameter_sharding(sharding);
  req.shard_group = shard_group;
  req.overlap.data = overlap_data;
  req.sequence_parallel = vm.count("sequence-parallel") != 0;
  req.options.fusion = *fusion;
  req.options.fusion_kinds = fusion_kinds;
  req.options.launch = *launch;
  req.options.attention_kernel = *attention;
  req.optimizer = *optimizer;
  if (vm.count("gradient-reduce-precision") != 0) {
    const auto g = wl::precision_from_string(gradient_reduce_name);
    if (!g || *g == wl::Precision::int32)
      throw InputError("--gradient-reduce-precision: expected fp32, bf16, fp16, fp8, int8 or int4 (got " +
                       gradient_reduce_name + ")");
    req.gradient_reduce_precision = *g;
  }
  req.serving.enabled = vm.count("no-serving") == 0;
  req.serving.prompt_tokens = prompt;
  req.serving.output_tokens = output;
  if (vm.count("static-kv-tokens") != 0 && static_kv <= 0) throw InputError("--static-kv-tokens must be positive");
  if (vm.count("prompt-bucket-tokens") != 0 && prompt_bucket <= 0)
    throw InputError("--prompt-bucket-tokens must be positive");
  req.serving.static_kv_tokens = static_kv;
  req.serving.prompt_bucket_tokens = prompt_bucket;
  if (prompt < 1 || output < 1)
    throw InputError("--prompt and --output must be >= 1 (got " + std::to_string(prompt) + " and " +
                     std::to_string(output) + ")");
  // Finite as well: an infinite SLA was met at 1.15e19 requests/s (the search's upper bracket).
  if (vm.count("rate") != 0 && !(rate > 0.0 && std::isfinite(rate)))
    throw InputError("--rate must be a finite number > 0 requests/s (got " + io::format_number(rate) + ")");
  if (vm.count("sla-p99-ms") != 0 && !(sla_ms > 0.0 && std::isfinite(sla_ms)))
    throw InputError("--sla-p99-ms must be a finite number > 0 (got " + io::format_number(sla_ms) + ")");
  const long long prompt_and_output = static_cast<long long>(prompt) + output;
  if (req.serving.enabled && static_kv > 0 && static_kv < prompt_and_output)
    throw InputError("dse eval: --static-kv-tokens " + std::to_string(static_kv) + " is below --prompt + --output (" +
                     std::to_string(prompt_and_output) + ")");
  // The checks above name the options; every request that passes them is a shape the model serves.
  if (const std::string problem = req.serving.enabled ? pf::serving_shape_problem(req.serving) : std::string();
      !problem.empty())
    throw InputError("dse eval: " + problem);
  if (vm.count("rate") != 0) req.serving.rate_per_s = rate;
  if (vm.count("sla-p99-ms") != 0) req.serving.sla_p99_ttft_s = sla_ms * 1e-3;

  // Options that change nothing in this request are refused, as those above: the parallelism
  // they act on is absent, or the kernel they describe does not run.
  if (training && dp == 1 && (*shard_states || overlap_data > 0.0 || given("gradient-reduce-precision")))
    throw InputError(
        "--sharding, --overlap-data and --gradient-reduce-precision act on data parallelism; give --dp > 1");
  if (vm.count("shard-group") != 0) {
    if (!*shard_states) throw InputError("--shard-group acts on sharded states; give --sharding full or fsdp");
    if (shard_group < 1 || dp % shard_group != 0)
      throw InputError("--shard-group: expected a divisor of --dp = " + std::to_string(dp) + " (got " +
                       std::to_string(shard_group) + ")");
  }
  if (tp == 1 && (vm.count("sequence-parallel") != 0 || !phase.vocab_parallel))
    throw InputError("--sequence-parallel and --vocab replicated act on tensor parallelism; give --tp > 1");
  if (given("fusion") && fusion_kinds)
    throw InputError("give --fusion or --fusions, not both (--fusions replaces the strategy's set of kinds)");
  if (given("decode-attention") || given("attention-kernel")) {
    pf::EvalOptions o;
    o.fusion = *fusion;
    o.fusion_kinds = fusion_kinds;
    if (transformer == nullptr || !pf::applies_fusion(o, pf::FusionKind::flash_attention))
      throw InputError("--decode-attention and --attention-kernel describe the fused attention kernel: a transformer "
                       "with --fusion aggressive or --fusions flash_attention (unfused, each query head's batched "
                       "GEMM reads its own K and V)");
    if (given("decode-attention") && phase.phase == wl::Phase::prefill && vm.count("no-serving") != 0)
      throw InputError("--decode-attention applies to decode steps: --phase decode, or the serving sweep that "
                       "--no-serving skips");
  }
  const auto t0 = std::chrono::steady_clock::now();
  const pf::SystemEval e = pf::evaluate_system(platform, system, req);
  const auto t1 = std::chrono::steady_clock::now();
  if (vm.count("time") != 0)
    std::cerr << "eval wall time " << std::chrono::duration<double, std::milli>(t1 - t0).count() << " ms\n";
  if (vm.count("json") != 0) io::print_eval_json(e, std::cout);
  else io::print_eval_text(e, std::cout);
  return e.feasible ? kExitOk : kExitFailure;
}

int cmd_presets(const Args& args) {
  po::options_description named("dse presets\n\nLists the hardware, system and workload presets.\n\noptions");
  named.add_options()("help,h", "print this help");
  po::variables_map vm;
  if (!parse_options(args, named, no_positionals(), vm)) return kExitOk;
  std::cout << "scenarios folder: " << printable(io::scenarios_dir()) << '\n';
  for (const char* sub : {"hardware", "systems"}) {
    std::cout << sub << ":";
    for (const auto& n : io::preset_names(sub)) std::cout << ' ' << n;
    std::cout << '\n';
  }
  // Research designs: loop-nest hierarchies (`dse map --hw`) and kind: systolic scenarios.
  for (const char* sub : {"hardware/research", "hardware/research/systolic"}) {
    std::cout << sub << ":";
    for (const auto& n : io::preset_names(sub)) std::cout << ' ' << n;
    std::cout << '\n';
  }
  std::cout << "workloads (built in):";
  for (const auto& n : wl::workload_preset_names()) std::cout << ' ' << n;
  std::cout << "\nworkloads (files in scenarios/workloads):";
  for (const auto& n : io::preset_names("workloads")) std::cout << ' ' << n;
  std::cout << '\n';
  return kExitOk;
}

}  // namespace dse::cli
