// No call modifies a caller's input that the program does not mutate (write-semantics.md §2,
// §3.6): every recorded call of every case in tests/cases runs on copies of its inputs, and
// afterwards each input not returned as a USER_INPUT_MUTATION must hold exactly its old
// bytes — also when the call fails. The conformance suite compares outputs only, so a kernel
// that wrote a functional slice_scatter into its base in place (the in-place state path taken
// for an input the signature does not mutate) would pass it whenever nothing read the base
// after the write; this test catches it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "splice/splice.h"
#include "tensor/safetensors.h"

namespace splice {
namespace {

namespace fs = std::filesystem;

const fs::path kCases = fs::path(SPLICE_SOURCE_DIR) / "tests" / "cases";

// Case directories with a program splice loads (those recording `expect_load_error` are
// refused at load and run nothing).
std::vector<std::string> runnable_cases() {
  std::vector<std::string> names;
  if (!fs::exists(kCases)) return names;
  for (const auto& e : fs::directory_iterator(kCases)) {
    if (!e.is_directory() || !fs::exists(e.path() / "model.pt2")) continue;
    std::ifstream in(e.path() / "case.json");
    auto j = nlohmann::json::parse(in, nullptr, false);
    if (!j.is_discarded() && j.contains("expect_load_error")) continue;
    names.push_back(e.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::map<std::string, Tensor> read(const fs::path& path) {
  auto r = read_safetensors(path.string());
  EXPECT_TRUE(r.ok()) << path << ": " << (r.ok() ? "" : r.error().message());
  return r.ok() ? std::move(*r) : std::map<std::string, Tensor>{};
}

class InputIsolation : public ::testing::TestWithParam<std::string> {};

TEST_P(InputIsolation, InputsTheProgramDoesNotMutateKeepTheirBytes) {
  const fs::path dir = kCases / GetParam();
  auto model = Model::load((dir / "model.pt2").string());
  // Whether it loads is the conformance suite's check; here only runs matter.
  if (!model.ok()) GTEST_SKIP() << model.error().message();
  Session session = model->open_session().value();
  for (int k = 0; fs::exists(dir / ("call" + std::to_string(k) + ".inputs.safetensors")); ++k) {
    SCOPED_TRACE("call " + std::to_string(k));
    const fs::path file = dir / ("call" + std::to_string(k) + ".inputs.safetensors");
    auto inputs = read(file);
    const auto before = read(file);
    std::map<std::string, TensorArg> args;
    for (auto& [name, t] : inputs)
      args.emplace(name, TensorArg{t.raw_data(), t.dtype(), t.sizes()});
    auto result = session.run(args);
    std::set<std::string> mutated;
    if (result.ok())
      for (const auto& [name, h] : result->mutated_inputs) mutated.insert(name);
    for (const auto& [name, old] : before) {
      if (mutated.count(name)) continue;
      const Tensor& now = inputs.at(name);
      ASSERT_EQ(now.nbytes(), old.nbytes()) << name;
      EXPECT_EQ(std::memcmp(now.raw_data(), old.raw_data(), old.nbytes()), 0)
          << "input '" << name << "' changed although the program does not mutate it"
          << (result.ok() ? "" : " (in a call that failed: " + result.error().message() + ")");
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, InputIsolation, ::testing::ValuesIn(runnable_cases()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param;
                           for (char& c : name)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return name;
                         });

}  // namespace
}  // namespace splice
