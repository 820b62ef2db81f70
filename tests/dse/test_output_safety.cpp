// `dse run`'s output, made safely (issue 58 items 1-3, 11, 14, 16, 18; dse/driver/output_file.hpp),
// through the local (one-rank) context: no write through a symbolic link, no output that is an
// input of the run, one run per output at a time, the output's folder checked before any point
// is evaluated, a resume refused when an input file changed, a run with no feasible point and a
// scenario past 64 KiB written whole.
#include <gtest/gtest.h>
#include <sys/file.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "dse/driver/context.hpp"
#include "dse/driver/output_file.hpp"
#include "dse/driver/run.hpp"
#include "dse/error.hpp"
#include "dse/h5/h5.hpp"
#include "dse/h5/results.hpp"
#include "dse/h5/shortlist.hpp"
#include "tests/scratch.hpp"

namespace dse {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

RunOptions options(const fs::path& scenario, const fs::path& out) {
  RunOptions o;
  o.scenario_path = scenario.string();
  o.output_path = out.string();
  o.threads = 1;
  o.progress = false;
  return o;
}

// The message of the exception of type E that running throws, or "" when it runs.
template <class E>
std::string refusal(const RunOptions& o) {
  auto ctx = make_local_context();
  try {
    (void)run(*ctx, o);
  } catch (const E& e) {
    return e.what();
  }
  return "";
}

const fs::path kQuickstart = fs::path(DSE_SOURCE_DIR) / "scenarios" / "quickstart.yaml";

// Issue 58 item 1: a link at OUT.partial (or OUT.partial.compressing) made the run overwrite its
// target with 2.18 MB of HDF5 and exit 0.
TEST(OutputSafety, NoFileIsWrittenThroughASymbolicLink) {
  const auto dir = test::scratch_dir("out_links");
  for (const char* made : {"out.h5.partial", "out.h5.partial.compressing", "out.h5.lock"}) {
    SCOPED_TRACE(made);
    fs::remove_all(dir);
    fs::create_directories(dir);
    std::ofstream(dir / "victim.txt") << "V\n";
    fs::create_symlink("victim.txt", dir / made);
    const std::string e = refusal<InputError>(options(kQuickstart, dir / "out.h5"));
    EXPECT_NE(e.find(std::string(made) + " is a symbolic link; dse run does not write through links"),
              std::string::npos)
        << e;
    EXPECT_EQ(slurp(dir / "victim.txt"), "V\n");
    EXPECT_FALSE(fs::exists(dir / "out.h5"));
  }
  // A link at OUT itself is replaced by the finished file (rename(2)); its target is untouched.
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "victim.txt") << "V\n";
  fs::create_symlink("victim.txt", dir / "out.h5");
  auto ctx = make_local_context();
  (void)run(*ctx, options(kQuickstart, dir / "out.h5"));
  EXPECT_EQ(slurp(dir / "victim.txt"), "V\n");
  EXPECT_FALSE(fs::is_symlink(dir / "out.h5"));
  EXPECT_EQ(read_archive_rows((dir / "out.h5").string()).empty(), false);
}

// Issue 58 item 3: -o naming the scenario or a file it reads replaced it with HDF5.
TEST(OutputSafety, AnOutputThatIsAnInputIsRefused) {
  const auto dir = test::scratch_dir("out_inputs");
  fs::copy_file(kQuickstart, dir / "scenario.yaml");
  const std::string before = slurp(dir / "scenario.yaml");
  std::string e = refusal<InputError>(options(dir / "scenario.yaml", dir / "scenario.yaml"));
  EXPECT_NE(e.find("an input of this run"), std::string::npos) << e;
  EXPECT_EQ(slurp(dir / "scenario.yaml"), before);
  // The same file under another name (a link to it), and as OUT.partial.
  fs::create_symlink("scenario.yaml", dir / "alias.h5");
  EXPECT_NE(refusal<InputError>(options(dir / "scenario.yaml", dir / "alias.h5")).find("an input of this run"),
            std::string::npos);
  // A system file the scenario reads.
  const fs::path system = fs::path(DSE_SOURCE_DIR) / "scenarios" / "systems" / "dgx-a100-8.yaml";
  fs::copy_file(system, dir / "sys.yaml");
  std::ofstream(dir / "served.yaml") << "name: s\nhardware: [{name: s, kind: system, system: " << (dir / "sys.yaml").string()
                                     << "}]\nworkloads: [{name: w, model: llama2-7b}]\nbatch_sizes: [1]\n";
  const std::string sys_before = slurp(dir / "sys.yaml");
  e = refusal<InputError>(options(dir / "served.yaml", dir / "sys.yaml"));
  EXPECT_NE(e.find("writing it would replace " + (dir / "sys.yaml").string()), std::string::npos) << e;
  EXPECT_EQ(slurp(dir / "sys.yaml"), sys_before);
}

// Issue 58 item 2: two runs on one -o corrupted each other (rows zeroed; a short run destroyed a
// long run's checkpoint). The lock is held here as a running dse run holds it.
TEST(OutputSafety, ASecondRunOnTheSameOutputStopsAtOnceNamingTheHolder) {
  const auto dir = test::scratch_dir("out_lock");
  const OutputPaths paths((dir / "out.h5").string());
  {
    const OutputLock held(paths);
    const std::string e = refusal<InputError>(options(kQuickstart, dir / "out.h5"));
    EXPECT_NE(e.find("out.h5 is in use by another dse run (pid " + std::to_string(::getpid()) + " on "),
              std::string::npos)
        << e;
    EXPECT_FALSE(fs::exists(dir / "out.h5.partial"));
    RunOptions resume = options("", dir / "out.h5");
    resume.resume = true;
    EXPECT_NE(refusal<InputError>(resume).find("is in use by another dse run"), std::string::npos);
  }
  EXPECT_FALSE(fs::exists(paths.lock));  // released and removed
  auto ctx = make_local_context();
  (void)run(*ctx, options(kQuickstart, dir / "out.h5"));
  EXPECT_FALSE(fs::exists(paths.lock));
}

// Issue 58 item 18: -o naming a folder failed only after the whole run; `-o newdir/` left a
// hidden newdir/.partial; a folder that cannot be written said "internal error ... cannot remove".
TEST(OutputSafety, TheOutputNameAndFolderAreCheckedBeforeTheRun) {
  const auto dir = test::scratch_dir("out_names");
  fs::create_directories(dir / "existing");
  EXPECT_NE(refusal<InputError>(options(kQuickstart, dir / "existing")).find("a folder (expected the name of the result file)"),
            std::string::npos);
  EXPECT_NE(refusal<InputError>(options(kQuickstart, (dir / "newdir").string() + "/")).find("not a folder (a name ending in '/')"),
            std::string::npos);
  EXPECT_FALSE(fs::exists(dir / "newdir"));
  // A folder is made when missing.
  auto ctx = make_local_context();
  (void)run(*ctx, options(kQuickstart, dir / "a" / "b" / "out.h5"));
  EXPECT_TRUE(fs::exists(dir / "a" / "b" / "out.h5"));
  // /proc refuses writes to everyone (root included), like a read-only file system.
  const std::string e = refusal<IoError>(options(kQuickstart, "/proc/self/out.h5"));
  EXPECT_NE(e.find("cannot write /proc/self/out.h5.partial (directory /proc/self: "), std::string::npos) << e;
}

// Issue 58 item 11: --resume after a system file changed mixed the old and new figures silently.
TEST(OutputSafety, AResumeRefusesAChangedInputFileUnlessAsked) {
  const auto dir = test::scratch_dir("out_changed");
  const fs::path system = fs::path(DSE_SOURCE_DIR) / "scenarios" / "systems" / "dgx-a100-8.yaml";
  fs::copy_file(system, dir / "sys.yaml");
  std::ofstream(dir / "served.yaml") << "name: s\nhardware: [{name: s, kind: system, system: " << (dir / "sys.yaml").string()
                                     << "}]\nworkloads: [{name: w, model: llama2-7b, requests: 20}]\nbatch_sizes: [1, 2]\n";
  // Stop the run at once (cancelled before its first round): the checkpoint records the inputs.
  std::atomic<bool> cancel{true};
  RunOptions o = options(dir / "served.yaml", dir / "out.h5");
  o.cancel = &cancel;
  EXPECT_NE(refusal<Interrupted>(o), "");
  ASSERT_TRUE(fs::exists(dir / "out.h5.partial"));
  // Unchanged: the resume would run (checked with the cancel still set: it stops again).
  RunOptions r = options("", dir / "out.h5");
  r.resume = true;
  r.cancel = &cancel;
  EXPECT_NE(refusal<Interrupted>(r), "");
  // One figure changed: refused, naming the file.
  std::string text = slurp(dir / "sys.yaml");
  text += "\n# edited\n";
  std::ofstream(dir / "sys.yaml") << text;
  const std::string e = refusal<InputError>(r);
  EXPECT_NE(e.find((dir / "sys.yaml").string() + " has changed since the run started"), std::string::npos) << e;
  EXPECT_NE(e.find("--resume-changed-inputs"), std::string::npos);
  // Asked for: it continues (and completes).
  cancel = false;
  r.resume_changed_inputs = true;
  auto ctx = make_local_context();
  EXPECT_EQ(run(*ctx, r).points, 2u);
}

// Issue 58 item 14: every point infeasible gave "H5Dwrite failed; addr overflow" and no file.
TEST(OutputSafety, ARunWithNoFeasiblePointWritesAValidFile) {
  const auto dir = test::scratch_dir("out_infeasible");
  // 1 byte of memory: no layer fits, every point is infeasible.
  std::ofstream(dir / "none.yaml")
      << "name: none\nhardware:\n  - {name: tiny, peak_flops_per_s: 1e12, memory_bandwidth_bytes_per_s: 1e9, "
         "memory_capacity_bytes: 1, kernel_overhead_s: 0, energy_per_flop_j: 0, energy_per_byte_j: 0, "
         "static_power_w: 0, engineering_risk: 0}\nworkloads:\n  - {name: w, layers: [{name: fc, kind: gemm, "
         "rows_per_sample: 1, n: 4096, k: 1024}]}\nbatch_sizes: [1, 2]\n";
  auto ctx = make_local_context();
  const RunSummary s = run(*ctx, options(dir / "none.yaml", dir / "out.h5"));
  EXPECT_EQ(s.points, 2u);
  EXPECT_EQ(s.feasible, 0u);
  const ResultsFile r = read_results((dir / "out.h5").string());
  EXPECT_TRUE(r.complete);
  EXPECT_EQ(r.points.size(), 2u);
  EXPECT_TRUE(r.archive.empty());
  EXPECT_TRUE(r.pareto.empty());
}

// Issue 58 item 16: a scenario of 64 KiB or more failed with "object header message is too
// large". One of 1 MiB (comments count) is stored whole and read back.
TEST(OutputSafety, AScenarioOfAMebibyteIsStoredWhole) {
  const auto dir = test::scratch_dir("out_big_scenario");
  std::string text = slurp(kQuickstart);
  while (text.size() < (std::size_t{1} << 20)) text += "# " + std::string(1000, 'c') + "\n";
  std::ofstream(dir / "big.yaml") << text;
  auto ctx = make_local_context();
  (void)run(*ctx, options(dir / "big.yaml", dir / "out.h5"));
  EXPECT_EQ(read_results((dir / "out.h5").string()).info.scenario_text, text);
}

// Issue 58 item 7 (one rank): a point whose figures overflow double stopped the run with
// "internal error: non-finite objective" (and hung on 2 ranks: tests/mpi/check_rank_failures.sh).
TEST(OutputSafety, APointWhoseFiguresOverflowIsNamedAndNoFileIsLeft) {
  const auto dir = test::scratch_dir("out_overflow");
  std::ofstream(dir / "huge.yaml")
      << "name: huge\nhardware:\n  - {name: hw, peak_flops_per_s: 1e12, memory_bandwidth_bytes_per_s: 1e12, "
         "memory_capacity_bytes: 1e12, kernel_overhead_s: 0, energy_per_flop_j: 0, energy_per_byte_j: 1e308, "
         "static_power_w: 0, engineering_risk: 0}\nworkloads:\n  - {name: w, layers: [{name: fc, kind: gemm, "
         "rows_per_sample: 1, n: 4096, k: 1024}]}\nbatch_sizes: [1]\n";
  const std::string e = refusal<InputError>(options(dir / "huge.yaml", dir / "out.h5"));
  EXPECT_NE(e.find("point 0 (hardware hw, workload w, batch 1): energy_per_sample_j is inf"), std::string::npos) << e;
  EXPECT_FALSE(fs::exists(dir / "out.h5.partial"));
  EXPECT_FALSE(fs::exists(dir / "out.h5.lock"));
}

}  // namespace
}  // namespace dse
