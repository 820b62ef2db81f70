#include "dse/driver/run.hpp"

#include <oneapi/tbb/task_arena.h>

#include <chrono>
#include <cstddef>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <map>

#include "costmodel/layer.hpp"
#include "dse/driver/context.hpp"
#include "dse/driver/mapping_sheets.hpp"
#include "dse/driver/run_chips.hpp"
#include "dse/error.hpp"
#include "dse/version.hpp"
#include "dse/io/yaml_reader.hpp"
#include "search/dominance_filter.hpp"
#include "search/pareto.hpp"

namespace dse {

namespace {

const std::vector<search::Sense> kSenses = {search::Sense::maximize, search::Sense::minimize,
                                            search::Sense::minimize, search::Sense::minimize};

std::string now_iso8601() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

Bytes to_bytes(const std::string& s) { return {s.begin(), s.end()}; }
std::string to_string(const Bytes& b) { return {b.begin(), b.end()}; }

// Rank 0 runs `f`; every rank gets its string result or rethrows its error kind.
template <class F>
std::string on_root(Context& ctx, F f) {
  std::string payload;
  if (ctx.rank() == 0) {
    try {
      payload = "T" + f();
    } catch (const InputError& e) {
      payload = std::string("E") + e.what();
    } catch (const Error& e) {
      payload = std::string("I") + e.what();
    }
  }
  const std::string got = to_string(ctx.broadcast(to_bytes(payload), 0));
  if (got.empty()) throw Error("rank 0 sent nothing");
  if (got[0] == 'E') throw InputError(got.substr(1));
  if (got[0] == 'I') throw IoError(got.substr(1));
  return got.substr(1);
}

// /points in the finished file: 16,384-row chunks, byte shuffle + deflate level 1 (the
// fastest level; shuffle groups the bytes of each column, which does most of the work).
constexpr std::uint64_t kPointsChunkRows = 16384;
constexpr int kPointsDeflateLevel = 1;

std::string read_scenario_of_partial(const std::string& partial) {
  std::error_code ec;
  if (!std::filesystem::exists(partial, ec)) {
    throw InputError(partial + ": no interrupted run to resume (the file does not exist)");
  }
  h5::quiet_errors();
  const h5::Handle f = h5::open_file_readonly(partial);
  if (!h5::has_attribute(f, "layout_version") ||
      h5::read_int_attribute(f, "layout_version") != kResultsLayoutVersion) {
    throw InputError(partial + ": not a checkpoint of this dse version");
  }
  return h5::read_string_attribute(f, "store") + "\n" + h5::read_string_attribute(f, "scenario_file") + "\n" +
         h5::read_string_attribute(f, "start_time") + "\n" + h5::read_string_attribute(f, "scenario");
}

std::string next_line(std::string& s) {
  const auto p = s.find('\n');
  std::string line = s.substr(0, p);
  s.erase(0, p == std::string::npos ? s.size() : p + 1);
  return line;
}

}  // namespace

costmodel::platform::SystemRequest served_request(const SystemVariant& v, const ModelWorkload& m, std::int64_t batch, std::uint64_t seed) {
  namespace wl = costmodel::workload;
  costmodel::platform::SystemRequest req;
  req.spec = m.spec;
  req.phase.phase = wl::Phase::decode;
  req.phase.batch = batch;
  req.phase.seq = 1;
  req.phase.context = m.prompt_tokens + m.output_tokens / 2;
  req.phase.precision = v.precision;
  req.degrees = {v.tp, v.pp, v.dp, v.ep, v.cp};
  req.options.fusion = v.fusion;
  req.options.attention_kernel = v.attention_kernel;
  req.serving.max_batch = static_cast<int>(batch);
  req.serving.prompt_tokens = static_cast<int>(m.prompt_tokens);
  req.serving.output_tokens = static_cast<int>(m.output_tokens);
  req.serving.prompt_lengths = m.prompt_lengths;
  req.serving.output_lengths = m.output_lengths;
  req.serving.requests = m.requests;
  req.serving.seed = seed;
  req.serving.static_kv_tokens = static_cast<int>(m.static_kv_tokens);
  req.serving.prompt_bucket_tokens = static_cast<int>(m.prompt_bucket_tokens);
  req.serving.stack = v.stack;
  req.serving.rate_per_s = m.rate_per_s;
  if (v.batching == Batching::static_timeout) {
    req.serving.policy = costmodel::system::BatchingPolicy::static_timeout;
    req.serving.batch_timeout_s = v.batch_timeout_s;
  }
  return req;
}

namespace {

// The names tables: /workloads (every workload: its name, the unit of its throughput, the
// `dse eval` options of a served model) and /variants (entry, variant name, knob values, `dse
// eval` options of a system: every hardware variant of the scenario when there are at most
// kAllVariantsLimit, else those of the archived points; attribute `variants` says which). Full
// names of any length, where the records' fixed fields keep a cut copy. Collective: rank 0
// knows the archive and sends its hardware ids; every rank then builds the same tables.
constexpr std::uint64_t kAllVariantsLimit = 65536;

void write_names_tables(hid_t file, Context& ctx, const Scenario& s, const std::vector<PointRecord>& archive) {
  TextTable w;
  w.columns = {"name", "throughput_unit", "eval_arguments"};
  for (std::size_t i = 0; i < s.workloads.size(); ++i) {
    const WorkloadEntry& e = s.workloads[i];
    w.ids.push_back(static_cast<std::uint32_t>(i));
    w.rows.push_back({e.name, e.model ? "tokens/s" : "samples/s", eval_arguments(e, s.seed)});
  }
  write_text_table(file, "workloads", w, ctx.distributed(), ctx.rank() == 0);
  std::vector<std::uint32_t> ids;
  const bool all = hardware_variants(s) <= kAllVariantsLimit;
  if (all) {
    for (std::uint64_t h = 0; h < hardware_variants(s); ++h) ids.push_back(static_cast<std::uint32_t>(h));
  } else if (ctx.rank() == 0) {
    for (const auto& r : archive) ids.push_back(r.hardware_id);
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  }
  Bytes b(ids.size() * sizeof(std::uint32_t));
  if (!b.empty()) std::memcpy(b.data(), ids.data(), b.size());
  b = ctx.broadcast(b, 0);
  ids.resize(b.size() / sizeof(std::uint32_t));
  if (!b.empty()) std::memcpy(ids.data(), b.data(), b.size());
  TextTable v;
  v.columns = {"entry", "name", "knobs", "eval_arguments"};
  for (const std::uint32_t h : ids) {
    const auto [entry, variant] = locate_hardware(s, h);
    const HardwareEntry& e = s.hardware[entry];
    v.ids.push_back(h);
    v.rows.push_back({e.name, e.variant(variant).name(), e.describe(variant), e.eval_arguments(variant)});
  }
  write_text_table(file, "variants", v, ctx.distributed(), ctx.rank() == 0);
  const h5::Handle ds = h5::open_dataset(file, "variants");
  h5::write_attribute(ds, "variants", std::string(all ? "all" : "archive"));
}

}  // namespace

search::DesignSpace design_space(const Scenario& s) {
  return search::DesignSpace({{"hardware", hardware_variants(s)},
                              {"workload", s.workloads.size()},
                              {"batch", s.batch_sizes.size()}});
}

namespace {

namespace pf = costmodel::platform;
namespace wlib = costmodel::workload;

// A model served on a system: the decode step at the point's batch (the most requests in
// flight per replica, `dse eval --max-batch`), the latency table over every batch size up
// to it, the static-batch sweep, and the simulation at the workload's arrival rate under
// the variant's batching policy and stack: `dse eval` of the same configuration, which
// tests/mpi/check_served_identity.py checks point by point.
pf::SystemEval evaluate_served(const SystemVariant& v, const ModelWorkload& m, std::int64_t batch,
                               std::uint64_t seed) {
  return pf::evaluate_system(v.system->chip, v.system->system, served_request(v, m, batch, seed));
}

// A point index decoded into the hardware variant, workload and batch it names.
struct DecodedPoint {
  std::vector<std::uint64_t> digits;
  const HardwareEntry* entry = nullptr;
  HardwareVariant hw;
  const WorkloadEntry* wl = nullptr;
  std::int64_t batch = 0;
};

DecodedPoint decode_point(const Scenario& s, const search::DesignSpace& space, std::uint64_t index) {
  DecodedPoint p;
  p.digits = space.decode(index);
  const auto [entry, variant] = locate_hardware(s, p.digits[0]);
  p.entry = &s.hardware[entry];
  p.hw = s.hardware[entry].variant(variant);
  p.wl = &s.workloads[p.digits[1]];
  p.batch = s.batch_sizes[p.digits[2]];
  return p;
}

}  // namespace

namespace {

// A served point's record from its evaluation: throughput and latency of a full batch at
// the cap (no queueing), the latencies under load at the rate, power and energy at the wall.
void fill_served(const pf::SystemEval& e, std::int64_t batch, PointRecord& r) {
  const costmodel::system::SweepPoint* at_cap = nullptr;
  for (const auto& p : e.serving.sweep)
    if (p.batch == batch) at_cap = &p;
  r.feasible = e.feasible && e.serving.evaluated && at_cap != nullptr && e.chip.fits_memory &&
                       e.serving.at_rate.has_value() && e.serving.at_rate->feasible
                   ? 1
                   : 0;
  r.flops = e.chip.totals.flops;
  r.dram_bytes = e.chip.totals.dram_bytes;
  r.memory_bytes = e.chip.totals.memory_bytes;
  r.engineering_risk = e.risk.score;
  r.power_w = e.wall.wall_w;
  r.accelerator_power_w = e.power.power_w;
  r.mfu = e.step_mfu;
  if (r.feasible != 0) {
    const auto& load = *e.serving.at_rate;
    r.throughput_samples_per_s = at_cap->tokens_per_s_system;  // output tokens/s of the system
    r.latency_s = at_cap->e2e_s;                               // one batch of requests, no queueing
    r.energy_per_sample_j = e.wall_energy_per_token_j;
    r.p99_latency_s = load.e2e.p99_s;
    r.e2e_p50_s = load.e2e.p50_s;
    r.ttft_p50_s = load.ttft.p50_s;
    r.ttft_p90_s = load.ttft.p90_s;
    r.ttft_p99_s = load.ttft.p99_s;
    r.tpot_p50_s = load.tpot.p50_s;
    r.tpot_p90_s = load.tpot.p90_s;
    r.tpot_p99_s = load.tpot.p99_s;
  }
  const bool fits = e.feasible && e.chip.fits_memory;
  set_name(r.bottleneck, fits ? std::string(costmodel::to_string(e.bottleneck)) : std::string("capacity"));
}

}  // namespace

PointRecord evaluate_point(const Scenario& s, const search::DesignSpace& space, std::uint64_t index) {
  const DecodedPoint p = decode_point(s, space, index);
  const auto& d = p.digits;
  const HardwareVariant& hw = p.hw;
  const WorkloadEntry& wl = *p.wl;
  const std::int64_t batch = p.batch;
  PointRecord r;
  r.index = index;
  r.hardware_id = static_cast<std::uint32_t>(d[0]);
  r.workload_id = static_cast<std::uint32_t>(d[1]);
  r.batch = batch;
  set_name(r.hardware, hw.name());
  set_name(r.workload, wl.name);
  r.area_mm2 = hw.area_mm2();
  const bool served = hw.kind == HardwareKind::system;
  if (served != wl.model.has_value()) {
    // A layer list needs roofline or systolic hardware; a model needs a system.
    r.feasible = 0;
    set_name(r.bottleneck, "unsupported");
    return r;
  }
  if (served) {
    fill_served(evaluate_served(hw.system, *wl.model, batch, s.seed), batch, r);
    return r;
  }
  if (is_chip_point(*p.entry, hw, wl)) {  // custom chips on models, loop-nest chips on anything (run_chips.hpp)
    evaluate_chip_point(*p.entry, hw, wl, batch, r);
    return r;
  }
  const costmodel::WorkloadCost c = hw.kind == HardwareKind::roofline
                                        ? costmodel::evaluate_workload(hw.roofline, wl, batch)
                                        : costmodel::evaluate_workload(hw.systolic, wl, batch);
  r.throughput_samples_per_s = c.throughput_samples_per_s;
  r.latency_s = c.latency_s;
  r.energy_per_sample_j = c.energy_per_sample_j;
  r.engineering_risk = hw.engineering_risk();
  r.flops = c.flops;
  r.dram_bytes = c.bytes;
  r.memory_bytes = c.memory_bytes;
  r.p99_latency_s = c.latency_s;  // no queueing in these models: every batch takes the same time
  r.ttft_p50_s = r.ttft_p90_s = r.ttft_p99_s = r.e2e_p50_s = c.latency_s;
  r.power_w = c.latency_s > 0 ? c.energy_j / c.latency_s : 0.0;
  r.accelerator_power_w = r.power_w;
  const double peak = hw.peak_flops_per_s();
  r.mfu = peak > 0.0 && c.latency_s > 0.0 ? c.flops / (c.latency_s * peak) : 0.0;
  r.feasible = c.feasible ? 1 : 0;
  set_name(r.bottleneck, std::string(costmodel::to_string(c.bottleneck)));
  return r;
}

std::vector<costmodel::LayerBreakdown> layer_breakdown(const Scenario& s, const search::DesignSpace& space,
                                                       std::uint64_t index) {
  const DecodedPoint p = decode_point(s, space, index);
  const HardwareVariant& hw = p.hw;
  const WorkloadEntry& wl = *p.wl;
  const std::int64_t batch = p.batch;
  if ((hw.kind == HardwareKind::system) != wl.model.has_value()) return {};
  if (hw.kind == HardwareKind::system) {
    const pf::SystemEval e = evaluate_served(hw.system, *wl.model, batch, s.seed);
    std::vector<costmodel::LayerBreakdown> out;
    for (const auto& l : e.chip.layers) {
      costmodel::LayerBreakdown b;
      b.name = l.name;
      b.type = l.layer;
      b.latency_s = l.latency_s;
      b.flops = l.flops;
      b.dram_bytes = l.dram_bytes;
      b.stall_fraction = l.stall_fraction;
      b.pct_of_peak = 100.0 * l.pct_of_peak;
      b.bottleneck = l.bottleneck;
      b.mapping = l.mapping.kernel + (l.mapping.tile.empty() ? "" : " " + l.mapping.tile) +
                  (l.mapping.fusion_group.empty() ? "" : ", fused in " + l.mapping.fusion_group) + ", " +
                  l.mapping.precision + ", x" + std::to_string(l.repeat);
      out.push_back(std::move(b));
    }
    return out;
  }
  if (is_chip_point(*p.entry, hw, wl)) return chip_layer_breakdown(*p.entry, hw, wl, batch);
  return hw.kind == HardwareKind::roofline ? costmodel::layer_breakdown(hw.roofline, wl, batch)
                                           : costmodel::layer_breakdown(hw.systolic, wl, batch);
}

search::Evaluation to_evaluation(const PointRecord& r) {
  search::Evaluation e;
  e.index = r.index;
  e.objectives = {r.throughput_samples_per_s, r.latency_s, r.energy_per_sample_j, r.engineering_risk};
  e.constraints = {r.p99_latency_s, r.ttft_p99_s, r.tpot_p99_s, r.power_w, r.area_mm2, r.memory_bytes};
  e.feasible = r.feasible != 0;
  return e;
}

std::vector<std::uint64_t> pareto_indices(const std::vector<PointRecord>& rows) {
  // Per workload, the feasible rows' objectives in minimisation form, filtered at once.
  std::map<std::uint32_t, std::pair<std::vector<std::uint64_t>, std::vector<double>>> parts;
  for (const auto& r : rows) {
    if (r.feasible == 0) continue;
    auto& [indices, keys] = parts[r.workload_id];
    const search::Evaluation e = to_evaluation(r);
    for (std::size_t j = 0; j < kSenses.size(); ++j) {
      keys.push_back(kSenses[j] == search::Sense::minimize ? e.objectives[j] : -e.objectives[j]);
    }
    indices.push_back(r.index);
  }
  std::vector<std::uint64_t> out;
  for (const auto& [w, part] : parts) {
    for (const std::size_t i : search::nondominated_rows(part.second, kSenses.size(), kSenses.size())) {
      out.push_back(part.first[i]);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

RunSummary run(Context& ctx, const RunOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::string partial = options.output_path + ".partial";
  Store store = options.store;
  std::string scenario_file = options.scenario_path;
  std::string start_time;
  std::string text;
  if (options.resume) {
    std::string meta = on_root(ctx, [&] { return read_scenario_of_partial(partial); });
    store = parse_store(next_line(meta));
    scenario_file = next_line(meta);
    start_time = next_line(meta);
    text = meta;
  } else {
    start_time = to_string(ctx.broadcast(to_bytes(now_iso8601()), 0));
    text = on_root(ctx, [&] { return io::read_text_file(options.scenario_path, "scenario"); });
  }
  // Every rank parses the same text, so a bad scenario fails identically everywhere and
  // before any file exists.
  const Scenario scenario = parse_scenario(text, scenario_file);
  const search::DesignSpace space = design_space(scenario);

  PointModel model{space, kSenses, kConstraintMetrics,
                   [&](std::uint64_t i) { return evaluate_point(scenario, space, i); }, to_evaluation};
  const int threads = options.threads > 0 ? options.threads : tbb::this_task_arena::max_concurrency();

  RunInfo info;
  info.scenario_text = scenario.text;
  info.scenario_file = scenario_file;
  info.seed = scenario.seed;
  info.version = version_string();
  info.ranks = ctx.size();
  info.threads = threads;
  info.start_time = start_time;

  h5::quiet_errors();
  const std::filesystem::path out(options.output_path);
  if (!options.resume) {
    (void)on_root(ctx, [&] {
      if (out.has_parent_path()) {
        std::error_code ec;
        std::filesystem::create_directories(out.parent_path(), ec);
        if (ec) throw IoError("cannot create directory " + out.parent_path().string() + ": " + ec.message());
      }
      return std::string();
    });
  }

  DriverResult result;
  std::size_t pareto_count = 0;
  double sheets_s = 0.0;
  double compress_s = 0.0;
  std::int64_t failed = 0;
  std::string error;
  try {
    const h5::Handle file = options.resume ? h5::open_file_readwrite(partial, ctx.file_access())
                                                 : h5::create_file(partial, ctx.file_access());
    if (!options.resume) {
      write_run_info(file, info);
      h5::write_attribute(file, "store", std::string(to_string(store)));
      h5::write_attribute(file, "sampler", std::string(to_string(scenario.search.sampler)));
      init_driver_file(file, store);
      h5::flush(file);  // a failed write stops every rank (h5.hpp)
    }
    DriverOptions d;
    d.threads = threads;
    d.store = store;
    d.round_s = options.checkpoint_interval_s;
    d.progress = options.progress;
    d.cancel = options.cancel;
    d.warn = options.warn;
    result = drive(ctx, model, scenario.search, d, file);
    if (!result.interrupted) {
      // The archive is on rank 0 only; its Pareto indices go to every rank.
      std::vector<std::uint64_t> pareto = pareto_indices(result.archive);
      {
        Bytes b(pareto.size() * sizeof(std::uint64_t));
        if (!b.empty()) std::memcpy(b.data(), pareto.data(), b.size());
        b = ctx.broadcast(b, 0);
        pareto.resize(b.size() / sizeof(std::uint64_t));
        if (!b.empty()) std::memcpy(pareto.data(), b.data(), b.size());
      }
      pareto_count = pareto.size();
      // /pareto and /mapping_sheets afresh: a run killed while writing them resumes here (kFinished).
      for (const char* name : {"pareto", "mapping_sheets"}) h5::remove_link(file, name);
      const h5::Handle par = h5::create_dataset_1d(file, "pareto", H5T_STD_U64LE, pareto.size());
      h5::write_rows(par, H5T_NATIVE_UINT64, pareto.data(), 0, ctx.rank() == 0 ? pareto.size() : 0,
                     ctx.distributed());
      double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      Bytes w(sizeof(double));
      std::memcpy(w.data(), &wall, sizeof(double));
      w = ctx.broadcast(w, 0);
      std::memcpy(&wall, w.data(), sizeof(double));
      info.wall_time_s = wall;
      const auto ts = std::chrono::steady_clock::now();
      write_mapping_sheets(file, ctx, scenario, space, result.archive, result.archive_size, pareto);
      sheets_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - ts).count();
      write_names_tables(file, ctx, scenario, result.archive);
      write_run_info(file, info);
      set_attribute(file, "complete", 1);
    }
  } catch (const IoError& e) {
    failed = 1;
    error = e.what();
  }
  // /points is compressed once the run is complete, by rank 0 on the closed file
  // (h5::rewrite_compressed: parallel HDF5 1.10 cannot write filtered datasets safely).
  // The results are complete by then: if compressing fails (a full disk), the
  // uncompressed file is kept and the run still succeeds, with a warning.
  if (ctx.max(failed) == 0 && !result.interrupted && store == Store::all && ctx.rank() == 0) {
    try {
      const auto tz = std::chrono::steady_clock::now();
      tbb::task_arena arena(threads);  // not a global_control: see RoundRunner in driver.cpp
      arena.execute([&] {
        h5::rewrite_compressed(partial, "points", kPointsChunkRows, kPointsDeflateLevel, result.stale_checkpoints);
      });
      compress_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - tz).count();
    } catch (const IoError& e) {
      if (options.warn) {
        options.warn(std::string("compressing /points failed, the results are kept uncompressed: ") + e.what());
      }
    }
  }
  if (ctx.max(failed) == 0 && !result.interrupted && store != Store::all && !result.stale_checkpoints.empty() &&
      ctx.rank() == 0 && options.warn) {
    options.warn("the output keeps " + std::to_string(result.stale_checkpoints.size()) +
                 " checkpoint dataset(s) that a killed attempt left half written (" +
                 result.stale_checkpoints.front() + (result.stale_checkpoints.size() > 1 ? ", ..." : "") +
                 "); the results do not use them");
  }
  if (ctx.max(failed) != 0) {
    if (ctx.rank() == 0 && !options.resume) std::filesystem::remove(partial);
    throw IoError(error.empty() ? "writing " + options.output_path + " failed on another rank" : error);
  }
  if (result.interrupted) {
    throw Interrupted("interrupted after " + std::to_string(result.evaluated) + " points; checkpoint in " + partial +
                      ", continue with: dse run --resume " + options.output_path);
  }
  (void)on_root(ctx, [&] {
    std::error_code ec;
    std::filesystem::rename(partial, out, ec);
    if (ec) throw IoError("cannot rename " + partial + " to " + out.string() + ": " + ec.message());
    return std::string();
  });

  RunSummary s;
  s.points = result.evaluated;
  s.feasible = result.feasible;
  s.archive = result.archive_size;
  s.pareto = pareto_count;
  s.wall_time_s = info.wall_time_s;
  s.evaluate_s = result.evaluate_s;
  s.checkpoint_s = result.checkpoint_s;
  s.merge_s = result.merge_s;
  s.sheets_s = sheets_s;
  s.compress_s = compress_s;
  s.output_path = options.output_path;
  return s;
}

}  // namespace dse
