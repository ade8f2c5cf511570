// The `splice run` contract on real cases from tests/cases: output files keyed `output.N` and
// `mutated.NAME` holding exactly PyTorch's recorded values, state chained across calls with
// --state-in/--state-out, and exit code 2 with a message naming the problem for every kind of
// bad input, state or command line.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <fstream>
#include <limits>

#include "tests/unit/tools/cli_test_util.h"

namespace splice::test {
namespace {

std::string case_file(const std::string& c, const std::string& name) {
  return kCasesDir + "/" + c + "/" + name;
}

Tensor filled_f32(const Shape& shape, float value) {
  Tensor t = Tensor::empty(DType::kFloat32, shape).value();
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = value;
  return t;
}

// Runs `splice run ARGS` and expects exit 2 with `substring` in stderr.
void expect_user_error(const std::vector<std::string>& args, const std::string& substring) {
  Outcome o = run_splice(args);
  EXPECT_EQ(o.exit_code, 2) << describe(o);
  EXPECT_NE(o.err.find(substring), std::string::npos)
      << "expected '" << substring << "' in stderr\n"
      << describe(o);
}

TEST(SpliceRun, WritesEveryOutputExactlyAsRecorded) {
  TempDir tmp;
  const std::string c = "return_same_tensor_three_times.default";  // three int32 outputs
  Outcome o = run_splice({"run", case_file(c, "model.pt2"), "--inputs",
                          case_file(c, "call0.inputs.safetensors"), "--outputs",
                          tmp.file("out.safetensors")});
  ASSERT_EQ(o.exit_code, 0) << describe(o);
  auto out = read_tensors(tmp.file("out.safetensors"));
  std::vector<std::string> keys;
  for (const auto& [k, v] : out) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"output.0", "output.1", "output.2"}));
  expect_same_tensors(out, read_tensors(case_file(c, "call0.outputs.safetensors")));
}

TEST(SpliceRun, OmitsNoneOutputsAndKeepsPositions) {
  TempDir tmp;
  const std::string c = "scalar_and_none_outputs.default";  // returns (tensor, None, int)
  for (int call = 0; call < 2; ++call) {
    std::string prefix = "call" + std::to_string(call);
    Outcome o = run_splice({"run", case_file(c, "model.pt2"), "--inputs",
                            case_file(c, prefix + ".inputs.safetensors"), "--outputs",
                            tmp.file("out.safetensors")});
    ASSERT_EQ(o.exit_code, 0) << describe(o);
    auto out = read_tensors(tmp.file("out.safetensors"));
    auto expected = read_tensors(case_file(c, prefix + ".outputs.safetensors"));
    ASSERT_EQ(out.size(), 2u);
    ASSERT_TRUE(out.count("output.0") && out.count("output.2"));
    // output.2 is an int (a 0-d int64 tensor): exact.
    expect_same_tensors({{"output.2", out.at("output.2")}},
                        {{"output.2", expected.at("output.2")}});
  }
}

TEST(SpliceRun, WritesMutatedUserInputs) {
  TempDir tmp;
  const std::string c = "user_input_mutation_select_write.default";  // int32, mutates x
  Outcome o = run_splice({"run", case_file(c, "model.pt2"), "--inputs",
                          case_file(c, "call0.inputs.safetensors"), "--outputs",
                          tmp.file("out.safetensors")});
  ASSERT_EQ(o.exit_code, 0) << describe(o);
  auto out = read_tensors(tmp.file("out.safetensors"));
  ASSERT_TRUE(out.count("mutated.x"));
  expect_same_tensors(out, read_tensors(case_file(c, "call0.outputs.safetensors")));
}

TEST(SpliceRun, StateChainsAcrossCalls) {
  TempDir tmp;
  const std::string c = "kv_cache_index_copy.default";  // buffer `cache`, three calls
  for (int call = 0; call < 3; ++call) {
    std::string k = std::to_string(call);
    std::vector<std::string> args = {
        "run",         case_file(c, "model.pt2"),
        "--inputs",    case_file(c, "call" + k + ".inputs.safetensors"),
        "--outputs",   tmp.file("out" + k + ".safetensors"),
        "--state-out", tmp.file("state" + k + ".safetensors")};
    if (call > 0) {
      args.push_back("--state-in");
      args.push_back(tmp.file("state" + std::to_string(call - 1) + ".safetensors"));
    }
    Outcome o = run_splice(args);
    ASSERT_EQ(o.exit_code, 0) << "call " << call << ": " << describe(o);
    // index_copy moves values without arithmetic: the state and outputs are exact.
    expect_same_tensors(read_tensors(tmp.file("state" + k + ".safetensors")),
                        read_tensors(case_file(c, "call" + k + ".state.safetensors")));
    expect_same_tensors(read_tensors(tmp.file("out" + k + ".safetensors")),
                        read_tensors(case_file(c, "call" + k + ".outputs.safetensors")));
  }
}

TEST(SpliceRun, ThreadsOptionGivesTheSameResult) {
  TempDir tmp;
  const std::string c = "kv_cache_index_copy.default";
  Outcome o = run_splice({"run", case_file(c, "model.pt2"), "--threads", "2", "--inputs",
                          case_file(c, "call0.inputs.safetensors"), "--outputs",
                          tmp.file("out.safetensors")});
  ASSERT_EQ(o.exit_code, 0) << describe(o);
  expect_same_tensors(read_tensors(tmp.file("out.safetensors")),
                      read_tensors(case_file(c, "call0.outputs.safetensors")));
}

TEST(SpliceRun, PrintsOutputsWithoutAnOutputsFile) {
  const std::string c = "return_same_tensor_three_times.default";
  Outcome o = run_splice(
      {"run", case_file(c, "model.pt2"), "--inputs", case_file(c, "call0.inputs.safetensors")});
  ASSERT_EQ(o.exit_code, 0) << describe(o);
  EXPECT_NE(o.out.find("output.0 = i32["), std::string::npos) << describe(o);
  EXPECT_NE(o.out.find("output.2 = i32["), std::string::npos) << describe(o);
}

// --compare reads nan, with the count, where one side has a NaN the other has not (a NaN
// difference used to vanish in the maximum and read 0); NaN on both sides is equal.
TEST(SpliceRun, CompareCountsNaNOnOneSide) {
  TempDir tmp;
  const std::string c = "kv_cache_index_copy.default";
  auto expected = read_tensors(case_file(c, "call0.outputs.safetensors"));
  ASSERT_TRUE(expected.count("output.0"));
  Tensor changed = expected.at("output.0").contiguous_copy().value();
  ASSERT_EQ(changed.dtype(), DType::kFloat32);
  ASSERT_GE(changed.numel(), 3);
  changed.data<float>()[0] = std::numeric_limits<float>::quiet_NaN();
  changed.data<float>()[2] = std::numeric_limits<float>::quiet_NaN();
  auto with_nan = expected;
  with_nan["output.0"] = changed;
  write_tensors(tmp.file("nan.safetensors"), with_nan);
  auto run = [&](const std::string& compare) {
    return run_splice({"run", case_file(c, "model.pt2"), "--inputs",
                       case_file(c, "call0.inputs.safetensors"), "--compare", compare});
  };
  Outcome o = run(tmp.file("nan.safetensors"));
  ASSERT_EQ(o.exit_code, 0) << describe(o);
  const std::string want = fmt::format(
      "max |splice - PyTorch| = nan (NaN on one side only at 2 of {} positions)", changed.numel());
  EXPECT_NE(o.out.find(want), std::string::npos) << describe(o);
  Outcome same = run(case_file(c, "call0.outputs.safetensors"));
  ASSERT_EQ(same.exit_code, 0) << describe(same);
  EXPECT_NE(same.out.find("max |splice - PyTorch| = 0\n"), std::string::npos) << describe(same);
}

// Bad inputs, on kv_cache_index_copy: k f32[1, 2, 1, 4], pos i64[1], buffer cache f32[1, 2, 8, 4].
class SpliceRunErrors : public ::testing::Test {
 protected:
  const std::string case_ = "kv_cache_index_copy.default";
  std::string model() const { return case_file(case_, "model.pt2"); }
  std::map<std::string, Tensor> recorded_inputs() const {
    return read_tensors(case_file(case_, "call0.inputs.safetensors"));
  }
  // Writes `tensors` to a file in the temp dir and returns its path.
  std::string write(const std::string& name, const std::map<std::string, Tensor>& tensors) {
    std::string path = tmp_.file(name);
    write_tensors(path, tensors);
    return path;
  }
  TempDir tmp_;
};

TEST_F(SpliceRunErrors, MissingInput) {
  auto inputs = recorded_inputs();
  inputs.erase("pos");
  expect_user_error({"run", model(), "--inputs", write("in.safetensors", inputs)},
                    "missing input 'pos' (expected i64[1])");
}

TEST_F(SpliceRunErrors, UnknownInput) {
  auto inputs = recorded_inputs();
  inputs.emplace("bogus", filled_f32({1}, 0));
  expect_user_error({"run", model(), "--inputs", write("in.safetensors", inputs)},
                    "unknown input 'bogus' (the program's inputs: k, pos)");
}

TEST_F(SpliceRunErrors, WrongDtype) {
  auto inputs = recorded_inputs();
  inputs["k"] = Tensor::empty(DType::kFloat64, {1, 2, 1, 4}).value();
  expect_user_error({"run", model(), "--inputs", write("in.safetensors", inputs)},
                    "input 'k' has dtype f64, the program expects f32");
}

TEST_F(SpliceRunErrors, WrongRank) {
  auto inputs = recorded_inputs();
  inputs["k"] = filled_f32({2, 4}, 1);
  expect_user_error({"run", model(), "--inputs", write("in.safetensors", inputs)},
                    "input 'k' has shape [2, 4] (rank 2), the program expects f32[1, 2, 1, 4]");
}

TEST_F(SpliceRunErrors, WrongStaticDim) {
  auto inputs = recorded_inputs();
  inputs["k"] = filled_f32({1, 2, 3, 4}, 1);
  expect_user_error({"run", model(), "--inputs", write("in.safetensors", inputs)},
                    "input 'k' has shape [1, 2, 3, 4], the program expects f32[1, 2, 1, 4] "
                    "(dim 2 should be 1)");
}

TEST_F(SpliceRunErrors, DimOutsideTheSymbolsRange) {
  // x: f32[s75, 6], s: f32[s75, 3] with s75 in [2, 16].
  const std::string c = "slice_scatter_dynamic_batch.default";
  std::string in =
      write("in.safetensors", {{"x", filled_f32({17, 6}, 0)}, {"s", filled_f32({17, 3}, 0)}});
  Outcome o = run_splice({"run", case_file(c, "model.pt2"), "--inputs", in});
  EXPECT_EQ(o.exit_code, 2) << describe(o);
  // Names the input, what was given and what is allowed.
  EXPECT_NE(o.err.find("input 'x' has shape [17, 6]: dim 0 is 17, but the program allows s75 in "
                       "[2, 16] (expected f32[s75, 6] with s75 in [2, 16])"),
            std::string::npos)
      << describe(o);
}

TEST_F(SpliceRunErrors, StateInWithAnUnknownBuffer) {
  std::string state = write("state.safetensors", {{"nope", filled_f32({1}, 0)}});
  expect_user_error({"run", model(), "--inputs", case_file(case_, "call0.inputs.safetensors"),
                     "--state-in", state},
                    "the program has no buffer 'nope'");
}

TEST_F(SpliceRunErrors, StateInWithAWrongShape) {
  std::string state = write("state.safetensors", {{"cache", filled_f32({1, 2, 4, 4}, 0)}});
  expect_user_error({"run", model(), "--inputs", case_file(case_, "call0.inputs.safetensors"),
                     "--state-in", state},
                    "state 'cache' is f32[1, 2, 4, 4], the buffer is f32[1, 2, 8, 4]");
}

TEST_F(SpliceRunErrors, UnreadableInputsFile) {
  std::string missing = tmp_.file("does_not_exist.safetensors");
  expect_user_error({"run", model(), "--inputs", missing}, missing);
}

TEST_F(SpliceRunErrors, InputsFileThatIsNotSafetensors) {
  std::string garbage = tmp_.file("garbage.safetensors");
  {
    std::ofstream f(garbage, std::ios::binary);
    f << "this is not a safetensors file";
  }
  expect_user_error({"run", model(), "--inputs", garbage}, garbage);
}

TEST_F(SpliceRunErrors, UnwritableOutputAndStateFiles) {
  std::string inputs = case_file(case_, "call0.inputs.safetensors");
  std::string dir = tmp_.file("no_such_dir");
  expect_user_error({"run", model(), "--inputs", inputs, "--outputs", dir + "/out.safetensors"},
                    dir + "/out.safetensors");
  expect_user_error({"run", model(), "--inputs", inputs, "--outputs", tmp_.file("o.safetensors"),
                     "--state-out", dir + "/state.safetensors"},
                    dir + "/state.safetensors");
}

TEST_F(SpliceRunErrors, UnreadableModel) {
  expect_user_error({"run", tmp_.file("missing.pt2")}, "missing.pt2");
}

TEST_F(SpliceRunErrors, BadUsage) {
  expect_user_error({"run"}, "model");
  expect_user_error({"run", model(), "--bogus-flag"}, "--bogus-flag");
  expect_user_error({"run", model(), "--threads", "-1"},
                    "--threads: Value -1 not in range 0 to 4096");
  expect_user_error({"run", model(), "--threads", "abc"},
                    "--threads: Value abc not in range 0 to 4096");
  expect_user_error({"run", model(), "--device", "tpu"}, "tpu");
  expect_user_error({}, "subcommand");
}

// examples/api_example.cc: two sessions of the KV-cache program, fed 0.5/pos 0 and 1.5/pos 1;
// session 1's output shows position 0 still zero (the sessions do not share the cache).
TEST(ApiExample, RunsTwoIndependentSessions) {
  Outcome o = run_program(kExampleBinary, {case_file("kv_cache_index_copy.default", "model.pt2")});
  ASSERT_EQ(o.exit_code, 0) << describe(o);
  EXPECT_EQ(o.out,
            "session 0\n"
            "  output.0: f32[1, 2, 8, 4] 0.5 0.5 0.5 0.5 0 0 0 0 ...\n"
            "session 1\n"
            "  output.0: f32[1, 2, 8, 4] 0 0 0 0 1.5 1.5 1.5 1.5 ...\n");
  Outcome usage = run_program(kExampleBinary, {});
  EXPECT_EQ(usage.exit_code, 2) << describe(usage);
  Outcome bad =
      run_program(kExampleBinary, {SPLICE_SOURCE_DIR "/tests/fixtures/corrupt/random.pt2"});
  EXPECT_EQ(bad.exit_code, 2) << describe(bad);
  EXPECT_NE(bad.err.find("not a zip archive"), std::string::npos) << describe(bad);
}

}  // namespace
}  // namespace splice::test
