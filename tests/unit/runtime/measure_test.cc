// Session::measure (include/splice/splice.h) on the CPU: one latency per timed call from the
// host's clock, nothing counted (and a note saying why), every call starting from the same state
// (the archive's, or start_state's), and errors for bad counts and a bad start state.
#include <gtest/gtest.h>

#include <cstring>

#include "splice/splice.h"
#include "tensor/safetensors.h"

namespace splice {
namespace {

// count (i64) += 1 and total (f32) += sum(x) on every call: a state that moves, so a call
// that did not start from the chosen state shows in the state the measurement leaves.
const std::string kCase = SPLICE_SOURCE_DIR "/tests/cases/counter_buffer.default";

std::map<std::string, Tensor> recorded(int call, const std::string& what) {
  const std::string path = kCase + "/call" + std::to_string(call) + "." + what + ".safetensors";
  auto r = read_safetensors(path);
  EXPECT_TRUE(r.ok()) << path << ": " << (r.ok() ? "" : r.error().message());
  return r.ok() ? std::move(*r) : std::map<std::string, Tensor>{};
}

std::map<std::string, TensorArg> args_of(std::map<std::string, Tensor>& tensors) {
  std::map<std::string, TensorArg> args;
  for (auto& [name, t] : tensors) args.emplace(name, TensorArg{t.raw_data(), t.dtype(), t.sizes()});
  return args;
}

Session open() {
  auto model = Model::load(kCase + "/model.pt2");
  EXPECT_TRUE(model.ok()) << (model.ok() ? "" : model.error().message());
  if (!model.ok()) std::abort();
  auto session = model->open_session();
  EXPECT_TRUE(session.ok()) << (session.ok() ? "" : session.error().message());
  if (!session.ok()) std::abort();
  return std::move(*session);
}

// The session's buffers equal call `call`'s recorded state.
void expect_state_of_call(const Session& s, int call) {
  for (const auto& [name, want] : recorded(call, "state")) {
    auto got = s.state(name);
    ASSERT_TRUE(got.ok()) << got.error().message();
    ASSERT_EQ(got->bytes.size(), want.nbytes()) << name;
    EXPECT_EQ(std::memcmp(got->bytes.data(), want.raw_data(), want.nbytes()), 0)
        << name << " is not call " << call << "'s state";
  }
}

TEST(Measure, TimesEveryCallWithTheHostClockAndCountsNothingOnTheCpu) {
  Session s = open();
  auto inputs = recorded(0, "inputs");
  MeasureOptions options;
  options.warmup = 2;
  options.iters = 5;
  auto times = s.measure(args_of(inputs), options);
  ASSERT_TRUE(times.ok()) << times.error().message();
  EXPECT_EQ(times->clock, "host");
  ASSERT_EQ(times->ms.size(), 5u);
  for (double ms : times->ms) EXPECT_GT(ms, 0.0);
  EXPECT_FALSE(times->counted);
  EXPECT_EQ(times->kernels, 0);
  EXPECT_EQ(times->count_note, "the cpu backend launches no device work to count");
  // Seven calls ran, each from the archive's initial buffers: the state is call 0's.
  expect_state_of_call(s, 0);
}

TEST(Measure, EveryCallStartsFromTheStartState) {
  Session s = open();
  auto inputs = recorded(2, "inputs");
  auto state1 = recorded(1, "state");
  MeasureOptions options;
  options.warmup = 1;
  options.iters = 3;
  options.start_state = args_of(state1);
  auto times = s.measure(args_of(inputs), options);
  ASSERT_TRUE(times.ok()) << times.error().message();
  EXPECT_EQ(times->ms.size(), 3u);
  expect_state_of_call(s, 2);
}

// device_io on the CPU: nothing to copy, the calls run on the caller's host tensors as without it.
TEST(Measure, DeviceIoOnTheCpuRunsTheSameCalls) {
  Session s = open();
  auto inputs = recorded(0, "inputs");
  MeasureOptions options;
  options.warmup = 1;
  options.iters = 3;
  options.device_io = true;
  auto times = s.measure(args_of(inputs), options);
  ASSERT_TRUE(times.ok()) << times.error().message();
  EXPECT_EQ(times->ms.size(), 3u);
  expect_state_of_call(s, 0);
}

TEST(Measure, RefusesBadCountsAndABadStartState) {
  Session s = open();
  auto inputs = recorded(0, "inputs");
  MeasureOptions options;
  options.iters = 0;
  auto no_iters = s.measure(args_of(inputs), options);
  ASSERT_FALSE(no_iters.ok());
  EXPECT_EQ(no_iters.error().kind(), ErrorKind::kBadUsage);
  EXPECT_EQ(no_iters.error().message(),
            "measure needs warmup >= 0 and iters >= 1 (got warmup 10, iters 0)");
  options.iters = 1;
  options.warmup = -1;
  auto negative = s.measure(args_of(inputs), options);
  ASSERT_FALSE(negative.ok());
  EXPECT_EQ(negative.error().kind(), ErrorKind::kBadUsage);

  options.warmup = 0;
  float value = 0;
  options.start_state.emplace("nope", TensorArg{&value, DType::kFloat32, {}});
  auto unknown = s.measure(args_of(inputs), options);
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().message(), "start state 'nope': the program has no buffer 'nope'");
  EXPECT_EQ(unknown.error().exit_code(), 2);
}

}  // namespace
}  // namespace splice
