// The reader calls behind each libFuzzer target (fuzz/fuzz_*.cpp), shared with the
// regression test tests/fuzz_regressions/ that replays fuzz/corpus and fuzz/regressions
// through the normal (gcc) build. Each function feeds one input to one reader and either
// returns or throws dse::Error (InputError / ConfigError / IoError): a clean rejection.
// Anything else escaping is a bug.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <system_error>
#include <unistd.h>

#include "dse/error.hpp"
#include "dse/io/gpu_hardware_reader.hpp"
#include "dse/io/onnx_import.hpp"
#include "dse/io/scalesim_io.hpp"
#include "dse/io/scenario.hpp"
#include "dse/io/timeloop_reader.hpp"
#include "dse/io/workload_reader.hpp"

namespace dse::fuzz {

inline std::string as_text(const std::uint8_t* data, std::size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

// The scratch files and folders of this process, removed when it exits (libFuzzer ends a
// -max_total_time run with exit(0)): each fuzz run left 4-8 of them in /dev/shm.
struct ScratchFiles {
  std::set<std::string> paths;
  ScratchFiles() = default;
  ScratchFiles(const ScratchFiles&) = delete;
  ScratchFiles& operator=(const ScratchFiles&) = delete;
  ~ScratchFiles() {
    for (const std::string& p : paths) {
      std::error_code ec;
      std::filesystem::remove_all(p, ec);
    }
  }
};

// A per-process scratch file (for readers that take a path); /dev/shm when present.
inline std::string scratch_path(const std::string& suffix) {
  static ScratchFiles files;
  const char* dir = (::access("/dev/shm", W_OK) == 0) ? "/dev/shm" : "/tmp";
  std::string path = std::string(dir) + "/dse_fuzz_" + std::to_string(::getpid()) + suffix;
  files.paths.insert(path);
  return path;
}

inline void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

inline void read_scenario(const std::uint8_t* data, std::size_t size) {
  const Scenario s = parse_scenario(as_text(data, size), "fuzz.yaml");
  (void)hardware_variants(s);
}

inline void read_gpu_hardware(const std::uint8_t* data, std::size_t size) {
  (void)io::parse_gpu_hardware(as_text(data, size), "fuzz.yaml");
}

inline void read_workload(const std::uint8_t* data, std::size_t size) {
  (void)io::parse_workload_text(as_text(data, size), "fuzz.yaml");
}

// The first byte picks the reader (0: config .cfg, 1: conv topology, 2: GEMM topology).
inline void read_scalesim(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return;
  const std::string text = as_text(data + 1, size - 1);
  switch (data[0] % 3) {
    case 0: (void)io::parse_scalesim_config(text, "fuzz.cfg"); break;
    case 1: (void)io::parse_scalesim_topology(text, "fuzz.csv", io::TopologyKind::conv); break;
    default: (void)io::parse_scalesim_topology(text, "fuzz.csv", io::TopologyKind::gemm); break;
  }
}

// import_onnx takes a path: the input goes to a scratch file first.
inline void read_onnx(const std::uint8_t* data, std::size_t size) {
  static const std::string path = scratch_path(".onnx");
  write_file(path, as_text(data, size));
  io::OnnxImportOptions options;
  options.batch = 2;
  options.seq = 8;
  options.unknown_as_elementwise = (size % 2) == 0;
  (void)io::import_onnx(path, options);
}

// The Timeloop readers. The first byte picks the reader (0: problem, 1: architecture,
// 2: ERT, 3: mapping); the rest is the file. The ERT and mapping readers need an
// architecture and a problem: the fixed 01-model-conv1d-2level files below (copied from
// /work/shared/oracles/timeloop).
namespace timeloop_fixed {
inline constexpr const char* fixed_arch = R"(architecture:
  version: 0.4
  nodes:
  - !Container
    name: System
    attributes:
      technology: "40nm"
      global_cycle_seconds: 1e-9

  - !Component
    name: MainMemory
    class: SRAM
    attributes:
      depth: 32768
      width: 64
      datawidth: 8

  - !Component
    name: Buffer
    class: regfile
    attributes:
      depth: 64
      width: 8
      datawidth: 8

  - !Component
    name: MACC
    class: intmac
    attributes:
      width: 8
)";

inline constexpr const char* fixed_problem = R"(problem:
  version: 0.4
  shape:
    name: Conv1D
    dimensions: [ R, P ]
    data_spaces:
    - name: Weights
      projection:
      - [ [R] ]
    - name: Inputs
      projection:
      - [ [R], [P] ]
    - name: Outputs
      projection:
      - [ [P] ]
      read_write: True

  instance:
    R: 3
    P: 16
)";

struct Fixed {
  std::string arch_path = scratch_path(".fixed.arch.yaml");
  std::string problem_path = scratch_path(".fixed.prob.yaml");
  costmodel::loopnest::Architecture arch;
  costmodel::loopnest::Problem problem;
  bool ok = false;
  Fixed() {
    write_file(arch_path, fixed_arch);
    write_file(problem_path, fixed_problem);
    try {
      arch = io::read_timeloop_arch(arch_path);
      problem = io::read_timeloop_problem(problem_path);
      ok = true;
    } catch (const Error&) {
    }
  }
};

}  // namespace timeloop_fixed

inline void read_timeloop(const std::uint8_t* data, std::size_t size) {
  static const timeloop_fixed::Fixed fixed;
  static const std::string path = scratch_path(".yaml");
  if (size < 1) return;
  write_file(path, as_text(data + 1, size - 1));
  switch (data[0] % 4) {
    case 0: (void)io::read_timeloop_problem(path); break;
    case 1: (void)io::read_timeloop_arch(path); break;
    case 2: {
      if (!fixed.ok) break;
      auto arch = fixed.arch;
      io::read_timeloop_ert(path, arch);
      break;
    }
    default:
      if (!fixed.ok) break;
      (void)io::read_timeloop_mapping(path, fixed.arch, fixed.problem);
      break;
  }
}

}  // namespace dse::fuzz
