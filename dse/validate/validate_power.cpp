// `dse validate`'s power cases (kind `power`, unit W): the power the model gives a chip or a system
// at a workload whose power was measured, against that measurement. Three shapes of case:
//  * ops: [OPERATOR, ...] -- operators in the layer-list form of a workload file, run once on one
//    chip of `hardware` (e.g. a sustained GEMM: {name: g, kind: gemm, m: M, n: N, k: K}), at the
//    clock the chip's TDP allows: the accelerator's power of that step;
//  * workload + phase (prefill | decode) + batch, seq, context: one step of a model on one chip (or
//    on `system` with tp chips), at the clock the TDP allows;
//  * workload + system (no phase): an offline LLM run as the llm_offline cases cost it (the best
//    static batch of the method's list up to max_batch, the method's mean prompt and output lengths,
//    tp chips per replica and every chip of the system busy): its time-weighted mean power over one
//    batch, the prefill step and output - 1 decode steps at the mean context.
// `at`: accelerators (default) or wall (the system's power at the wall, costmodel/system/power.hpp
// wall_power: its host section).
#include <algorithm>
#include <string>
#include <vector>

#include "costmodel/platform/system.hpp"
#include "dse/error.hpp"
#include "dse/io/platform_reader.hpp"
#include "dse/io/workload_reader.hpp"
#include "dse/validate/validate_cases.hpp"

namespace dse::cli::validation {

namespace {

// A power figure of an evaluated step: the accelerators' or the wall's.
double power_at(const pf::SystemEval& e, bool wall) { return wall ? e.wall.wall_w : e.power.power_w; }

// The operators of `ops` as a one-block workload named after the case.
wl::WorkloadSpec ops_workload(const io::MapReader& c, const std::string& name) {
  YAML::Node block;
  block["name"] = "b";
  block["ops"] = c.sequence("ops");
  YAML::Node root;
  root["name"] = name;
  root["blocks"].push_back(block);
  return io::parse_workload(root, c.place("ops"));
}

pf::SystemEval evaluate_or_fail(const pf::Platform& p, const pf::SystemSpec& s, const pf::SystemRequest& r,
                                const std::string& name) {
  pf::SystemEval e = pf::evaluate_system(p, s, r);
  if (!e.feasible) throw InputError(name + ": " + e.reason);
  return e;
}

// The offline run's mean power: the best static batch (llm_offline's rule), then its prefill step
// and a decode step at the mean context, each on every chip of the system, weighted by their time
// in one batch (one prefill, output - 1 decode steps).
double offline_power(const pf::Platform& p, const pf::SystemSpec& sys, pf::SystemRequest r, const io::MapReader& c,
                     const Method& m, bool wall, std::string& constants) {
  const int tp = r.degrees.tp;
  const int prompt = static_cast<int>(c.positive_integer_or("prompt_tokens", m.prompt));
  const int output = static_cast<int>(c.positive_integer_or("output_tokens", m.output));
  r.serving.enabled = true;
  r.serving.batch_sizes = m.batches;
  if (c.has("max_batch")) {
    const int cap = static_cast<int>(c.positive_integer("max_batch"));
    std::erase_if(r.serving.batch_sizes, [cap](int b) { return b >= cap; });
    r.serving.batch_sizes.push_back(cap);
  }
  r.serving.prompt_tokens = prompt;
  r.serving.output_tokens = output;
  r.phase.phase = wl::Phase::decode;
  r.phase.batch = 1;
  r.phase.seq = 1;
  r.phase.context = prompt;
  const std::string name = c.string("name");
  const pf::SystemEval sweep = evaluate_or_fail(p, sys, r, name);
  int best_b = 0;
  double best = 0.0;
  for (const auto& s : sweep.serving.sweep)
    if (s.batch <= std::max(1, sweep.serving.max_batch_fitting) && s.tokens_per_s_system > best) {
      best = s.tokens_per_s_system;
      best_b = s.batch;
    }
  if (best_b == 0) throw InputError(name + ": no batch of the case fits memory");
  r.serving.enabled = false;
  r.degrees.dp = std::max(1, sys.chips / tp);  // every replica busy
  r.phase.batch = best_b;
  r.phase.phase = wl::Phase::prefill;
  r.phase.seq = prompt;
  r.phase.context = 0;
  const pf::SystemEval pre = evaluate_or_fail(p, sys, r, name);
  r.phase.phase = wl::Phase::decode;
  r.phase.seq = 1;
  r.phase.context = prompt + output / 2;
  const pf::SystemEval dec = evaluate_or_fail(p, sys, r, name);
  const double t_pre = pre.step_latency_s, t_dec = dec.step_latency_s * static_cast<double>(output - 1);
  const double mean = (power_at(pre, wall) * t_pre + power_at(dec, wall) * t_dec) / (t_pre + t_dec);
  constants += ", best static batch " + std::to_string(best_b) + " per replica, " + std::to_string(r.degrees.dp) +
               " replica(s) of tp " + std::to_string(tp) + ", " + std::to_string(prompt) + " + " +
               std::to_string(output) + " tokens: modelled " + fmt(best * static_cast<double>(r.degrees.dp), 5) +
               " tokens/s; prefill " + fmt(power_at(pre, wall), 4) + " W at " +
               fmt(100 * pre.power.throttle_factor, 3) + "% clock, decode " + fmt(power_at(dec, wall), 4) + " W at " +
               fmt(100 * dec.power.throttle_factor, 3) + "% clock (accelerators " + fmt(dec.wall.accelerators_w, 4) +
               " W, host " + fmt(dec.wall.host_w, 4) + " W of which fans " + fmt(dec.wall.fans_w, 4) +
               " W, supply losses " + fmt(dec.wall.psu_loss_w, 4) + " W), decode " +
               fmt(100 * t_dec / (t_pre + t_dec), 3) + "% of the time";
  return mean;
}

}  // namespace

CaseResult power_case(const io::MapReader& c, const std::string& suite_dir, const Method& m) {
  CaseResult cr;
  cr.name = c.string("name");
  cr.group = c.string("group");
  cr.source = c.string("source");
  cr.unit = c.string("unit");
  cr.measured = c.positive("measured");
  if (cr.unit != "W") io::fail(c.place("unit"), c.node("unit"), "expected W (the unit of power cases)", cr.unit);
  const std::string at = c.string_or("at", "accelerators");
  if (at != "accelerators" && at != "wall") io::fail(c.place("at"), c.node("at"), "expected accelerators or wall", at);
  const bool wall = at == "wall";
  const int tp = static_cast<int>(c.positive_integer_or("tp", 1));
  pf::Platform p;
  pf::SystemSpec sys;
  if (c.has("system")) {
    const io::SystemFile sf = io::resolve_system(io::preset_at(c, "system", "systems"));
    p = sf.chip;
    sys = sf.system;
  } else {
    p = platform_of(c);
    sys = pf::default_system(p, tp);
  }
  if (wall && !c.has("system")) io::fail(c.place("at"), c.node("at"), "a system case (the wall needs a host)", at);
  pf::SystemRequest r;
  r.degrees.tp = tp;
  r.options.launch = m.e2e_launch;
  r.options.fusion = m.e2e_fusion;
  if (c.has("fusions")) r.options.fusion_kinds = fusions_of(c);
  r.phase.precision =
      choice_of(c, "precision", wl::precision_from_string, "expected fp32, bf16, fp16, fp8, int8 or int4");
  r.serving.enabled = false;
  cr.constants = constants_text(p, r.options.launch,
                                r.options.fusion_kinds ? kinds_text(*r.options.fusion_kinds)
                                                       : std::string(pf::to_string(r.options.fusion))) +
                 ", TDP " + fmt(sys.power.tdp_w, 4) + " W, static " + fmt(sys.power.static_power_w, 4) + " W";
  if (c.has("ops") || c.has("phase")) {
    if (c.has("ops") == c.has("workload"))
      io::fail(c.place("ops"), c.self(), "either ops (operators) or workload with phase", "both or neither");
    r.spec = c.has("ops") ? ops_workload(c, cr.name) : case_workload(c, suite_dir);
    r.phase.phase = c.has("ops") ? wl::Phase::prefill : io::as_phase(c.node("phase"), c.place("phase"));
    r.phase.batch = c.positive_integer_or("batch", 1);
    r.phase.seq = c.positive_integer_or("seq", 1);
    r.phase.context = c.has("context") ? c.positive_integer("context") : 0;
    const pf::SystemEval e = evaluate_or_fail(p, sys, r, cr.name);
    cr.predicted = power_at(e, wall);
    cr.constants += ", clock " + fmt(100 * e.power.throttle_factor, 4) + "% of nominal (" +
                    fmt(e.power.unthrottled_power_per_chip_w, 4) + " W per chip unthrottled), " +
                    fmt(e.chip.totals.flops / e.step_latency_s / 1e12, 4) + " TFLOP/s per chip";
  } else {
    if (!c.has("system"))
      io::fail(c.place("workload"), c.node("workload"), "a system case (an offline run)", "no system");
    r.spec = case_workload(c, suite_dir);
    cr.predicted = offline_power(p, sys, r, c, m, wall, cr.constants);
  }
  cr.error = (cr.predicted - cr.measured) / cr.measured;
  return cr;
}

}  // namespace dse::cli::validation
