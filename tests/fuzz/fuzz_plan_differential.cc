// libFuzzer target for the planner: the differential test's random write programs
// (tests/unit/plan/write_program_generator.h) with every choice of the generator taken from
// the fuzzer's bytes, run in the planned and the naive plan. Any disagreement on an output or
// on the state, an input written, or an error from a program the generator made aborts with
// the program's text, so libFuzzer keeps the input that shows it.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string_view>

#include "tests/unit/plan/write_program_generator.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace splice::plan::differential;
  const std::string text = ProgramGenerator(byte_picker(data, size)).generate();
  // The tensors' values come from the same bytes, through a seed.
  const uint32_t seed = static_cast<uint32_t>(
      std::hash<std::string_view>{}(std::string_view(reinterpret_cast<const char*>(data), size)));
  std::mt19937 rng(seed);
  const std::string failure = planned_vs_naive(text, rng);
  if (!failure.empty()) {
    std::fprintf(stderr, "planned and naive plans disagree: %s\nprogram:\n%s\n", failure.c_str(),
                 text.c_str());
    std::abort();
  }
  return 0;
}
