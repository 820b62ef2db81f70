// Scratch files for the unit tests: one folder per test process,
// <TempDir>/dse_test_<pid>, made on first use and removed when the process exits normally
// (a failed expectation still exits normally; a crash leaves the folder to look at). ctest
// runs each test as a process of its own, so tests running at once, and ctest runs of two
// build trees at once, never write the same file.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

namespace dse::test {

inline const std::filesystem::path& scratch_root() {
  struct Root {
    std::filesystem::path path =
        std::filesystem::path(::testing::TempDir()) / ("dse_test_" + std::to_string(::getpid()));
    Root() {
      std::filesystem::remove_all(path);
      std::filesystem::create_directories(path);
    }
    Root(const Root&) = delete;
    Root& operator=(const Root&) = delete;
    ~Root() {
      std::error_code ec;
      std::filesystem::remove_all(path, ec);
    }
  };
  static const Root root;
  return root.path;
}

// An empty folder `name` in this process's scratch folder (emptied if a test made it before).
inline std::filesystem::path scratch_dir(const std::string& name) {
  const std::filesystem::path dir = scratch_root() / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// The path of a file `name` in this process's scratch folder (not created).
inline std::string scratch_file(const std::string& name) { return (scratch_root() / name).string(); }

// `text` written to the file `name` in this process's scratch folder; its path.
inline std::string write_scratch_file(const std::string& name, const std::string& text) {
  const std::string path = scratch_file(name);
  std::ofstream(path) << text;
  return path;
}

}  // namespace dse::test
