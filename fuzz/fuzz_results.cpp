// libFuzzer target: see dse::fuzz::read_result_file in fuzz/fuzz_run.hpp. A dse::Error is a
// clean rejection; any other exception, sanitizer report or timeout is a finding.
#include "fuzz/fuzz_run.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    dse::fuzz::read_result_file(data, size);
  } catch (const dse::Error&) {
  }
  return 0;
}
