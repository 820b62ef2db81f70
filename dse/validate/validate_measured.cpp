// The cases of `dse validate` driven by measurement files: operators (LLMCompass's CSVs and the
// project's own), fused attention and whole LLM steps, one case per row.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "costmodel/platform/attention_benchmark.hpp"
#include "costmodel/platform/system.hpp"
#include "dse/error.hpp"
#include "dse/io/op_spec.hpp"
#include "dse/io/platform_reader.hpp"
#include "dse/validate/validate_cases.hpp"

namespace fs = std::filesystem;

namespace dse::cli::validation {

namespace {

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

}  // namespace

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

}  // namespace dse::cli::validation
