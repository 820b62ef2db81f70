// libFuzzer target: see dse::fuzz::read_onnx in fuzz/fuzz_readers.hpp. A dse::Error is a
// clean rejection; any other exception, sanitizer report or timeout is a finding.
#include "fuzz/fuzz_readers.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    dse::fuzz::read_onnx(data, size);
  } catch (const dse::Error&) {
  }
  return 0;
}
