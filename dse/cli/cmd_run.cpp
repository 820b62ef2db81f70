#include <boost/program_options.hpp>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <array>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <limits>
#include <string>
#include <string_view>

#include "dse/cli/commands.hpp"
#include "dse/driver/context.hpp"
#include "dse/error.hpp"
#include "dse/h5/results.hpp"
#include "dse/driver/run.hpp"
#include "dse/h5/shortlist.hpp"

namespace po = boost::program_options;

namespace dse::cli {

namespace {

// The cancel token: the one piece of state a signal handler may touch.
std::atomic<bool> g_cancel{false};  // NOLINT(cppcoreguidelines-avoid-non-const-global-variables)

extern "C" void on_signal(int /*sig*/) { g_cancel.store(true); }

// The longest output file name and path `dse run` takes. Linux allows 255 and 4,095 bytes, but
// MPI-IO names side files after the output (OpenMPI 4.1.4's shared-file-pointer component, queried
// at every open, overflowed a buffer and aborted the job from a 232-byte name; 231 ran): 200 leaves
// room for its suffixes, whose job and communicator numbers vary.
constexpr std::size_t kMaxFileNameBytes = 200;
constexpr std::size_t kMaxPathBytes = 4000;

// A run's large buffers (archive records, keys, checkpoint rows: ~120 MB each on a run that archives
// half a million points) come and go round after round. glibc serves every block over 32 MiB with a
// fresh mmap, so each one is faulted in page by page again (4 KiB a fault), and a page fault is
// dear, on a virtual machine most of all: the 1,048,576-point single-op bench took 215,571 faults
// and 5.9 s on one rank. Served from the heap and never trimmed, freed blocks are reused: 123,722
// faults and 3.8 s. A batch job holds its peak footprint until it ends either way.
void keep_freed_memory() {
#if defined(__GLIBC__)
  mallopt(M_MMAP_MAX, 0);
  mallopt(M_TRIM_THRESHOLD, std::numeric_limits<int>::max());
#endif
}

}  // namespace

int cmd_run(int& argc, char**& argv, const Args& args) {
  RunOptions opt;
  std::string store = "all";
  std::string resume;
  po::options_description named(
      "dse run SCENARIO.yaml -o OUT.h5 [options]\n"
      "dse run --resume OUT.h5 [options]\n\n"
      "Searches the scenario's design space (hardware x workload x batch) with its sampler\n"
      "(exhaustive, random or NSGA-II), spread over MPI ranks in dynamic chunks and over\n"
      "TBB threads inside each rank, and writes the points, the constraint-robust archive\n"
      "and the Pareto front to HDF5. Run under 'mpirun -np N' for N ranks. The output is\n"
      "written as OUT.h5.partial with a checkpoint after every round and renamed to OUT.h5\n"
      "when complete. SIGINT/SIGTERM stop at the next chunk, keep the last checkpoint and\n"
      "exit with code 130; --resume continues from it with identical final results.\n\noptions");
  named.add_options()("help,h", "print this help")(
      "scenario", po::value<std::string>(&opt.scenario_path), "scenario YAML file (positional)")(
      "output,o", po::value<std::string>(&opt.output_path), "HDF5 file to write (replaced if it exists)")(
      "resume", po::value<std::string>(&resume), "continue the interrupted run whose output was OUT.h5")(
      "threads,t", po::value<int>(&opt.threads)->default_value(0),
      "TBB threads per rank (0: all cores of the node)")(
      "store", po::value<std::string>(&store)->default_value("all"),
      "what to keep: all (every point in /points), archive (only the archive), none (summary only)")(
      "checkpoint-interval", po::value<double>(&opt.checkpoint_interval_s)->default_value(2.0),
      "target seconds between checkpoints (one round of points each)")(
      "no-progress", "do not print progress lines on standard error");
  po::positional_options_description pos;
  pos.add("scenario", 1);
  po::variables_map vm;
  if (!parse_options(args, named, pos, vm)) return kExitOk;
  if (!resume.empty()) {
    if (!opt.scenario_path.empty()) throw InputError("dse run: give either SCENARIO.yaml or --resume, not both");
    opt.output_path = resume;
    opt.resume = true;
  } else if (opt.scenario_path.empty() || opt.output_path.empty()) {
    throw InputError("dse run: SCENARIO.yaml and -o OUT.h5 are required (see 'dse run --help')");
  }
  // The run writes OUT.h5.partial; a name MPI-IO cannot open is refused (below, by rank 0 once) before
  // any rank opens it.
  std::string name_problem;
  if (const std::string leaf = std::filesystem::path(opt.output_path).filename().string();
      leaf.size() + std::string_view(".partial").size() > kMaxFileNameBytes || opt.output_path.size() > kMaxPathBytes)
    name_problem = "dse run: " + std::string(opt.resume ? "--resume" : "-o") + ": expected a file name of at most " +
                   std::to_string(kMaxFileNameBytes - std::string_view(".partial").size()) +
                   " bytes in a path of at most " + std::to_string(kMaxPathBytes) + " (got " +
                   std::to_string(leaf.size()) + " in " + std::to_string(opt.output_path.size()) + ")";
  if (opt.threads < 0) throw InputError("dse run: --threads must be >= 0");
  if (!(opt.checkpoint_interval_s > 0) || !std::isfinite(opt.checkpoint_interval_s))
    throw InputError("dse run: --checkpoint-interval must be a finite number of seconds > 0");
  opt.store = parse_store(store);
  opt.progress = vm.count("no-progress") == 0;

  // OpenMPI's collective MPI-IO writes without aggregators, unless the user chose: when a
  // write fails on some ranks (a full disk), the default two-phase aggregation (fcoll
  // vulcan) returns the error on some ranks only, and with 4 ranks the others were left
  // waiting inside HDF5's collective flush; with "individual" each rank gets its own error
  // and the job stops (h5.cpp; test mpi_output_faults_np4). ROMIO also stops cleanly but
  // changed the NSGA-II result across rank counts (mpi_identity_nsga2). Read by MPI_Init.
  setenv("OMPI_MCA_fcoll", "individual", 0);
  keep_freed_memory();
  MpiSession mpi(argc, argv);
  auto ctx = mpi.world();
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  opt.cancel = &g_cancel;
  opt.warn = [](const std::string& w) { print_error_line("dse run: warning: " + w); };
  try {
    if (!name_problem.empty()) throw InputError(name_problem);
    const RunSummary s = run(*ctx, opt);
    if (ctx->rank() == 0) {
      std::cout << "dse run: " << s.points << " points (" << s.feasible << " feasible), archive " << s.archive
                << ", " << s.pareto << " on the Pareto front, " << ctx->size() << " rank(s), " << s.wall_time_s
                << " s\nwrote " << s.output_path << "\n";
      std::array<char, 200> line{};
      std::snprintf(line.data(), line.size(),
                    "time on rank 0: evaluation %.2f s, checkpoints %.2f s, archive merge %.2f s, mapping sheets "
                    "%.2f s, compressing /points %.2f s",
                    s.evaluate_s, s.checkpoint_s, s.merge_s, s.sheets_s, s.compress_s);
      std::cout << line.data() << "\n\n";
      print_shortlist(read_results(s.output_path), std::cout, read_result_names(s.output_path));
    }
    return kExitOk;
  } catch (const Interrupted& e) {
    if (ctx->rank() == 0) print_error_line(std::string("dse run: ") + e.what());
    return kExitInterrupted;
  } catch (const InputError& e) {
    if (ctx->rank() == 0) print_error_line(e.what());
    return kExitBadInput;
  } catch (const Error& e) {
    if (ctx->rank() == 0) print_error_line(std::string("dse run: ") + e.what());
    return kExitFailure;
  } catch (const std::exception& e) {
    // A library exception on one rank (an allocation failure, say): the others may be waiting in a
    // collective, so say what and where, and stop every rank.
    print_error_line("dse run: internal error on rank " + std::to_string(ctx->rank()) + ": " + e.what());
    MpiSession::abort(kExitFailure);
  }
}

}  // namespace dse::cli
