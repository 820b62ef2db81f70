// `dse validate`'s suite read and evaluated: the method block, each case's keys checked against its
// kind and the case dispatched to it (the workload-driven kinds: validate_model.cpp; serving:
// validate_serving.cpp; power: validate_power.cpp; measurement files: validate_measured.cpp), the
// loop-nest network cases (research silicon), and the helpers the kinds share.
#include <algorithm>
#include <filesystem>
#include <optional>
#include <set>

#include "costmodel/mapper/memo.hpp"
#include "costmodel/platform/system.hpp"
#include "dse/error.hpp"
#include "dse/io/op_spec.hpp"
#include "dse/io/platform_reader.hpp"
#include "dse/io/timeloop_writer.hpp"
#include "dse/validate/validate_cases.hpp"

namespace fs = std::filesystem;

namespace dse::cli::validation {

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

std::string attention_text(const pf::Platform& p, pf::AttentionKernel k) {
  if (k == pf::AttentionKernel::native) return "";
  return ", attention kernel " + std::string(pf::to_string(k)) +
         (k == pf::AttentionKernel::flash1 ? " (2x FlashAttention-2's compute time)" : "") +
         (pf::attention_kernel_uses_warp_mma(k) && p.gpu.warp_mma_fraction < 1.0
              ? ", its matrix work at " + fmt(p.gpu.warp_mma_fraction) + " of the rate (warp MMA)"
              : std::string());
}

pf::Platform platform_of(const io::MapReader& c) {
  return io::resolve_platform(io::preset_at(c, "hardware", "hardware"));
}

wl::WorkloadSpec case_workload(const io::MapReader& c, const std::string& suite_dir) {
  std::string name = c.string("workload");
  if (name.find(".yaml") != std::string::npos) name = (fs::path(suite_dir) / name).string();
  if (const std::string why = io::unknown_workload(name); !why.empty())
    io::fail(c.place("workload"), c.node("workload"), why, excerpt(name));
  return io::resolve_workload(name);
}

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

pf::FusionStrategy fusion_of(const io::MapReader& m) {
  return choice_of(m, "fusion", pf::fusion_strategy_from_string, "expected none, standard or aggressive");
}
pf::LaunchMode launch_of(const io::MapReader& m) {
  return choice_of(m, "launch", pf::launch_mode_from_string, "expected framework or graph");
}

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

namespace {

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


// The suite's method block: the launch and fusion of the operator cases, the end-to-end cases,
// training and whole LLM steps, and the offline runs' lengths, batches and vision batch (the
// defaults of Method where the suite has no block).
Method read_method(const io::MapReader& top) {
  Method m;
  if (!top.has("method")) return m;
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
  return m;
}

// The keys of a case that is not a serving case (those take kServingCaseKeys).
constexpr std::initializer_list<const char*> kCaseKeys = {
    "name", "kind", "group", "op", "file", "dir", "hardware", "system", "workload", "precision",
    "tp", "pp", "dp", "sharding", "shard_group", "sequence_parallel", "micro_batches",
    "virtual_stages", "batch", "max_batch", "seq", "context", "recompute", "measured", "unit",
    "static_kv_tokens", "prompt_bucket_tokens", "prompt_tokens", "output_tokens", "per_chip",
    "decode_attention", "vocab", "column", "max_positions", "gradient_reduce_precision",
    "fusions", "launch", "stack", "attention_kernel", "optimizer", "loss_kernel", "logit_metrics", "overlap_data",
    "layers", "images", "backend", "ops", "phase", "at", "source"};

// The keys that only some kinds take, refused at the first one a case of another kind gives; a
// loopnest_network case is reopened with its own keys only (any other is refused with the
// allowed list).
void check_kind_keys(const io::MapReader& c, const YAML::Node& node, const io::Place& at) {
  const std::string kind = c.string("kind");
  if (c.has("fusions") && kind != "llm_step_csv" && kind != "training_mfu" && kind != "llm_offline" && kind != "power")
    io::fail(c.place("fusions"), c.node("fusions"),
             "a key of llm_step_csv, training_mfu, llm_offline and power cases only", kind);
  for (const char* key : {"ops", "phase", "at"})
    if (c.has(key) && kind != "power") io::fail(c.place(key), c.node(key), "a key of power cases only", kind);
  // launch: the measured stack's kernel launch (framework: eager PyTorch, graph: a captured graph),
  // for the training, offline-inference and serving cases whose stack says which it ran (the serving
  // kinds are read with their own key list, validate_serving.cpp, and never reach this check).
  if (c.has("launch") && kind != "training_mfu" && kind != "llm_offline")
    io::fail(c.place("launch"), c.node("launch"),
             "a key of training_mfu, llm_offline and serving (llm_server, ttft_latency, tpot_latency, "
             "batch_latency) cases only",
             kind);
  // stack: the serving runtime an offline LLM run ran (serving cases read it with their own keys).
  if (c.has("stack") && kind != "llm_offline")
    io::fail(c.place("stack"), c.node("stack"), "a key of llm_offline and serving cases only", kind);
  for (const char* key :
       {"dp", "sharding", "shard_group", "sequence_parallel", "attention_kernel", "optimizer",
        "loss_kernel", "logit_metrics", "overlap_data", "max_positions", "gradient_reduce_precision"})
    if (c.has(key) && kind != "training_mfu" && !(kind == "attention_csv" && std::string(key) == "attention_kernel"))
      io::fail(c.place(key), c.node(key),
               std::string("a key of training_mfu cases only") +
                   (std::string(key) == "attention_kernel" ? " (and attention_csv)" : ""),
               kind);
  if (c.has("backend") && kind != "attention_csv")
    io::fail(c.place("backend"), c.node("backend"), "a key of attention_csv cases only", kind);
  const bool network = kind == "loopnest_network";
  for (const char* key : {"layers", "images"})
    if (c.has(key) && !network) io::fail(c.place(key), c.node(key), "a key of loopnest_network cases only", kind);
  if (network)
    (void)io::MapReader(node, at, {"name", "kind", "group", "hardware", "layers", "images", "measured", "unit", "source"});
}

// The folders a case reads its files from: beside the suite, and the measured oracles.
struct SuitePlaces {
  std::string suite_dir, measured_dir;
};

// One (non-serving) case evaluated by its kind, its results appended to `cases`.
void evaluate_case(const io::MapReader& c, const SuitePlaces& at, const Method& m,
                   dse::costmodel::mapper::MapperCache& mapper_cache, std::vector<CaseResult>& cases) {
  const std::string kind = c.string("kind");
  if (kind == "operator_csv") {
    // dir: oracles (default: data/oracles/measured) or suite (beside this file, e.g.
    // measurements written by scripts/measure_gpu.py).
    const std::string where = c.string_or("dir", "oracles");
    if (where != "oracles" && where != "suite") io::fail(c.place("dir"), c.node("dir"), "expected oracles or suite", where);
    operator_cases(c, where == "suite" ? at.suite_dir : at.measured_dir, m, cases);
  } else if (kind == "loopnest_network") {
    cases.push_back(loopnest_network_case(c, mapper_cache));
  } else if (kind == "attention_csv") {
    attention_cases(c, at.suite_dir, cases);
  } else if (kind == "power") {
    cases.push_back(power_case(c, at.suite_dir, m));
  } else if (kind == "llm_step_csv") {
    // Measurements written by scripts/measure_gpu.py, beside this file.
    llm_step_cases(c, at.suite_dir, m, cases);
  } else {
    cases.push_back(model_case(c, at.suite_dir, m));
  }
}

// A group of --group that the suite lacks: an InputError naming the suite's groups.
void check_groups(const std::string& path, const std::vector<std::string>& only, const std::set<std::string>& groups) {
  for (const auto& g : only) {
    if (groups.count(g) != 0) continue;
    const std::vector<std::string> names(groups.begin(), groups.end());
    const std::string hint = io::did_you_mean(g, names);
    throw InputError("--group: expected a group of " + path + " (" + io::join(names) + ")" +
                     (hint.empty() ? std::string() : ", did you mean '" + hint + "'?") + " (got '" + g + "')");
  }
}

}  // namespace

std::vector<CaseResult> evaluate_suite(const std::string& path, const std::vector<std::string>& only) {
  const std::string text = io::read_text_file(path, "validation suite");
  const YAML::Node root = io::parse_yaml(text, path);
  const io::MapReader top(root, io::Place{path, ""}, {"measured_dir", "method", "cases"});
  SuitePlaces places;
  places.suite_dir = fs::path(path).parent_path().string();
  places.measured_dir = (fs::path(places.suite_dir) / top.string("measured_dir")).string();
  if (const char* e = std::getenv("DSE_ORACLES_DIR"); e != nullptr && *e != '\0')
    places.measured_dir = (fs::path(e) / "measured").string();
  const Method m = read_method(top);

  std::vector<CaseResult> cases;
  std::set<std::string> suite_groups;  // every case's group, for --group's check
  const auto selected = [&only](const std::string& group) {
    return only.empty() || std::find(only.begin(), only.end(), group) != only.end();
  };
  // One cache for the run's loop-nest cases: a layer that several cases run (per layer, per network, frames/s
  // and J/frame) is mapped once; a cached result is the one a fresh search returns, its evaluations included.
  dse::costmodel::mapper::MapperCache mapper_cache;
  const YAML::Node list = top.sequence("cases");
  for (std::size_t i = 0; i < list.size(); ++i) {
    const io::Place at = top.place("cases").item(i);
    // A serving case takes its own keys (validate_cases.hpp kServingCaseKeys).
    if (list[i].IsMap() && list[i]["kind"].IsScalar() && is_serving_kind(list[i]["kind"].Scalar())) {
      const io::MapReader c(list[i], at, kServingCaseKeys);
      suite_groups.insert(c.string("group"));
      if (selected(c.string("group"))) cases.push_back(serving_case(c, places.suite_dir, m));
      continue;
    }
    const io::MapReader c(list[i], at, kCaseKeys);
    check_kind_keys(c, list[i], at);
    suite_groups.insert(c.string("group"));
    if (selected(c.string("group"))) evaluate_case(c, places, m, mapper_cache, cases);
  }
  check_groups(path, only, suite_groups);
  return cases;
}

}  // namespace dse::cli::validation
