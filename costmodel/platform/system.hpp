// System-level evaluation of a workload on several chips of one platform:
// tensor / pipeline / data / expert parallelism (costmodel/system/parallelism),
// inference serving (latency-throughput sweep, Poisson simulation, max rate at
// an SLA; costmodel/system/serving), power under a TDP cap (system/power) and
// engineering risk (system/risk). Pure: standard library only.
//
// Rules:
//  * The chip graph is build_graph(spec with tensor_parallel = tp, phase); its
//    TP all-reduces are costed inside evaluate_graph on the system interconnect,
//    so the parallel step gets each block's full latency and no extra TP bytes.
//  * PP splits the blocks (each occurrence of a repeated block is one unit) into
//    pp stages; request.micro_batches (m, default 1) micro-batches per step, so a
//    step is (m + p - 1) slowest stages plus the stage-to-stage sends (tokens x
//    hidden x bytes per element per micro-batch).
//  * EP: MoE blocks (with a `moe_router`) add the dispatch + combine all-to-alls
//    of parallelism.hpp (moe_all_to_all_bytes of the step's tokens) over the EP group.
//  * DP replicas run independently; training all-reduces the parameter bytes of
//    one chip over the DP group (not overlapped), and each chip then runs the
//    optimizer update on its own parameters (OptimizerKernel below).
//  * Serving (decoder inference): prefill and decode latencies are evaluated on
//    a grid of batch sizes x {prompt, prompt + output} lengths and interpolated
//    (LatencyTable); the sweep, the simulation (continuous batching, fixed
//    lengths) and the SLA search (p99 TTFT) read that table.
//  * Power: dynamic energy of the step on all chips (chip graph energy x tp x dp;
//    with PP each chip runs its share of the same graph) spread over the step,
//    plus static power, capped at the TDP (evaluate_power). Every step the system
//    runs -- the evaluated one and each prefill / decode step of the serving table --
//    takes the time the capped clock allows (latency / throttle factor): a power
//    controller takes a chip under sustained full load down to its cap within tens of
//    milliseconds (an H200: 50-110 ms, scenarios/validation/h200/power-check/h200_ramp.csv),
//    a few decode steps, so a sustained run spends nearly all its time at the capped
//    clock. A step the cap cannot run (static power above the TDP, clock below
//    the part's minimum) is infeasible.
//    Operator-level evaluation (evaluate_graph, dse map) is unthrottled: it is the
//    chip at its nominal clock, as a short benchmark of one kernel sees it.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "costmodel/platform/evaluate.hpp"
#include "costmodel/system/cost.hpp"
#include "costmodel/system/parallelism.hpp"
#include "costmodel/system/power.hpp"
#include "costmodel/system/risk.hpp"
#include "costmodel/system/serving.hpp"
#include "costmodel/workload/spec.hpp"

namespace dse::costmodel::platform {

struct SystemSpec {
  std::string name;
  int chips = 1;
  system::Interconnect interconnect;
  system::PowerSpec power;  // per chip
  system::HostPower host;   // everything at the wall besides the accelerators (power.hpp)
  // The serving stack a served model runs on unless the request names another (its
  // per-iteration runtime overhead, ServingOptions::stack).
  system::ServingStack default_stack;
  // Its price (a system file's `cost:` section; system/cost.hpp): unknown when none is given.
  system::SystemPrice price;
};

// A one-chip-per-degree system from a platform's own links and energy figures.
SystemSpec default_system(const Platform& p, int chips);

struct ServingOptions {
  bool enabled = true;
  // The batch sizes of the latency table when max_batch is 0; the simulation then admits
  // up to the largest of them whose footprint fits (ServingResult::max_batch_fitting).
  std::vector<int> batch_sizes{1, 2, 4, 8, 16, 32, 64, 128, 256};
  // > 0: the scheduler's cap on requests in flight per replica (`dse run`'s batch, `dse
  // eval --max-batch`): the table covers 1, 2, 4, ... below it and the cap itself
  // (serving_batch_sizes), and the simulation admits at most min(cap, largest fitting).
  int max_batch = 0;
  // Request lengths. prompt_tokens and output_tokens are the lengths of every request, or,
  // when a distribution is given, its nominal lengths (the sweep's and the fit check's).
  int prompt_tokens = 1024;
  int output_tokens = 256;
  std::optional<system::LengthDistribution> prompt_lengths;
  std::optional<system::LengthDistribution> output_lengths;
  std::optional<double> rate_per_s;   // simulate at this system arrival rate
  // Find the largest rate whose p99 latencies meet these bounds (serving.hpp SlaBounds).
  system::SlaBounds sla;
  // The serving stack's runtime overhead per scheduler iteration (each prefill and each
  // decode step), added to every entry of the latency table; unset: the system's default.
  std::optional<system::ServingStack> stack;
  int requests = 2000;
  std::uint64_t seed = 1;
  // How the simulation at rate_per_s / the SLA search batches requests: continuous, or
  // static batches that wait at most batch_timeout_s to fill (serving.hpp).
  system::BatchingPolicy policy = system::BatchingPolicy::continuous;
  double batch_timeout_s = 0.0;
  // Static-shape serving stacks. 0 (the default): paged attention, every sequence's KV
  // cache holds its own context and a prompt runs at its own length.
  //  static_kv_tokens > 0: every sequence's KV cache is allocated at this many positions
  //    and each decode step attends over all of them (TGI on Gaudi pads the batch's cache
  //    to --max-total-tokens). Must be at least prompt_tokens + output_tokens.
  //  prompt_bucket_tokens > 0: a prompt of p tokens runs its prefill as
  //    round_up(p + 1, bucket) tokens (left padding to the bucket, one slot for the first
  //    new token; TGI on Gaudi's PAD_SEQUENCE_TO_MULTIPLE_OF).
  int static_kv_tokens = 0;
  int prompt_bucket_tokens = 0;
};

// The optimizer update that ends a training step: Adam with fp32 moments (the state
// the memory footprint holds, workload/footprint.cpp), on each chip's own parameters
// (the TP-sharded graph's, 1/pp of them, and 1/dp of those under sharded states).
// Its kernels stream whole tensors, so the update is memory-bound: bytes per
// parameter over the chip's sustained HBM bandwidth, with its HBM energy (launch
// overheads and the gradient norm's scalar all-reduce left out). Bytes per parameter:
//  fused   -- one multi-tensor Adam kernel (Apex FusedAdam as Megatron-LM uses it,
//             torch.optim.AdamW(fused=True)): reads the gradient, the weight and both
//             moments and writes weight and moments, 7 x 4 B = 28; the gradient-norm
//             clip reads every gradient once more, 4.
//  unfused -- eager Adam that updates one tensor at a time, a kernel per arithmetic
//             step (Composer's DecoupledAdamW.adamw, fp32 state, decoupled weight decay
//             0, which skips its weight mul_): exp_avg.mul_ 8, .add_(grad) 12,
//             exp_avg_sq.mul_ 8, .addcmul_(grad, grad) 12, sqrt() 8, / 8, .add_(eps) 8,
//             param.addcdiv_ 16 = 80; PyTorch's clip_grad_norm_ reads every gradient for
//             the norm and then scales it in place, 4 + 8.
//  A 16-bit step keeps an fp32 master copy and writes the 16-bit weights from it
//  (read 4, write 2): 6 more for either.
enum class OptimizerKernel { fused, unfused };
std::string_view to_string(OptimizerKernel k) noexcept;
std::optional<OptimizerKernel> optimizer_kernel_from_string(std::string_view s) noexcept;
double optimizer_update_bytes_per_parameter(OptimizerKernel k, bool master_copy) noexcept;

// Sharded states (ZeRO-3 / FSDP FULL_SHARD): the memory-bound copies around the
// collectives, per chip and step, as PyTorch FSDP's FlatParameter makes them (P the chip's
// parameters, d = dp, e bytes per element of the step's precision, m micro-batches):
//  compute stream -- each micro-batch's gradient of the unsharded flat parameter assembled
//    from its parameters' views (flat_param.py _get_unflat_views_unaligned: torch.split, then
//    view; split's backward is at::cat): P e read and written, 2 m P e;
//  beside the collectives -- per micro-batch the unsharded gradient divided before the
//    reduce-scatter and the shard after it (default_hooks.py reduce_scatter_hook:
//    grad.div_(gradient_predivide_factor), output.div_(gradient_postdivide_factor)):
//    2 P e + 2 P e / d; under mixed precision the shard cast to the fp32 parameter
//    (_cast_grad_to_param_dtype), P (e + 4) / d, and before each of the two all-gathers the
//    fp32 local shard copied to the low-precision shard (flat_param.py
//    _use_low_precision_shard: _mp_shard.copy_), 2 P (4 + e) / d; from the second micro-batch
//    on the shard accumulated into the saved one (_saved_grad_shard += ...), 12 P / d.
struct ShardCopyBytes {
  double compute_stream = 0.0;
  double beside_collectives = 0.0;
};
ShardCopyBytes shard_copy_bytes(double params, int dp, double bytes_per_element, bool mixed_precision,
                                int micro_batches) noexcept;

// The shapes a serving stack runs for a sequence of `length` tokens (ServingOptions):
// its prefill as served_prefill_tokens (prompt_bucket_tokens padding), its decode steps
// attending over served_decode_context positions (static_kv_tokens).
int served_prefill_tokens(const ServingOptions& so, int length) noexcept;
int served_decode_context(const ServingOptions& so, int length) noexcept;
// "" when the options can serve prompt + output tokens, else why not.
std::string serving_shape_problem(const ServingOptions& so);
// The batch sizes of the latency table: so.batch_sizes, or with so.max_batch > 0 the powers
// of two below the cap and the cap itself (1, 2, 4, ..., cap).
std::vector<int> serving_batch_sizes(const ServingOptions& so);
// The request lengths of the latency table (increasing): with fixed lengths {prompt, prompt
// + output}; with distributions their shortest prompt, the powers of two from 64 up to the
// longest prompt + output, that length itself, and the nominal prompt and prompt + output.
std::vector<int> serving_lengths(const ServingOptions& so);

struct SystemRequest {
  workload::WorkloadSpec spec;
  workload::PhaseSpec phase;
  system::ParallelismDegrees degrees;
  EvalOptions options;  // options.interconnect and options.phase are set from the system
  ServingOptions serving;
  // Micro-batches per step (m), each of phase.batch sequences: with PP the step
  // is (m + p - 1) slowest-stage times (1F1B schedule; bubble (p-1)/(m+p-1)).
  int micro_batches = 1;
  // Model chunks per chip (v): > 1 selects the interleaved schedule, (m + (p-1)/v)
  // slowest-chip times (parallelism.hpp).
  int virtual_stages = 1;
  // Training: partition parameters, gradients and optimizer state over the DP group
  // (ZeRO-3, PyTorch FSDP FULL_SHARD): memory and communication as in
  // system/parallelism.hpp and stage_memory (system.cpp).
  bool shard_states = false;
  // With shard_states: as PyTorch FSDP's FlatParameter runs it, with its gradient and shard
  // copies around the collectives (shard_copy_bytes); false: the collectives only (ZeRO-3 as
  // an XLA-style partitioner runs it, the gradients produced in place).
  bool flat_parameter = false;
  // With shard_states: the chips of the DP group that share one copy of the states (hybrid
  // sharding, system/parallelism.hpp): each keeps 1/shard_group of them, and the dp /
  // shard_group copies all-reduce their shards. 0: all of dp (one copy, FULL_SHARD).
  int shard_group = 0;
  // Training: Megatron-LM sequence parallelism over the TP group (EvalOptions).
  bool sequence_parallel = false;
  // Training: the optimizer update's kernels (OptimizerKernel above).
  OptimizerKernel optimizer = OptimizerKernel::fused;
  // Training: the precision of the data-parallel gradient reduction, when it differs from
  // the weights' (Megatron-LM with bf16: fp32, "bfloat16 requires gradient accumulation and
  // all-reduce to be done in fp32", megatron/arguments.py); unset: the weights' precision.
  std::optional<workload::Precision> gradient_reduce_precision;
  // Fractions of each kind of communication hidden under compute (system/parallelism.hpp);
  // default none, each exposed.
  system::OverlapFractions overlap;
};
// SystemRequest::shard_states by name: "none" (replicated states, one gradient all-reduce
// per step) gives false, "full" (ZeRO-3 / FSDP FULL_SHARD) and "fsdp" (the same, as PyTorch
// FSDP's FlatParameter runs it: flat_parameter_sharding) true, anything else nullopt.
std::optional<bool> shard_states_from_string(std::string_view s) noexcept;
// SystemRequest::flat_parameter by name: true for "fsdp".
bool flat_parameter_sharding(std::string_view s) noexcept;

struct ServingResult {
  bool evaluated = false;
  system::LatencyTable table;  // what the sweep and the simulation read (stack overhead included)
  system::ServingStack stack;  // the stack whose overhead the table includes
  int max_batch = 0;           // the cap the simulation ran with: min(cap, max_batch_fitting)
  std::vector<system::SweepPoint> sweep;
  std::optional<system::SimulationResult> at_rate;
  std::optional<system::SlaSearch> sla;
  system::SlaBounds sla_bounds;  // the bounds the search ran with
  int max_batch_fitting = 0;  // largest swept batch whose footprint fits one chip
  std::string reason;         // why serving was not evaluated ("" when it was or was not asked)
};

struct SystemEval {
  bool feasible = true;
  std::string reason;  // "" when feasible
  GraphEval chip;      // one chip of one replica
  system::ParallelStepCost step;
  double step_latency_s = 0.0;             // at the clock the TDP allows (power.throttle_factor)
  double unthrottled_step_latency_s = 0.0; // at the nominal clock
  double tokens_per_s = 0.0;  // whole system (all DP replicas), at step_latency_s
  // Model FLOP utilisation of the step as it runs (throttled, with its communication,
  // bubbles and updates): each chip's FLOPs over step_latency_s x the chip's matrix peak.
  double step_mfu = 0.0;
  // What limits the step: the class (compute, memory, interconnect, overhead) that takes
  // the most of its time (dominant_bottleneck, evaluate.hpp, and the step's exposed
  // communication).
  Bottleneck bottleneck = Bottleneck::compute;
  int chips = 1;
  system::PowerResult power;  // the accelerators the step runs on
  // At the wall (power.hpp wall_power): the accelerators of power, the system's idle chips at
  // their static power, the host and the power supplies' losses.
  system::WallPower wall;
  double wall_energy_per_token_j = 0.0;  // wall.wall_w x step latency / the step's tokens
  // The whole system's price and its cost per hour at wall.wall_w (system/cost.hpp, with
  // default_cost_assumptions); zero when the system file gives no price.
  system::SystemCost cost;
  double area_mm2 = 0.0;  // every chip of the system: chips x the chip's die area
  system::RiskAssessment risk;
  ServingResult serving;
  // The precision the matrix kernels run in when the platform lacks the requested one (fp8
  // on an A100, int4 anywhere: kernel_precision), and what that means; "" when they match.
  std::string kernel_precision;
  std::string precision_note;
  std::int64_t cache_hits = 0;
  std::int64_t cache_misses = 0;
};

// The spec with its tensor-parallel degree set (transformer and ViT encoder).
workload::WorkloadSpec with_tensor_parallel(workload::WorkloadSpec spec, int tp);

// One step (phase) on the system; also serving when the workload is a decoder
// and the phase is not training. Infeasible (a value) when the spec cannot be
// built or the degrees do not fit the system.
SystemEval evaluate_system(const Platform& platform, const SystemSpec& system, const SystemRequest& request);

// The simulation a served evaluation runs (at the request's rate, and the SLA search's): the
// request's lengths, batching policy, requests (a tenth of them warm-up), seed and replicas,
// at most `serving.max_batch` requests in flight per replica. Its arrival rate is the
// request's, or 1 per second when it names none; set arrival_rate_per_s to simulate another.
system::SimulationConfig serving_simulation(const SystemRequest& request, const ServingResult& serving);

// The step latency of (spec, phase) on the system at the clock its TDP allows
// (used by serving tables); 0 when the step is infeasible.
double step_latency_s(const Platform& platform, const SystemSpec& system, const SystemRequest& request,
                      const workload::PhaseSpec& phase, KernelCache& cache);

}  // namespace dse::costmodel::platform
