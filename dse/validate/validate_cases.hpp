// Internal to the `dse validate` sources (dse/validate/validate_*.cpp): the suite's method block, the
// case kinds each file evaluates, and the helpers they share.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "costmodel/platform/evaluate.hpp"
#include "dse/io/platform_report.hpp"
#include "dse/validate/validate_suite.hpp"
#include "dse/io/workload_reader.hpp"
#include "dse/io/yaml_reader.hpp"

namespace dse::cli::validation {

namespace pf = dse::costmodel::platform;
namespace wl = dse::costmodel::workload;

struct Method {
  pf::FusionStrategy op_fusion = pf::FusionStrategy::none, e2e_fusion = pf::FusionStrategy::aggressive;
  pf::LaunchMode op_launch = pf::LaunchMode::framework, e2e_launch = pf::LaunchMode::graph;
  // training_mfu group: fusion of the cited training stacks (defaults to end_to_end's)
  std::optional<pf::FusionStrategy> train_fusion;
  // llm_steps group: whole forward steps timed on a GPU by scripts/measure_gpu.py;
  // the fusion kinds of the measured stack (method key `fusions`), else none.
  std::vector<pf::FusionKind> step_fusions;
  pf::LaunchMode step_launch = pf::LaunchMode::graph;
  int prompt = 1024, output = 265;
  std::vector<int> batches{1, 2, 4, 8, 16, 32, 64, 128, 256, 512};
  std::int64_t vision_batch = 256;
};

inline std::string fmt(double v, int p = 4) { return io::format_number(v, p); }

// A key naming one of a set of choices, read with `parse` (a *_from_string); anything else
// fails with the key's place and `expected`.
template <class Parse>
auto choice_of(const io::MapReader& m, const std::string& key, Parse parse, const std::string& expected) {
  const std::string s = m.string(key);
  const auto v = parse(s);
  if (!v) io::fail(m.place(key), m.node(key), expected, s);
  return *v;
}

std::string kinds_text(const std::vector<pf::FusionKind>& kinds);

std::string constants_text(const pf::Platform& p, pf::LaunchMode launch, const std::string& fusion);
std::string constants_text(const pf::Platform& p, pf::LaunchMode launch, pf::FusionStrategy fusion);

// The stack's attention kernel as the constants line gives it ("" for the default, native).
std::string attention_text(const pf::Platform& p, pf::AttentionKernel k);

// A case's hardware preset; a name that is neither a preset nor a file is reported at the case's
// key (with the presets it may have meant), not as a missing file.
pf::Platform platform_of(const io::MapReader& c);

// A case's workload: a preset name, or a workload file beside the suite.
wl::WorkloadSpec case_workload(const io::MapReader& c, const std::string& suite_dir);

// The list under `fusions` (fusion kind names, at least one).
std::vector<pf::FusionKind> fusions_of(const io::MapReader& r);

// The `fusion` (none, standard, aggressive) and `launch` (framework, graph) keys of a block.
pf::FusionStrategy fusion_of(const io::MapReader& m);
pf::LaunchMode launch_of(const io::MapReader& m);

// A case's name, group, source, unit and measured value, as every model-driven kind reads them.
CaseResult case_of(const io::MapReader& c);

// A case that a workload drives through the system model (dse/validate/validate_model.cpp):
// llm_offline, vision_offline, encoder_offline, decode_latency or training_mfu; any other kind is
// an InputError naming it.
CaseResult model_case(const io::MapReader& c, const std::string& suite_dir, const Method& m);

void operator_cases(const io::MapReader& c, const std::string& dir, const Method& m, std::vector<CaseResult>& out);

// Fused attention kernels timed at FlashAttention's benchmark shapes (pf::AttentionBenchmark),
// one case per row of a CSV file beside the suite. '#' lines are comments; the first other line
// names the columns: pass (forward, backward), mask (none, causal), head_dim, seq; batch and
// heads where the file has them, else the FlashAttention-3 paper's 16k tokens and hidden 2048
// (batch 16384 / seq, heads 2048 / head_dim); and the measurement, `column`: a time in ms
// (device_ms, kernels_ms; default device_ms where the file has it) or tflops as the benchmarks
// count FLOPs (pf::attention_benchmark_flops). A file with a `backend` column (several
// libraries' kernels) needs the case's `backend`, whose rows the case takes. The model's kernel
// is the case's `attention_kernel` (default flash2). Cases are named
// "<name> <fwd|bwd>[ causal] d<head_dim> s<seq>", name default the file's stem.
void attention_cases(const io::MapReader& c, const std::string& dir, std::vector<CaseResult>& out);

// Whole forward steps of a decoder measured by scripts/measure_gpu.py (<prefix>_llama.csv,
// <prefix>_power_check.csv: a header line, then phase, batch, new tokens per sequence,
// context = tokens attended with the new ones, and device-ms columns), one case per row.
// The case's `column` names the one compared (default graph_device_ms); its stack is the
// method's llm_steps launch and fusions, or the case's own `fusions` (the measured
// stack's, e.g. plain PyTorch: flash_attention). Each step is evaluated as a system step,
// at the clock the TDP allows. Cases are named "<name> <phase> b<batch> s<tokens> ctx<context>"
// with the case's `name`, default the file's stem (two files of one stem need a name).
void llm_step_cases(const io::MapReader& c, const std::string& dir, const Method& m, std::vector<CaseResult>& out);

// The serving kinds (llm_server, ttft_latency, tpot_latency, batch_latency:
// dse/validate/validate_serving.cpp), their case keys, and one case of them.
bool is_serving_kind(const std::string& kind);
inline constexpr std::initializer_list<const char*> kServingCaseKeys = {
    "name",         "kind",          "group",          "system",         "hardware",    "workload",
    "precision",    "tp",            "batch",          "max_batch",      "prompt_tokens", "output_tokens",
    "lengths_file", "sla_ttft_ms",   "sla_tpot_ms",    "stack",          "static_kv_tokens",
    "prompt_bucket_tokens", "launch", "measured",    "unit",          "source"};
CaseResult serving_case(const io::MapReader& c, const std::string& suite_dir, const Method& m);

// A power case (kind power, unit W; dse/validate/validate_power.cpp): the accelerators' or the wall's
// power the model gives a measured workload -- operators on one chip (ops), one step of a model
// (workload, phase) or an offline LLM run on a system -- against its measured power.
CaseResult power_case(const io::MapReader& c, const std::string& suite_dir, const Method& m);

}  // namespace dse::cli::validation
