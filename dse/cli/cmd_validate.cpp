// `dse validate [--json] [--suite FILE] [--group NAME ...]`: runs the validation suite
// (scenarios/validation/suite.yaml) and compares predictions with published
// measurements: per case measured, predicted, signed relative error
// (predicted - measured) / measured, and the constants the case used; per group
// n, mean, median and max absolute error. Constants are per platform (the
// hardware presets) plus the suite's method block, the same for every case.
// The cases are read and evaluated in dse/validate/ (validate_suite.cpp and the files of each kind).
#include <boost/program_options.hpp>

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "dse/cli/commands.hpp"
#include "dse/error.hpp"
#include "dse/io/platform_reader.hpp"
#include "dse/io/platform_report.hpp"
#include "dse/validate/validate_suite.hpp"
#include "dse/io/yaml_reader.hpp"

namespace po = boost::program_options;

namespace dse::cli {

namespace {

using validation::CaseResult;

std::string fmt(double v, int p = 4) { return io::format_number(v, p); }

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

// The suite's statistics: absolute errors per group and per measurement file (the CSV-driven
// cases: which file carries the error), and per benchmark with several platforms the fastest
// one's speedup over each other one.
struct SuiteSummary {
  std::map<std::string, std::vector<double>> group_abs, file_abs;
  std::map<std::string, std::string> file_group;
  std::vector<Speedup> speedups;
  ErrorStats speedup_stats;
};
SuiteSummary summarize(const std::vector<CaseResult>& cases) {
  SuiteSummary s;
  for (const auto& c : cases) {
    s.group_abs[c.group].push_back(std::fabs(c.error));
    if (!c.file.empty()) {
      s.file_abs[c.file].push_back(std::fabs(c.error));
      s.file_group[c.file] = c.group;
    }
  }
  s.speedups = platform_speedups(cases);
  std::vector<double> speedup_abs;
  for (const auto& x : s.speedups) speedup_abs.push_back(std::fabs(x.error));
  s.speedup_stats = stats_of(speedup_abs);
  return s;
}

// `--json`: one object with the cases, the group and file statistics, the rank orders and the
// platform speedups.
void print_json(const std::string& suite, const std::vector<CaseResult>& cases, const SuiteSummary& s) {
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
  for (const auto& [name, abs] : s.group_abs) {
    std::cout << (first ? "" : ", ") << io::json_string(name) << ": {" << stats_json(stats_of(abs)) << "}";
    first = false;
  }
  std::cout << "}, \"files\": {";
  first = true;
  for (const auto& [name, abs] : s.file_abs) {
    std::cout << (first ? "" : ", ") << io::json_string(name) << ": {\"group\": " << io::json_string(s.file_group.at(name))
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
  for (std::size_t i = 0; i < s.speedups.size(); ++i) {
    const Speedup& x = s.speedups[i];
    std::cout << (i ? ", " : "") << "{\"benchmark\": " << io::json_string(x.benchmark)
              << ", \"faster\": " << io::json_string(x.faster->name)
              << ", \"slower\": " << io::json_string(x.slower->name)
              << ", \"measured\": " << io::json_number(x.measured)
              << ", \"predicted\": " << io::json_number(x.predicted)
              << ", \"error\": " << io::json_number(x.error) << "}";
  }
  std::cout << "], \"platform_speedup_errors\": {" << stats_json(s.speedup_stats) << "}}\n";
}

// The case table (the case and group columns as wide as the longest name, so columns never run
// together), then each case's source and constants (a line the case before printed is not
// repeated). Returns the group column's width.
int print_cases(const std::vector<CaseResult>& cases) {
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
  return group_w;
}

// The statistics per group and per measurement file, the rank orders and the platform speedups.
void print_statistics(const std::vector<CaseResult>& cases, const SuiteSummary& s, int group_w) {
  auto print_stats = [](const std::string& name, std::size_t width, const ErrorStats& st) {
    std::cout << std::left << std::setw(static_cast<int>(width)) << name << std::right << std::setw(4) << st.n
              << std::setw(10) << fmt(100 * st.mean, 3) << "%" << std::setw(11) << fmt(100 * st.median, 3) << "%"
              << std::setw(9) << fmt(100 * st.max, 3) << "%\n";
  };
  std::cout << '\n' << std::left << std::setw(group_w) << "group" << std::right << std::setw(4) << "n"
            << "   mean|err|  median|err|  max|err|\n";
  for (const auto& [name, abs] : s.group_abs) print_stats(name, static_cast<std::size_t>(group_w), stats_of(abs));
  if (!s.file_abs.empty()) {
    std::cout << "\nfile                                         n   mean|err|  median|err|  max|err|\n";
    for (const auto& [name, abs] : s.file_abs) print_stats(name, 42, stats_of(abs));
  }
  for (const auto& [b, ok] : rank_orders(cases))
    std::cout << "rank order of platforms on " << b << ": " << (ok ? "preserved" : "NOT preserved") << '\n';
  if (!s.speedups.empty()) {
    std::cout << "\nspeedup of each benchmark's measured fastest platform over the others"
                 " (measured, predicted, error):\n";
    for (const auto& x : s.speedups)
      std::cout << "  " << x.faster->name << " over " << x.slower->name << ": x" << fmt(x.measured, 4) << ", x"
                << fmt(x.predicted, 4) << ", " << fmt(100 * x.error, 3) << "%\n";
    const ErrorStats& st = s.speedup_stats;
    std::cout << "speedups: " << st.n << " pairs, mean|err| " << fmt(100 * st.mean, 3) << "%, median "
              << fmt(100 * st.median, 3) << "%, max " << fmt(100 * st.max, 3) << "%\n";
  }
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
  if (!parse_options(args, named, no_positionals(), vm)) return kExitOk;

  const std::vector<CaseResult> cases = validation::evaluate_suite(suite, only);
  const SuiteSummary summary = summarize(cases);
  if (vm.count("json") != 0) {
    print_json(suite, cases, summary);
    return kExitOk;
  }
  print_statistics(cases, summary, print_cases(cases));
  return kExitOk;
}

}  // namespace dse::cli
