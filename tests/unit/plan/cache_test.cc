// Tests for the engine cache: what changes the key (a node argument, a weight byte, the plan
// mode, a symbol range) and what does not (loading the same model twice), the default folder,
// and load_or_build's miss, hit, rebuild of a corrupt entry or of an entry holding another
// program or other weights, atomic writes by concurrent builders, temporaries of killed writers
// removed (live ones kept), and a FIFO at an entry's name.
#include "plan/cache.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <thread>

#include "compiler/driver.h"
#include "ir/parser.h"
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
constexpr const char* kDynamic = "/tests/cases/dyn_batch_mlp.default/model.pt2";

ir::Program load(const char* rel) {
  auto p = compiler::load_program(std::string(SPLICE_SOURCE_DIR) + rel);
  EXPECT_TRUE(p.ok()) << p.error().message();
  return std::move(*p);
}

// The program parsed back from its text with `from` replaced by `to` (once), weights kept:
// the way to change one node argument without touching anything else.
ir::Program edited(const ir::Program& program, const std::string& from, const std::string& to) {
  std::string text = ir::print_program(program);
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  auto p = ir::parse_program(text);
  EXPECT_TRUE(p.ok()) << p.error().message();
  p->weights = program.weights;
  return std::move(*p);
}

// The plan splice makes (an engine only loads with the plan splice makes for its program).
Plan simple_plan(const ir::Program& program, PlanMode mode) {
  return build_plan(program, mode, cpu_target());
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
};

TEST_F(CacheTest, KeyIsStableForTheSameModel) {
  const std::string a = cache_key(load(kKvCache), PlanMode::kPlanned, cpu_target());
  const std::string b = cache_key(load(kKvCache), PlanMode::kPlanned, cpu_target());
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.size(), 32u);
  EXPECT_EQ(a.find_first_not_of("0123456789abcdef"), std::string::npos) << a;
  // Reprinting and reparsing (weights kept) is the same program.
  ir::Program p = load(kKvCache);
  EXPECT_EQ(cache_key(edited(p, "graph", "graph"), PlanMode::kPlanned, cpu_target()), a);
}

TEST_F(CacheTest, KeyChangesWithANodeArgument) {
  ir::Program p = load(kRotary);
  const std::string base = cache_key(p, PlanMode::kPlanned, cpu_target());
  // The slice end of the first half: 8 → 7.
  ir::Program q =
      edited(p, "aten.slice.Tensor(%x, 3, 0, 8, 1)", "aten.slice.Tensor(%x, 3, 0, 7, 1)");
  EXPECT_NE(cache_key(q, PlanMode::kPlanned, cpu_target()), base);
  ir::Program r = edited(p, "alpha=1)\n  %slice_scatter:", "alpha=2)\n  %slice_scatter:");
  EXPECT_NE(cache_key(r, PlanMode::kPlanned, cpu_target()), base);
}

TEST_F(CacheTest, KeyChangesWithAWeightByte) {
  ir::Program p = load(kKvCache);
  const std::string base = cache_key(p, PlanMode::kPlanned, cpu_target());
  Tensor copy = p.weights.at("cache").contiguous_copy().value();
  p.weights["cache"] = copy;
  EXPECT_EQ(cache_key(p, PlanMode::kPlanned, cpu_target()), base)
      << "same bytes elsewhere, same key";
  copy.raw_data()[copy.nbytes() - 1] ^= std::byte{1};
  EXPECT_NE(cache_key(p, PlanMode::kPlanned, cpu_target()), base);
}

TEST_F(CacheTest, KeyChangesWithTheMode) {
  ir::Program p = load(kRotary);
  EXPECT_NE(cache_key(p, PlanMode::kPlanned, cpu_target()),
            cache_key(p, PlanMode::kNaive, cpu_target()));
}

TEST_F(CacheTest, KeyChangesWithARangeOrHint) {
  ir::Program p = load(kDynamic);
  ASSERT_TRUE(p.ranges.count("s77"));
  const std::string base = cache_key(p, PlanMode::kPlanned, cpu_target());
  p.ranges["s77"].max = 17;
  const std::string wider = cache_key(p, PlanMode::kPlanned, cpu_target());
  EXPECT_NE(wider, base);
  p.hints["s77"] = 4;
  EXPECT_NE(cache_key(p, PlanMode::kPlanned, cpu_target()), wider);
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

TEST_F(CacheTest, MissThenHit) {
  ir::Program p = load(kKvCache);
  int builds = 0;
  auto build = [&](const ir::Program& prog) -> Result<Plan> {
    ++builds;
    return simple_plan(prog, PlanMode::kPlanned);
  };
  bool hit = true;
  auto first = load_or_build(cache_dir(), p, PlanMode::kPlanned, cpu_target(), build, &hit);
  ASSERT_TRUE(first.ok()) << first.error().message();
  EXPECT_FALSE(hit);
  EXPECT_EQ(builds, 1);
  auto second = load_or_build(cache_dir(), p, PlanMode::kPlanned, cpu_target(), build, &hit);
  ASSERT_TRUE(second.ok()) << second.error().message();
  EXPECT_TRUE(hit);
  EXPECT_EQ(builds, 1);

  // A hit gives what the build made, the same as the miss returned.
  EXPECT_EQ(second->plan, simple_plan(p, PlanMode::kPlanned));
  EXPECT_EQ(second->plan, first->plan);
  EXPECT_EQ(ir::print_program(second->program), ir::print_program(p));
  EXPECT_EQ(ir::print_program(first->program), ir::print_program(p));
  // The miss also returns weights mapped from the written entry, not the .pt2's.
  EXPECT_FALSE(first->program.weights.at("cache").storage()->writable());
  EXPECT_NE(first->program.weights.at("cache").raw_data(), p.weights.at("cache").raw_data());

  // Exactly one entry, named by the key: no temporary file left behind.
  EXPECT_EQ(cache_files(),
            std::vector<std::string>{cache_key(p, PlanMode::kPlanned, cpu_target()) + ".splice"});

  // Another mode is another entry.
  auto naive = load_or_build(
      cache_dir(), p, PlanMode::kNaive, cpu_target(),
      [&](const ir::Program& prog) -> Result<Plan> {
        ++builds;
        return simple_plan(prog, PlanMode::kNaive);
      },
      &hit);
  ASSERT_TRUE(naive.ok()) << naive.error().message();
  EXPECT_FALSE(hit);
  EXPECT_EQ(naive->plan.mode, PlanMode::kNaive);
  EXPECT_EQ(cache_files().size(), 2u);
}

TEST_F(CacheTest, CorruptEntryIsRebuilt) {
  ir::Program p = load(kRotary);
  int builds = 0;
  auto build = [&](const ir::Program& prog) -> Result<Plan> {
    ++builds;
    return simple_plan(prog, PlanMode::kPlanned);
  };
  ASSERT_TRUE(load_or_build(cache_dir(), p, PlanMode::kPlanned, cpu_target(), build).ok());
  const std::string entry = (fs::path(cache_dir()) / cache_files().at(0)).string();

  for (const std::string& junk : {std::string("not an engine"), std::string()}) {
    write("junk", junk);
    fs::copy_file(dir_ / "junk", entry, fs::copy_options::overwrite_existing);
    bool hit = true;
    auto r = load_or_build(cache_dir(), p, PlanMode::kPlanned, cpu_target(), build, &hit);
    ASSERT_TRUE(r.ok()) << r.error().message();
    EXPECT_FALSE(hit);
    EXPECT_EQ(r->plan, simple_plan(p, PlanMode::kPlanned)) << "the fresh build's plan";
    EXPECT_TRUE(load_engine_file(entry, cpu_target()).ok()) << "the entry was overwritten";
  }
  EXPECT_EQ(builds, 3);
  EXPECT_EQ(cache_files().size(), 1u);
}

// The entry's name is only a claim: what it holds must give that key.
TEST_F(CacheTest, AnotherProgramsEngineUnderTheKeyIsRebuilt) {
  ir::Program p = load(kRotary), q = load(kKvCache);
  int builds = 0;
  auto build = [&](const ir::Program& prog) -> Result<Plan> {
    ++builds;
    return simple_plan(prog, PlanMode::kPlanned);
  };
  ASSERT_TRUE(load_or_build(cache_dir(), p, PlanMode::kPlanned, cpu_target(), build).ok());
  ASSERT_TRUE(load_or_build(cache_dir(), q, PlanMode::kPlanned, cpu_target(), build).ok());
  const fs::path p_entry =
      fs::path(cache_dir()) / (cache_key(p, PlanMode::kPlanned, cpu_target()) + ".splice");
  const fs::path q_entry =
      fs::path(cache_dir()) / (cache_key(q, PlanMode::kPlanned, cpu_target()) + ".splice");
  // A valid engine of another program copied under p's key.
  fs::copy_file(q_entry, p_entry, fs::copy_options::overwrite_existing);
  bool hit = true;
  auto r = load_or_build(cache_dir(), p, PlanMode::kPlanned, cpu_target(), build, &hit);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_FALSE(hit) << "the entry holds another program";
  EXPECT_EQ(builds, 3);
  EXPECT_EQ(ir::print_program(r->program), ir::print_program(p));
  auto entry = load_engine_file(p_entry.string(), cpu_target());
  ASSERT_TRUE(entry.ok()) << entry.error().message();
  EXPECT_EQ(cache_key(entry->program, entry->plan.mode, cpu_target()),
            cache_key(p, PlanMode::kPlanned, cpu_target()))
      << "the entry was rebuilt";
  // And the rebuilt entry is a hit again.
  ASSERT_TRUE(load_or_build(cache_dir(), p, PlanMode::kPlanned, cpu_target(), build, &hit).ok());
  EXPECT_TRUE(hit);
  EXPECT_EQ(builds, 3);
}

TEST_F(CacheTest, AnEngineOfOtherWeightsUnderTheKeyIsRebuilt) {
  ir::Program p = load(kKvCache);
  ir::Program q = load(kKvCache);
  Tensor other = q.weights.at("cache").contiguous_copy().value();
  other.data<float>()[0] += 1.0f;
  q.weights["cache"] = other;
  auto build = [&](const ir::Program& prog) -> Result<Plan> {
    return simple_plan(prog, PlanMode::kPlanned);
  };
  ASSERT_TRUE(load_or_build(cache_dir(), q, PlanMode::kPlanned, cpu_target(), build).ok());
  const fs::path p_entry =
      fs::path(cache_dir()) / (cache_key(p, PlanMode::kPlanned, cpu_target()) + ".splice");
  const fs::path q_entry =
      fs::path(cache_dir()) / (cache_key(q, PlanMode::kPlanned, cpu_target()) + ".splice");
  fs::copy_file(q_entry, p_entry);
  bool hit = true;
  auto r = load_or_build(cache_dir(), p, PlanMode::kPlanned, cpu_target(), build, &hit);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_FALSE(hit) << "the entry holds other weights";
  const Tensor& got = r->program.weights.at("cache");
  const Tensor& want = p.weights.at("cache");
  ASSERT_EQ(got.nbytes(), want.nbytes());
  EXPECT_EQ(std::memcmp(got.raw_data(), want.raw_data(), want.nbytes()), 0);
}

// A temporary of a writer that died mid-write: here a real cache write, of an engine large
// enough to take a while, in a child process killed by SIGKILL as soon as its temporary shows.
TEST_F(CacheTest, AKilledWritersTemporaryIsRemovedWhenTheCacheOpens) {
  GTEST_FLAG_SET(death_test_style, "fast");
  ir::Program big = load(kKvCache);
  big.weights["cache"] = Tensor::empty(DType::kFloat32, {16 << 20}).value();  // 64 MB
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
    (void)load_or_build(dir, big, PlanMode::kPlanned, cpu_target(),
                        [](const ir::Program& prog) -> Result<Plan> {
                          return simple_plan(prog, PlanMode::kPlanned);
                        });
    std::_Exit(0);  // the write finished before the killer saw it: the test below says so
  };
  fs::create_directories(dir);
  EXPECT_EXIT(killed_while_writing(), ::testing::KilledBySignal(SIGKILL), "");
  std::vector<std::string> left = cache_files();
  ASSERT_EQ(left.size(), 1u) << "the killed writer leaves one temporary";
  EXPECT_NE(left[0].find(".splice.tmp."), std::string::npos) << left[0];

  ir::Program p = load(kKvCache);
  auto r = load_or_build(dir, p, PlanMode::kPlanned, cpu_target(),
                         [](const ir::Program& prog) -> Result<Plan> {
                           return simple_plan(prog, PlanMode::kPlanned);
                         });
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(cache_files(),
            std::vector<std::string>{cache_key(p, PlanMode::kPlanned, cpu_target()) + ".splice"});
}

TEST_F(CacheTest, AnUnlockedTemporaryOfAnOlderSpliceIsRemoved) {
  // The name splice 0.6.0 gave its temporaries; it never locked them, so none is live.
  fs::create_directories(cache_dir());
  const std::string leftover = "0123456789abcdef0123456789abcdef.splice.tmp.Xy12Zq";
  write("cache/" + leftover, std::string(1 << 20, 'x'));
  ir::Program p = load(kRotary);
  ASSERT_TRUE(
      load_or_build(cache_dir(), p, PlanMode::kPlanned, cpu_target(), [](const ir::Program& prog) {
        return Result<Plan>(simple_plan(prog, PlanMode::kPlanned));
      }).ok());
  EXPECT_EQ(cache_files(),
            std::vector<std::string>{cache_key(p, PlanMode::kPlanned, cpu_target()) + ".splice"});
}

TEST_F(CacheTest, ALiveWritersTemporaryIsKept) {
  fs::create_directories(cache_dir());
  auto writing = PendingFile::create(cache_dir() + "/other.splice");
  ASSERT_TRUE(writing.ok()) << writing.error().message();
  ir::Program p = load(kRotary);
  ASSERT_TRUE(
      load_or_build(cache_dir(), p, PlanMode::kPlanned, cpu_target(), [](const ir::Program& prog) {
        return Result<Plan>(simple_plan(prog, PlanMode::kPlanned));
      }).ok());
  EXPECT_TRUE(fs::exists(writing->temp_path())) << "another process is still writing it";
}

TEST_F(CacheTest, AFifoAtTheEntrysNameIsAnErrorNotAHang) {
  ir::Program p = load(kRotary);
  fs::create_directories(cache_dir());
  const std::string entry =
      cache_dir() + "/" + cache_key(p, PlanMode::kPlanned, cpu_target()) + ".splice";
  ASSERT_EQ(::mkfifo(entry.c_str(), 0600), 0);
  auto r = load_or_build(
      cache_dir(), p, PlanMode::kPlanned, cpu_target(),
      [](const ir::Program& prog) { return Result<Plan>(simple_plan(prog, PlanMode::kPlanned)); });
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind(), ErrorKind::kIo);
  EXPECT_EQ(r.error().message(),
            "cannot write '" + entry + "': it is a FIFO; splice only replaces regular files");
  EXPECT_EQ(fs::status(entry).type(), fs::file_type::fifo);
}

TEST_F(CacheTest, EightConcurrentBuildersLeaveOneWholeEntry) {
  ir::Program p = load(kKvCache);
  std::vector<std::string> errors(8);
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i)
    threads.emplace_back([&, i] {
      auto r = load_or_build(cache_dir(), p, PlanMode::kPlanned, cpu_target(),
                             [](const ir::Program& prog) {
                               return Result<Plan>(simple_plan(prog, PlanMode::kPlanned));
                             });
      if (!r.ok()) errors[i] = r.error().message();
    });
  for (auto& t : threads) t.join();
  for (const auto& e : errors) EXPECT_EQ(e, "");
  EXPECT_EQ(cache_files(),
            std::vector<std::string>{cache_key(p, PlanMode::kPlanned, cpu_target()) + ".splice"});
  bool hit = false;
  ASSERT_TRUE(load_or_build(
                  cache_dir(), p, PlanMode::kPlanned, cpu_target(),
                  [](const ir::Program& prog) {
                    return Result<Plan>(simple_plan(prog, PlanMode::kPlanned));
                  },
                  &hit)
                  .ok());
  EXPECT_TRUE(hit);
}

TEST_F(CacheTest, BuildErrorsPassThroughAndLeaveNoEntry) {
  ir::Program p = load(kRotary);
  auto r = load_or_build(cache_dir(), p, PlanMode::kPlanned, cpu_target(),
                         [](const ir::Program&) -> Result<Plan> {
                           return make_error(ErrorKind::kUnsupportedOp, "cannot plan op X");
                         });
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind(), ErrorKind::kUnsupportedOp);
  EXPECT_TRUE(cache_files().empty());
}

TEST_F(CacheTest, UncreatableFolderIsAnIoError) {
  const std::string file = write("file", "x");
  auto r = load_or_build(file + "/cache", load(kRotary), PlanMode::kPlanned, cpu_target(),
                         [](const ir::Program& prog) -> Result<Plan> {
                           return simple_plan(prog, PlanMode::kPlanned);
                         });
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind(), ErrorKind::kIo);
  EXPECT_NE(r.error().message().find(file + "/cache"), std::string::npos) << r.error().message();
}

}  // namespace
}  // namespace splice::plan
