#include "costmodel/platform/system.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <variant>

#include "costmodel/workload/footprint.hpp"

namespace dse::costmodel::platform {

namespace wl = dse::costmodel::workload;
namespace sys = dse::costmodel::system;

std::optional<bool> shard_states_from_string(std::string_view s) noexcept {
  if (s == "none") return false;
  if (s == "full" || s == "fsdp") return true;
  return std::nullopt;
}

bool flat_parameter_sharding(std::string_view s) noexcept { return s == "fsdp"; }

std::string_view to_string(OptimizerKernel k) noexcept { return k == OptimizerKernel::unfused ? "unfused" : "fused"; }

std::optional<OptimizerKernel> optimizer_kernel_from_string(std::string_view s) noexcept {
  if (s == "fused") return OptimizerKernel::fused;
  if (s == "unfused") return OptimizerKernel::unfused;
  return std::nullopt;
}

double optimizer_update_bytes_per_parameter(OptimizerKernel k, bool master_copy) noexcept {
  const double update = k == OptimizerKernel::unfused ? 80.0 + 4.0 + 8.0 : 28.0 + 4.0;
  return update + (master_copy ? 6.0 : 0.0);
}

ShardCopyBytes shard_copy_bytes(double params, int dp, double bytes_per_element, bool mixed_precision,
                                int micro_batches) noexcept {
  ShardCopyBytes b;
  if (dp < 2 || params <= 0.0) return b;
  const double e = bytes_per_element;
  const double m = static_cast<double>(std::max(1, micro_batches));
  const double shard = params / static_cast<double>(dp);
  b.compute_stream = m * 2.0 * params * e;
  const double per_micro =
      2.0 * params * e + 2.0 * shard * e + (mixed_precision ? shard * (e + 4.0) + 2.0 * shard * (4.0 + e) : 0.0);
  b.beside_collectives = m * per_micro + (m - 1.0) * 12.0 * shard;
  return b;
}

SystemSpec default_system(const Platform& p, int chips) {
  SystemSpec s;
  s.name = p.gpu.name + "-x" + std::to_string(chips);
  s.chips = chips;
  s.interconnect = sys::make_switch(chips, p.links);
  s.power.tdp_w = p.energy.tdp_w;
  s.power.static_power_w = p.energy.static_power_w;
  s.power.min_clock_fraction = 0.3;
  return s;
}

wl::WorkloadSpec with_tensor_parallel(wl::WorkloadSpec spec, int tp) {
  if (auto* t = std::get_if<wl::TransformerSpec>(&spec)) t->tensor_parallel = tp;
  if (auto* v = std::get_if<wl::VitSpec>(&spec)) v->encoder.tensor_parallel = tp;
  return spec;
}

namespace {

struct StepOut {
  bool ok = true;
  std::string reason;
  GraphEval chip;
  sys::ParallelStepCost step;
  sys::PowerResult power;  // the step's power on the system under its TDP
  double time_s = 0.0;     // the step's time at the clock the TDP allows (step.step_time_s / throttle)
};

double hidden_of(const wl::WorkloadSpec& s) {
  if (const auto* t = std::get_if<wl::TransformerSpec>(&s)) return static_cast<double>(t->hidden);
  if (const auto* v = std::get_if<wl::VitSpec>(&s)) return static_cast<double>(v->encoder.hidden);
  return 0.0;
}

// Pipeline parallelism: a chip holds its stage's 1/p of the layers, so 1/p of the
// weights, gradients, optimizer state and KV cache. Training activations follow the
// 1F1B schedule (Korthikanti et al. 2022, section 4.2.3): the first stage keeps
// min(m, p) micro-batches in flight over its L/p layers, i.e. min(m, p)/p of one
// micro-batch's activations of the whole model, times 1 + (p - 1) / (p v) under the
// interleaved schedule of v chunks per chip. An inference step's peak is one
// operator's live set, which a stage does not change. (The embedding and the head sit
// on the first and last stage; they are spread here like the layers.)
//
// Sharded states (ZeRO-3 / FSDP FULL_SHARD over d = dp chips, or d = shard_group under
// hybrid sharding): each chip keeps 1/d of
// the weights, gradients and optimizer state (Rajbhandari et al. 2020, section 5.3:
// (2 + 2 + K) Psi / N_d) plus the full parameters of the unit being computed and of
// the one whose all-gather is prefetched (PyTorch FSDP's limit_all_gathers: "only two
// consecutive FSDP instances"), the unit being the largest block (a layer).
int shard_degree(const SystemRequest& r) {
  return sys::states_shard_degree(r.shard_group, r.degrees.dp * r.degrees.cp);
}

// Ring context parallelism (workload/spec.hpp ContextParallel::ring): a block's sends to the
// next chip of the CP group. Each forward ring core ("attn_ring_qk", also rerun under
// recomputation) sends the chip's key-value chunk on cp - 1 times; each backward core sends the
// chunk and its gradient, 2 (cp - 1) times. The chunk is the chip's seq / cp tokens of K and V:
// four times the K half-block the ring core reads per step.
void ring_sends(const wl::OperatorGraph& g, const wl::Block& b, int cp, sys::BlockWork& w) {
  const wl::FoundOp core = wl::find_op(g, "attn_ring_qk");
  if (cp < 2 || core.op == nullptr) return;
  const double steps = static_cast<double>(cp - 1);
  for (const wl::Node& n : b.nodes) {
    const std::string& name = n.op.name;
    if (name == "attn_ring_qk" || name == "attn_ring_qk.recompute") w.cp_sends += steps;
    if (name == "attn_ring_qk.bwd_a") w.cp_sends += 2.0 * steps;
  }
  if (w.cp_sends > 0.0) w.cp_send_bytes = 4.0 * wl::bytes(core.op->tensors.at(1)) / steps;
}

void stage_memory(GraphEval& chip, const wl::OperatorGraph& g, const wl::PhaseSpec& phase, const SystemRequest& r) {
  const int p = r.degrees.pp;
  const bool shard = r.shard_states && phase.phase == wl::Phase::training && shard_degree(r) > 1;
  if (p <= 1 && !shard) return;
  wl::MemoryFootprint& f = chip.footprint;
  const double share = 1.0 / static_cast<double>(p) / (shard ? static_cast<double>(shard_degree(r)) : 1.0);
  f.weight_bytes *= share;
  f.gradient_bytes *= share;
  f.optimizer_bytes *= share;
  if (shard) {
    double unit = 0.0;
    for (const wl::Block& b : g.blocks) unit = std::max(unit, wl::totals(b).parameter_bytes);
    f.weight_bytes += 2.0 * unit;
  }
  f.kv_cache_bytes /= static_cast<double>(p);
  if (phase.phase == wl::Phase::training) {
    const double pd = static_cast<double>(p);
    const double m = static_cast<double>(std::max(1, r.micro_batches));
    const double v = static_cast<double>(std::max(1, r.virtual_stages));
    f.activation_bytes *= std::min(m, pd) / pd * (v > 1.0 ? 1.0 + (pd - 1.0) / (pd * v) : 1.0);
  }
  chip.totals.memory_bytes = f.total_bytes();
  chip.fits_memory = chip.totals.memory_bytes <= chip.totals.hbm_bytes_capacity;
}

// The bottleneck class that takes the most time: the layers' time by class (each layer
// its latency x repeats), plus `interconnect_s` more interconnect time.
Bottleneck dominant_class(const GraphEval& chip, double interconnect_s) {
  ClassTimes by_class;
  for (const LayerResult& l : chip.layers) by_class.add(l.bottleneck, l.latency_s * static_cast<double>(l.repeat));
  by_class.add(Bottleneck::interconnect, interconnect_s);
  return by_class.dominant();
}

// One chip's tokens (its 1/cp of the sequence under context parallelism), and the bytes of an
// activation element (bf16 under FP8 training: workload/spec.hpp apply_fp8_training).
double chip_tokens(const wl::PhaseSpec& ph) { return static_cast<double>(ph.batch * (ph.seq / ph.context_parallel)); }
double activation_bytes(const wl::PhaseSpec& ph) {
  return ph.phase == wl::Phase::training && ph.precision == wl::Precision::fp8 ? 2.0
                                                                               : wl::bytes_per_element(ph.precision);
}

// Each layer's work for the parallel step (a block repeated is that many layers): its time on the
// chip, its attention's time, the MoE blocks' (those with a router) token exchange over the EP
// group and the ring CP sends.
void block_work(const wl::OperatorGraph& g, const GraphEval& chip, const wl::WorkloadSpec& spec,
                const SystemRequest& r, const wl::PhaseSpec& ph, sys::StepWork& work) {
  const auto* tspec = std::get_if<wl::TransformerSpec>(&spec);
  const double tokens = chip_tokens(ph);
  const double act_bytes = activation_bytes(ph);
  for (std::size_t b = 0; b < g.blocks.size(); ++b) {
    double a2a = 0.0;
    if (tspec != nullptr && tspec->experts > 0 && r.degrees.ep > 1)
      for (const auto& n : g.blocks[b].nodes)
        if (n.op.name == "moe_router")
          a2a = sys::moe_all_to_all_bytes(tokens, static_cast<double>(tspec->hidden), static_cast<int>(tspec->top_k),
                                          act_bytes);
    sys::BlockWork w{chip.block_latency_s[b], 0.0, a2a};
    w.attention_s = chip.block_attention_s[b];
    ring_sends(g, g.blocks[b], r.degrees.cp, w);
    for (std::int64_t i = 0; i < g.blocks[b].repeat; ++i) work.blocks.push_back(w);
  }
}

// A training step's per-chip state work: the gradients each chip reduces (its stage's 1/pp of the
// parameters), the optimizer update on this chip's own parameters (OptimizerKernel, system.hpp),
// under sharded states the copies around the collectives (shard_copy_bytes), and FP8 training's
// weight casts: the FP8 GEMMs' weights read in bf16 and written row-wise and column-wise in FP8
// once per step (workload/spec.hpp apply_fp8_training): 2 + 2 x 1 B per element. Returns their
// HBM traffic (bytes), for the step's energy.
double training_state_work(const Platform& p, const SystemRequest& r, const wl::PhaseSpec& phase,
                           const wl::OperatorGraph& g, double act_bytes, sys::StepWork& work) {
  const wl::GraphTotals totals = wl::totals(g);
  const double stages = static_cast<double>(std::max(1, r.degrees.pp));
  work.gradient_bytes = totals.parameter_bytes / stages;
  if (r.gradient_reduce_precision)
    work.gradient_reduce_bytes = totals.parameters / stages * wl::bytes_per_element(*r.gradient_reduce_precision);
  const bool shard = r.shard_states && shard_degree(r) > 1;
  const bool mixed = phase.precision != wl::Precision::fp32;
  const double chip_params = totals.parameters / stages;
  const double local = chip_params / (shard ? static_cast<double>(shard_degree(r)) : 1.0);
  const double update = local * optimizer_update_bytes_per_parameter(r.optimizer, mixed);
  const ShardCopyBytes copies = shard && r.flat_parameter
                                    ? shard_copy_bytes(chip_params, shard_degree(r), act_bytes, mixed, r.micro_batches)
                                    : ShardCopyBytes{};
  const double casts = 4.0 * g.fp8_weight_elements / stages;
  const double bw = p.gpu.hbm_bandwidth_bytes_per_s();
  if (bw > 0.0) {
    work.optimizer_s = update / bw;
    work.weight_cast_s = casts / bw;
    work.shard_copies_s = copies.compute_stream / bw;
    work.shard_side_copies_s = copies.beside_collectives / bw;
  }
  return update + casts + copies.compute_stream + copies.beside_collectives;
}

// What the parallel step costs of the chip's graph: its blocks, micro-batches and virtual stages,
// the activation a stage hands on (under sequence parallelism each TP rank holds 1/tp of it, the
// layer boundary being sequence-sharded: Korthikanti et al. 2022, section 4.2.2, and sends only
// that share), state sharding and, in training, the state work. `state_bytes`: that work's HBM
// traffic (0 outside training).
sys::StepWork step_work(const Platform& p, const SystemRequest& r, const wl::PhaseSpec& phase,
                        const wl::PhaseSpec& ph, const wl::WorkloadSpec& spec, const wl::OperatorGraph& g,
                        const GraphEval& chip, double& state_bytes) {
  sys::StepWork work;
  block_work(g, chip, spec, r, ph, work);
  const double act_bytes = activation_bytes(ph);
  work.micro_batches = std::max(1, r.micro_batches);
  work.virtual_stages = r.virtual_stages;
  work.compute_bottleneck = dominant_class(chip, 0.0);
  work.stage_boundary_bytes = chip_tokens(ph) * hidden_of(spec) * act_bytes /
                              (r.sequence_parallel ? static_cast<double>(r.degrees.tp) : 1.0);
  work.shard_states = r.shard_states;
  work.shard_group = r.shard_group;
  state_bytes = phase.phase == wl::Phase::training ? training_state_work(p, r, phase, g, act_bytes, work) : 0.0;
  return work;
}

// Power: the step's dynamic energy on all chips (chip graph energy x tp x dp per micro-batch, m of
// them; with PP each chip runs its share of the same graph; and every chip's optimizer update and
// shard copies) over the step, plus static power, capped at the TDP (power.hpp). The step runs at
// the clock the cap allows; a cap it cannot meet makes the step infeasible (no TDP given, or an
// empty step: invalid_input, no cap applies).
void step_power(const Platform& p, const SystemSpec& system, const SystemRequest& r, const wl::PhaseSpec& phase,
                double state_bytes, StepOut& o) {
  const auto& d = r.degrees;
  const double micro = static_cast<double>(std::max(1, r.micro_batches));
  sys::PowerInput pin;
  pin.busy_time_s = o.step.step_time_s;
  pin.dynamic_energy_j = o.chip.totals.dynamic_energy_j * static_cast<double>(d.tp * d.cp * d.dp) * micro +
                         state_bytes * p.energy.hbm_byte_j * static_cast<double>(d.tp * d.cp * d.pp * d.dp);
  pin.tokens = phase.phase == wl::Phase::decode ? static_cast<double>(phase.batch * phase.seq * d.dp)
                                                : o.chip.totals.tokens * static_cast<double>(d.dp) * micro;
  pin.requests = static_cast<double>(phase.batch * d.dp);
  pin.chips = d.tp * d.cp * d.pp * d.dp;
  o.power = sys::evaluate_power(system.power, pin);
  o.time_s = o.step.step_time_s;
  if (o.power.feasible) {
    o.time_s = o.power.latency_s;
  } else if (o.power.status != sys::PowerStatus::invalid_input) {
    o.ok = false;
    o.reason = "power: " + std::string(sys::to_string(o.power.status));
  }
}

StepOut run_step(const Platform& p, const SystemSpec& system, const SystemRequest& r, const wl::PhaseSpec& phase,
                 KernelCache& cache) {
  StepOut o;
  const wl::WorkloadSpec spec = with_tensor_parallel(r.spec, r.degrees.tp);
  wl::PhaseSpec ph = phase;
  ph.context_parallel = r.degrees.cp;  // the graph is one chip's of the CP group
  const std::string why = wl::check(spec, ph);
  if (!why.empty()) {
    o.ok = false;
    o.reason = why;
    return o;
  }
  const wl::OperatorGraph g = wl::build_graph(spec, ph);
  EvalOptions opt = r.options;
  opt.phase = ph;
  opt.interconnect = system.interconnect;
  opt.sequence_parallel = r.sequence_parallel;
  const sys::ServingStack& stack = r.serving.stack ? *r.serving.stack : system.default_stack;
  opt.all_reduce_kernel = stack.tp_all_reduce;
  opt.custom_all_reduce_max_bytes = stack.tp_all_reduce_max_bytes;
  o.chip = evaluate_graph(p, g, opt, &cache);
  stage_memory(o.chip, g, ph, r);
  double state_bytes = 0.0;
  const sys::StepWork work = step_work(p, r, phase, ph, spec, g, o.chip, state_bytes);
  o.step = sys::evaluate_parallel_step(system.interconnect, r.degrees, work, r.overlap,
                                       sys::CollectiveAlgorithm::ring);
  if (!o.step.feasible) {
    o.ok = false;
    o.reason = "parallelism: " + std::string(sys::to_string(o.step.status));
    return o;
  }
  step_power(p, system, r, phase, state_bytes, o);
  return o;
}

int precision_bits(wl::Precision p) {
  return static_cast<int>(std::lround(8.0 * wl::bytes_per_element(p)));
}

}  // namespace

double step_latency_s(const Platform& platform, const SystemSpec& system, const SystemRequest& request,
                      const wl::PhaseSpec& phase, KernelCache& cache) {
  const StepOut o = run_step(platform, system, request, phase, cache);
  return o.ok ? o.time_s : 0.0;
}

int served_prefill_tokens(const ServingOptions& so, int length) noexcept {
  const int m = so.prompt_bucket_tokens;
  return m > 0 ? (length + m) / m * m : length;  // round_up(length + 1, m)
}

int served_decode_context(const ServingOptions& so, int length) noexcept {
  return so.static_kv_tokens > 0 ? so.static_kv_tokens : length;
}

std::string serving_shape_problem(const ServingOptions& so) {
  if (so.prompt_tokens < 1 || so.output_tokens < 1)
    return "prompt and output tokens are >= 1 (got " + std::to_string(so.prompt_tokens) + " and " +
           std::to_string(so.output_tokens) + ")";
  const long long total = static_cast<long long>(so.prompt_tokens) + so.output_tokens;
  if (total > std::numeric_limits<int>::max())
    return "prompt + output tokens (" + std::to_string(total) + ") exceed " +
           std::to_string(std::numeric_limits<int>::max());
  if (so.static_kv_tokens > 0 && so.static_kv_tokens < total)
    return "static_kv_tokens " + std::to_string(so.static_kv_tokens) + " is below prompt + output tokens (" +
           std::to_string(total) + ")";
  if (so.static_kv_tokens < 0 || so.prompt_bucket_tokens < 0) return "static_kv_tokens and prompt_bucket_tokens are >= 0";
  return "";
}

std::vector<int> serving_batch_sizes(const ServingOptions& so) {
  if (so.max_batch <= 0) return so.batch_sizes;
  std::vector<int> out;
  for (long long b = 1; b < so.max_batch; b *= 2) out.push_back(static_cast<int>(b));
  out.push_back(so.max_batch);
  return out;
}

namespace {

sys::LengthDistribution prompt_distribution(const ServingOptions& so) {
  return so.prompt_lengths ? *so.prompt_lengths : sys::LengthDistribution::fixed(so.prompt_tokens);
}
sys::LengthDistribution output_distribution(const ServingOptions& so) {
  return so.output_lengths ? *so.output_lengths : sys::LengthDistribution::fixed(so.output_tokens);
}

}  // namespace

std::vector<int> serving_lengths(const ServingOptions& so) {
  if (!so.prompt_lengths && !so.output_lengths) return {so.prompt_tokens, so.prompt_tokens + so.output_tokens};
  const sys::LengthDistribution pd = prompt_distribution(so);
  const sys::LengthDistribution od = output_distribution(so);
  const long long hi = static_cast<long long>(pd.highest()) + od.highest();
  std::vector<int> out{pd.lowest(), so.prompt_tokens, so.prompt_tokens + so.output_tokens,
                       static_cast<int>(std::min<long long>(hi, std::numeric_limits<int>::max()))};
  for (long long l = 64; l < hi; l *= 2)
    if (l > pd.lowest()) out.push_back(static_cast<int>(l));
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

namespace {

// The latency table of a served model: for each batch size and length, the prefill of the
// batch's prompts and one decode step at that context, at the clock the TDP allows, plus
// the stack's per-iteration overhead. Stops at the first batch size whose steps cannot run.
void build_serving_table(const Platform& platform, const SystemSpec& system, const SystemRequest& request,
                         const sys::ServingStack& stack, KernelCache& cache, ServingResult& out) {
  const ServingOptions& so = request.serving;
  sys::LatencyTable& table = out.table;
  // The table is indexed by the sequences' own lengths; a static-shape stack runs
  // each at its padded shape (ServingOptions).
  table.lengths = serving_lengths(so);
  const int fit_length = so.prompt_tokens + so.output_tokens;
  for (int b : serving_batch_sizes(so)) {
    wl::PhaseSpec pre = request.phase;
    pre.phase = wl::Phase::prefill;
    pre.batch = b;
    pre.context = 0;
    wl::PhaseSpec dec = request.phase;
    dec.phase = wl::Phase::decode;
    dec.batch = b;
    dec.seq = 1;
    bool fits = true;
    std::vector<double> pre_s, dec_s;
    for (int len : table.lengths) {
      pre.seq = served_prefill_tokens(so, len);
      dec.context = served_decode_context(so, len);
      const StepOut a = run_step(platform, system, request, pre, cache);
      const StepOut c = run_step(platform, system, request, dec, cache);
      if (!a.ok || !c.ok) {
        if (table.batches.empty())  // the smallest batch: no sweep at all, and this is why
          out.reason = "batch " + std::to_string(b) + ", " + std::to_string(len) + " tokens: " +
                       (!a.ok ? "prefill: " + a.reason : "decode: " + c.reason);
        fits = false;
        break;
      }
      if (len == fit_length && !c.chip.fits_memory) fits = false;
      pre_s.push_back(a.time_s + stack.overhead_s(b));
      dec_s.push_back(c.time_s + stack.overhead_s(b));
    }
    if (pre_s.size() != table.lengths.size()) break;
    table.batches.push_back(b);
    table.prefill_s.insert(table.prefill_s.end(), pre_s.begin(), pre_s.end());
    table.decode_step_s.insert(table.decode_step_s.end(), dec_s.begin(), dec_s.end());
    if (fits) out.max_batch_fitting = b;
  }
}

}  // namespace

sys::SimulationConfig serving_simulation(const SystemRequest& request, const ServingResult& serving) {
  const ServingOptions& so = request.serving;
  const auto& d = request.degrees;
  sys::SimulationConfig sim;
  sim.requests = so.requests;
  sim.warmup_requests = so.requests / 10;
  sim.seed = so.seed;
  sim.policy = so.policy;
  sim.batch_timeout_s = so.batch_timeout_s;
  sim.max_batch = serving.max_batch;
  sim.prompt = prompt_distribution(so);
  sim.output = output_distribution(so);
  sim.instances = d.dp;
  sim.chips_per_instance = d.tp * d.pp;
  if (so.rate_per_s) sim.arrival_rate_per_s = *so.rate_per_s;
  return sim;
}

namespace {

// Serving a decoder: the latency table, the static-batch sweep over its batch sizes, the
// simulation at the request's rate and the search for the largest rate meeting the SLA.
void serve(const Platform& platform, const SystemSpec& system, const SystemRequest& request, KernelCache& cache,
           ServingResult& out) {
  const ServingOptions& so = request.serving;
  const auto& d = request.degrees;
  out.reason = serving_shape_problem(so);
  if (!out.reason.empty()) return;
  out.stack = so.stack ? *so.stack : system.default_stack;
  build_serving_table(platform, system, request, out.stack, cache, out);
  if (!sys::valid(out.table)) return;
  out.evaluated = true;
  const sys::LatencyModel model = sys::latency_model_from_table(out.table);
  sys::SweepConfig sc;
  sc.batch_sizes = out.table.batches;
  sc.prompt_tokens = so.prompt_tokens;
  sc.output_tokens = so.output_tokens;
  sc.chips_per_instance = d.tp * d.pp;
  sc.instances = d.dp;
  out.sweep = sys::latency_throughput_sweep(model, sc);
  out.max_batch = std::max(1, so.max_batch > 0 ? std::min(so.max_batch, out.max_batch_fitting) : out.max_batch_fitting);
  const sys::SimulationConfig sim = serving_simulation(request, out);
  if (so.rate_per_s) out.at_rate = sys::simulate_serving(model, sim);
  out.sla_bounds = so.sla;
  if (so.sla.any()) out.sla = sys::max_rate_meeting_sla(model, sim, so.sla, 1e-2);
}

// What limits the step: the class of its layers' and its exposed communication's time
// (the communication counted as interconnect time) that takes the most of it.
Bottleneck step_bottleneck(const GraphEval& chip, const sys::ParallelStepCost& step) {
  return dominant_class(chip, step.exposed_comm_s);
}

// The step's model FLOP utilisation as it runs: each chip's FLOPs (its 1/pp of the graph for
// each of m micro-batches) over the throttled step time x the matrix peak the graph's own
// MFU was taken against (flops / (latency x mfu)).
double step_mfu(const GraphEval& chip, const SystemRequest& r, double step_latency_s) {
  const auto& t = chip.totals;
  if (!(t.mfu > 0.0) || !(t.latency_s > 0.0) || !(step_latency_s > 0.0)) return 0.0;
  const double peak = t.flops / (t.latency_s * t.mfu);
  const double flops = t.flops * static_cast<double>(std::max(1, r.micro_batches)) /
                       static_cast<double>(std::max(1, r.degrees.pp));
  return flops / (step_latency_s * peak);
}

// The chip's power figures tagged R (ChipEnergy::recalled_figures) that a point at kernel
// precision `p` depends on: the TDP, the static power, the energy per HBM byte and the matrix
// FLOP energy of p (the FP32, INT8/FP8 or 16-bit one, as matrix_flop_energy picks it). The
// vector and L2 energies are rule figures on every preset and are not counted.
std::vector<std::string> recalled_power_figures(const Platform& platform, Precision p) {
  const char* flop = p == Precision::fp32                          ? "matrix_flop_fp32_j"
                     : p == Precision::int8 || p == Precision::fp8 ? "matrix_flop_int8_j"
                                                                   : "matrix_flop_fp16_j";
  std::vector<std::string> out;
  for (const auto& f : platform.energy.recalled_figures)
    if (f == "tdp_w" || f == "static_power_w" || f == "hbm_byte_j" || f == flop) out.push_back(f);
  return out;
}

}  // namespace

SystemEval evaluate_system(const Platform& platform, const SystemSpec& system, const SystemRequest& request) {
  SystemEval out;
  KernelCache cache;
  const auto& d = request.degrees;
  out.chips = d.tp * d.cp * d.pp * d.dp;
  const std::string wanted(wl::to_string(request.phase.precision));
  const std::string runs(to_string(kernel_precision(platform.gpu, request.phase.precision)));
  if (runs != wanted) {
    out.kernel_precision = runs;
    out.precision_note =
        (request.phase.precision == wl::Precision::int4
             ? wanted + " runs as " + runs + " (no int4 kernels are modelled): the kernels move "
             : wanted + " is not a precision of this platform's matrix engine: the kernels run " + runs +
                   " and move ") +
        runs + " operands, while the memory footprint counts " + wanted +
        " tensors (weight-only quantization, narrow weights widened inside the kernel, is not modelled)";
  }
  StepOut o = run_step(platform, system, request, request.phase, cache);
  out.chip = std::move(o.chip);
  out.step = o.step;
  out.power = o.power;
  if (!o.ok) {
    out.feasible = false;
    out.reason = o.reason;
    return out;
  }
  out.unthrottled_step_latency_s = o.step.step_time_s;
  out.step_latency_s = o.time_s;
  const double tokens = out.chip.totals.tokens * static_cast<double>(d.dp) *
                        static_cast<double>(std::max(1, request.micro_batches));
  out.tokens_per_s = out.step_latency_s > 0 ? tokens / out.step_latency_s : 0.0;
  out.step_mfu = step_mfu(out.chip, request, out.step_latency_s);
  out.bottleneck = step_bottleneck(out.chip, out.step);
  const int idle_chips = std::max(0, system.chips - out.chips);
  out.wall = sys::wall_power(system.host, out.power.power_w, idle_chips * system.power.static_power_w,
                             system.chips * system.power.tdp_w);
  out.cost = sys::system_cost(system.price, system.chips, out.wall.wall_w, sys::default_cost_assumptions());
  out.area_mm2 = static_cast<double>(system.chips) * platform.die_area_mm2;
  const double step_tokens = out.power.energy_per_token_j > 0.0 ? out.power.energy_j / out.power.energy_per_token_j : 0.0;
  if (step_tokens > 0.0) out.wall_energy_per_token_j = out.wall.wall_w * out.power.latency_s / step_tokens;

  sys::RiskInputs ri;
  ri.stack_maturity = platform.stack_maturity;
  ri.min_precision_bits = precision_bits(request.phase.precision);
  ri.unsupported_fusions = out.chip.unsupported_fusion_groups;
  const double cap = platform.gpu.hbm_bytes;
  ri.memory_headroom_fraction = cap > 0 ? (cap - out.chip.totals.memory_bytes) / cap : 0.0;
  ri.recalled_power_figures = recalled_power_figures(platform, kernel_precision(platform.gpu, request.phase.precision));
  out.risk = sys::assess_risk(ri);

  // Serving: decoder inference only.
  const auto* tspec = std::get_if<wl::TransformerSpec>(&request.spec);
  const bool decoder = tspec != nullptr && tspec->arch == wl::Arch::decoder;
  if (request.serving.enabled && decoder && request.phase.phase != wl::Phase::training)
    serve(platform, system, request, cache, out.serving);
  out.cache_hits = cache.hits;
  out.cache_misses = cache.misses;
  return out;
}

}  // namespace dse::costmodel::platform
