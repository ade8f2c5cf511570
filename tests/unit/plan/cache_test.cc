// Tests for the engine cache: what changes the key (a byte of the archive, the plan mode, the
// backend's kernels, the device) and what does not (another path to the same bytes), the digest
// memo (used for an unchanged file, never for a changed one), the default folder, and
// load_or_build's miss, hit without an import, rebuild of a corrupt entry or of an entry under
// another key, atomic writes by concurrent builders, temporaries of killed writers removed
// (live ones kept), and a FIFO at an entry's name.
#include "plan/cache.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <thread>

#include "compiler/driver.h"
#include "ir/printer.h"
#include "plan/build.h"
#include "support/file_writer.h"
#include "tests/test_backends.h"
#include "tests/unit/temp_dir_test_base.h"

namespace splice::plan {

using splice::testing::cpu_target;
namespace {

namespace fs = std::filesystem;

constexpr const char* kRotary = "/tests/cases/rotary_halves_into_empty_like.default/model.pt2";
constexpr const char* kKvCache = "/tests/cases/kv_cache_reads_old_state.default/model.pt2";

std::string source(const char* rel) { return std::string(SPLICE_SOURCE_DIR) + rel; }

ir::Program load(const char* rel) {
  auto p = compiler::load_program(source(rel));
  EXPECT_TRUE(p.ok()) << p.error().message();
  return std::move(*p);
}

std::string digest(const std::string& path, const std::string& memo_dir = "",
                   bool* read = nullptr) {
  auto d = archive_digest(memo_dir, path, read);
  EXPECT_TRUE(d.ok()) << d.error().message();
  return d.ok() ? *d : std::string();
}

// The key `splice run` uses for an archive in a mode on the CPU.
std::string key_of(const char* rel, PlanMode mode = PlanMode::kPlanned) {
  return cache_key(digest(source(rel)), mode, cpu_target());
}

// The plan splice makes (an engine only loads with the plan splice makes for its program).
Plan simple_plan(const ir::Program& program, PlanMode mode) {
  return build_plan(program, mode, cpu_target());
}

// What a miss builds from an archive: its import and plan.
BuiltEngine built(const char* rel, PlanMode mode = PlanMode::kPlanned) {
  ir::Program p = load(rel);
  Plan plan = simple_plan(p, mode);
  return BuiltEngine{std::move(p), std::move(plan)};
}

// A build that counts its calls.
std::function<Result<BuiltEngine>()> counting(const char* rel, int& builds,
                                              PlanMode mode = PlanMode::kPlanned) {
  return [rel, &builds, mode]() -> Result<BuiltEngine> {
    ++builds;
    return built(rel, mode);
  };
}

// Sets an environment variable for one test and restores it afterwards.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value != nullptr)
      ::setenv(name, value, 1);
    else
      ::unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_)
      ::setenv(name_, old_->c_str(), 1);
    else
      ::unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

class CacheTest : public splice::testing::TempDirTest {
 protected:
  std::string cache_dir() const { return (dir_ / "cache").string(); }
  std::vector<std::string> cache_files() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(cache_dir()))
      names.push_back(e.path().filename().string());
    return names;
  }
  // A copy of a test archive in the test's folder, to change.
  std::string copy_of(const char* rel, const std::string& name) {
    const std::string to = (dir_ / name).string();
    fs::copy_file(source(rel), to, fs::copy_options::overwrite_existing);
    return to;
  }
};

TEST_F(CacheTest, KeyIsStableForTheSameBytesUnderAnyPath) {
  const std::string a = key_of(kKvCache);
  EXPECT_EQ(a, key_of(kKvCache));
  EXPECT_EQ(a.size(), 32u);
  EXPECT_EQ(a.find_first_not_of("0123456789abcdef"), std::string::npos) << a;
  const std::string copy = copy_of(kKvCache, "renamed.pt2");
  EXPECT_EQ(cache_key(digest(copy), PlanMode::kPlanned, cpu_target()), a);
}

TEST_F(CacheTest, KeyChangesWithAnArchiveByte) {
  const std::string copy = copy_of(kKvCache, "model.pt2");
  const std::string base = cache_key(digest(copy), PlanMode::kPlanned, cpu_target());
  std::string bytes;
  {
    std::ifstream in(copy, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  ASSERT_GT(bytes.size(), 100u);
  // A byte in the middle (a weight's or the program's: the key does not care which).
  bytes[bytes.size() / 2] ^= 1;
  write("model.pt2", bytes);
  EXPECT_NE(cache_key(digest(copy), PlanMode::kPlanned, cpu_target()), base);
}

TEST_F(CacheTest, KeyChangesWithTheModeTheKernelsAndTheDevice) {
  const std::string d = digest(source(kRotary));
  const std::string base = cache_key(d, PlanMode::kPlanned, cpu_target());
  EXPECT_NE(cache_key(d, PlanMode::kNaive, cpu_target()), base);
  backend::Target fewer = cpu_target();
  ASSERT_FALSE(fewer.caps.empty());
  fewer.caps[0] ^= 1;
  EXPECT_NE(cache_key(d, PlanMode::kPlanned, fewer), base);
  EXPECT_NE(cache_key(d, PlanMode::kPlanned, cpu_target(), "NVIDIA H100 sm_90 132 SMs"), base);
  EXPECT_NE(cache_key(d, PlanMode::kPlanned, cpu_target(), "NVIDIA H100 sm_90 132 SMs"),
            cache_key(d, PlanMode::kPlanned, cpu_target(), "NVIDIA H200 sm_90 132 SMs"));
}

TEST_F(CacheTest, ADigestIsTheXxh3OfTheFilesBytes) {
  const std::string a = write("a", "abc"), b = write("b", "abd");
  EXPECT_NE(digest(a), digest(b));
  EXPECT_EQ(digest(a), digest(write("c", "abc")));
  auto missing = archive_digest("", (dir_ / "missing.pt2").string());
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().kind(), ErrorKind::kIo);
  EXPECT_NE(missing.error().message().find("missing.pt2"), std::string::npos)
      << missing.error().message();
}

// The memo saves reading the archive on a hit, and is never trusted for a file that changed:
// a rewrite with the same size and the old mtime still changes its ctime.
TEST_F(CacheTest, TheDigestMemoServesAnUnchangedFileOnly) {
  const std::string copy = copy_of(kKvCache, "model.pt2");
  // No cache folder yet: a cold cache's first run makes it for the memo.
  bool read = false;
  const std::string fresh = digest(copy, cache_dir(), &read);
  EXPECT_TRUE(read);
  digest(copy, cache_dir(), &read);
  EXPECT_TRUE(read) << "a file changed in the last 2 seconds is not remembered";

  std::this_thread::sleep_for(std::chrono::milliseconds(2100));
  EXPECT_EQ(digest(copy, cache_dir(), &read), fresh);
  EXPECT_TRUE(read);
  EXPECT_EQ(digest(copy, cache_dir(), &read), fresh);
  EXPECT_FALSE(read) << "an unchanged, settled file is served from its memo";

  const fs::file_time_type mtime = fs::last_write_time(copy);
  std::string bytes;
  {
    std::ifstream in(copy, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  bytes[bytes.size() / 2] ^= 1;
  {
    std::fstream out(copy, std::ios::binary | std::ios::in | std::ios::out);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  fs::last_write_time(copy, mtime);  // (the file's fcntl.h name clashes with namespace splice)
  ASSERT_EQ(fs::last_write_time(copy), mtime);
  const std::string changed = digest(copy, cache_dir(), &read);
  EXPECT_TRUE(read) << "same inode, size and mtime, but a new ctime";
  EXPECT_NE(changed, fresh);
}

TEST_F(CacheTest, AMemoForAnotherFileOrDamagedIsIgnored) {
  const std::string copy = copy_of(kKvCache, "model.pt2");
  fs::create_directories(cache_dir());
  std::this_thread::sleep_for(std::chrono::milliseconds(2100));
  const std::string d = digest(copy, cache_dir());
  std::vector<std::string> memos;
  for (const auto& e : fs::directory_iterator(cache_dir()))
    if (e.path().extension() == ".digest") memos.push_back(e.path().string());
  ASSERT_EQ(memos.size(), 1u);
  for (const std::string& junk :
       {std::string("splice archive digest 1\n1 2 3 4 5 0123456789abcdef0123456789abcdef\n"),
        std::string("garbage"), std::string()}) {
    std::ofstream(memos[0], std::ios::binary | std::ios::trunc) << junk;
    bool read = false;
    EXPECT_EQ(digest(copy, cache_dir(), &read), d);
    EXPECT_TRUE(read) << junk;
  }
}

TEST_F(CacheTest, DefaultDirFollowsXdgThenHome) {
  {
    ScopedEnv xdg("XDG_CACHE_HOME", "/x/cache");
    ScopedEnv home("HOME", "/home/u");
    EXPECT_EQ(default_cache_dir(), "/x/cache/splice");
  }
  {
    ScopedEnv xdg("XDG_CACHE_HOME", "");
    ScopedEnv home("HOME", "/home/u");
    EXPECT_EQ(default_cache_dir(), "/home/u/.cache/splice");
  }
  {
    ScopedEnv xdg("XDG_CACHE_HOME", nullptr);
    ScopedEnv home("HOME", nullptr);
    EXPECT_EQ(default_cache_dir(), ".splice-cache");
  }
}

TEST_F(CacheTest, MissThenHitWithoutAnImport) {
  const std::string key = key_of(kKvCache);
  int builds = 0;
  bool hit = true;
  auto first = load_or_build(cache_dir(), key, cpu_target(), counting(kKvCache, builds), &hit);
  ASSERT_TRUE(first.ok()) << first.error().message();
  EXPECT_FALSE(hit);
  EXPECT_EQ(builds, 1);
  EXPECT_EQ(first->cache_key, key) << "the entry records its key";
  // A hit never calls the build, which is the only thing that imports the archive.
  auto second = load_or_build(
      cache_dir(), key, cpu_target(),
      []() -> Result<BuiltEngine> {
        ADD_FAILURE() << "a hit imported the archive";
        return make_error(ErrorKind::kInternal, "imported");
      },
      &hit);
  ASSERT_TRUE(second.ok()) << second.error().message();
  EXPECT_TRUE(hit);

  // A hit gives what the build made, the same as the miss returned.
  const ir::Program p = load(kKvCache);
  EXPECT_EQ(second->plan, simple_plan(p, PlanMode::kPlanned));
  EXPECT_EQ(second->plan, first->plan);
  EXPECT_EQ(ir::print_program(second->program), ir::print_program(p));
  EXPECT_EQ(ir::print_program(first->program), ir::print_program(p));
  // The miss also returns weights mapped from the written entry, not the .pt2's.
  EXPECT_FALSE(first->program.weights.at("cache").storage()->writable());
  EXPECT_NE(first->program.weights.at("cache").raw_data(), p.weights.at("cache").raw_data());

  // Exactly one entry, named by the key: no temporary file left behind.
  EXPECT_EQ(cache_files(), std::vector<std::string>{key + ".splice"});

  // Another mode is another entry.
  auto naive = load_or_build(cache_dir(), key_of(kKvCache, PlanMode::kNaive), cpu_target(),
                             counting(kKvCache, builds, PlanMode::kNaive), &hit);
  ASSERT_TRUE(naive.ok()) << naive.error().message();
  EXPECT_FALSE(hit);
  EXPECT_EQ(builds, 2);
  EXPECT_EQ(naive->plan.mode, PlanMode::kNaive);
  EXPECT_EQ(cache_files().size(), 2u);
}

TEST_F(CacheTest, CorruptEntryIsRebuilt) {
  const std::string key = key_of(kRotary);
  int builds = 0;
  ASSERT_TRUE(load_or_build(cache_dir(), key, cpu_target(), counting(kRotary, builds)).ok());
  const std::string entry = (fs::path(cache_dir()) / cache_files().at(0)).string();

  for (const std::string& junk : {std::string("not an engine"), std::string()}) {
    write("junk", junk);
    fs::copy_file(dir_ / "junk", entry, fs::copy_options::overwrite_existing);
    bool hit = true;
    auto r = load_or_build(cache_dir(), key, cpu_target(), counting(kRotary, builds), &hit);
    ASSERT_TRUE(r.ok()) << r.error().message();
    EXPECT_FALSE(hit);
    EXPECT_EQ(r->plan, simple_plan(load(kRotary), PlanMode::kPlanned)) << "the fresh build's plan";
    EXPECT_TRUE(load_engine_file(entry, cpu_target()).ok()) << "the entry was overwritten";
  }
  EXPECT_EQ(builds, 3);
  EXPECT_EQ(cache_files().size(), 1u);
}

// The entry's name is only a claim: its checksummed trailer must hold that key.
TEST_F(CacheTest, AnotherKeysEntryUnderTheNameIsRebuilt) {
  const std::string p_key = key_of(kRotary), q_key = key_of(kKvCache);
  int builds = 0;
  ASSERT_TRUE(load_or_build(cache_dir(), p_key, cpu_target(), counting(kRotary, builds)).ok());
  ASSERT_TRUE(load_or_build(cache_dir(), q_key, cpu_target(), counting(kKvCache, builds)).ok());
  const fs::path p_entry = fs::path(cache_dir()) / (p_key + ".splice");
  const fs::path q_entry = fs::path(cache_dir()) / (q_key + ".splice");
  // A valid entry of another archive copied under p's key.
  fs::copy_file(q_entry, p_entry, fs::copy_options::overwrite_existing);
  bool hit = true;
  auto r = load_or_build(cache_dir(), p_key, cpu_target(), counting(kRotary, builds), &hit);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_FALSE(hit) << "the entry holds another key";
  EXPECT_EQ(builds, 3);
  EXPECT_EQ(ir::print_program(r->program), ir::print_program(load(kRotary)));
  auto entry = load_engine_file(p_entry.string(), cpu_target());
  ASSERT_TRUE(entry.ok()) << entry.error().message();
  EXPECT_EQ(entry->cache_key, p_key) << "the entry was rebuilt";
  // And the rebuilt entry is a hit again.
  ASSERT_TRUE(
      load_or_build(cache_dir(), p_key, cpu_target(), counting(kRotary, builds), &hit).ok());
  EXPECT_TRUE(hit);
  EXPECT_EQ(builds, 3);
}

// An engine `splice compile` wrote (no key trailer) is not an entry, whatever its name.
TEST_F(CacheTest, ACompiledEngineUnderTheNameIsRebuilt) {
  const std::string key = key_of(kKvCache);
  fs::create_directories(cache_dir());
  const BuiltEngine b = built(kKvCache);
  const std::string entry = (fs::path(cache_dir()) / (key + ".splice")).string();
  ASSERT_TRUE(write_engine_file(b.program, b.plan, entry).ok());
  auto compiled = load_engine_file(entry, cpu_target());
  ASSERT_TRUE(compiled.ok()) << compiled.error().message();
  EXPECT_EQ(compiled->cache_key, "");
  int builds = 0;
  bool hit = true;
  auto r = load_or_build(cache_dir(), key, cpu_target(), counting(kKvCache, builds), &hit);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_FALSE(hit);
  EXPECT_EQ(builds, 1);
  EXPECT_EQ(r->cache_key, key);
}

// A temporary of a writer that died mid-write: here a real cache write, of an engine large
// enough to take a while, in a child process killed by SIGKILL as soon as its temporary shows.
TEST_F(CacheTest, AKilledWritersTemporaryIsRemovedWhenTheCacheOpens) {
  GTEST_FLAG_SET(death_test_style, "fast");
  const std::string key = key_of(kKvCache);
  const std::string dir = cache_dir();
  auto killed_while_writing = [&] {
    std::thread killer([&] {
      for (;;) {
        std::error_code ec;
        for (const auto& e : fs::directory_iterator(dir, ec))
          if (e.path().filename().string().find(".splice.tmp.") != std::string::npos)
            ::kill(::getpid(), SIGKILL);
      }
    });
    killer.detach();
    (void)load_or_build(dir, key, cpu_target(), []() -> Result<BuiltEngine> {
      BuiltEngine big = built(kKvCache);
      big.program.weights["cache"] = Tensor::empty(DType::kFloat32, {16 << 20}).value();  // 64 MB
      return big;
    });
    std::_Exit(0);  // the write finished before the killer saw it: the test below says so
  };
  fs::create_directories(dir);
  EXPECT_EXIT(killed_while_writing(), ::testing::KilledBySignal(SIGKILL), "");
  std::vector<std::string> left = cache_files();
  ASSERT_EQ(left.size(), 1u) << "the killed writer leaves one temporary";
  EXPECT_NE(left[0].find(".splice.tmp."), std::string::npos) << left[0];

  int builds = 0;
  auto r = load_or_build(dir, key, cpu_target(), counting(kKvCache, builds));
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(cache_files(), std::vector<std::string>{key + ".splice"});
}

TEST_F(CacheTest, AnUnlockedTemporaryOfAnOlderSpliceIsRemoved) {
  // The name splice 0.6.0 gave its temporaries; it never locked them, so none is live.
  fs::create_directories(cache_dir());
  const std::string leftover = "0123456789abcdef0123456789abcdef.splice.tmp.Xy12Zq";
  write("cache/" + leftover, std::string(1 << 20, 'x'));
  int builds = 0;
  const std::string key = key_of(kRotary);
  ASSERT_TRUE(load_or_build(cache_dir(), key, cpu_target(), counting(kRotary, builds)).ok());
  EXPECT_EQ(cache_files(), std::vector<std::string>{key + ".splice"});
}

TEST_F(CacheTest, ALiveWritersTemporaryIsKept) {
  fs::create_directories(cache_dir());
  auto writing = PendingFile::create(cache_dir() + "/other.splice");
  ASSERT_TRUE(writing.ok()) << writing.error().message();
  int builds = 0;
  ASSERT_TRUE(
      load_or_build(cache_dir(), key_of(kRotary), cpu_target(), counting(kRotary, builds)).ok());
  EXPECT_TRUE(fs::exists(writing->temp_path())) << "another process is still writing it";
}

TEST_F(CacheTest, AFifoAtTheEntrysNameIsAnErrorNotAHangAndTheBuildIsKept) {
  fs::create_directories(cache_dir());
  const std::string key = key_of(kRotary);
  const std::string entry = cache_dir() + "/" + key + ".splice";
  ASSERT_EQ(::mkfifo(entry.c_str(), 0600), 0);
  int builds = 0;
  std::optional<BuiltEngine> kept;
  auto r = load_or_build(cache_dir(), key, cpu_target(), counting(kRotary, builds), nullptr, &kept);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind(), ErrorKind::kIo);
  EXPECT_EQ(r.error().message(),
            "cannot write '" + entry + "': it is a FIFO; splice only replaces regular files");
  EXPECT_EQ(fs::status(entry).type(), fs::file_type::fifo);
  // What the build made comes back, so the caller runs it without importing again.
  ASSERT_TRUE(kept.has_value());
  EXPECT_EQ(builds, 1);
  EXPECT_EQ(kept->plan, simple_plan(kept->program, PlanMode::kPlanned));
}

TEST_F(CacheTest, EightConcurrentBuildersLeaveOneWholeEntry) {
  const std::string key = key_of(kKvCache);
  std::vector<std::string> errors(8);
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i)
    threads.emplace_back([&, i] {
      auto r = load_or_build(cache_dir(), key, cpu_target(),
                             []() -> Result<BuiltEngine> { return built(kKvCache); });
      if (!r.ok()) errors[i] = r.error().message();
    });
  for (auto& t : threads) t.join();
  for (const auto& e : errors) EXPECT_EQ(e, "");
  EXPECT_EQ(cache_files(), std::vector<std::string>{key + ".splice"});
  bool hit = false;
  int builds = 0;
  ASSERT_TRUE(load_or_build(cache_dir(), key, cpu_target(), counting(kKvCache, builds), &hit).ok());
  EXPECT_TRUE(hit);
  EXPECT_EQ(builds, 0);
}

TEST_F(CacheTest, BuildErrorsPassThroughAndLeaveNoEntry) {
  std::optional<BuiltEngine> kept;
  auto r = load_or_build(
      cache_dir(), key_of(kRotary), cpu_target(),
      []() -> Result<BuiltEngine> {
        return make_error(ErrorKind::kUnsupportedOp, "cannot plan op X");
      },
      nullptr, &kept);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind(), ErrorKind::kUnsupportedOp);
  EXPECT_FALSE(kept.has_value());
  EXPECT_TRUE(cache_files().empty());
}

TEST_F(CacheTest, UncreatableFolderIsAnIoError) {
  const std::string file = write("file", "x");
  int builds = 0;
  auto r = load_or_build(file + "/cache", key_of(kRotary), cpu_target(), counting(kRotary, builds));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind(), ErrorKind::kIo);
  EXPECT_NE(r.error().message().find(file + "/cache"), std::string::npos) << r.error().message();
  EXPECT_EQ(builds, 0);
}

}  // namespace
}  // namespace splice::plan
