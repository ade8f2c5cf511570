// The public C++ API (include/splice/splice.h) on real cases from tests/cases: one Model shared
// by many sessions, per-session state (a KV cache written by one session never shows in
// another), reset_state/set_state, outputs the caller owns, user-input mutations written back
// into the caller's memory, and sessions running in parallel on several threads.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <optional>
#include <thread>

#include "splice/splice.h"
#include "tensor/safetensors.h"

namespace splice {
namespace {

const std::string kCases = SPLICE_SOURCE_DIR "/tests/cases";
const std::string kKv = "kv_cache_index_copy.default";  // k f32[1,2,1,4], pos i64[1]; cache

std::string model_path(const std::string& c) { return kCases + "/" + c + "/model.pt2"; }

std::map<std::string, Tensor> recorded(const std::string& c, int call, const std::string& what) {
  std::string path =
      kCases + "/" + c + "/call" + std::to_string(call) + "." + what + ".safetensors";
  auto r = read_safetensors(path);
  EXPECT_TRUE(r.ok()) << path << ": " << (r.ok() ? "" : r.error().message());
  return r.ok() ? std::move(*r) : std::map<std::string, Tensor>{};
}

Model load(const std::string& c) {
  auto model = Model::load(model_path(c));
  EXPECT_TRUE(model.ok()) << c << ": " << (model.ok() ? "" : model.error().message());
  if (!model.ok()) std::abort();
  return std::move(*model);
}

// Arguments viewing `tensors` (which must outlive the call).
std::map<std::string, TensorArg> args_of(std::map<std::string, Tensor>& tensors) {
  std::map<std::string, TensorArg> args;
  for (auto& [name, t] : tensors) args.emplace(name, TensorArg{t.raw_data(), t.dtype(), t.sizes()});
  return args;
}

// Dtype, shape and bytes equal.
::testing::AssertionResult same(const HostTensor& a, const Tensor& expected) {
  if (a.dtype != expected.dtype() || a.shape != expected.sizes())
    return ::testing::AssertionFailure()
           << dtype_name(a.dtype) << shape_string(a.shape) << " vs " << dtype_name(expected.dtype())
           << shape_string(expected.sizes());
  Tensor e = expected.contiguous_copy().value();
  if (a.bytes.size() != e.nbytes() || std::memcmp(a.bytes.data(), e.raw_data(), e.nbytes()) != 0)
    return ::testing::AssertionFailure() << "bytes differ";
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult same(const HostTensor& a, const HostTensor& b) {
  if (a.dtype != b.dtype || a.shape != b.shape || a.bytes != b.bytes)
    return ::testing::AssertionFailure() << "tensors differ";
  return ::testing::AssertionSuccess();
}

RunResult run_call(Session& s, const std::string& c, int call) {
  auto inputs = recorded(c, call, "inputs");
  auto r = s.run(args_of(inputs));
  EXPECT_TRUE(r.ok()) << c << " call " << call << ": " << (r.ok() ? "" : r.error().message());
  return r.ok() ? std::move(*r) : RunResult{};
}

HostTensor state_of(const Session& s, const std::string& name) {
  auto r = s.state(name);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message());
  return r.ok() ? std::move(*r) : HostTensor{};
}

TEST(Api, DescribesInputsAndState) {
  Model model = load(kKv);
  auto inputs = model.inputs();
  ASSERT_EQ(inputs.size(), 2u);
  EXPECT_EQ(inputs[0].name, "k");
  EXPECT_EQ(inputs[0].dtype, DType::kFloat32);
  EXPECT_EQ(inputs[0].shape, (std::vector<std::string>{"1", "2", "1", "4"}));
  EXPECT_EQ(inputs[1].name, "pos");
  EXPECT_EQ(inputs[1].dtype, DType::kInt64);
  EXPECT_FALSE(inputs[0].mutated || inputs[1].mutated) << "the program writes only its buffer";
  EXPECT_EQ(model.state_names(), std::vector<std::string>{"cache"});

  // x[:, 1:3] = s: x is a user input the program writes, s one it only reads.
  auto written = load("f_input_slice_write.default").inputs();
  ASSERT_EQ(written.size(), 2u);
  EXPECT_EQ(written[0].name, "x");
  EXPECT_TRUE(written[0].mutated);
  EXPECT_FALSE(written[1].mutated);

  Model dynamic = load("slice_scatter_dynamic_batch.default");
  ASSERT_EQ(dynamic.inputs().size(), 2u);
  EXPECT_EQ(dynamic.inputs()[0].shape, (std::vector<std::string>{"s75", "6"}));
}

// Model::plan_json is the document `splice inspect --plan --json` prints for the same plan: its
// writes (the cache's index_copy planned in place on the state buffer) and its totals.
TEST(Api, PlanJsonIsTheInspectDocument) {
  Model model = load(kKv);
  const std::string json = model.plan_json();
  for (const char* part : {"\"writes\"", "\"totals\"", "\"kernels\"", "aten.index_put",
                           "\"strategy\": \"in_place_state\""})
    EXPECT_NE(json.find(part), std::string::npos) << part << " missing from\n" << json;
  Model moved = std::move(model);
  EXPECT_EQ(model.plan_json(), "");  // NOLINT(bugprone-use-after-move): the documented state
}

// A device address handed to a CPU model is refused before anything reads it.
TEST(Api, DeviceInputOnTheCpuIsRefusedNamingTheInput) {
  Model model = load(kKv);
  Session session = model.open_session().value();
  auto inputs = recorded(kKv, 0, "inputs");
  auto args = args_of(inputs);
  args.at("k").device = Device{DeviceType::kCUDA, 0};
  auto r = session.run(args);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().exit_code(), 2);
  EXPECT_NE(r.error().message().find("input 'k' is in cuda:0 memory, but the model runs on cpu"),
            std::string::npos)
      << r.error().message();
}

// outputs_on_device on the CPU: the outputs come back as device tensors in host memory, each
// the caller's own copy, equal to the host outputs of the same call.
TEST(Api, OutputsOnDeviceOnTheCpuAreHostCopies) {
  Model model = load(kKv);
  Session a = model.open_session().value(), b = model.open_session().value();
  auto inputs = recorded(kKv, 0, "inputs");
  RunOptions options;
  options.outputs_on_device = true;
  auto on = a.run(args_of(inputs), options);
  auto host = b.run(args_of(inputs));
  ASSERT_TRUE(on.ok() && host.ok());
  EXPECT_TRUE(on->outputs.empty());
  ASSERT_EQ(on->device_outputs.size(), host->outputs.size());
  for (size_t i = 0; i < host->outputs.size(); ++i) {
    const DeviceTensor& d = on->device_outputs[i];
    EXPECT_TRUE(d.device.is_host());
    ASSERT_EQ(d.shape, host->outputs[i].shape);
    ASSERT_NE(d.owner, nullptr);
    EXPECT_EQ(std::memcmp(d.data, host->outputs[i].bytes.data(), host->outputs[i].bytes.size()), 0);
  }
}

// Outputs left on the device are the caller's alone, whether handed over (a call's fresh
// output) or copied: an input returned as an output is not the caller's own memory, one tensor
// returned twice comes back as two, and the next call changes neither an earlier call's
// outputs nor the session's state through them.
TEST(Api, DeviceOutputsAreTheCallersOwn) {
  RunOptions options;
  options.outputs_on_device = true;
  {
    Model model = load("return_input.default");
    Session s = model.open_session().value();
    auto inputs = recorded("return_input.default", 0, "inputs");
    auto args = args_of(inputs);
    auto r = s.run(args, options);
    ASSERT_TRUE(r.ok()) << r.error().message();
    for (const DeviceTensor& d : r->device_outputs)
      for (const auto& [name, arg] : args) EXPECT_NE(d.data, arg.data) << name;
  }
  {
    Model model = load("return_same_tensor_twice.default");
    Session s = model.open_session().value();
    auto inputs = recorded("return_same_tensor_twice.default", 0, "inputs");
    auto r = s.run(args_of(inputs), options);
    ASSERT_TRUE(r.ok()) << r.error().message();
    ASSERT_EQ(r->device_outputs.size(), 2u);
    EXPECT_NE(r->device_outputs[0].data, r->device_outputs[1].data);
    const auto expected = recorded("return_same_tensor_twice.default", 0, "outputs");
    for (size_t i = 0; i < 2; ++i) {
      const Tensor& e = expected.at("output." + std::to_string(i));
      EXPECT_EQ(std::memcmp(r->device_outputs[i].data, e.raw_data(), e.nbytes()), 0) << i;
    }
  }
  Model model = load(kKv);
  Session s = model.open_session().value();
  auto first_in = recorded(kKv, 0, "inputs");
  auto first = s.run(args_of(first_in), options);
  ASSERT_TRUE(first.ok()) << first.error().message();
  const auto expected = recorded(kKv, 0, "outputs");
  for (int call = 1; call < 3; ++call) {
    auto in = recorded(kKv, call, "inputs");
    auto later = s.run(args_of(in), options);
    ASSERT_TRUE(later.ok()) << later.error().message();
    ASSERT_EQ(first->device_outputs.size(), expected.size());
    for (size_t i = 0; i < first->device_outputs.size(); ++i) {
      const Tensor& e = expected.at("output." + std::to_string(i));
      EXPECT_EQ(std::memcmp(first->device_outputs[i].data, e.raw_data(), e.nbytes()), 0)
          << "call 0's output " << i << " changed by call " << call;
      EXPECT_NE(first->device_outputs[i].data, later->device_outputs[i].data);
    }
  }
  EXPECT_TRUE(same(state_of(s, "cache"), recorded(kKv, 2, "state").at("cache")));
}

TEST(Api, LoadErrorsAreValues) {
  auto missing = Model::load(kCases + "/no_such_case/model.pt2");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().kind(), ErrorKind::kIo);
  EXPECT_EQ(missing.error().exit_code(), 2);
  auto corrupt = Model::load(SPLICE_SOURCE_DIR "/tests/fixtures/corrupt/unknown_op.pt2");
  ASSERT_FALSE(corrupt.ok());
  EXPECT_NE(corrupt.error().message().find("aten.bogus_op"), std::string::npos);
}

TEST(Api, ManySessionsOfOneModelEachReproduceTheRecordedCalls) {
  Model model = load(kKv);
  std::vector<Session> sessions;
  for (int i = 0; i < 8; ++i) sessions.push_back(model.open_session().value());
  for (int call = 0; call < 3; ++call) {
    auto outputs = recorded(kKv, call, "outputs");
    auto state = recorded(kKv, call, "state");
    for (Session& s : sessions) {
      RunResult r = run_call(s, kKv, call);
      ASSERT_EQ(r.outputs.size(), 1u);
      EXPECT_TRUE(same(r.outputs[0], outputs.at("output.0"))) << "call " << call;
      EXPECT_TRUE(same(state_of(s, "cache"), state.at("cache"))) << "call " << call;
    }
  }
}

TEST(Api, SessionsKeepTheModelAlive) {
  std::optional<Session> session;
  {
    Model model = load(kKv);
    session.emplace(model.open_session().value());
  }
  RunResult r = run_call(*session, kKv, 0);
  ASSERT_EQ(r.outputs.size(), 1u);
  EXPECT_TRUE(same(r.outputs[0], recorded(kKv, 0, "outputs").at("output.0")));
}

TEST(Api, StateIsIsolatedBetweenSessions) {
  Model model = load(kKv);
  Session a = model.open_session().value();
  Session b = model.open_session().value();
  HostTensor initial = state_of(b, "cache");
  run_call(a, kKv, 0);
  run_call(a, kKv, 1);
  // A's writes are A's alone.
  EXPECT_TRUE(same(state_of(a, "cache"), recorded(kKv, 1, "state").at("cache")));
  EXPECT_TRUE(same(state_of(b, "cache"), initial));
  EXPECT_FALSE(same(state_of(a, "cache"), initial));
  // B starts from the archive's values, not from A's cache.
  RunResult rb = run_call(b, kKv, 0);
  EXPECT_TRUE(same(rb.outputs[0], recorded(kKv, 0, "outputs").at("output.0")));
  EXPECT_TRUE(same(state_of(b, "cache"), recorded(kKv, 0, "state").at("cache")));
  // A new session after both ran still starts from the archive.
  EXPECT_TRUE(same(state_of(model.open_session().value(), "cache"), initial));
}

TEST(Api, ResetStateRestoresTheArchiveValues) {
  Model model = load(kKv);
  Session s = model.open_session().value();
  HostTensor initial = state_of(s, "cache");
  run_call(s, kKv, 0);
  run_call(s, kKv, 1);
  ASSERT_TRUE(s.reset_state().ok());
  EXPECT_TRUE(same(state_of(s, "cache"), initial));
  RunResult r = run_call(s, kKv, 0);
  EXPECT_TRUE(same(r.outputs[0], recorded(kKv, 0, "outputs").at("output.0")));
}

TEST(Api, SetStateReplacesABufferAndValidatesIt) {
  Model model = load(kKv);
  Session s = model.open_session().value();
  // Start from call 1's state: call 2 must then reproduce the recorded call 2.
  auto state1 = recorded(kKv, 1, "state");
  Tensor& cache = state1.at("cache");
  ASSERT_TRUE(s.set_state("cache", TensorArg{cache.raw_data(), cache.dtype(), cache.sizes()}).ok());
  // set_state copied the values: changing the caller's memory afterwards changes nothing.
  std::memset(cache.raw_data(), 0, cache.nbytes());
  RunResult r = run_call(s, kKv, 2);
  EXPECT_TRUE(same(r.outputs[0], recorded(kKv, 2, "outputs").at("output.0")));
  EXPECT_TRUE(same(state_of(s, "cache"), recorded(kKv, 2, "state").at("cache")));

  std::vector<double> f64(64);
  std::vector<float> f32(64);
  auto unknown = s.set_state("nope", TensorArg{f32.data(), DType::kFloat32, {1, 2, 8, 4}});
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().message(), "the program has no buffer 'nope'");
  EXPECT_EQ(unknown.error().exit_code(), 2);
  auto dtype = s.set_state("cache", TensorArg{f64.data(), DType::kFloat64, {1, 2, 8, 4}});
  ASSERT_FALSE(dtype.ok());
  EXPECT_EQ(dtype.error().message(),
            "state 'cache' is f64[1, 2, 8, 4], the buffer is f32[1, 2, 8, 4]");
  auto shape = s.set_state("cache", TensorArg{f32.data(), DType::kFloat32, {1, 2, 4, 8}});
  ASSERT_FALSE(shape.ok());
  EXPECT_EQ(shape.error().message(),
            "state 'cache' is f32[1, 2, 4, 8], the buffer is f32[1, 2, 8, 4]");
  auto null_data = s.set_state("cache", TensorArg{nullptr, DType::kFloat32, {1, 2, 8, 4}});
  ASSERT_FALSE(null_data.ok());
  EXPECT_EQ(null_data.error().message(), "input 'cache' has no data");
  // Failed calls left the state alone.
  EXPECT_TRUE(same(state_of(s, "cache"), recorded(kKv, 2, "state").at("cache")));
  auto no_state = s.state("nope");
  ASSERT_FALSE(no_state.ok());
  EXPECT_EQ(no_state.error().message(), "the program has no buffer 'nope'");
}

TEST(Api, OutputsAreOwnedByTheCaller) {
  Model model = load(kKv);
  Session s = model.open_session().value();
  RunResult first = run_call(s, kKv, 0);
  ASSERT_EQ(first.outputs.size(), 1u);
  // Scribbling over an output must not reach the session's cache.
  std::memset(first.outputs[0].bytes.data(), 0xff, first.outputs[0].bytes.size());
  EXPECT_TRUE(same(state_of(s, "cache"), recorded(kKv, 0, "state").at("cache")));
  RunResult second = run_call(s, kKv, 1);
  EXPECT_TRUE(same(second.outputs[0], recorded(kKv, 1, "outputs").at("output.0")));

  // Three outputs that are one tensor in the program are three separate copies.
  const std::string c = "return_same_tensor_three_times.default";
  Model m3 = load(c);
  Session s3 = m3.open_session().value();
  RunResult r = run_call(s3, c, 0);
  ASSERT_EQ(r.outputs.size(), 3u);
  std::memset(r.outputs[0].bytes.data(), 0, r.outputs[0].bytes.size());
  auto expected = recorded(c, 0, "outputs");
  EXPECT_TRUE(same(r.outputs[1], expected.at("output.1")));
  EXPECT_TRUE(same(r.outputs[2], expected.at("output.2")));

  // An output that is the input itself does not alias the caller's input.
  const std::string ri = "return_input.default";
  Model mi = load(ri);
  Session si = mi.open_session().value();
  auto inputs = recorded(ri, 0, "inputs");
  auto before = recorded(ri, 0, "inputs");
  auto out = si.run(args_of(inputs));
  ASSERT_TRUE(out.ok()) << out.error().message();
  for (auto& o : out->outputs) std::memset(o.bytes.data(), 0x7f, o.bytes.size());
  for (auto& [name, t] : before)
    EXPECT_EQ(std::memcmp(inputs.at(name).raw_data(), t.raw_data(), t.nbytes()), 0) << name;
}

TEST(Api, UserInputMutationIsWrittenBackIntoTheCallersBuffer) {
  const std::string c = "user_input_mutation_select_write.default";  // int32; mutates x
  Model model = load(c);
  Session s = model.open_session().value();
  auto inputs = recorded(c, 0, "inputs");
  auto expected = recorded(c, 0, "outputs");
  auto r = s.run(args_of(inputs));
  ASSERT_TRUE(r.ok()) << r.error().message();
  ASSERT_EQ(r->mutated_inputs.count("x"), 1u);
  EXPECT_TRUE(same(r->mutated_inputs.at("x"), expected.at("mutated.x")));
  const Tensor& x = inputs.at("x");
  const Tensor& want = expected.at("mutated.x");
  ASSERT_EQ(x.nbytes(), want.nbytes());
  EXPECT_EQ(std::memcmp(x.raw_data(), want.raw_data(), x.nbytes()), 0)
      << "the caller's x does not hold the mutated value";
  EXPECT_TRUE(same(r->outputs[0], expected.at("output.0")));
}

TEST(Api, RunErrorsNameTheInput) {
  Model model = load(kKv);
  Session s = model.open_session().value();
  auto inputs = recorded(kKv, 0, "inputs");
  auto args = args_of(inputs);
  args.erase("pos");
  auto r = s.run(args);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message(), "missing input 'pos' (expected i64[1])");
  EXPECT_EQ(r.error().exit_code(), 2);
  // The failed call did not touch the state; the next good call works.
  EXPECT_TRUE(same(run_call(s, kKv, 0).outputs.at(0), recorded(kKv, 0, "outputs").at("output.0")));
}

// A caller's shape whose element count fits int64 but whose byte count does not is rejected
// before anything views the memory (it used to wrap to a tiny byte count).
TEST(Api, ShapesWhoseByteSizeOverflowsAreRejected) {
  Model model = load(kKv);
  Session s = model.open_session().value();
  int64_t pos = 0;
  float k = 0;
  auto r = s.run({{"k", TensorArg{&k, DType::kFloat32, {int64_t{1} << 61, 2}}},
                  {"pos", TensorArg{&pos, DType::kInt64, {1}}}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message(),
            "input 'k' has shape [2305843009213693952, 2]: its size in bytes overflows");
  auto negative = s.run({{"k", TensorArg{&k, DType::kFloat32, {1, -2, 1, 4}}},
                         {"pos", TensorArg{&pos, DType::kInt64, {1}}}});
  ASSERT_FALSE(negative.ok());
  EXPECT_EQ(negative.error().message(), "input 'k' has an invalid shape [1, -2, 1, 4]");
  // The failed calls left the session usable.
  EXPECT_TRUE(same(run_call(s, kKv, 0).outputs.at(0), recorded(kKv, 0, "outputs").at("output.0")));
}

// Each thread runs its own sessions; every result must be the one a sequential run gives.
TEST(Api, SessionsRunInParallelLikeSequentially) {
  const std::vector<std::string> cases = {kKv, "mm.default", "rotary_halves_f16.default",
                                          "kv_cache_item_slice.default"};
  std::vector<Model> models;
  std::vector<std::vector<std::vector<HostTensor>>> sequential;  // [case][call] outputs
  for (const auto& c : cases) {
    models.push_back(load(c));
    Session s = models.back().open_session().value();
    auto& per_call = sequential.emplace_back();
    int calls = c.starts_with("kv_") ? 3 : 1;
    for (int call = 0; call < calls; ++call) per_call.push_back(run_call(s, c, call).outputs);
  }
  constexpr int kThreads = 4;
  constexpr int kRounds = 100;
  std::vector<std::string> failures[kThreads];
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < kRounds; ++round) {
        size_t ci = static_cast<size_t>(t + round) % cases.size();
        Session s = models[ci].open_session().value();
        for (size_t call = 0; call < sequential[ci].size(); ++call) {
          auto inputs = recorded(cases[ci], static_cast<int>(call), "inputs");
          auto r = s.run(args_of(inputs));
          if (!r.ok()) {
            failures[t].push_back(cases[ci] + ": " + r.error().message());
            continue;
          }
          for (size_t o = 0; o < r->outputs.size(); ++o)
            if (!same(r->outputs[o], sequential[ci][call][o]))
              failures[t].push_back(
                  fmt::format("{} call {} output {} differs", cases[ci], call, o));
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t)
    EXPECT_TRUE(failures[t].empty()) << "thread " << t << ": " << failures[t].front();
}

TEST(Api, ACacheThatCannotBeWrittenOnlyCostsPlanningTime) {
  // The cache folder would have to live under a regular file: it can never be created.
  const std::string file = std::string(SPLICE_BINARY_DIR) + "/api_test_not_a_folder";
  {
    std::FILE* f = std::fopen(file.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fclose(f);
  }
  LoadOptions options;
  options.cache_dir = file + "/cache";
  auto model = Model::load(model_path(kKv), options);
  ASSERT_TRUE(model.ok()) << model.error().message();
  EXPECT_FALSE(model->from_cache());
  EXPECT_NE(model->cache_note().find("api_test_not_a_folder"), std::string::npos)
      << model->cache_note();
  Session s = model->open_session().value();
  EXPECT_TRUE(same(run_call(s, kKv, 0).outputs.at(0), recorded(kKv, 0, "outputs").at("output.0")));
  std::remove(file.c_str());
}

TEST(Api, NaivePlanGivesTheSameResults) {
  LoadOptions options;
  options.plan_mode = PlanMode::kNaive;
  auto model = Model::load(model_path(kKv), options);
  ASSERT_TRUE(model.ok()) << model.error().message();
  Session s = model->open_session().value();
  for (int call = 0; call < 3; ++call)
    EXPECT_TRUE(
        same(run_call(s, kKv, call).outputs.at(0), recorded(kKv, call, "outputs").at("output.0")))
        << "call " << call;
}

}  // namespace
}  // namespace splice
