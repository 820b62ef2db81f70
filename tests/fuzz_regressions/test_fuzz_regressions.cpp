// Replays the kept fuzz inputs (fuzz/regressions/<target>/ and fuzz/corpus/<target>/)
// through the same reader calls the libFuzzer targets make (fuzz/fuzz_readers.hpp), in
// the normal build: every input must be read or refused with a dse::Error; any other
// exception fails the test, and a crash fails the test binary.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "fuzz/fuzz_readers.hpp"
#include "fuzz/fuzz_run.hpp"

namespace {

namespace fs = std::filesystem;
using ReadFn = void (*)(const std::uint8_t*, std::size_t);

std::vector<fs::path> inputs_of(const std::string& kind, const std::string& target) {
  std::vector<fs::path> files;
  const fs::path dir = fs::path(DSE_SOURCE_DIR) / "fuzz" / kind / target;
  if (!fs::is_directory(dir)) return files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.is_regular_file() && entry.path().filename() != "README.md") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// Returns the number of inputs replayed; each one must end in success or a dse::Error.
std::size_t replay(const std::string& kind, const std::string& target, ReadFn read) {
  const auto files = inputs_of(kind, target);
  for (const auto& file : files) {
    SCOPED_TRACE(file.string());
    std::ifstream in(file, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto* data = reinterpret_cast<const std::uint8_t*>(bytes.data());
    try {
      read(data, bytes.size());
    } catch (const dse::Error&) {
      // a clean refusal
    } catch (const std::exception& e) {
      ADD_FAILURE() << "escaped as a non-dse exception: " << e.what();
    }
  }
  return files.size();
}

struct Target {
  const char* name;
  ReadFn read;
};

const Target targets[] = {
    {"scenario", dse::fuzz::read_scenario},   {"gpu_hardware", dse::fuzz::read_gpu_hardware},
    {"workload", dse::fuzz::read_workload},   {"timeloop", dse::fuzz::read_timeloop},
    {"scalesim", dse::fuzz::read_scalesim},   {"onnx", dse::fuzz::read_onnx},
    {"results", dse::fuzz::read_result_file}, {"run", dse::fuzz::run_scenario},
};

class FuzzInputs : public ::testing::TestWithParam<Target> {};

TEST_P(FuzzInputs, RegressionsEndCleanly) { replay("regressions", GetParam().name, GetParam().read); }

TEST_P(FuzzInputs, CorpusEndsCleanly) {
  // The seed corpus is kept in the repository, so an empty folder means it was lost.
  EXPECT_GT(replay("corpus", GetParam().name, GetParam().read), 0U);
}

INSTANTIATE_TEST_SUITE_P(Readers, FuzzInputs, ::testing::ValuesIn(targets),
                         [](const auto& param_info) { return std::string(param_info.param.name); });

}  // namespace
