#include "dse/run.hpp"

#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_arena.h>

#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <map>

#include "costmodel/layer.hpp"
#include "dse/context.hpp"
#include "dse/error.hpp"
#include "dse/version.hpp"
#include "dse/yaml_reader.hpp"
#include "search/pareto.hpp"

namespace dse {

namespace {

const std::vector<search::Sense> kSenses = {search::Sense::maximize, search::Sense::minimize,
                                            search::Sense::minimize, search::Sense::minimize};

std::array<double, 4> objectives(const PointRecord& r) {
  return {r.throughput_samples_per_s, r.latency_s, r.energy_per_sample_j, r.engineering_risk};
}

// Archive wire format: per entry, workload id (u32), index (u64), 4 doubles.
struct WireEntry {
  std::uint32_t workload;
  std::uint64_t index;
  double obj[4];
};

using Archives = std::map<std::uint32_t, search::ParetoArchive>;

void insert(Archives& a, std::uint32_t workload, std::uint64_t index, std::span<const double> obj) {
  auto it = a.find(workload);
  if (it == a.end()) it = a.emplace(workload, search::ParetoArchive(kSenses)).first;
  it->second.insert(index, obj);
}

Bytes serialize(const Archives& a) {
  Bytes out;
  for (const auto& [w, arch] : a) {
    for (const auto& p : arch.sorted_points()) {
      WireEntry e{w, p.index, {p.objectives[0], p.objectives[1], p.objectives[2], p.objectives[3]}};
      const auto* b = reinterpret_cast<const char*>(&e);
      out.insert(out.end(), b, b + sizeof(e));
    }
  }
  return out;
}

Archives deserialize(const Bytes& bytes) {
  Archives a;
  for (std::size_t off = 0; off + sizeof(WireEntry) <= bytes.size(); off += sizeof(WireEntry)) {
    WireEntry e{};
    std::memcpy(&e, bytes.data() + off, sizeof(e));
    insert(a, e.workload, e.index, e.obj);
  }
  return a;
}

std::vector<std::uint64_t> indices_of(const Archives& a) {
  std::vector<std::uint64_t> out;
  for (const auto& [w, arch] : a) {
    const auto idx = arch.sorted_indices();
    out.insert(out.end(), idx.begin(), idx.end());
  }
  std::sort(out.begin(), out.end());
  return out;
}

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

// Rank 0 reads the scenario file; every rank gets its text, or the error it met.
std::string share_scenario_text(Context& ctx, const std::string& path) {
  std::string payload;
  if (ctx.rank() == 0) {
    try {
      payload = "T" + io::read_text_file(path, "scenario");
    } catch (const ConfigError& e) {
      payload = std::string("E") + e.what();
    }
  }
  const std::string got = to_string(ctx.broadcast(to_bytes(payload), 0));
  if (got.empty() || got[0] == 'E') throw InputError(got.empty() ? "scenario could not be shared" : got.substr(1));
  return got.substr(1);
}

}  // namespace

search::DesignSpace design_space(const Scenario& s) {
  return search::DesignSpace({{"hardware", s.hardware.size()},
                              {"workload", s.workloads.size()},
                              {"batch", s.batch_sizes.size()}});
}

PointRecord evaluate_point(const Scenario& s, const search::DesignSpace& space, std::uint64_t index) {
  const auto d = space.decode(index);
  const auto& hw = s.hardware[d[0]];
  const auto& wl = s.workloads[d[1]];
  const std::int64_t batch = s.batch_sizes[d[2]];
  const costmodel::WorkloadCost c = costmodel::evaluate_workload(hw, wl, batch);
  PointRecord r;
  r.index = index;
  r.hardware_id = static_cast<std::uint32_t>(d[0]);
  r.workload_id = static_cast<std::uint32_t>(d[1]);
  r.batch = batch;
  set_name(r.hardware, hw.name);
  set_name(r.workload, wl.name);
  r.throughput_samples_per_s = c.throughput_samples_per_s;
  r.latency_s = c.latency_s;
  r.energy_per_sample_j = c.energy_per_sample_j;
  r.engineering_risk = hw.engineering_risk;
  r.flops = c.flops;
  r.dram_bytes = c.bytes;
  r.memory_bytes = c.memory_bytes;
  r.feasible = c.feasible ? 1 : 0;
  set_name(r.bottleneck, std::string(costmodel::to_string(c.bottleneck)));
  return r;
}

std::vector<std::uint64_t> pareto_indices(const std::vector<PointRecord>& rows) {
  Archives a;
  for (const auto& r : rows) {
    if (r.feasible == 0) continue;
    const auto obj = objectives(r);
    insert(a, r.workload_id, r.index, obj);
  }
  return indices_of(a);
}

RunSummary run(Context& ctx, const RunOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::string start_time = to_string(ctx.broadcast(to_bytes(now_iso8601()), 0));

  // Every rank parses the same text, so a bad scenario fails identically everywhere
  // and before any file exists.
  const Scenario scenario = parse_scenario(share_scenario_text(ctx, options.scenario_path), options.scenario_path);
  const search::DesignSpace space = design_space(scenario);
  const std::uint64_t total = space.size();

  // Static contiguous blocks: rank r owns [r*N/P, (r+1)*N/P), so the collective
  // write is a plain hyperslab per rank and the file is ordered by index.
  const auto p = static_cast<std::uint64_t>(ctx.size());
  const auto r = static_cast<std::uint64_t>(ctx.rank());
  const std::uint64_t lo = total * r / p;
  const std::uint64_t hi = total * (r + 1) / p;

  std::vector<PointRecord> rows(hi - lo);
  const int threads = options.threads > 0 ? options.threads : tbb::this_task_arena::max_concurrency();
  {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, static_cast<std::size_t>(threads));
    tbb::parallel_for(std::uint64_t{0}, hi - lo,
                      [&](std::uint64_t i) { rows[i] = evaluate_point(scenario, space, lo + i); });
  }

  Archives local;
  std::uint64_t feasible = 0;
  for (const auto& row : rows) {
    if (row.feasible == 0) continue;
    ++feasible;
    insert(local, row.workload_id, row.index, objectives(row));
  }
  const Bytes merged = tree_reduce(ctx, serialize(local), [](Bytes a, Bytes b) {
    Archives x = deserialize(a);
    for (auto& [w, arch] : deserialize(b)) {
      for (const auto& pt : arch.sorted_points()) insert(x, w, pt.index, pt.objectives);
    }
    return serialize(x);
  });
  const Bytes shared = ctx.broadcast(ctx.rank() == 0 ? merged : Bytes{}, 0);
  const std::vector<std::uint64_t> pareto = indices_of(deserialize(shared));

  RunInfo info;
  info.scenario_text = scenario.text;
  info.scenario_file = options.scenario_path;
  info.seed = scenario.seed;
  info.version = version_string();
  info.ranks = ctx.size();
  info.threads = threads;
  info.start_time = start_time;
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  double wall0 = wall;
  {
    Bytes w(sizeof(double));
    std::memcpy(w.data(), &wall, sizeof(double));
    const Bytes got = ctx.broadcast(w, 0);
    std::memcpy(&wall0, got.data(), sizeof(double));
  }
  info.wall_time_s = wall0;

  // Write under a temporary name and rename at the end: a failed run never leaves
  // a file that looks complete.
  const std::filesystem::path out(options.output_path);
  const std::string partial = options.output_path + ".partial";
  std::string prep_error;
  if (ctx.rank() == 0 && out.has_parent_path()) {
    std::error_code ec;
    std::filesystem::create_directories(out.parent_path(), ec);
    if (ec) prep_error = "cannot create directory " + out.parent_path().string() + ": " + ec.message();
  }
  prep_error = to_string(ctx.broadcast(to_bytes(prep_error), 0));
  if (!prep_error.empty()) throw IoError(prep_error);

  std::int64_t failed = 0;
  std::string write_error;
  try {
    write_results(partial, ctx, rows, lo, total, pareto, info);
  } catch (const IoError& e) {
    failed = 1;
    write_error = e.what();
  }
  if (ctx.max(failed) != 0) {
    if (ctx.rank() == 0) std::filesystem::remove(partial);
    throw IoError(write_error.empty() ? "writing " + options.output_path + " failed on another rank" : write_error);
  }
  ctx.barrier();
  std::string rename_error;
  if (ctx.rank() == 0) {
    std::error_code ec;
    std::filesystem::rename(partial, out, ec);
    if (ec) {
      rename_error = "cannot rename " + partial + " to " + out.string() + ": " + ec.message();
      std::filesystem::remove(partial);
    }
  }
  rename_error = to_string(ctx.broadcast(to_bytes(rename_error), 0));
  if (!rename_error.empty()) throw IoError(rename_error);

  RunSummary s;
  s.points = total;
  s.feasible = ctx.sum(feasible);
  s.pareto = pareto.size();
  s.wall_time_s = wall0;
  s.output_path = options.output_path;
  return s;
}

}  // namespace dse
