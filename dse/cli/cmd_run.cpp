#include <boost/program_options.hpp>
#include <sys/mman.h>
#include <sys/resource.h>
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
#include "dse/driver/agree.hpp"
#include "dse/driver/context.hpp"
#include "dse/driver/cpu_binding.hpp"
#include "dse/error.hpp"
#include "dse/h5/results.hpp"
#include "dse/driver/run.hpp"
#include "dse/version.hpp"
#include "dse/h5/shortlist.hpp"

namespace po = boost::program_options;

namespace dse::cli {

namespace {

// The cancel token: the one piece of state a signal handler may touch.
std::atomic<bool> g_cancel{false};  // NOLINT(cppcoreguidelines-avoid-non-const-global-variables)

// The first SIGINT, SIGTERM or SIGUSR1 asks the run to stop at its next safe point (exit code 130,
// the last checkpoint kept); a second one ends the process at once, as the signal's default does.
// SIGUSR1 is the one mpirun forwards to every rank: mpirun turns SIGTERM and SIGINT into an abort
// of its own (exit code 1 whatever the ranks return; OpenMPI 4.1.4), and `kill -USR1 MPIRUN_PID`
// stops the job with a checkpoint and exit code 130 (scripts/mpirun_stoppable.sh does it on SIGTERM).
extern "C" void on_signal(int sig) {
  if (g_cancel.exchange(true)) {
    std::signal(sig, SIG_DFL);
    std::raise(sig);
  }
}

// More threads than any node has (a two-socket node of 2 x 192 cores with 2-way SMT has 768):
// --threads 65537 aborted inside TBB (issue 58 item 6).
constexpr int kMaxThreads = 1024;

// Address space that MPI start-up needs beyond what the process already maps. Measured here
// (OpenMPI 4.1.4, shared memory and TCP transports): MPI_Init_thread took the address space from
// 34 MB to 235 MB (peak 250 MB); under an `ulimit -v` of about 220 MB it crashed inside OpenMPI
// (SIGSEGV in mca_base_var_register, issue 58 item 18) or failed in PMIx. Reserving this much first
// (and giving it back) turns such a limit into a clear message.
constexpr std::size_t kMpiStartBytes = std::size_t{224} << 20;

// Throws Error when the address-space limit leaves less than kMpiStartBytes for MPI to start.
void require_room_for_mpi() {
  void* p = ::mmap(nullptr, kMpiStartBytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p != MAP_FAILED) {
    ::munmap(p, kMpiStartBytes);
    return;
  }
  rlimit lim{};
  const bool limited = ::getrlimit(RLIMIT_AS, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY;
  throw Error("cannot start MPI: " +
              (limited ? "the address-space limit (ulimit -v " + std::to_string(lim.rlim_cur >> 10) + " KiB) leaves"
                       : std::string("the system has")) +
              " less than the " + std::to_string(kMpiStartBytes >> 20) +
              " MiB of address space that MPI start-up needs; raise the limit");
}

// The longest output file name and path `dse run` takes. Linux allows 255 and 4,095 bytes, but
// MPI-IO names side files after the output (OpenMPI 4.1.4's shared-file-pointer component, queried
// at every open, overflowed a buffer and aborted the job from a 232-byte name; 231 ran): 200 leaves
// room for its suffixes, whose job and communicator numbers vary.
constexpr std::size_t kMaxFileNameBytes = 200;
// The shortlist that `dse run` prints at the end: the first rows of each workload.
constexpr std::size_t kSummaryTop = 10;
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


// The options of dse run, read into `opt`, `store` and `resume`.
po::options_description run_options(RunOptions& opt, std::string& store, std::string& resume) {
  po::options_description named(
      "dse run SCENARIO.yaml -o OUT.h5 [options]\n"
      "dse run --resume OUT.h5 [options]\n\n"
      "Searches the scenario's design space (hardware x workload x batch) with its sampler\n"
      "(exhaustive, random or NSGA-II), spread over MPI ranks in dynamic chunks and over\n"
      "TBB threads inside each rank, and writes the points, the constraint-robust archive\n"
      "and the Pareto front to HDF5. Run under 'mpirun -np N' for N ranks. The output is\n"
      "written as OUT.h5.partial, checkpointed after each round that ends --checkpoint-interval\n"
      "seconds of work after the last checkpoint, and renamed to OUT.h5 when complete.\n"
      "SIGINT/SIGTERM stop at the next chunk, keep the last checkpoint and exit with code 130;\n"
      "--resume continues from it with identical final results.\n\noptions");
  named.add_options()("help,h", "print this help")(
      "scenario", po::value<std::string>(&opt.scenario_path), "scenario YAML file (positional)")(
      "output,o", po::value<std::string>(&opt.output_path),
      "HDF5 file to write (replaced if it exists; not a folder, not an input of the run, one run at a time)")(
      "resume", po::value<std::string>(&resume), "continue the interrupted run whose output was OUT.h5")(
      "resume-changed-inputs",
      "with --resume: continue even if a file the scenario reads has changed since the run started")(
      "threads,t", po::value<int>(&opt.threads)->default_value(0),
      "TBB threads per rank (0: one per core the rank may run on, its CPU binding)")(
      "store", po::value<std::string>(&store)->default_value("all"),
      "what to keep: all (every point in /points), archive (only the archive), none (summary only)")(
      "checkpoint-interval", po::value<double>(&opt.checkpoint_interval_s)->default_value(2.0),
      "seconds of work between checkpoints (a round is checkpointed once this much time has passed since "
      "the last checkpoint, and the last round always)")(
      "no-progress", "do not print progress lines on standard error");
  return named;
}

// The options checked together (exit 2 on a bad combination); returns the output name's problem,
// reported by rank 0 once MPI runs (empty when the name is fine).
std::string check_run_options(RunOptions& opt, const po::variables_map& vm, const std::string& resume,
                              const std::string& store) {
  if (!resume.empty()) {
    if (!opt.scenario_path.empty()) throw InputError("dse run: give either SCENARIO.yaml or --resume, not both");
    // --resume continues the file it names; an -o naming another file was ignored silently.
    if (!opt.output_path.empty() && opt.output_path != resume) {
      throw InputError("dse run: --resume " + resume + " writes " + resume + "; -o " + opt.output_path +
                       " names another file (a resumed run keeps its output name; give only --resume)");
    }
    opt.output_path = resume;
    opt.resume = true;
    opt.resume_changed_inputs = vm.count("resume-changed-inputs") != 0;
  } else if (opt.scenario_path.empty() || opt.output_path.empty()) {
    throw InputError("dse run: SCENARIO.yaml and -o OUT.h5 are required (see 'dse run --help')");
  } else if (vm.count("resume-changed-inputs") != 0) {
    throw InputError("dse run: --resume-changed-inputs goes with --resume");
  }
  if (opt.threads < 0 || opt.threads > kMaxThreads)
    throw InputError("dse run: --threads: expected 0 (all cores) to " + std::to_string(kMaxThreads) + " (got " +
                     std::to_string(opt.threads) + ")");
  if (!(opt.checkpoint_interval_s > 0) || !std::isfinite(opt.checkpoint_interval_s))
    throw InputError("dse run: --checkpoint-interval must be a finite number of seconds > 0");
  opt.store = parse_store(store);
  opt.progress = vm.count("no-progress") == 0;
  // The run writes OUT.h5.partial; a name MPI-IO cannot open is refused before any rank opens it.
  const std::string leaf = std::filesystem::path(opt.output_path).filename().string();
  if (leaf.size() + std::string_view(".partial").size() <= kMaxFileNameBytes && opt.output_path.size() <= kMaxPathBytes)
    return "";
  return "dse run: " + std::string(opt.resume ? "--resume" : "-o") + ": expected a file name of at most " +
         std::to_string(kMaxFileNameBytes - std::string_view(".partial").size()) + " bytes in a path of at most " +
         std::to_string(kMaxPathBytes) + " (got " + std::to_string(leaf.size()) + " in " +
         std::to_string(opt.output_path.size()) + ")";
}

// Rank 0's summary of a finished run: counts, times per phase, cores, and the first kSummaryTop
// points of each workload (a front of 2 million rows printed for over 15 minutes); a signal stops
// the printing (exit code 130, the results are complete).
int print_run_summary(Context& ctx, const RunSummary& s) {
  std::cout << "dse run: " << s.points << " points (" << s.feasible << " feasible), archive " << s.archive << ", "
            << s.pareto << " on the Pareto front, " << ctx.size() << " rank(s), " << s.wall_time_s << " s\nwrote "
            << printable(s.output_path) << "\n";
  std::array<char, 200> line{};
  std::snprintf(line.data(), line.size(),
                "time on rank 0: evaluation %.2f s, checkpoints %.2f s, archive merge %.2f s, mapping sheets "
                "%.2f s, compressing /points %.2f s",
                s.evaluate_s, s.checkpoint_s, s.merge_s, s.sheets_s, s.compress_s);
  std::cout << line.data() << "\n";
  std::cout << "cores per rank (its CPU binding): " << cores_per_rank_text(s.rank_cores)
            << "; threads per rank: " << cores_per_rank_text(s.rank_threads) << "\n\n";
  try {
    test_fault_point("print", ctx.rank());
    std::vector<std::uint32_t> shown;  // the hardware ids whose names the summary may print
    for (const auto& r : s.summary_rows) shown.push_back(r.hardware_id);
    if (print_shortlist(s.summary_rows, kSummaryTop, std::cout, read_result_names(s.output_path, std::move(shown)),
                        &g_cancel)) {
      std::cout << "(the first " << kSummaryTop << " of each workload; all of them: dse shortlist "
                << printable(s.output_path) << ")\n";
    }
    if (g_cancel.load()) throw Interrupted("a signal came while the shortlist was printed");
  } catch (const Interrupted&) {
    std::cout.flush();
    print_error_line("dse run: interrupted while printing the shortlist; the results are complete in " +
                     s.output_path);
    return kExitInterrupted;
  }
  return kExitOk;
}

}  // namespace

int cmd_run(int& argc, char**& argv, const Args& args) {
  RunOptions opt;
  opt.commit = build_commit();
  std::string store = "all";
  std::string resume;
  const po::options_description named = run_options(opt, store, resume);
  po::positional_options_description pos;
  pos.add("scenario", 1);
  po::variables_map vm;
  if (!parse_options(args, named, pos, vm)) return kExitOk;
  const std::string name_problem = check_run_options(opt, vm, resume, store);

  // OpenMPI's collective MPI-IO writes without aggregators, unless the user chose: when a
  // write fails on some ranks (a full disk), the default two-phase aggregation (fcoll
  // vulcan) returns the error on some ranks only, and with 4 ranks the others were left
  // waiting inside HDF5's collective flush; with "individual" each rank gets its own error
  // and the job stops (h5.cpp; test mpi_output_faults_np4). ROMIO also stops cleanly but
  // changed the NSGA-II result across rank counts (mpi_identity_nsga2). Read by MPI_Init.
  setenv("OMPI_MCA_fcoll", "individual", 0);
  // Ranks all on this node: OpenMPI's shared-memory path without 0.22 s of probing for fabrics
  // (cpu_binding.hpp single_node_pml).
  if (const std::string pml = single_node_pml([](const char* name) { return std::getenv(name); }); !pml.empty())
    setenv("OMPI_MCA_pml", pml.c_str(), 0);
  require_room_for_mpi();
  keep_freed_memory();
  MpiSession mpi(argc, argv);
  auto ctx = mpi.world();
  for (const int sig : {SIGINT, SIGTERM, SIGUSR1}) std::signal(sig, on_signal);
  opt.cancel = &g_cancel;
  opt.warn = [](const std::string& w) { print_error_line("dse run: warning: " + w); };
  try {
    if (!name_problem.empty()) throw InputError(name_problem);
    const RunSummary s = run(*ctx, opt);
    return ctx->rank() == 0 ? print_run_summary(*ctx, s) : kExitOk;
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
    // A library exception that escaped the agreement (agree.hpp) on one rank: the others may be
    // waiting in a collective, so say what and where, and stop every rank. Alone, just return.
    print_error_line("dse run: internal error on rank " + std::to_string(ctx->rank()) + ": " + e.what());
    if (ctx->size() == 1) return kExitFailure;
    MpiSession::abort(kExitFailure);
  }
}

}  // namespace dse::cli
