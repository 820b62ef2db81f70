// libFuzzer target: see dse::fuzz::run_scenario in fuzz/fuzz_run.hpp (the whole of `dse run` on
// one rank for tiny spaces). A dse::Error is a clean rejection; any other exception, sanitizer
// report or timeout is a finding.
#include "fuzz/fuzz_run.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    dse::fuzz::run_scenario(data, size);
  } catch (const dse::Error&) {
  }
  return 0;
}
