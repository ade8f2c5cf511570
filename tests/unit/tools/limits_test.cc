// The CLI's limits (issue 34, items 4 and 9): a call whose planned memory cannot fit is refused
// before it allocates anything, naming the bytes and the limit; a thread count beyond the
// machine's hardware threads is clamped with a warning.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <chrono>
#include <thread>

#include "tests/unit/asan.h"
#include "tests/unit/tools/cli_test_util.h"

namespace splice::test {
namespace {

std::string case_file(const std::string& c, const std::string& name) {
  return kCasesDir + "/" + c + "/" + name;
}

// hf_llama.default: transformers' LlamaForCausalLM (hidden 32, one layer) exported with a dynamic
// sequence length s53; input_ids and attention_mask i64[2, s53]. Its causal mask and the
// attention scores are [2, 1, T, T]: at T = 100,000 each is tens of GB, and the call grew for
// 12-18 s to 10 GB before failing. At T = 10,000 the planned buffers (897 MB) fit under the
// limit below but with the intermediates at their peak they do not. Under `ulimit -v` (1 GB of
// address space, so the process can never hold more) both are refused at once, naming
// RLIMIT_AS. (The attention itself is one fused op since fuse_written_attention, so its scores
// no longer count; at T = 8,000 the estimate now fits and the call fails when the mask's
// `where` cannot allocate its 512 MB, still with exit 2: the estimate misses that output.)
TEST(SpliceLimits, ACallThatCannotFitIsRefusedBeforeAllocating) {
  if (SPLICE_TEST_ASAN) GTEST_SKIP() << "limits and timings do not apply under AddressSanitizer";
  TempDir tmp;
  const std::string c = "hf_llama.default";
  for (int64_t tokens : {100000, 10000}) {
    Tensor ids = Tensor::empty(DType::kInt64, {2, tokens}).value();
    Tensor mask = Tensor::empty(DType::kInt64, {2, tokens}).value();
    for (int64_t i = 0; i < ids.numel(); ++i) {
      ids.data<int64_t>()[i] = i % 128;
      mask.data<int64_t>()[i] = 1;
    }
    write_tensors(tmp.file("in.safetensors"), {{"input_ids", ids}, {"attention_mask", mask}});
    const auto start = std::chrono::steady_clock::now();
    Outcome o = run_program(
        "/bin/sh", {"-c", "ulimit -v 1000000 && exec \"$0\" \"$@\"", kSpliceBinary, "run",
                    case_file(c, "model.pt2"), "--no-cache", "--inputs", tmp.file("in.safetensors"),
                    "--outputs", tmp.file("out.safetensors")});
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_EQ(o.exit_code, 2) << describe(o);
    EXPECT_LT(seconds, 3.0) << describe(o);
    for (const std::string& part :
         {std::string("splice: error: out of memory: this call needs at least "),
          std::string(" bytes ("), fmt::format("with s53 = {} (", tokens),
          std::string("in planned buffers"),
          std::string("in intermediates at their peak), but "
                      "RLIMIT_AS (ulimit -v: 1024000000 bytes) "
                      "less the "),
          std::string("refused before allocating any")})
      EXPECT_NE(o.err.find(part), std::string::npos) << part << "\n" << describe(o);
    EXPECT_FALSE(std::filesystem::exists(tmp.file("out.safetensors")));
  }
}

// --threads 4096 ran 4096 threads on a few cores: each call ~1,000x slower.
TEST(SpliceLimits, ThreadsBeyondTheHardwareAreClampedWithAWarning) {
  const int hardware = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  TempDir tmp;
  const std::string c = "abs.default";
  for (std::string command : {"run", "bench"}) {
    std::vector<std::string> args = {command,
                                     case_file(c, "model.pt2"),
                                     "--threads",
                                     "4096",
                                     "--no-cache",
                                     "--inputs",
                                     case_file(c, "call0.inputs.safetensors"),
                                     "--outputs",
                                     tmp.file("out.safetensors")};
    if (command == "bench") args.insert(args.end(), {"--warmup", "0", "--iters", "1"});
    Outcome o = run_splice(args);
    ASSERT_EQ(o.exit_code, 0) << describe(o);
    EXPECT_NE(o.err.find(fmt::format("splice: warning: 4096 threads asked for, but this machine "
                                     "has {} hardware threads; using {}",
                                     hardware, hardware)),
              std::string::npos)
        << describe(o);
  }
}

}  // namespace
}  // namespace splice::test
