// `dse report`: the review report of a result file (HTML, Markdown, PNG figures and
// CSV mapping sheets), drawn by scripts/report.py from the HDF5 file alone.
#include <sys/wait.h>
#include <unistd.h>

#include <boost/program_options.hpp>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "dse/cli/budget_options.hpp"
#include "dse/cli/commands.hpp"
#include "dse/error.hpp"
#include "dse/h5/results.hpp"
#include "dse/h5/shortlist.hpp"
#include "dse/io/yaml_reader.hpp"

#ifndef DSE_SCRIPTS_DIR
#error "DSE_SCRIPTS_DIR must be defined (the repository's scripts/ folder)"
#endif

namespace po = boost::program_options;

namespace dse::cli {

namespace {

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::string(v) : fallback;
}

std::string number(double v) { return io::format_number(v, 17); }

// Runs argv[0] with the arguments (no shell); returns its exit status.
int spawn(const std::vector<std::string>& argv) {
  std::vector<char*> ptrs;
  ptrs.reserve(argv.size() + 1);
  for (const auto& a : argv) ptrs.push_back(const_cast<char*>(a.c_str()));
  ptrs.push_back(nullptr);
  std::cout.flush();
  const pid_t pid = fork();
  if (pid < 0) throw Error("cannot start " + argv[0] + " (fork failed)");
  if (pid == 0) {
    execv(ptrs[0], ptrs.data());
    _exit(127);
  }
  int status = 0;
  if (waitpid(pid, &status, 0) < 0) throw Error("waiting for " + argv[0] + " failed");
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

}  // namespace

int cmd_report(const Args& args) {
  std::string input;
  std::string out_dir;
  BudgetArgs budget_args;
  po::options_description named(
      "dse report OUT.h5 -o DIR [options]\n\n"
      "Writes DIR/index.html (self-contained, opens from disk), DIR/report.md, PNG figures\n"
      "and CSV mapping sheets for the shortlist of a result file under the given SLA and\n"
      "power budget. The figures are drawn by scripts/report.py (Python 3, matplotlib, h5py)\n"
      "from the HDF5 file alone. Environment: DSE_SCRIPTS_DIR overrides the scripts folder\n"
      "(built in: " DSE_SCRIPTS_DIR "), DSE_PYTHON the interpreter (default /usr/bin/python3).\n\noptions");
  named.add_options()("help,h", "print this help")(
      "input", po::value<std::string>(&input)->required(), "result file written by 'dse run' (positional)")(
      "output,o", po::value<std::string>(&out_dir)->required(), "report folder (created; files in it are replaced)");
  add_budget_options(named, budget_args);
  po::positional_options_description pos;
  pos.add("input", 1);
  po::variables_map vm;
  if (!parse_options(args, named, pos, vm)) return kExitOk;
  require_result_path("report", input);
  check_results_file(input);  // a truncated or foreign file is refused here, not in Python
  // An archive with no row (every point infeasible) has nothing to draw: one line, not the
  // script's traceback (issue 58 item 14). Reading it also checks its layout and figures.
  if (read_archive_rows(input).empty()) {
    throw IoError(input + ": the archive is empty (no evaluated point was feasible); no report to draw");
  }
  const std::filesystem::path script = std::filesystem::path(env_or("DSE_SCRIPTS_DIR", DSE_SCRIPTS_DIR)) / "report.py";
  std::error_code ec;
  if (!std::filesystem::exists(script, ec)) throw IoError("report script not found: " + script.string());
  const std::string python = env_or("DSE_PYTHON", "/usr/bin/python3");
  std::vector<std::string> argv = {python, script.string(), input, "-o", out_dir};
  const Budgets b = budgets_from(vm, budget_args);
  // report.py takes the budgets in SI units, as the shortlist applies them.
  auto pass = [&](const char* flag, const std::optional<double>& v) {
    if (v) argv.insert(argv.end(), {flag, number(*v)});
  };
  pass("--ttft-p99-s", b.ttft_p99_s);
  pass("--tpot-p99-s", b.tpot_p99_s);
  pass("--e2e-p99-s", b.p99_latency_s);
  pass("--power-w", b.power_w);
  pass("--area-mm2", b.area_mm2);
  pass("--memory-bytes", b.memory_bytes);
  pass("--cost-usd", b.cost_usd);
  // The folder is made here, so that a path that cannot be one is a one-line error.
  std::filesystem::create_directories(out_dir, ec);
  if (ec) throw IoError("cannot create the report folder " + out_dir + ": " + ec.message());
  const int rc = spawn(argv);
  if (rc == 127) throw IoError("cannot run " + python + " (set DSE_PYTHON to a Python 3 with matplotlib and h5py)");
  if (rc != 0) throw IoError(script.string() + " failed with exit status " + std::to_string(rc));
  std::cout << printable((std::filesystem::path(out_dir) / "index.html").string()) << '\n';
  return kExitOk;
}

}  // namespace dse::cli
