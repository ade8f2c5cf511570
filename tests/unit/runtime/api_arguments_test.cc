// The public API checks what the caller passes before using it (issue 34, item 8): a DType or
// PlanMode value outside its enum (a cast integer), a moved-from Session or Model, a negative
// thread count and start_state names the program does not have are kBadUsage / kBadInput
// errors with a message, never a crash or a silently ignored argument; a thread count beyond
// the machine's hardware threads is clamped, with a warning.
#include <gtest/gtest.h>

#include <sys/resource.h>

#include <cstdio>
#include <filesystem>
#include <thread>

#include "splice/splice.h"
#include "tensor/safetensors.h"
#include "tests/unit/asan.h"
#include "tests/unit/temp_dir_test_base.h"

namespace splice {
namespace {

const std::string kCases = SPLICE_SOURCE_DIR "/tests/cases";
const std::string kKv = "kv_cache_index_copy.default";  // k f32[1,2,1,4], pos i64[1]; cache
const std::string kNoState = "abs.default";             // one input, no buffers

std::string model_path(const std::string& c) { return kCases + "/" + c + "/model.pt2"; }

Model load(const std::string& c, const LoadOptions& options = {}) {
  auto model = Model::load(model_path(c), options);
  EXPECT_TRUE(model.ok()) << c << ": " << (model.ok() ? "" : model.error().message());
  if (!model.ok()) std::abort();
  return std::move(*model);
}

std::map<std::string, Tensor> call0_inputs(const std::string& c) {
  return read_safetensors(kCases + "/" + c + "/call0.inputs.safetensors").value();
}

std::map<std::string, TensorArg> args_of(std::map<std::string, Tensor>& tensors) {
  std::map<std::string, TensorArg> args;
  for (auto& [name, t] : tensors) args.emplace(name, TensorArg{t.raw_data(), t.dtype(), t.sizes()});
  return args;
}

void expect_error(const Error& e, ErrorKind kind, const std::string& message) {
  EXPECT_EQ(e.kind(), kind) << e.message();
  EXPECT_EQ(e.exit_code(), 2);
  EXPECT_EQ(e.message(), message);
}

// DType 200 indexed dtype_size's and dtype_name's tables past their end.
TEST(ApiArguments, AnOutOfRangeDTypeIsRefused) {
  Model model = load(kKv);
  Session s = model.open_session().value();
  auto inputs = call0_inputs(kKv);
  auto args = args_of(inputs);
  args.at("k").dtype = static_cast<DType>(200);
  auto r = s.run(args);
  ASSERT_FALSE(r.ok());
  expect_error(r.error(), ErrorKind::kBadUsage,
               "input 'k' has dtype value 200, which is not a splice::DType (0 to 9)");

  float value[8] = {};
  auto set = s.set_state("cache", TensorArg{value, static_cast<DType>(10), {1, 2, 4, 4}});
  ASSERT_FALSE(set.ok());
  expect_error(set.error(), ErrorKind::kBadUsage,
               "state 'cache' has dtype value 10, which is not a splice::DType (0 to 9)");
}

TEST(ApiArguments, AMovedFromSessionIsAnError) {
  Model model = load(kKv);
  Session s = model.open_session().value();
  Session moved_to = std::move(s);
  auto inputs = call0_inputs(kKv);
  const std::string message = "this Session was moved from; use the Session it was moved to";
  auto r = s.run(args_of(inputs));  // NOLINT(bugprone-use-after-move): what the test is about
  ASSERT_FALSE(r.ok());
  expect_error(r.error(), ErrorKind::kBadUsage, message);
  ASSERT_FALSE(s.state("cache").ok());
  expect_error(s.state("cache").error(), ErrorKind::kBadUsage, message);
  ASSERT_FALSE(s.reset_state().ok());
  float value = 0;
  ASSERT_FALSE(s.set_state("cache", TensorArg{&value, DType::kFloat32, {}}).ok());
  auto m = s.measure(args_of(inputs));
  ASSERT_FALSE(m.ok());
  expect_error(m.error(), ErrorKind::kBadUsage, message);
  EXPECT_EQ(s.graph_stats().recorded, 0);
  // The session it went to runs.
  EXPECT_TRUE(moved_to.run(args_of(inputs)).ok());

  Model other = std::move(model);
  auto opened = model.open_session();  // NOLINT(bugprone-use-after-move)
  ASSERT_FALSE(opened.ok());
  expect_error(opened.error(), ErrorKind::kBadUsage,
               "this Model was moved from; use the Model it was moved to");
  EXPECT_TRUE(model.inputs().empty());  // NOLINT(bugprone-use-after-move)
  EXPECT_TRUE(other.open_session().ok());
}

// plan_mode 77 was planned as neither mode and written into an engine splice then refused.
class ApiPlanMode : public testing::TempDirTest {};

TEST_F(ApiPlanMode, AnUnknownPlanModeIsRefusedByLoadAndCompile) {
  LoadOptions options;
  options.plan_mode = static_cast<PlanMode>(77);
  const std::string message =
      "plan_mode value 77 is not a splice::PlanMode (kPlanned = 0, "
      "kNaive = 1)";
  auto loaded = Model::load(model_path(kKv), options);
  ASSERT_FALSE(loaded.ok());
  expect_error(loaded.error(), ErrorKind::kBadUsage, message);
  auto compiled = Model::compile(model_path(kKv), (dir_ / "m.splice").string(), options);
  ASSERT_FALSE(compiled.ok());
  expect_error(compiled.error(), ErrorKind::kBadUsage, message);
  EXPECT_FALSE(std::filesystem::exists((dir_ / "m.splice").string()));
}

TEST(ApiArguments, ThreadsBeyondTheHardwareAreClampedWithAWarning) {
  const int hardware = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  LoadOptions options;
  options.threads = 1000000;
  Model model = load(kKv, options);
  EXPECT_EQ(model.threads(), hardware);
  ASSERT_EQ(model.warnings().size(), 1u);
  EXPECT_EQ(model.warnings()[0], fmt::format("1000000 threads asked for, but this machine has {} "
                                             "hardware threads; using {}",
                                             hardware, hardware));
  options.threads = 1;
  EXPECT_TRUE(load(kKv, options).warnings().empty());

  options.threads = -3;
  auto negative = Model::load(model_path(kKv), options);
  ASSERT_FALSE(negative.ok());
  expect_error(negative.error(), ErrorKind::kBadUsage,
               "threads must be 0 (every hardware thread) or a positive count, got -3");
}

// A program without buffers restores nothing before each call, so an unknown start_state name
// was never looked at.
TEST(ApiArguments, AnUnknownStartStateNameIsRefusedWithoutBuffersToo) {
  Model model = load(kNoState);
  Session s = model.open_session().value();
  auto inputs = call0_inputs(kNoState);
  MeasureOptions options;
  options.warmup = 0;
  options.iters = 1;
  float value = 0;
  options.start_state.emplace("nope", TensorArg{&value, DType::kFloat32, {}});
  auto r = s.measure(args_of(inputs), options);
  ASSERT_FALSE(r.ok());
  expect_error(r.error(), ErrorKind::kBadInput,
               "start state 'nope': the program has no buffer 'nope'");
}

// The memory check before a call (runtime/memory_check.h) through the API: hf_llama (a
// transformers Llama with a dynamic sequence length) at 100,000 tokens under a 1 GB
// address-space limit, set in a child process (the limit is the process's own), is refused
// with a kBackend error naming the bytes and RLIMIT_AS, in well under a second.
// The child's side: exits 0 when the call is refused with a kBackend error (printed).
[[noreturn]] void run_100k_tokens_under_1_gb() {
  rlimit limit{int64_t{1} << 30, int64_t{1} << 30};
  if (setrlimit(RLIMIT_AS, &limit) != 0) std::_Exit(3);
  auto model = Model::load(model_path("hf_llama.default"));
  if (!model.ok()) std::_Exit(4);
  Session s = model->open_session().value();
  const int64_t tokens = 100000;
  std::vector<int64_t> ids(2 * tokens, 1), mask(2 * tokens, 1);
  std::map<std::string, TensorArg> args;
  args.emplace("input_ids", TensorArg{ids.data(), DType::kInt64, {2, tokens}});
  args.emplace("attention_mask", TensorArg{mask.data(), DType::kInt64, {2, tokens}});
  auto r = s.run(args);
  if (r.ok()) std::_Exit(5);
  std::fprintf(stderr, "%s\n", r.error().message().c_str());
  std::_Exit(r.error().kind() == ErrorKind::kBackend && r.error().exit_code() == 2 ? 0 : 6);
}

TEST(ApiArguments, ACallThatCannotFitIsRefusedBeforeAllocating) {
  if (SPLICE_TEST_ASAN) GTEST_SKIP() << "RLIMIT_AS cannot bind under AddressSanitizer";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(run_100k_tokens_under_1_gb(), ::testing::ExitedWithCode(0),
              "out of memory: this call needs at least [0-9]+ bytes \\([0-9.]+ GiB\\) with "
              "s53 = 100000 \\(.* in planned buffers, .* in intermediates at their peak\\), "
              "but RLIMIT_AS \\(ulimit -v: 1073741824 bytes\\) less the [0-9]+ bytes of "
              "address space in use leaves .*; refused before allocating any");
}

}  // namespace
}  // namespace splice
