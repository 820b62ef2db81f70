// The serving cases of `dse validate` (group `serving` in scenarios/validation/suite.yaml):
// published serving measurements at stated configurations, through the same serving
// evaluation `dse eval` and `dse run` use (costmodel/platform/system.hpp evaluate_system).
//
//  llm_server    the largest output-token rate whose p99 TTFT and TPOT meet the case's SLAs
//                (sla_ttft_ms, sla_tpot_ms) under Poisson load: MLPerf Inference's Server
//                scenario, whose result is that rate's tokens/s. unit tokens/s (the system).
//  ttft_latency  time to first token of one static batch (`batch`, default 1) of prompt_tokens:
//                a benchmark's first-token latency. unit s.
//  tpot_latency  time per output token of one static batch of prompt_tokens + output_tokens
//                (the mean over its decode steps): a benchmark's inter-token latency. unit s.
//  batch_latency end-to-end latency of one static batch of prompt_tokens + output_tokens
//                (vLLM's benchmark_latency). unit s.
// Each runs the case's `stack` (scenarios/stacks; default none) with the end-to-end method's
// fusion and launch (or the case's own `launch`), on a system preset (the system's chips over tp
// as replicas) or one chip type (tp chips on the chip's own links).
#include <cmath>
#include <filesystem>
#include <string>

#include "costmodel/platform/system.hpp"
#include "dse/error.hpp"
#include "dse/io/lengths_reader.hpp"
#include "dse/io/platform_reader.hpp"
#include "dse/validate/validate_cases.hpp"

namespace dse::cli::validation {

namespace fs = std::filesystem;

namespace {

struct ServingCase {
  pf::Platform platform;
  pf::SystemSpec system;
  pf::SystemRequest request;
  int replicas = 1;
};

ServingCase serving_setup(const io::MapReader& c, const std::string& suite_dir, const Method& m) {
  ServingCase s;
  const int tp = static_cast<int>(c.positive_integer_or("tp", 1));
  if (c.has("system")) {
    io::SystemFile sf = io::resolve_system(io::preset_at(c, "system", "systems"));
    s.platform = sf.chip;
    s.system = sf.system;
  } else {
    s.platform = platform_of(c);
    s.system = pf::default_system(s.platform, tp);
  }
  if (s.system.chips % tp != 0)
    io::fail(c.place("tp"), c.node("tp"), "expected a divisor of the system's " + std::to_string(s.system.chips) + " chips",
             std::to_string(tp));
  s.replicas = s.system.chips / tp;
  pf::SystemRequest& r = s.request;
  r.spec = case_workload(c, suite_dir);
  r.degrees = {tp, 1, s.replicas, 1};
  r.options.fusion = m.e2e_fusion;
  // launch: the measured stack's kernel launch where it is not the method's end-to-end one
  // (framework: eager PyTorch, as vLLM runs with --enforce-eager or beyond its captured graphs).
  r.options.launch = c.has("launch") ? launch_of(c) : m.e2e_launch;
  r.phase.precision = io::as_precision(c.node("precision"), c.place("precision"));
  r.phase.phase = wl::Phase::decode;
  r.phase.batch = 1;
  r.phase.seq = 1;
  r.serving.stack = io::resolve_stack(c.string_or("stack", "none"));
  r.serving.static_kv_tokens = static_cast<int>(c.positive_integer_or("static_kv_tokens", 0));
  r.serving.prompt_bucket_tokens = static_cast<int>(c.positive_integer_or("prompt_bucket_tokens", 0));
  if (c.has("lengths_file")) {
    const io::LengthHistogram h = io::read_length_histogram((fs::path(suite_dir) / c.string("lengths_file")).string());
    r.serving.prompt_lengths = h.prompt;
    r.serving.output_lengths = h.output;
    r.serving.prompt_tokens = h.prompt.nominal();
    r.serving.output_tokens = h.output.nominal();
  } else {
    r.serving.prompt_tokens = static_cast<int>(c.positive_integer("prompt_tokens"));
    r.serving.output_tokens = static_cast<int>(c.positive_integer_or("output_tokens", 1));
  }
  r.phase.context = r.serving.prompt_tokens;
  return s;
}

std::string stack_text(const pf::SystemEval& e) {
  const auto& st = e.serving.stack;
  return ", stack " + st.name + (st.step_s > 0 || st.per_sequence_s > 0
                                     ? " (" + fmt(st.step_s * 1e3) + " ms + " + fmt(st.per_sequence_s * 1e3) +
                                           " ms per sequence each iteration)"
                                     : std::string());
}

void check_unit(const io::MapReader& c, const std::string& kind, const std::string& unit) {
  const std::string want = kind == "llm_server" ? "tokens/s" : "s";
  if (unit != want) io::fail(c.place("unit"), c.node("unit"), "expected " + want + " (the unit of " + kind + " cases)", unit);
}

}  // namespace

bool is_serving_kind(const std::string& kind) {
  return kind == "llm_server" || kind == "ttft_latency" || kind == "tpot_latency" || kind == "batch_latency";
}

CaseResult serving_case(const io::MapReader& c, const std::string& suite_dir, const Method& m) {
  CaseResult cr;
  cr.name = c.string("name");
  cr.group = c.string("group");
  cr.source = c.string("source");
  cr.measured = c.positive("measured");
  cr.unit = c.string("unit");
  const std::string kind = c.string("kind");
  check_unit(c, kind, cr.unit);
  ServingCase s = serving_setup(c, suite_dir, m);
  pf::SystemRequest& r = s.request;
  const int tp = r.degrees.tp;
  cr.constants = constants_text(s.platform, r.options.launch, r.options.fusion) + ", tp " + std::to_string(tp) + ", " +
                 std::to_string(s.replicas) + " replica(s)";
  if (kind == "llm_server") {
    r.serving.max_batch = static_cast<int>(c.positive_integer("max_batch"));
    r.serving.sla.ttft_p99_s = c.positive("sla_ttft_ms") * 1e-3;
    r.serving.sla.tpot_p99_s = c.positive("sla_tpot_ms") * 1e-3;
    const pf::SystemEval e = pf::evaluate_system(s.platform, s.system, r);
    if (!e.feasible) throw InputError(cr.name + ": " + e.reason);
    if (!e.serving.evaluated || !e.serving.sla) throw InputError(cr.name + ": " + e.serving.reason);
    if (!e.serving.sla->found) throw InputError(cr.name + ": no rate meets the SLA");
    const auto& at = e.serving.sla->at_max;
    cr.predicted = at.tokens_per_s_system;
    cr.constants += stack_text(e) + ", at most " + std::to_string(e.serving.max_batch) + " in flight per replica, " +
                    fmt(e.serving.sla->max_rate_per_s) + " requests/s: TTFT p99 " + fmt(at.ttft.p99_s * 1e3) +
                    " ms, TPOT p99 " + fmt(at.tpot.p99_s * 1e3) + " ms, mean batch " + fmt(at.mean_batch, 3);
  } else {
    const int batch = static_cast<int>(c.positive_integer_or("batch", 1));
    r.serving.batch_sizes = {batch};
    const pf::SystemEval e = pf::evaluate_system(s.platform, s.system, r);
    if (!e.feasible) throw InputError(cr.name + ": " + e.reason);
    if (!e.serving.evaluated || e.serving.sweep.empty()) throw InputError(cr.name + ": " + e.serving.reason);
    const auto& p = e.serving.sweep.front();
    cr.predicted = kind == "ttft_latency" ? p.ttft_s : kind == "tpot_latency" ? p.tpot_s : p.e2e_s;
    cr.constants += stack_text(e) + ", static batch " + std::to_string(batch) + ", " +
                    std::to_string(r.serving.prompt_tokens) + " + " + std::to_string(r.serving.output_tokens) +
                    " tokens";
  }
  // Only the throughput kind ranks platforms (the latency kinds differ in lengths and batch).
  if (kind == "llm_server") cr.benchmark = kind + ":" + c.string("workload");
  cr.error = (cr.predicted - cr.measured) / cr.measured;
  return cr;
}

}  // namespace dse::cli::validation
