// `dse run`'s output file (run.hpp): checks and lock before any evaluation, the file created or
// resumed, the search driven over it, the Pareto front and mapping sheets written, /points
// compressed, and the file renamed to its final name. Failures on any rank are agreed
// (dse/driver/agree.hpp), so that every rank stops with the same error.
#include <oneapi/tbb/task_arena.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <memory>
#include <optional>

#include "dse/driver/agree.hpp"
#include "dse/driver/context.hpp"
#include "dse/driver/cpu_binding.hpp"
#include "dse/driver/driver_archive.hpp"
#include "dse/driver/output_file.hpp"
#include "dse/driver/run.hpp"

#include "dse/driver/mapping_sheets.hpp"
#include "dse/error.hpp"
#include "dse/h5/shortlist.hpp"
#include "dse/io/yaml_reader.hpp"
#include "dse/version.hpp"

namespace dse {

namespace {

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

// Rank 0 runs `f`; every rank gets its string result, or throws the error it raised (agree()).
template <class F>
std::string on_root(Context& ctx, F f) {
  std::string result;
  agreed(ctx, [&] {
    if (ctx.rank() == 0) result = f();
  });
  return to_string(ctx.broadcast(to_bytes(result), 0));
}

// /points in the finished file: 16,384-row chunks, byte shuffle + deflate level 1 (the
// fastest level; shuffle groups the bytes of each column, which does most of the work).
constexpr std::uint64_t kPointsChunkRows = 16384;
constexpr int kPointsDeflateLevel = 1;

// What a resumed run takes from its checkpoint.
struct Checkpoint {
  std::string store;
  std::string scenario_file;
  std::string start_time;
  std::string input_files;
  std::string scenario;
};

Bytes pack(const Checkpoint& c) {
  Bytes b;
  for (const std::string* s : {&c.store, &c.scenario_file, &c.start_time, &c.input_files, &c.scenario}) {
    const std::uint64_t n = s->size();
    const std::size_t at = b.size();
    b.resize(at + sizeof n + n);
    std::memcpy(b.data() + at, &n, sizeof n);
    if (n > 0) std::memcpy(b.data() + at + sizeof n, s->data(), n);
  }
  return b;
}

Checkpoint unpack(const Bytes& b) {
  Checkpoint c;
  std::size_t off = 0;
  for (std::string* s : {&c.store, &c.scenario_file, &c.start_time, &c.input_files, &c.scenario}) {
    std::uint64_t n = 0;
    if (off + sizeof n > b.size()) throw MpiError("truncated checkpoint message");
    std::memcpy(&n, b.data() + off, sizeof n);
    off += sizeof n;
    if (n > b.size() - off) throw MpiError("truncated checkpoint message");
    s->assign(b.data() + off, static_cast<std::size_t>(n));
    off += static_cast<std::size_t>(n);
  }
  return c;
}

Checkpoint read_checkpoint(const std::string& partial) {
  struct stat st {};
  if (::lstat(partial.c_str(), &st) != 0) {
    throw InputError(partial + ": no interrupted run to resume (the file does not exist)");
  }
  if (!S_ISREG(st.st_mode)) {
    throw InputError("dse run: " + partial + (S_ISLNK(st.st_mode) ? " is a symbolic link" : " is not a regular file") +
                     "; dse run does not write through links");
  }
  h5::quiet_errors();
  const h5::Handle f = h5::open_file_readonly(partial);
  if (!h5::has_attribute(f, "layout_version") ||
      h5::read_int_attribute(f, "layout_version") != kResultsLayoutVersion) {
    throw InputError(partial + ": not a checkpoint of this dse version");
  }
  Checkpoint c;
  c.store = h5::read_string_attribute(f, "store");
  c.scenario_file = h5::read_string_attribute(f, "scenario_file");
  c.start_time = h5::read_string_attribute(f, "start_time");
  // Checkpoints written before the inputs were recorded have no list: nothing to compare.
  if (h5::has_attribute(f, "input_files")) c.input_files = h5::read_string_attribute(f, "input_files");
  c.scenario = h5::read_string_attribute(f, "scenario");
  return c;
}

// The inputs of a scenario as RunInfo::input_files stores them.
std::string input_table(const std::vector<io::InputFile>& inputs) {
  std::string out;
  for (const auto& f : inputs) {
    char hash[17];
    std::snprintf(hash, sizeof hash, "%016llx", static_cast<unsigned long long>(f.hash));
    out += std::string(hash) + " " + std::to_string(f.bytes) + " " + printable(f.path) + "\n";
  }
  return out;
}

// On --resume: InputError naming the first file whose content differs from the one the run read
// when it started (the results would mix the old and the new figures, issue 58 item 11).
void check_inputs_unchanged(const std::string& stored, const std::vector<io::InputFile>& now,
                            const std::string& output) {
  const std::string current = input_table(now);
  std::size_t at = 0;
  while (at < stored.size()) {
    const std::size_t end = std::min(stored.find('\n', at), stored.size());
    const std::string line = stored.substr(at, end - at);
    at = end + 1;
    const auto first = line.find(' ');
    const auto second = first == std::string::npos ? first : line.find(' ', first + 1);
    if (second == std::string::npos) continue;
    const std::string path = line.substr(second + 1);
    if (current.find(line + "\n") != std::string::npos) continue;  // same hash, size and path
    throw InputError("dse run --resume " + output + ": " + path +
                     " has changed since the run started (its content differs from the one the checkpoint "
                     "recorded); resuming would mix old and new figures in one result. Start the run again, or "
                     "pass --resume-changed-inputs to continue with the file as it is now");
  }
}

// The names tables: /workloads (every workload: its name, the unit of its throughput, the
// `dse eval` options of a served model) and /variants (entry, variant name, knob values, `dse
// eval` options of a system: every hardware variant of the scenario when there are at most
// kAllVariantsLimit, else those of the archived points; attribute `variants` says which). Full
// names of any length, where the records' fixed fields keep a cut copy. Collective: the ranks'
// parts of the archive give the hardware ids; each rank makes the rows of a share of them, and
// every rank then holds the same tables.
constexpr std::uint64_t kAllVariantsLimit = 65536;

// What one unit of a workload's throughput is: an output token of a served model, an image of a
// model on a chip whose step has a convolution (a CNN's sample is an image), else a sample.
std::string throughput_unit(const WorkloadEntry& e) {
  if (e.model) return "tokens/s";
  if (e.chip) {
    for (const auto& [batch, graph] : e.chip->graphs)
      for (const auto& block : graph->blocks)
        for (const auto& node : block.nodes)
          if (node.op.kind == costmodel::workload::OpKind::conv2d) return "images/s";
  }
  return "samples/s";
}

void write_names_tables(hid_t file, Context& ctx, const Scenario& s, std::span<const PointRecord> archive) {
  TextTable w;
  w.columns = {"name", "throughput_unit", "eval_arguments"};
  for (std::size_t i = 0; i < s.workloads.size(); ++i) {
    const WorkloadEntry& e = s.workloads[i];
    w.ids.push_back(static_cast<std::uint32_t>(i));
    w.rows.push_back({e.name, throughput_unit(e), eval_arguments(e, s.seed)});
  }
  write_text_table(file, "workloads", w, ctx.distributed(), ctx.rank() == 0);
  std::vector<std::uint32_t> ids;
  const bool all = hardware_variants(s) <= kAllVariantsLimit;
  agreed(ctx, [&] {  // this rank's ids before the gather (agree.hpp)
    if (all) {
      for (std::uint64_t h = 0; h < hardware_variants(s); ++h) ids.push_back(static_cast<std::uint32_t>(h));
      return;
    }
    for (const auto& r : archive) ids.push_back(r.hardware_id);
  });
  // Every rank's part of the archive has its own hardware ids: all of them, on every rank.
  if (!all) ids = driver_detail::union_of_ids(ctx, ids);
  // Each rank makes and writes the rows of its share of the ids, at their places in id order; the
  // ranks agree only on the columns' widths (65,536 variants' texts: 0.16 s of rank 0's 1.9 s in a
  // 2-rank single-op run, perf, when each rank made them all; later every rank still built and rank 0
  // wrote the whole table from an all-gather of the texts).
  TextTable v;
  v.columns = {"entry", "name", "knobs", "eval_arguments"};
  const auto p = static_cast<std::size_t>(ctx.size());
  const auto r = static_cast<std::size_t>(ctx.rank());
  const std::size_t begin = ids.size() * r / p;
  std::vector<std::size_t> width;
  agreed(ctx, [&] {
    const std::size_t end = ids.size() * (r + 1) / p;
    for (std::size_t i = begin; i < end;) {
      // A run of ids of one entry: their knobs' texts are described together (HardwareEntry::describe).
      const std::size_t entry = locate_hardware(s, ids[i]).first;
      const HardwareEntry& e = s.hardware[entry];
      std::vector<std::uint64_t> variants;
      for (; i < end; ++i) {
        const auto [at, variant] = locate_hardware(s, ids[i]);
        if (at != entry) break;
        variants.push_back(variant);
        v.ids.push_back(ids[i]);
      }
      std::vector<std::string> described = e.describe(variants);
      for (std::size_t n = 0; n < variants.size(); ++n) {
        v.rows.push_back({e.name, e.variant(variants[n]).name(), std::move(described[n]), e.eval_arguments(variants[n])});
      }
    }
    width = text_table_widths(v);
  });
  for (auto& c : width) c = static_cast<std::size_t>(ctx.max(static_cast<std::int64_t>(c)));
  write_text_table_part(file, "variants", v, width, begin, ids.size(), ctx.distributed());
  const h5::Handle ds = h5::open_dataset(file, "variants");
  h5::write_attribute(ds, "variants", std::string(all ? "all" : "archive"));
}

// /pareto, the per-point tables (mapping_sheets.hpp), the names tables and the final provenance of a
// run that evaluated everything (collective); returns the Pareto count.
std::size_t finish_file(Context& ctx, hid_t file, const RunOptions& options, const Scenario& scenario,
                        const search::DesignSpace& space, const PointModel& model, const DriverResult& result,
                        RunInfo& info, std::chrono::steady_clock::time_point t0, int threads, double& sheets_s) {
  // Each rank holds a part of the archive: the parts' fronts are merged on rank 0 along the
  // reduction tree, and its Pareto indices go to every rank. A signal here stops the run: the file
  // holds the final archive, and --resume only finishes it.
  driver_detail::ObjectiveFront local(model);
  agreed(
      ctx,
      [&] {
        test_fault_point("write", ctx.rank());
        for (const auto& r : result.archive) local.insert(r);
      },
      options.cancel);
  driver_detail::ObjectiveFront global = driver_detail::global_front(ctx, model, local);
  std::vector<std::uint64_t> pareto;
  agreed(ctx, [&] {
    if (ctx.rank() != 0) return;
    for (const auto& [w, entries] : global.entries())
      for (const auto& e : entries) pareto.push_back(e.index);
    std::sort(pareto.begin(), pareto.end());
  });
  {
    Bytes b(pareto.size() * sizeof(std::uint64_t));
    if (!b.empty()) std::memcpy(b.data(), pareto.data(), b.size());
    b = ctx.broadcast(b, 0);
    pareto.resize(b.size() / sizeof(std::uint64_t));
    if (!b.empty()) std::memcpy(pareto.data(), b.data(), b.size());
  }
  // /pareto and the per-point tables afresh: a run killed while writing them resumes here (kFinished).
  for (const char* name : {"pareto", "mapping_sheets", "risk_items", "step_breakdown", "serving_curves", "roofs"})
    h5::remove_link(file, name);
  const h5::Handle par = h5::create_dataset_1d(file, "pareto", H5T_STD_U64LE, pareto.size());
  h5::write_rows(par, H5T_NATIVE_UINT64, pareto.data(), 0, ctx.rank() == 0 ? pareto.size() : 0, ctx.distributed());
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  Bytes w(sizeof(double));
  std::memcpy(w.data(), &wall, sizeof(double));
  w = ctx.broadcast(w, 0);
  std::memcpy(&wall, w.data(), sizeof(double));
  info.wall_time_s = wall;
  const auto ts = std::chrono::steady_clock::now();
  write_point_details(file, ctx, scenario, space, result.archive, result.archive_size, pareto, threads);
  sheets_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - ts).count();
  write_names_tables(file, ctx, scenario, result.archive);
  write_run_info(file, info);
  set_attribute(file, "complete", 1);
  return pareto.size();
}

// Test hook (docs/reliability.md): DSE_TEST_COMPRESS_FILE_LIMIT=BYTES limits the size of files
// written while /points is compressed (RLIMIT_FSIZE, SIGXFSZ ignored), so that the compressed
// copy fails as on a full disk while the complete uncompressed file stays readable.
class CompressFileLimit {
 public:
  CompressFileLimit() {
    const char* e = std::getenv("DSE_TEST_COMPRESS_FILE_LIMIT");
    if (e == nullptr || *e == '\0') return;
    active_ = ::getrlimit(RLIMIT_FSIZE, &old_) == 0;
    if (!active_) return;
    old_handler_ = std::signal(SIGXFSZ, SIG_IGN);
    rlimit lim = old_;
    lim.rlim_cur = static_cast<rlim_t>(std::strtoull(e, nullptr, 10));
    (void)::setrlimit(RLIMIT_FSIZE, &lim);
  }
  ~CompressFileLimit() {
    if (!active_) return;
    (void)::setrlimit(RLIMIT_FSIZE, &old_);
    std::signal(SIGXFSZ, old_handler_);
  }
  CompressFileLimit(const CompressFileLimit&) = delete;
  CompressFileLimit& operator=(const CompressFileLimit&) = delete;

 private:
  bool active_ = false;
  rlimit old_{};
  void (*old_handler_)(int) = SIG_DFL;
};

// /points compressed by rank 0 on the closed, complete file (h5::rewrite_compressed: parallel HDF5
// 1.10 cannot write filtered datasets safely). A compression that fails with IoError (a full disk)
// leaves the uncompressed file, which is kept with a warning; any other failure, and a signal,
// ends the run on every rank (agreed). Returns rank 0's time.
double compress_points(Context& ctx, const RunOptions& options, const OutputPaths& paths, int threads,
                       const std::vector<std::string>& stale) {
  std::exception_ptr failure;
  double seconds = 0.0;
  if (ctx.rank() == 0) {
    try {
      test_fault_point("compress", ctx.rank());
      const auto tz = std::chrono::steady_clock::now();
      const CompressFileLimit limit;
      tbb::task_arena arena(threads);  // not a global_control: see RoundRunner in driver.cpp
      arena.execute([&] {
        h5::rewrite_compressed(paths.partial, "points", kPointsChunkRows, kPointsDeflateLevel, stale, options.cancel);
      });
      seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - tz).count();
    } catch (const Interrupted&) {
      failure = std::current_exception();
    } catch (const IoError& e) {
      if (options.warn) {
        options.warn(std::string("compressing /points failed, the results are kept uncompressed: ") + e.what());
      }
    } catch (...) {
      failure = std::current_exception();
    }
  }
  agree(ctx, failure);
  return seconds;
}

void remove_quietly(const std::string& path) {
  std::error_code ec;
  std::filesystem::remove(path, ec);
}

std::string interrupted_message(const OutputPaths& paths, const std::string& what) {
  return what + "; checkpoint in " + paths.partial + ", continue with: dse run --resume " + paths.out;
}

// What a run knows before its file is opened: the scenario (its text from the file, or from the
// checkpoint on --resume), its provenance, and on rank 0 the lock on the output.
struct Prepared {
  Checkpoint meta;
  std::optional<Scenario> scenario;
  std::unique_ptr<OutputLock> lock;  // rank 0, until the output has its final name
};

// Everything before any point is evaluated (collective): -o as a file name, the lock, the scenario
// read and parsed on every rank, the folder, no link and no input among the files made, the inputs
// of a resumed run unchanged, OUT.partial made afresh.
Prepared prepare(Context& ctx, const RunOptions& options, const OutputPaths& paths) {
  Prepared p;
  (void)on_root(ctx, [&] {
    check_output_name(paths, options.resume);
    return std::string();
  });
  if (options.resume) {
    // The lock first: a checkpoint that another run is writing is not read.
    p.meta = unpack(to_bytes(on_root(ctx, [&] {
      p.lock = std::make_unique<OutputLock>(paths);
      return to_string(pack(read_checkpoint(paths.partial)));
    })));
  } else {
    p.meta.store = std::string(to_string(options.store));
    p.meta.scenario_file = options.scenario_path;
    p.meta.start_time = to_string(ctx.broadcast(to_bytes(now_iso8601()), 0));
    p.meta.scenario = on_root(ctx, [&] { return io::read_text_file(options.scenario_path, "scenario"); });
  }
  // Every rank parses the same text, so a bad scenario fails identically everywhere and
  // before any file exists.
  agreed(ctx, [&] { p.scenario = parse_scenario(p.meta.scenario, p.meta.scenario_file); });
  (void)on_root(ctx, [&] {
    if (!options.resume) {
      prepare_output_folder(paths);
      p.lock = std::make_unique<OutputLock>(paths);
    }
    std::vector<std::string> inputs;
    if (!options.resume) inputs.push_back(options.scenario_path);
    for (const auto& f : p.scenario->inputs) inputs.push_back(f.path);
    check_output_files(paths, inputs, options.resume);
    if (options.resume && !options.resume_changed_inputs) {
      check_inputs_unchanged(p.meta.input_files, p.scenario->inputs, paths.out);
    }
    if (!options.resume) create_partial_file(paths);
    return std::string();
  });
  // Every rank removes the lock file if it stops the job with MPI_Abort (dse/error.hpp).
  if (ctx.rank() != 0) set_file_to_remove_before_abort(paths.lock);
  return p;
}

// The failure of a run that got as far as its file, rethrown on every rank: a file that holds a
// committed checkpoint is kept for --resume (the message says so), one that does not is removed,
// and so is the file of a run stopped by bad input (a resume would meet it again). Rank 0 only
// touches the file; a resumed checkpoint is always kept.
[[noreturn]] void fail_run(Context& ctx, const RunOptions& options, const OutputPaths& paths,
                           std::int64_t rounds_committed) {
  const bool decide = ctx.rank() == 0 && !options.resume;
  try {
    throw;
  } catch (const Interrupted&) {
    throw Interrupted(interrupted_message(paths, "interrupted"));
  } catch (const InputError&) {
    if (decide) remove_quietly(paths.partial);
    throw;
  } catch (const std::exception& e) {
    // A library exception was not agreed: alone, it is handled as above; with other ranks the
    // command line stops the job.
    const bool agreed_error = dynamic_cast<const Error*>(&e) != nullptr;
    if (!decide || (!agreed_error && ctx.size() > 1)) throw;
    if (rounds_committed < 1) {
      remove_quietly(paths.partial);
      throw;
    }
    throw Error(std::string(agreed_error ? "" : "internal error on rank 0: ") + e.what() +
                "; the last checkpoint is kept in " + paths.partial + " (dse run --resume " + paths.out +
                " continues from it)");
  }
}

}  // namespace

namespace {

// The file's provenance (root attributes) of this run.
RunInfo run_info(Context& ctx, const RunOptions& options, const Checkpoint& meta, const Scenario& scenario,
                 int threads) {
  RunInfo info;
  info.scenario_text = scenario.text;
  info.scenario_file = meta.scenario_file;
  info.seed = scenario.seed;
  info.version = version_string();
  if (!options.commit.empty()) info.commit = options.commit;
  info.ranks = ctx.size();
  info.threads = threads;
  info.start_time = meta.start_time;
  // A resumed run keeps the inputs recorded at the start (they are what it checked against).
  info.input_files = options.resume && !meta.input_files.empty() ? meta.input_files : input_table(scenario.inputs);
  return info;
}

DriverOptions driver_options(const RunOptions& options, int threads, Store store, std::int64_t& rounds_committed) {
  DriverOptions d;
  d.threads = threads;
  d.store = store;
  d.round_s = options.checkpoint_interval_s;
  d.checkpoint_interval_s = options.checkpoint_interval_s;
  d.progress = options.progress;
  d.cancel = options.cancel;
  d.warn = options.warn;
  d.rounds_committed = &rounds_committed;
  return d;
}

// The rows of `dse run`'s printed summary, on rank 0 (collective): print_shortlist shows the
// archive's front under the shortlist's default objectives, and the front of the union of the
// ranks' parts' fronts is the whole archive's, so each rank sends its part's front only, not the
// archive that rank 0 would otherwise read back from the file. Sorted by index, as /archive is.
std::vector<PointRecord> summary_rows(Context& ctx, std::span<const PointRecord> part) {
  Bytes mine;
  agreed(ctx, [&] {
    const std::vector<std::size_t> front = shortlist(part, Budgets{}, default_objectives());
    mine.resize(front.size() * sizeof(PointRecord));
    for (std::size_t i = 0; i < front.size(); ++i) {
      std::memcpy(mine.data() + i * sizeof(PointRecord), &part[front[i]], sizeof(PointRecord));
    }
  });
  const Bytes all = driver_detail::gather_bytes(ctx, std::move(mine));
  std::vector<PointRecord> rows;
  agreed(ctx, [&] {
    if (ctx.rank() != 0) return;
    if (all.size() % sizeof(PointRecord) != 0) throw MpiError("truncated summary rows");
    rows.resize(all.size() / sizeof(PointRecord));
    if (!rows.empty()) std::memcpy(rows.data(), all.data(), all.size());
    std::sort(rows.begin(), rows.end(), [](const PointRecord& a, const PointRecord& b) { return a.index < b.index; });
  });
  return rows;
}

// The counts and times of the driver's result, with every rank's cores and threads.
RunSummary summary_of(const DriverResult& result, const std::vector<RankCores>& rank_cores) {
  RunSummary s;
  s.points = result.evaluated;
  s.feasible = result.feasible;
  s.archive = result.archive_size;
  s.evaluate_s = result.evaluate_s;
  s.checkpoint_s = result.checkpoint_s;
  s.merge_s = result.merge_s;
  for (const RankCores& c : rank_cores) {
    s.rank_cores.push_back(c.cores);
    s.rank_threads.push_back(c.threads);
  }
  return s;
}

}  // namespace

RunSummary run(Context& ctx, const RunOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  const OutputPaths paths(options.output_path);
  Prepared prepared = prepare(ctx, options, paths);
  const Checkpoint& meta = prepared.meta;
  const Scenario& scenario = *prepared.scenario;
  const Store store = parse_store(meta.store);
  const search::DesignSpace space = design_space(scenario);
  const PointModel model = point_model(scenario, space);
  // Each rank's cores (its CPU binding) and threads; rank 0 says what the binding costs.
  const std::vector<RankCores> rank_cores = gather_rank_cores(ctx, options.threads);
  const int threads = rank_cores.at(static_cast<std::size_t>(ctx.rank())).threads;
  if (ctx.rank() == 0 && options.warn) {
    for (const std::string& w : binding_warnings(rank_cores, options.threads)) options.warn(w);
  }

  RunInfo info = run_info(ctx, options, meta, scenario, threads);

  h5::quiet_errors();
  DriverResult result;
  std::size_t pareto_count = 0;
  double sheets_s = 0.0;
  double compress_s = 0.0;
  std::int64_t rounds_committed = 0;  // the file's checkpoint counter, as drive() commits it
  try {
    {
      const h5::Handle file = options.resume ? h5::open_file_readwrite(paths.partial, ctx.file_access())
                                             : h5::create_file(paths.partial, ctx.file_access());
      if (!options.resume) {
        write_run_info(file, info);
        h5::write_attribute(file, "store", std::string(to_string(store)));
        h5::write_attribute(file, "sampler", std::string(to_string(scenario.search.sampler)));
        init_driver_file(file, store);
        h5::flush(file);  // a failed write stops every rank (h5.hpp)
      }
      result = drive(ctx, model, scenario.search, driver_options(options, threads, store, rounds_committed), file);
      if (!result.interrupted) {
        pareto_count = finish_file(ctx, file, options, scenario, space, model, result, info, t0, threads, sheets_s);
      }
    }  // the file is closed (collectively) here
    if (!result.interrupted && store == Store::all) {
      compress_s = compress_points(ctx, options, paths, threads, result.stale_checkpoints);
    }
  } catch (...) {
    fail_run(ctx, options, paths, rounds_committed);
  }
  if (!result.interrupted && store != Store::all && !result.stale_checkpoints.empty() && ctx.rank() == 0 &&
      options.warn) {
    options.warn("the output keeps " + std::to_string(result.stale_checkpoints.size()) +
                 " checkpoint dataset(s) that a killed attempt left half written (" +
                 result.stale_checkpoints.front() + (result.stale_checkpoints.size() > 1 ? ", ..." : "") +
                 "); the results do not use them");
  }
  if (result.interrupted) {
    throw Interrupted(interrupted_message(paths, "interrupted after " + std::to_string(result.evaluated) + " points"));
  }
  (void)on_root(ctx, [&] {
    std::error_code ec;
    std::filesystem::rename(paths.partial, paths.out, ec);
    if (ec) throw IoError("cannot rename " + paths.partial + " to " + paths.out + ": " + ec.message());
    prepared.lock.reset();
    return std::string();
  });
  set_file_to_remove_before_abort("");

  RunSummary s = summary_of(result, rank_cores);
  s.summary_rows = summary_rows(ctx, result.archive);
  s.pareto = pareto_count;
  s.wall_time_s = info.wall_time_s;
  s.sheets_s = sheets_s;
  s.compress_s = compress_s;
  s.output_path = options.output_path;
  return s;
}

}  // namespace dse
