// How `splice run` and `splice compile` treat the user's files (issue 13's reproductions, each
// through the real CLI): parallel runs writing one --outputs each leave a whole file, and a
// writer still busy elsewhere cannot mix its bytes into a finished run's file; a FIFO,
// device node, socket or link where an output goes is refused (exit 2) and left as it was, and a
// link planted at the old temporary name is never followed; colliding paths (an output that is
// an input, two outputs in one file) are refused naming both options; a FIFO given as any input
// fails at once instead of hanging, and one at a cache entry's name costs only the cache; a
// cache temporary whose writer died is removed by the next run; another engine copied under a
// cache key is not run; a failing --state-out or --compare leaves --outputs untouched; names at
// the system's limit work and replaced files keep their permissions. Every special file is made
// in the test's own mkdtemp folder; the engine cache lives there too.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

#include "tests/unit/temp_dir_test_base.h"
#include "tests/unit/tools/cli_test_util.h"

namespace splice::test {
namespace {

namespace fs = std::filesystem;

// A run that could hang (a FIFO opened for reading) must fail long before this, even in a
// sanitizer build on a busy machine; any other run must finish within kRunLimit.
constexpr std::chrono::seconds kQuick(30);
constexpr std::chrono::seconds kRunLimit(90);

std::string case_file(const std::string& c, const std::string& name) {
  return kCasesDir + "/" + c + "/" + name;
}

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

unsigned mode_of(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
  return st.st_mode;
}

class SpliceFiles : public splice::testing::TempDirTest {
 protected:
  // kv_cache_index_copy: inputs k f32[1, 2, 1, 4] and pos i64[1], buffer cache f32[1, 2, 8, 4].
  const std::string case_ = "kv_cache_index_copy.default";
  std::string model() const { return case_file(case_, "model.pt2"); }
  std::string inputs() const { return case_file(case_, "call0.inputs.safetensors"); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::string cache() const { return path("cache"); }

  Outcome cli(const std::vector<std::string>& args, std::chrono::seconds timeout = kRunLimit) {
    return run_splice(args, {{"XDG_CACHE_HOME", path("xdg")}}, timeout);
  }
  // Expects exit 2, quickly, with every one of `parts` in stderr.
  void expect_refused(const std::vector<std::string>& args, const std::vector<std::string>& parts) {
    Outcome o = cli(args, kQuick);
    EXPECT_FALSE(o.timed_out) << describe(o);
    EXPECT_EQ(o.exit_code, 2) << describe(o);
    for (const auto& part : parts)
      EXPECT_NE(o.err.find(part), std::string::npos) << "expected '" << part << "'\n"
                                                     << describe(o);
  }
  std::vector<std::string> run_args(const std::vector<std::string>& extra) const {
    std::vector<std::string> args = {"run", model(), "--inputs", inputs(), "--cache-dir", cache()};
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  }
  // The cache's entries (*.splice; the archives' digest memos, *.digest, are not entries).
  std::vector<fs::path> cache_entries() const {
    std::vector<fs::path> entries;
    for (const auto& e : fs::directory_iterator(cache()))
      if (e.path().extension() == ".splice") entries.push_back(e.path());
    return entries;
  }
  // The cache's files other than entries and digest memos: temporaries.
  std::vector<std::string> cache_leftovers() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(cache()))
      if (e.path().extension() != ".splice" && e.path().extension() != ".digest")
        names.push_back(e.path().filename().string());
    return names;
  }
};

// ---- 1: parallel runs writing one --outputs ----

TEST_F(SpliceFiles, ParallelRunsWritingOneOutputsFileEachLeaveAWholeFile) {
  constexpr int kRuns = 8;
  // Run i writes k = i + 1 at position 0: every run's output differs.
  std::vector<std::string> in(kRuns), expected(kRuns);
  for (int i = 0; i < kRuns; ++i) {
    auto tensors = read_tensors(inputs());
    Tensor k = Tensor::empty(DType::kFloat32, {1, 2, 1, 4}).value();
    for (int64_t e = 0; e < k.numel(); ++e) k.data<float>()[e] = static_cast<float>(i + 1);
    tensors["k"] = k;
    in[i] = path("in" + std::to_string(i) + ".safetensors");
    write_tensors(in[i], tensors);
    Outcome o = cli({"run", model(), "--no-cache", "--inputs", in[i], "--outputs",
                     path("alone" + std::to_string(i) + ".safetensors")});
    ASSERT_EQ(o.exit_code, 0) << describe(o);
    expected[i] = read_bytes(path("alone" + std::to_string(i) + ".safetensors"));
  }
  const std::string shared = path("shared.safetensors");
  for (int round = 0; round < 5; ++round) {
    std::vector<Outcome> outcomes(kRuns);
    std::vector<std::thread> threads;
    for (int i = 0; i < kRuns; ++i)
      threads.emplace_back([&, i] {
        outcomes[i] =
            cli({"run", model(), "--no-cache", "--inputs", in[i], "--outputs", shared}, kRunLimit);
      });
    for (auto& t : threads) t.join();
    for (int i = 0; i < kRuns; ++i) EXPECT_EQ(outcomes[i].exit_code, 0) << describe(outcomes[i]);
    const std::string got = read_bytes(shared);
    EXPECT_NE(std::find(expected.begin(), expected.end(), got), expected.end())
        << "round " << round << ": the file is no single run's output";
  }
  for (const auto& e : fs::directory_iterator(dir_))
    EXPECT_EQ(e.path().filename().string().find(".tmp"), std::string::npos)
        << "left behind: " << e.path();
}

TEST_F(SpliceFiles, AnotherWriterStillWritingCannotMixIntoTheOutputs) {
  // The race above, made certain: another run of the old writer is mid-write, with its
  // temporary (`OUT.tmp`, the name every run shared) open, and keeps writing after this run
  // has finished. That writer's bytes must not end up in this run's file.
  const std::string out = path("out.safetensors");
  std::FILE* other = std::fopen((out + ".tmp").c_str(), "wb");
  ASSERT_NE(other, nullptr);
  Outcome o = cli(run_args({"--outputs", out}));
  ASSERT_EQ(o.exit_code, 0) << describe(o);
  const std::string garbage(4096, 'Z');
  std::fwrite(garbage.data(), 1, garbage.size(), other);
  std::fclose(other);
  auto written = read_safetensors(out);
  ASSERT_TRUE(written.ok()) << written.error().message();
  expect_same_tensors(*written, read_tensors(case_file(case_, "call0.outputs.safetensors")));
}

TEST_F(SpliceFiles, EightParallelRunsShareOneCacheEntry) {
  std::vector<Outcome> outcomes(8);
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i)
    threads.emplace_back([&, i] {
      // Appended, not "o" + to_string(i): GCC 12's -Wrestrict misreads that operator+.
      std::string name = "o";
      name += std::to_string(i);
      name += ".safetensors";
      outcomes[i] = cli(run_args({"--outputs", path(name)}), kRunLimit);
    });
  for (auto& t : threads) t.join();
  for (const auto& o : outcomes) {
    EXPECT_EQ(o.exit_code, 0) << describe(o);
    EXPECT_EQ(o.err, "") << "no run may lose its cache write";
  }
  EXPECT_TRUE(cache_leftovers().empty());
  EXPECT_EQ(cache_entries().size(), 1u);
}

// ---- 2: outputs onto what is not a regular file ----

TEST_F(SpliceFiles, AnOutputOntoAFifoIsRefusedAndTheFifoKept) {
  const std::string fifo = path("fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string refusal = "cannot write '" + fifo +
                              "': it is a FIFO; splice only replaces "
                              "regular files";
  expect_refused(run_args({"--outputs", fifo}), {refusal});
  expect_refused(run_args({"--outputs", path("o.safetensors"), "--state-out", fifo}), {refusal});
  expect_refused({"compile", model(), "-o", fifo}, {refusal});
  EXPECT_TRUE(S_ISFIFO(mode_of(fifo)));
  EXPECT_FALSE(fs::exists(path("o.safetensors"))) << "nothing is written when one file fails";
}

TEST_F(SpliceFiles, AnOutputOntoADeviceNodeIsRefusedAndTheNodeKept) {
  // As root, `--outputs /dev/null` used to turn /dev/null into a regular file. The node here
  // has /dev/null's numbers but lives in the test's own folder (never touch /dev).
  if (::geteuid() != 0) GTEST_SKIP() << "making a device node needs root";
  const std::string node = path("null");
  if (::mknod(node.c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0)
    GTEST_SKIP() << "mknod refused (" << std::strerror(errno) << "), e.g. in a container";
  expect_refused(run_args({"--outputs", node}), {"'" + node + "': it is a character device"});
  expect_refused({"compile", model(), "-o", node}, {"it is a character device"});
  struct stat st {};
  ASSERT_EQ(::lstat(node.c_str(), &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
  EXPECT_EQ(st.st_rdev, makedev(1, 3));
}

TEST_F(SpliceFiles, AnOutputOntoASocketIsRefused) {
  const int s = ::socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(s, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const std::string sock = path("sock");
  if (sock.size() >= sizeof(addr.sun_path)) {
    ::close(s);
    GTEST_SKIP() << "the scratch folder's path is too long for a socket address";
  }
  std::strcpy(addr.sun_path, sock.c_str());
  ASSERT_EQ(::bind(s, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  expect_refused(run_args({"--outputs", sock}), {"it is a socket"});
  EXPECT_TRUE(S_ISSOCK(mode_of(sock)));
  ::close(s);
}

TEST_F(SpliceFiles, LinksAreNeverWrittenThrough) {
  // A link at the destination is refused and its target kept.
  const std::string target = write("target", "precious");
  fs::create_symlink(target, dir_ / "link.safetensors");
  expect_refused(run_args({"--outputs", path("link.safetensors")}), {"it is a symbolic link"});
  expect_refused({"compile", model(), "-o", path("link.safetensors")}, {"it is a symbolic link"});
  EXPECT_EQ(read_bytes(target), "precious");
  // A link planted where the old writer put its temporary ("OUT.tmp") is not followed: the
  // run succeeds and the link's target is untouched.
  const std::string victim = write("victim", "precious");
  const std::string out = path("out.safetensors");
  fs::create_symlink(victim, out + ".tmp");
  Outcome o = cli(run_args({"--outputs", out}));
  ASSERT_EQ(o.exit_code, 0) << describe(o);
  EXPECT_EQ(read_bytes(victim), "precious");
  expect_same_tensors(read_tensors(out),
                      read_tensors(case_file(case_, "call0.outputs.safetensors")));
}

// ---- 3: colliding paths ----

TEST_F(SpliceFiles, AnOutputThatIsAnInputOrAnotherOutputIsRefused) {
  const std::string x = path("x.safetensors");
  expect_refused(run_args({"--outputs", x, "--state-out", x}),
                 {"--outputs and --state-out are the same file ('" + x + "')"});
  EXPECT_FALSE(fs::exists(x));

  // The user's archive, under every kind of other name.
  const std::string m = path("m.pt2");
  fs::copy_file(model(), m);
  const std::string original = read_bytes(m);
  expect_refused({"compile", m, "-o", m}, {"the model and -o are the same file ('" + m + "')",
                                           "splice will not overwrite a file it reads"});
  expect_refused({"run", m, "--inputs", inputs(), "--outputs", m},
                 {"the model and --outputs are the same file"});
  fs::create_hard_link(m, dir_ / "hard.pt2");
  expect_refused({"compile", m, "-o", path("hard.pt2")}, {"the model and -o are the same file"});
  expect_refused({"run", m, "--inputs", inputs(), "--state-out", (dir_ / "." / "m.pt2").string()},
                 {"the model and --state-out are the same file"});
  EXPECT_EQ(read_bytes(m), original);

  const std::string in = path("in.safetensors");
  fs::copy_file(inputs(), in);
  expect_refused({"run", model(), "--inputs", in, "--outputs", in},
                 {"--inputs and --outputs are the same file"});
  expect_refused({"run", model(), "--inputs", inputs(), "--state-in", in, "--state-out", in},
                 {"--state-in and --state-out are the same file"});
  expect_refused(run_args({"--compare", in, "--outputs", in}),
                 {"--compare and --outputs are the same file"});
  EXPECT_EQ(read_bytes(in), read_bytes(inputs()));
}

// ---- 4: FIFOs given as inputs ----

TEST_F(SpliceFiles, AFifoGivenAsAnyInputFailsAtOnce) {
  const std::string fifo = path("fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string refusal = "cannot read '" + fifo + "': it is a FIFO, not a regular file";
  expect_refused({"run", fifo, "--inputs", inputs()}, {refusal});
  expect_refused({"compile", fifo, "-o", path("m.splice")}, {refusal});
  expect_refused({"inspect", fifo}, {refusal});
  expect_refused({"inspect", "--plan", fifo}, {refusal});
  expect_refused({"run", model(), "--inputs", fifo}, {refusal});
  expect_refused(run_args({"--state-in", fifo}), {refusal});
  expect_refused(run_args({"--compare", fifo}), {refusal});
}

TEST_F(SpliceFiles, AFifoAtACacheEntrysNameCostsOnlyTheCache) {
  ASSERT_EQ(cli(run_args({"--outputs", path("first.safetensors")})).exit_code, 0);
  const std::vector<fs::path> entries = cache_entries();
  ASSERT_EQ(entries.size(), 1u);
  fs::remove(entries[0]);
  ASSERT_EQ(::mkfifo(entries[0].c_str(), 0600), 0);
  Outcome o = cli(run_args({"--outputs", path("out.safetensors")}));
  EXPECT_FALSE(o.timed_out) << describe(o);
  ASSERT_EQ(o.exit_code, 0) << describe(o);
  EXPECT_NE(o.err.find("warning: engine cache not used (cannot write '" + entries[0].string() +
                       "': it is a FIFO"),
            std::string::npos)
      << describe(o);
  expect_same_tensors(read_tensors(path("out.safetensors")),
                      read_tensors(case_file(case_, "call0.outputs.safetensors")));
  EXPECT_TRUE(S_ISFIFO(mode_of(entries[0].string())));
}

// ---- 5: a cache temporary whose writer died ----

TEST_F(SpliceFiles, TheNextRunRemovesATemporaryWhoseWriterDied) {
  // What a run killed mid-write leaves (cache_test.cc kills a real writer): an unlocked
  // temporary, here under the name splice 0.6.0 gave it.
  fs::create_directories(cache());
  write("cache/0123456789abcdef0123456789abcdef.splice.tmp.k1LLed", std::string(1 << 20, 'x'));
  write("cache/.splice.tmp.AbCdEf123456", std::string(1 << 20, 'y'));
  Outcome o = cli(run_args({"--outputs", path("out.safetensors")}));
  ASSERT_EQ(o.exit_code, 0) << describe(o);
  EXPECT_TRUE(cache_leftovers().empty());
}

// ---- 7: a cache entry holding another engine ----

TEST_F(SpliceFiles, AnotherEngineCopiedUnderACacheKeyIsNotRun) {
  ASSERT_EQ(cli(run_args({"--outputs", path("first.safetensors")})).exit_code, 0);
  const std::vector<fs::path> entries = cache_entries();
  ASSERT_EQ(entries.size(), 1u);
  // A valid engine of another program with the same signature: the same program in the naive
  // plan mode, and another program altogether.
  const std::string other = "kv_cache_reads_old_state.default";
  for (const std::vector<std::string>& compile :
       {std::vector<std::string>{"compile", model(), "-o", path("naive.splice"), "--plan-mode",
                                 "naive"},
        std::vector<std::string>{"compile", case_file(other, "model.pt2"), "-o",
                                 path("naive.splice")}}) {
    ASSERT_EQ(cli(compile).exit_code, 0);
    fs::copy_file(path("naive.splice"), entries[0], fs::copy_options::overwrite_existing);
    Outcome o = cli(run_args({"--outputs", path("out.safetensors")}));
    ASSERT_EQ(o.exit_code, 0) << describe(o);
    EXPECT_EQ(o.err, "") << "a rebuilt entry is no reason to warn";
    expect_same_tensors(read_tensors(path("out.safetensors")),
                        read_tensors(case_file(case_, "call0.outputs.safetensors")));
    EXPECT_NE(read_bytes(entries[0]), read_bytes(path("naive.splice"))) << "rebuilt";
  }
}

// ---- 8: a later file of the call fails ----

TEST_F(SpliceFiles, AFailingStateOutLeavesTheOutputsUntouched) {
  const std::string out = path("out.safetensors");
  expect_refused(run_args({"--outputs", out, "--state-out", path("no_such_dir/s.safetensors")}),
                 {path("no_such_dir/s.safetensors")});
  EXPECT_FALSE(fs::exists(out));
  write("out.safetensors", "the previous run's outputs");
  fs::create_directories(dir_ / "a_folder");
  expect_refused(run_args({"--outputs", out, "--state-out", path("a_folder")}), {"it is a folder"});
  EXPECT_EQ(read_bytes(out), "the previous run's outputs");
  for (const auto& e : fs::directory_iterator(dir_))
    EXPECT_EQ(e.path().filename().string().find(".tmp"), std::string::npos)
        << "left behind: " << e.path();
}

TEST_F(SpliceFiles, AFailingCompareLeavesTheOutputsUntouched) {
  const std::string out = path("out.safetensors");
  expect_refused(run_args({"--outputs", out, "--compare", path("missing.safetensors")}),
                 {"missing.safetensors"});
  EXPECT_FALSE(fs::exists(out));
  const std::string garbage = write("garbage.safetensors", "not safetensors at all");
  expect_refused(run_args({"--outputs", out, "--compare", garbage}), {garbage});
  EXPECT_FALSE(fs::exists(out));
}

// ---- 9: long names and permissions ----

TEST_F(SpliceFiles, NamesAtTheLimitWorkAndPermissionsAreKept) {
  const long name_max = ::pathconf(dir_.c_str(), _PC_NAME_MAX);
  ASSERT_GT(name_max, 20);
  const std::string long_out = path(std::string(name_max - 12, 'o') + ".safetensors");
  Outcome o =
      cli(run_args({"--outputs", long_out, "--state-out", path(std::string(name_max, 's'))}));
  ASSERT_EQ(o.exit_code, 0) << describe(o);
  EXPECT_TRUE(fs::exists(long_out));
  const std::string long_engine = path(std::string(name_max - 7, 'e') + ".splice");
  o = cli({"compile", model(), "-o", long_engine});
  ASSERT_EQ(o.exit_code, 0) << describe(o);

  const std::string out = write("private.safetensors", "old");
  const std::string engine = write("private.splice", "old");
  for (const auto& p : {out, engine}) ASSERT_EQ(::chmod(p.c_str(), 0600), 0);
  ASSERT_EQ(cli(run_args({"--outputs", out})).exit_code, 0);
  ASSERT_EQ(cli({"compile", model(), "-o", engine}).exit_code, 0);
  EXPECT_EQ(mode_of(out) & 07777, 0600u);
  EXPECT_EQ(mode_of(engine) & 07777, 0600u);
  EXPECT_TRUE(read_tensors(out).count("output.0"));
}

}  // namespace
}  // namespace splice::test
