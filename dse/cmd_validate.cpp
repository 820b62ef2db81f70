// `dse validate [--json] [--suite FILE]`: runs the validation suite
// (scenarios/validation/suite.yaml) and compares predictions with published
// measurements: per case measured, predicted, signed relative error
// (predicted - measured) / measured, and the constants the case used; per group
// n, mean, median and max absolute error. Constants are per platform (the
// hardware presets) plus the suite's method block, the same for every case.
#include <boost/program_options.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <variant>
#include <vector>

#include "costmodel/mapper/memo.hpp"
#include "costmodel/platform/attention_benchmark.hpp"
#include "costmodel/platform/system.hpp"
#include "dse/commands.hpp"
#include "dse/error.hpp"
#include "dse/op_spec.hpp"
#include "dse/platform_reader.hpp"
#include "dse/platform_report.hpp"
#include "dse/timeloop_writer.hpp"
#include "dse/workload_reader.hpp"
#include "dse/yaml_reader.hpp"

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace dse::cli {

namespace pf = dse::costmodel::platform;
namespace wl = dse::costmodel::workload;

namespace {

struct CaseResult {
  std::string name, group, source, unit, constants;
  std::string file;       // the measurement file of a CSV-driven case, "" for the others
  std::string benchmark;  // "kind:workload" of throughput cases, for the rank-order check
  double measured = 0.0, predicted = 0.0, error = 0.0;
};

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

std::string fmt(double v, int p = 4) { return io::format_number(v, p); }

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

// A step whose modelled memory exceeds the chip's, as the constants line says it ("" when it fits):
// the measured run fitted, so the model's memory for it is high (it is not refused: time and
// MFU do not depend on it).
std::string memory_text(const pf::Platform& p, const pf::SystemEval& e) {
  if (e.chip.fits_memory) return "";
  return ", modelled memory " + fmt(e.chip.totals.memory_bytes / 1e9, 4) + " GB of the chip's " +
         fmt(p.gpu.hbm_bytes / 1e9, 4) + " (does not fit)";
}

// The stack's attention kernel as the constants line gives it ("" for the default, native).
std::string attention_text(const pf::Platform& p, pf::AttentionKernel k) {
  if (k == pf::AttentionKernel::native) return "";
  return ", attention kernel " + std::string(pf::to_string(k)) +
         (k == pf::AttentionKernel::flash1 ? " (2x FlashAttention-2's compute time)" : "") +
         (pf::attention_kernel_uses_warp_mma(k) && p.gpu.warp_mma_fraction < 1.0
              ? ", its matrix work at " + fmt(p.gpu.warp_mma_fraction) + " of the rate (warp MMA)"
              : std::string());
}

// A key naming one of a set of choices, read with `parse` (a *_from_string); anything else
// fails with the key's place and `expected`.
template <class Parse>
auto choice_of(const io::MapReader& m, const std::string& key, Parse parse, const std::string& expected) {
  const std::string s = m.string(key);
  const auto v = parse(s);
  if (!v) io::fail(m.place(key), m.node(key), expected, s);
  return *v;
}

// A CSV file's rows, each cell without its leading blanks, and each row's line number in the
// file; blank lines skipped, and with `comments` lines starting with '#'.
struct CsvRows {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::size_t> lines;
};
CsvRows read_csv_rows(const std::string& path, bool comments = false) {
  std::ifstream in(path);
  if (!in) throw IoError("cannot read " + path);
  CsvRows out;
  std::string line;
  for (std::size_t n = 1; std::getline(in, line); ++n) {
    if (line.empty() || (comments && line[0] == '#')) continue;
    std::vector<std::string> cells;
    std::stringstream ss(line);
    std::string c;
    while (std::getline(ss, c, ',')) {
      c.erase(0, c.find_first_not_of(" \t"));
      cells.push_back(c);
    }
    out.rows.push_back(std::move(cells));
    out.lines.push_back(n);
  }
  return out;
}
std::vector<std::vector<std::string>> read_csv(const std::string& path) { return read_csv_rows(path).rows; }

double single_op_latency(const pf::Platform& p, wl::Operator op, const Method& m) {
  wl::OperatorGraph g;
  g.name = op.name;
  wl::Block b;
  b.name = "op";
  b.nodes.push_back(wl::Node{std::move(op), {}});
  g.blocks.push_back(std::move(b));
  pf::EvalOptions o;
  o.fusion = m.op_fusion;
  o.launch = m.op_launch;
  o.phase.precision = wl::Precision::fp16;
  return pf::evaluate_graph(p, g, o).totals.latency_s;
}

// A case's hardware preset; a name that is neither a preset nor a file is reported at the case's
// key (with the presets it may have meant), not as a missing file.
pf::Platform platform_of(const io::MapReader& c) {
  return io::resolve_platform(io::preset_at(c, "hardware", "hardware"));
}

void operator_cases(const io::MapReader& c, const std::string& dir, const Method& m, std::vector<CaseResult>& out) {
  const std::string op = c.string("op"), file = c.string("file");
  const pf::Platform p = platform_of(c);
  const auto F = wl::Precision::fp16;
  const std::string stem = fs::path(file).stem().string();
  for (const auto& r : read_csv((fs::path(dir) / file).string())) {
    CaseResult cr;
    cr.group = c.string("group");
    cr.source = c.string("source") + " [" + file + "]";
    cr.file = file;
    cr.unit = "s";
    cr.constants = constants_text(p, m.op_launch, m.op_fusion);
    if (op == "matmul") {
      const auto M = std::stoll(r.at(0)), N = std::stoll(r.at(1)), K = std::stoll(r.at(2));
      cr.name = stem + " " + r[0] + "x" + r[1] + "x" + r[2];
      cr.measured = std::stod(r.at(3)) * 1e-3;  // "0.1900ms"
      cr.predicted = single_op_latency(p, wl::make_linear("mm", wl::LayerType::ffn, M, N, K, F), m);
    } else if (op == "gelu") {
      const auto n = std::stoll(r.at(0));
      cr.name = stem + " " + r[0];
      cr.measured = static_cast<double>(n) / (std::stod(r.at(1)) * 1e9);
      cr.predicted = single_op_latency(p, wl::make_elementwise("gelu", wl::LayerType::ffn, 1, n, 7.0, 1, F), m);
    } else {
      const auto M = std::stoll(r.at(0)), N = std::stoll(r.at(1));
      cr.name = stem + " " + r[0] + "x" + r[1];
      cr.measured = static_cast<double>(M * N) / (std::stod(r.at(2)) * 1e9);
      wl::Operator o = op == "softmax" ? wl::make_softmax("softmax", wl::LayerType::attention, M, N, F)
                                       : wl::make_norm("layernorm", wl::OpKind::layernorm, M, N, F);
      cr.predicted = single_op_latency(p, std::move(o), m);
    }
    cr.error = (cr.predicted - cr.measured) / cr.measured;
    out.push_back(cr);
  }
}

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
void attention_cases(const io::MapReader& c, const std::string& dir, std::vector<CaseResult>& out) {
  const std::string file = c.string("file");
  const std::string stem = c.has("name") ? c.string("name") : fs::path(file).stem().string();
  const pf::Platform p = platform_of(c);
  const pf::AttentionKernel kernel =
      c.has("attention_kernel")
          ? choice_of(c, "attention_kernel", pf::attention_kernel_from_string, "expected native, flash2 or flash1")
          : pf::AttentionKernel::flash2;
  const std::string path = (fs::path(dir) / file).string();
  const CsvRows csv = read_csv_rows(path, true);
  const auto& rows = csv.rows;
  if (rows.empty()) throw InputError(path + ": no header line");
  const auto& head = rows[0];
  const auto col = [&](const std::string& name) -> std::optional<std::size_t> {
    const auto it = std::find(head.begin(), head.end(), name);
    if (it == head.end()) return std::nullopt;
    return static_cast<std::size_t>(it - head.begin());
  };
  const auto need = [&](const char* name) {
    const auto at = col(name);
    if (!at) throw InputError(path + ": the header line has no column " + name);
    return *at;
  };
  const std::size_t pass_col = need("pass"), mask_col = need("mask"), dim_col = need("head_dim"), seq_col = need("seq");
  const auto batch_col = col("batch"), heads_col = col("heads"), backend_col = col("backend");
  if (backend_col && !c.has("backend"))
    io::fail(c.place("file"), c.node("file"), "expected the case's backend: the file has a backend column", file);
  if (!backend_col && c.has("backend"))
    io::fail(c.place("backend"), c.node("backend"), "expected no backend: " + file + " has no backend column",
             c.string("backend"));
  const std::string column = c.string_or("column", col("device_ms") ? "device_ms" : "tflops");
  const auto mcol = col(column);
  if (!mcol || column == "pass" || column == "mask" || column == "head_dim" || column == "seq" || column == "backend")
    io::fail(c.place("column"), c.node("column"), "expected a measurement column of " + path, column);
  const bool tflops = column == "tflops";
  std::size_t taken = 0;
  for (std::size_t i = 1; i < rows.size(); ++i) {
    const auto& r = rows[i];
    const std::string where = path + ": line " + std::to_string(csv.lines[i]);
    if (r.size() != head.size()) throw InputError(where + ": expected " + std::to_string(head.size()) + " cells");
    if (backend_col && r[*backend_col] != c.string("backend")) continue;
    pf::AttentionBenchmark b;
    const std::string pass = r[pass_col], mask = r[mask_col];
    if ((pass != "forward" && pass != "backward") || (mask != "none" && mask != "causal"))
      throw InputError(where + ": expected pass forward or backward and mask none or causal");
    b.backward = pass == "backward";
    b.causal = mask == "causal";
    b.head_dim = std::stoll(r[dim_col]);
    b.seq = std::stoll(r[seq_col]);
    b.batch = batch_col ? std::stoll(r[*batch_col]) : 16384 / b.seq;
    b.heads = heads_col ? std::stoll(r[*heads_col]) : 2048 / b.head_dim;
    b.kernel = kernel;
    const double v = std::stod(r[*mcol]);
    if (b.head_dim < 1 || b.seq < 1 || b.batch < 1 || b.heads < 1 || !(v > 0.0))
      throw InputError(where + ": expected positive head_dim, seq, batch, heads and " + column);
    CaseResult cr;
    cr.group = c.string("group");
    cr.source = c.string("source") + " [" + file + ", " + column + "]";
    cr.file = file;
    cr.unit = "s";
    cr.name = stem + " " + (b.backward ? "bwd" : "fwd") + (b.causal ? " causal" : "") + " d" + r[dim_col] + " s" +
              r[seq_col];
    cr.measured = tflops ? pf::attention_benchmark_flops(b) / (v * 1e12) : v * 1e-3;
    cr.predicted = pf::attention_benchmark_latency_s(p, b);
    if (!(cr.predicted > 0.0)) throw InputError(cr.name + ": the platform runs no fused attention kernel");
    cr.constants = constants_text(p, pf::LaunchMode::graph, "flash_attention") + attention_text(p, kernel);
    cr.error = (cr.predicted - cr.measured) / cr.measured;
    out.push_back(cr);
    ++taken;
  }
  if (taken == 0) io::fail(c.place("backend"), c.node("backend"), "expected a backend of " + path + "'s rows", c.string("backend"));
}

// A case's workload: a preset name, or a workload file beside the suite.
wl::WorkloadSpec case_workload(const io::MapReader& c, const std::string& suite_dir) {
  std::string name = c.string("workload");
  if (name.find(".yaml") != std::string::npos) name = (fs::path(suite_dir) / name).string();
  if (const std::string why = io::unknown_workload(name); !why.empty())
    io::fail(c.place("workload"), c.node("workload"), why, "\"" + name + "\"");
  return io::resolve_workload(name);
}

// The list under `fusions` (fusion kind names, at least one).
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

// Whole forward steps of a decoder measured by scripts/measure_gpu.py (<prefix>_llama.csv,
// <prefix>_power_check.csv: a header line, then phase, batch, new tokens per sequence,
// context = tokens attended with the new ones, and device-ms columns), one case per row.
// The case's `column` names the one compared (default graph_device_ms); its stack is the
// method's llm_steps launch and fusions, or the case's own `fusions` (the measured
// stack's, e.g. plain PyTorch: flash_attention). Each step is evaluated as a system step,
// at the clock the TDP allows. Cases are named "<name> <phase> b<batch> s<tokens> ctx<context>"
// with the case's `name`, default the file's stem (two files of one stem need a name).
void llm_step_cases(const io::MapReader& c, const std::string& dir, const Method& m, std::vector<CaseResult>& out) {
  const std::vector<pf::FusionKind> fusions = c.has("fusions") ? fusions_of(c) : m.step_fusions;
  const std::string file = c.string("file");
  const std::string stem = c.has("name") ? c.string("name") : fs::path(file).stem().string();
  const pf::Platform p = platform_of(c);
  const auto prec = wl::precision_from_string(c.string_or("precision", "bf16"));
  if (!prec) io::fail(c.place("precision"), c.node("precision"), "expected fp32, bf16, fp16, fp8, int8 or int4", c.string("precision"));
  const auto spec = case_workload(c, dir);
  const std::string path = (fs::path(dir) / file).string();
  const auto rows = read_csv(path);
  if (rows.empty() || rows[0].empty() || rows[0][0] != "phase")
    throw InputError(path + ": expected a header line starting with 'phase'");
  const std::string column = c.string_or("column", "graph_device_ms");
  const auto col_it = std::find(rows[0].begin(), rows[0].end(), column);
  if (col_it == rows[0].end() || col_it - rows[0].begin() < 4) {
    if (c.has("column")) io::fail(c.place("column"), c.node("column"), "expected a device-ms column of " + path, column);
    throw InputError(path + ": no column " + column);
  }
  const auto col = static_cast<std::size_t>(col_it - rows[0].begin());
  for (std::size_t i = 1; i < rows.size(); ++i) {
    const auto& r = rows[i];
    if (r.size() <= col) throw InputError(path + ": row " + std::to_string(i + 1) + " has no column " + column);
    const std::string phase = r[0];
    if (phase != "prefill" && phase != "decode")
      throw InputError(path + ": row " + std::to_string(i + 1) + ": phase '" + phase +
                       "' is neither prefill nor decode");
    const std::int64_t batch = std::stoll(r[1]), tokens = std::stoll(r[2]), context = std::stoll(r[3]);
    // Prefill from an empty cache (context = tokens); decode after context - tokens cached ones.
    if (batch < 1 || tokens < 1 || context < tokens || (phase == "prefill" && context != tokens))
      throw InputError(path + ": row " + std::to_string(i + 1) + ": expected batch >= 1, tokens >= 1 and context >= tokens (= tokens for prefill)");
    CaseResult cr;
    cr.group = c.string("group");
    cr.source = c.string("source") + " [" + file + ", " + column + "]";
    cr.file = file;
    cr.unit = "s";
    cr.name = stem + " " + phase + " b" + r[1] + " s" + r[2] + " ctx" + r[3];
    cr.measured = std::stod(r[col]) * 1e-3;
    pf::SystemRequest q;
    q.spec = spec;
    q.options.fusion_kinds = fusions;
    q.options.launch = m.step_launch;
    q.phase.precision = *prec;
    q.serving.enabled = false;
    q.phase.batch = batch;
    q.phase.phase = phase == "prefill" ? wl::Phase::prefill : wl::Phase::decode;
    q.phase.seq = tokens;
    q.phase.context = context - tokens;  // the model's context: tokens already in the cache (0 in prefill)
    const pf::SystemEval e = pf::evaluate_system(p, pf::default_system(p, 1), q);
    if (!e.feasible) throw InputError(cr.name + ": " + e.reason);
    cr.predicted = e.step_latency_s;
    cr.constants = constants_text(p, m.step_launch, kinds_text(fusions));
    cr.error = (cr.predicted - cr.measured) / cr.measured;
    out.push_back(cr);
  }
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

pf::LaunchMode launch_of(const io::MapReader& m);

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

// The throughput cases of each benchmark (CaseResult::benchmark), in suite order.
std::map<std::string, std::vector<const CaseResult*>> by_benchmark(const std::vector<CaseResult>& cases) {
  std::map<std::string, std::vector<const CaseResult*>> by;
  for (const auto& c : cases)
    if (!c.benchmark.empty()) by[c.benchmark].push_back(&c);
  return by;
}

// Per benchmark with several platforms: is the measured order of throughput preserved?
std::map<std::string, bool> rank_orders(const std::vector<CaseResult>& cases) {
  std::map<std::string, bool> out;
  for (const auto& [b, v] : by_benchmark(cases)) {
    if (v.size() < 2) continue;
    bool ok = true;
    for (const auto* x : v)
      for (const auto* y : v)
        if (x->measured > y->measured && !(x->predicted > y->predicted)) ok = false;
    out[b] = ok;
  }
  return out;
}

// Per benchmark with several platforms, how much faster the measured fastest platform is
// than each other one, measured and predicted: what a shortlist compares. error =
// predicted speedup / measured speedup - 1.
struct Speedup {
  std::string benchmark;
  const CaseResult* faster = nullptr;
  const CaseResult* slower = nullptr;
  double measured = 0.0, predicted = 0.0, error = 0.0;
};
std::vector<Speedup> platform_speedups(const std::vector<CaseResult>& cases) {
  std::vector<Speedup> out;
  for (const auto& [b, v] : by_benchmark(cases)) {
    if (v.size() < 2) continue;
    const CaseResult* best = *std::max_element(
        v.begin(), v.end(), [](const CaseResult* x, const CaseResult* y) { return x->measured < y->measured; });
    for (const auto* x : v) {
      if (x == best || !(x->predicted > 0.0)) continue;
      Speedup s{b, best, x, best->measured / x->measured, best->predicted / x->predicted, 0.0};
      s.error = s.predicted / s.measured - 1.0;
      out.push_back(s);
    }
  }
  return out;
}

// Absolute relative errors of a set of cases: count, mean, median, max.
struct ErrorStats {
  std::size_t n = 0;
  double mean = 0.0, median = 0.0, max = 0.0;
};
ErrorStats stats_of(std::vector<double> abs) {
  ErrorStats st;
  st.n = abs.size();
  if (abs.empty()) return st;
  std::sort(abs.begin(), abs.end());
  for (double a : abs) st.mean += a;
  st.mean /= static_cast<double>(st.n);
  st.median = st.n % 2 ? abs[st.n / 2] : 0.5 * (abs[st.n / 2 - 1] + abs[st.n / 2]);
  st.max = abs.back();
  return st;
}
std::string stats_json(const ErrorStats& st) {
  return "\"n\": " + std::to_string(st.n) + ", \"mean_abs_error\": " + io::json_number(st.mean) +
         ", \"median_abs_error\": " + io::json_number(st.median) + ", \"max_abs_error\": " + io::json_number(st.max);
}

pf::FusionStrategy fusion_of(const io::MapReader& m) {
  return choice_of(m, "fusion", pf::fusion_strategy_from_string, "expected none, standard or aggressive");
}
pf::LaunchMode launch_of(const io::MapReader& m) {
  return choice_of(m, "launch", pf::launch_mode_from_string, "expected framework or graph");
}

}  // namespace

int cmd_validate(const Args& args) {
  std::string suite = io::scenarios_dir() + "/validation/suite.yaml";
  std::vector<std::string> only;
  po::options_description named(
      "dse validate [--json] [--suite FILE] [--group NAME ...]\n\nRuns the validation suite: predictions against "
      "published measurements,\nwith the error of each case, per group and per measurement file.\n\noptions");
  named.add_options()("help,h", "print this help")("json", "print one JSON object")(
      "suite", po::value<std::string>(&suite), "suite file (default: scenarios/validation/suite.yaml)")(
      "group", po::value<std::vector<std::string>>(&only)->composing(),
      "evaluate only the cases of this group (e.g. end_to_end; repeatable): the tables, statistics, rank "
      "orders and speedups are those of these cases");
  po::variables_map vm;
  if (!parse_options(args, named, no_positionals(), vm)) return exit_ok;

  const std::string text = io::read_text_file(suite, "validation suite");
  const YAML::Node root = io::parse_yaml(text, suite);
  const io::MapReader top(root, io::Place{suite, ""}, {"measured_dir", "method", "cases"});
  const std::string suite_dir = fs::path(suite).parent_path().string();
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
    const io::MapReader c(list[i], top.place("cases").item(i),
                          {"name", "kind", "group", "op", "file", "dir", "hardware", "system", "workload", "precision",
                           "tp", "pp", "dp", "sharding", "shard_group", "sequence_parallel", "micro_batches",
                           "virtual_stages", "batch", "max_batch", "seq", "context", "recompute", "measured", "unit",
                           "static_kv_tokens", "prompt_bucket_tokens", "prompt_tokens", "output_tokens", "per_chip",
                           "decode_attention", "vocab", "column", "max_positions", "gradient_reduce_precision",
                           "fusions", "launch", "attention_kernel", "optimizer", "loss_kernel", "logit_metrics", "overlap_data",
                           "layers", "images", "backend", "source"});
    if (c.has("fusions") && c.string("kind") != "llm_step_csv" && c.string("kind") != "training_mfu" &&
        c.string("kind") != "llm_offline")
      io::fail(c.place("fusions"), c.node("fusions"), "a key of llm_step_csv, training_mfu and llm_offline cases only",
               c.string("kind"));
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
      // dir: oracles (default: ../shared/oracles/measured) or suite (beside this file, e.g.
      // measurements written by scripts/measure_gpu.py).
      const std::string where = c.string_or("dir", "oracles");
      if (where != "oracles" && where != "suite") io::fail(c.place("dir"), c.node("dir"), "expected oracles or suite", where);
      operator_cases(c, where == "suite" ? suite_dir : measured_dir, m, cases);
    } else if (c.string("kind") == "loopnest_network") {
      cases.push_back(loopnest_network_case(c, mapper_cache));
    } else if (c.string("kind") == "attention_csv") {
      attention_cases(c, suite_dir, cases);
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
    throw InputError("--group: expected a group of " + suite + " (" + io::join(names) + ")" +
                     (hint.empty() ? std::string() : ", did you mean '" + hint + "'?") + " (got '" + g + "')");
  }

  // Per group, and per measurement file (the CSV-driven cases): which file carries the error.
  std::map<std::string, std::vector<double>> group_abs, file_abs;
  std::map<std::string, std::string> file_group;
  for (const auto& c : cases) {
    group_abs[c.group].push_back(std::fabs(c.error));
    if (!c.file.empty()) {
      file_abs[c.file].push_back(std::fabs(c.error));
      file_group[c.file] = c.group;
    }
  }
  // Per benchmark with several platforms, the fastest one's speedup over each other one.
  const std::vector<Speedup> speedups = platform_speedups(cases);
  std::vector<double> speedup_abs;
  for (const auto& x : speedups) speedup_abs.push_back(std::fabs(x.error));
  const ErrorStats speedup_stats = stats_of(speedup_abs);

  if (vm.count("json") != 0) {
    std::cout << "{\"suite\": " << io::json_string(suite) << ", \"cases\": [";
    for (std::size_t i = 0; i < cases.size(); ++i) {
      const auto& c = cases[i];
      std::cout << (i ? ", " : "") << "{\"name\": " << io::json_string(c.name) << ", \"group\": "
                << io::json_string(c.group) << ", \"source\": " << io::json_string(c.source)
                << ", \"measured\": " << io::json_number(c.measured) << ", \"predicted\": "
                << io::json_number(c.predicted) << ", \"error\": " << io::json_number(c.error)
                << ", \"unit\": " << io::json_string(c.unit) << ", \"constants\": " << io::json_string(c.constants)
                << (c.file.empty() ? std::string() : ", \"file\": " + io::json_string(c.file)) << "}";
    }
    std::cout << "], \"groups\": {";
    bool first = true;
    for (const auto& [name, abs] : group_abs) {
      std::cout << (first ? "" : ", ") << io::json_string(name) << ": {" << stats_json(stats_of(abs)) << "}";
      first = false;
    }
    std::cout << "}, \"files\": {";
    first = true;
    for (const auto& [name, abs] : file_abs) {
      std::cout << (first ? "" : ", ") << io::json_string(name) << ": {\"group\": " << io::json_string(file_group[name])
                << ", " << stats_json(stats_of(abs)) << "}";
      first = false;
    }
    std::cout << "}, \"rank_order_preserved\": {";
    first = true;
    for (const auto& [b, ok] : rank_orders(cases)) {
      std::cout << (first ? "" : ", ") << io::json_string(b) << ": " << (ok ? "true" : "false");
      first = false;
    }
    std::cout << "}, \"platform_speedups\": [";
    for (std::size_t i = 0; i < speedups.size(); ++i) {
      const Speedup& x = speedups[i];
      std::cout << (i ? ", " : "") << "{\"benchmark\": " << io::json_string(x.benchmark)
                << ", \"faster\": " << io::json_string(x.faster->name)
                << ", \"slower\": " << io::json_string(x.slower->name)
                << ", \"measured\": " << io::json_number(x.measured)
                << ", \"predicted\": " << io::json_number(x.predicted)
                << ", \"error\": " << io::json_number(x.error) << "}";
    }
    std::cout << "], \"platform_speedup_errors\": {" << stats_json(speedup_stats) << "}}\n";
    return exit_ok;
  }
  // The case and group columns are as wide as the longest name, so columns never run together.
  std::size_t name_width = 45, group_width = 13;
  for (const auto& c : cases) {
    name_width = std::max(name_width, c.name.size());
    group_width = std::max(group_width, c.group.size());
  }
  const int case_w = static_cast<int>(name_width) + 1, group_w = static_cast<int>(group_width) + 1;
  std::cout << std::left << std::setw(case_w) << "case" << std::setw(group_w) << "group" << std::right << std::setw(12)
            << "measured" << std::setw(12) << "predicted" << std::setw(9) << "error" << "  unit\n";
  for (const auto& c : cases)
    std::cout << std::left << std::setw(case_w) << c.name << std::setw(group_w) << c.group << std::right
              << std::setw(12) << fmt(c.measured) << std::setw(12) << fmt(c.predicted) << std::setw(8)
              << fmt(100 * c.error, 3) << "%  " << c.unit << '\n';
  std::cout << "\nsources and constants per case:\n";
  std::string last;
  for (const auto& c : cases) {
    const std::string line = c.source + "\n      constants: " + c.constants;
    if (line != last) std::cout << "  " << c.name << ": " << line << '\n';
    last = line;
  }
  auto print_stats = [](const std::string& name, std::size_t width, const ErrorStats& st) {
    std::cout << std::left << std::setw(static_cast<int>(width)) << name << std::right << std::setw(4) << st.n
              << std::setw(10) << fmt(100 * st.mean, 3) << "%" << std::setw(11) << fmt(100 * st.median, 3) << "%"
              << std::setw(9) << fmt(100 * st.max, 3) << "%\n";
  };
  std::cout << '\n' << std::left << std::setw(group_w) << "group" << std::right << std::setw(4) << "n"
            << "   mean|err|  median|err|  max|err|\n";
  for (const auto& [name, abs] : group_abs) print_stats(name, static_cast<std::size_t>(group_w), stats_of(abs));
  if (!file_abs.empty()) {
    std::cout << "\nfile                                         n   mean|err|  median|err|  max|err|\n";
    for (const auto& [name, abs] : file_abs) print_stats(name, 42, stats_of(abs));
  }
  for (const auto& [b, ok] : rank_orders(cases))
    std::cout << "rank order of platforms on " << b << ": " << (ok ? "preserved" : "NOT preserved") << '\n';
  if (!speedups.empty()) {
    std::cout << "\nspeedup of each benchmark's measured fastest platform over the others"
                 " (measured, predicted, error):\n";
    for (const auto& x : speedups)
      std::cout << "  " << x.faster->name << " over " << x.slower->name << ": x" << fmt(x.measured, 4) << ", x"
                << fmt(x.predicted, 4) << ", " << fmt(100 * x.error, 3) << "%\n";
    const ErrorStats& st = speedup_stats;
    std::cout << "speedups: " << st.n << " pairs, mean|err| " << fmt(100 * st.mean, 3) << "%, median "
              << fmt(100 * st.median, 3) << "%, max " << fmt(100 * st.max, 3) << "%\n";
  }
  return exit_ok;
}

}  // namespace dse::cli
