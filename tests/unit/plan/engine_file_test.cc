// Tests for engine files and the plan's JSON form: round trips of real programs (text IR,
// weights in place and aligned, ranges and hints, plan), tied and non-contiguous weights, every
// kind of corruption refused as kBadArchive with its message, and plan checks against the graph.
#include "plan/engine_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "compiler/driver.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "plan/build.h"
#include "plan/plan_json.h"
#include "tests/test_backends.h"
#include "tests/unit/temp_dir_test_base.h"

namespace splice::plan {

using splice::testing::cpu_target;
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kRotary = "/tests/cases/rotary_halves_into_empty_like.default/model.pt2";
constexpr const char* kKvCache = "/tests/cases/kv_cache_reads_old_state.default/model.pt2";
constexpr const char* kTied = "/tests/cases/tied_weights.default/model.pt2";
constexpr const char* kDynamic = "/tests/cases/dyn_batch_mlp.default/model.pt2";

ir::Program load(const char* rel) {
  auto p = compiler::load_program(std::string(SPLICE_SOURCE_DIR) + rel);
  EXPECT_TRUE(p.ok()) << p.error().message();
  return std::move(*p);
}

// A plan that exercises every field: one kNode step per node (a base copy before the last),
// a producer_writes decision with a rejection, a symbolic and a constant buffer, and both
// placement kinds. It need not be a good plan, only a valid one.
Plan sample_plan(const ir::Program& program) {
  const ir::Graph& g = program.graph;
  Plan plan;
  plan.backend = "cpu";
  const int32_t n = static_cast<int32_t>(g.nodes().size());
  std::vector<std::string> tensors;
  SymExpr scale = 1;
  for (const auto& v : g.values()) {
    if (v->is_tensor()) tensors.push_back(v->name());
    if (v->is_tensor())
      for (const SymExpr& d : v->type().sizes)
        if (!d.is_constant()) scale = d;
  }
  plan.writes.push_back(WriteDecision{n - 1,
                                      WriteStrategy::kReuseBase,
                                      SrcMode::kProducerWrites,
                                      {{"in_place_state", "the base is not \"state\""}},
                                      0,
                                      tensors.front(),
                                      128});
  plan.buffers.push_back(Buffer{scale * 64 + 4, true});
  plan.buffers.push_back(Buffer{256, false});
  plan.placements.push_back(Placement{tensors.back(), PlacementKind::kBuffer, 1, -1});
  plan.placements.push_back(Placement{tensors.front(), PlacementKind::kRegion, -1, 0});
  for (int32_t i = 0; i < n; ++i) {
    if (i == n - 1) plan.steps.push_back(Step{StepKind::kBaseCopy, 0});
    plan.steps.push_back(Step{StepKind::kNode, i});
  }
  plan.totals = Totals{n, 128, 4096};
  return plan;
}

// The plan splice makes: the only plan an engine may hold.
Plan real_plan(const ir::Program& program) {
  return build_plan(program, PlanMode::kPlanned, cpu_target());
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

uint64_t get_u64(const std::string& s, size_t at) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= uint64_t{static_cast<uint8_t>(s[at + i])} << (8 * i);
  return v;
}
void put_u64(std::string& s, size_t at, uint64_t v) {
  for (int i = 0; i < 8; ++i) s[at + i] = static_cast<char>(v >> (8 * i));
}
// Recomputes the checksum, so a test can reach the checks behind it.
void reseal(std::string& s) { put_u64(s, 32, XXH3_64bits(s.data() + 40, s.size() - 40)); }

class EngineFileTest : public splice::testing::TempDirTest {
 protected:
  // Writes the engine of `program`, loads it back and checks that everything survived.
  LoadedEngine round_trip(const ir::Program& program, const Plan& plan) {
    const std::string path = (dir_ / "model.splice").string();
    auto written = write_engine_file(program, plan, path);
    EXPECT_TRUE(written.ok()) << written.error().message();
    auto bytes = serialize_engine(program, plan);
    EXPECT_TRUE(bytes.ok());
    EXPECT_EQ(*bytes, read_file(path)) << "serialize_engine and write_engine_file differ";
    auto loaded = load_engine_file(path, cpu_target());
    EXPECT_TRUE(loaded.ok()) << loaded.error().message();
    if (!loaded.ok()) return {};
    EXPECT_EQ(ir::print_program(loaded->program), ir::print_program(program));
    EXPECT_EQ(loaded->program.ranges.size(), program.ranges.size());
    EXPECT_EQ(loaded->program.hints, program.hints);
    EXPECT_EQ(loaded->plan, plan);
    EXPECT_EQ(loaded->program.weights.size(), program.weights.size());
    for (const auto& [name, t] : program.weights) {
      auto it = loaded->program.weights.find(name);
      EXPECT_NE(it, loaded->program.weights.end()) << name;
      if (it == loaded->program.weights.end()) continue;
      const Tensor& l = it->second;
      EXPECT_EQ(l.dtype(), t.dtype()) << name;
      EXPECT_EQ(l.sizes(), t.sizes()) << name;
      EXPECT_TRUE(l.is_contiguous()) << name;
      EXPECT_FALSE(l.storage()->writable()) << name;
      // The map is page-aligned, so an aligned address is an aligned file offset.
      EXPECT_EQ(reinterpret_cast<uintptr_t>(l.raw_data()) % 64, 0u) << name;
      Tensor c = t.contiguous_copy().value();
      EXPECT_EQ(l.nbytes(), c.nbytes()) << name;
      if (l.nbytes() != c.nbytes()) continue;
      EXPECT_EQ(std::memcmp(l.raw_data(), c.raw_data(), c.nbytes()), 0) << name;
    }
    return std::move(*loaded);
  }

  // Writes `bytes` as a file and expects load_engine_file to refuse it with `needle`.
  void expect_refused(const std::string& bytes, const std::string& needle,
                      const std::string& what) {
    const std::string path = write("bad.splice", bytes);
    auto loaded = load_engine_file(path, cpu_target());
    ASSERT_FALSE(loaded.ok()) << what;
    EXPECT_EQ(loaded.error().kind(), ErrorKind::kBadArchive) << what;
    EXPECT_EQ(loaded.error().exit_code(), 2);
    EXPECT_NE(loaded.error().message().find(path), std::string::npos)
        << what << ": " << loaded.error().message();
    EXPECT_NE(loaded.error().message().find(needle), std::string::npos)
        << what << ": " << loaded.error().message();
  }
};

TEST_F(EngineFileTest, RoundTripsProgramsPlansAndWeights) {
  for (const char* c : {kRotary, kKvCache, kTied, kDynamic}) {
    SCOPED_TRACE(c);
    ir::Program program = load(c);
    round_trip(program, real_plan(program));
  }
}

TEST_F(EngineFileTest, KeepsRangesAndHints) {
  ir::Program program = load(kDynamic);
  ASSERT_FALSE(program.ranges.empty());
  ASSERT_FALSE(program.hints.empty());
  LoadedEngine e = round_trip(program, real_plan(program));
  for (const auto& [name, range] : program.ranges) {
    ASSERT_TRUE(e.program.ranges.count(name)) << name;
    EXPECT_EQ(e.program.ranges.at(name).min, range.min);
    EXPECT_EQ(e.program.ranges.at(name).max, range.max);
  }
  // The sample plan's first buffer is symbolic in this program.
  EXPECT_FALSE(e.plan.buffers[0].bytes.is_constant());
}

// The program's shape checks travel in the program section; a file whose program lost them
// (written without, or edited) still gets the ones its types leave undecided when it is loaded.
TEST_F(EngineFileTest, ShapeChecksRoundTripAndAreRecomputed) {
  ir::Program program = load(kDynamic);
  program.shape_checks.push_back(
      {SymExpr::make(SymOp::kLe, {SymExpr::symbol(program.ranges.begin()->first), SymExpr(1000)}),
       "a recorded check"});
  LoadedEngine e = round_trip(program, real_plan(program));
  ASSERT_EQ(e.program.shape_checks.size(), 1u);
  EXPECT_EQ(e.program.shape_checks[0].message, "a recorded check");

  auto parsed = ir::parse_program(R"(symbols {
  s0: [2, 64]
  s1: [2, 64]
}
signature {
  input %x: user_input
  output 0: user_output
}
graph(%x: f32[s0, 4]) {
  %neg: f32[s1, 4] = aten.neg.default(%x)
  return (%neg)
}
)");
  ASSERT_TRUE(parsed.ok()) << parsed.error().message();
  ASSERT_TRUE(parsed->shape_checks.empty());
  const std::string path = (dir_ / "lost.splice").string();
  ASSERT_TRUE(write_engine_file(*parsed, real_plan(*parsed), path).ok());
  auto loaded = load_engine_file(path, cpu_target());
  ASSERT_TRUE(loaded.ok()) << loaded.error().message();
  ASSERT_EQ(loaded->program.shape_checks.size(), 1u);
  EXPECT_EQ(loaded->program.shape_checks[0].condition.to_string(), "s0 == s1");
}

TEST_F(EngineFileTest, WeightsAreAlignedInTheFile) {
  ir::Program program = load(kKvCache);
  auto bytes = serialize_engine(program, real_plan(program));
  ASSERT_TRUE(bytes.ok());
  const uint64_t data_offset = get_u64(*bytes, 40 + 16 * 3);
  EXPECT_EQ(data_offset % 64, 0u);
  const std::string table_text = bytes->substr(get_u64(*bytes, 40 + 32), get_u64(*bytes, 48 + 32));
  const json table = json::parse(table_text);
  ASSERT_EQ(table.size(), 1u);
  EXPECT_EQ(table[0]["name"], "cache");
  EXPECT_EQ(table[0]["dtype"], "f32");
  EXPECT_EQ(table[0]["shape"], json({1, 2, 8, 4}));
  const uint64_t offset = table[0]["offset"];
  EXPECT_EQ((data_offset + offset) % 64, 0u);
  const Tensor& w = program.weights.at("cache");
  EXPECT_EQ(bytes->compare(data_offset + offset, w.nbytes(),
                           reinterpret_cast<const char*>(w.raw_data()), w.nbytes()),
            0);
}

TEST_F(EngineFileTest, TiedWeightsAreStoredOnceAndShareStorage) {
  ir::Program program = load(kTied);
  ASSERT_EQ(program.weights.at("emb.weight").storage(), program.weights.at("out.weight").storage());
  auto bytes = serialize_engine(program, real_plan(program));
  ASSERT_TRUE(bytes.ok());
  EXPECT_EQ(get_u64(*bytes, 48 + 48), 10u * 4 * 4) << "one copy of the 160 weight bytes";
  LoadedEngine e = round_trip(program, real_plan(program));
  EXPECT_EQ(e.program.weights.at("emb.weight").storage(),
            e.program.weights.at("out.weight").storage());
}

TEST_F(EngineFileTest, UntiedWeightsWithEqualShapesStayApart) {
  ir::Program program = load(kTied);
  program.weights["out.weight"] = program.weights.at("emb.weight").contiguous_copy().value();
  LoadedEngine e = round_trip(program, real_plan(program));
  EXPECT_NE(e.program.weights.at("emb.weight").storage(),
            e.program.weights.at("out.weight").storage());
}

TEST_F(EngineFileTest, NonContiguousWeightIsStoredContiguous) {
  ir::Program program = load(kTied);
  // A column-major [10, 4] view: element (i, j) at i + 10 * j.
  auto storage = Storage::allocate(40 * sizeof(float)).value();
  auto* f = reinterpret_cast<float*>(storage->data());
  for (int i = 0; i < 40; ++i) f[i] = static_cast<float>(i) * 0.5f;
  program.weights["out.weight"] = Tensor(DType::kFloat32, {10, 4}, {1, 10}, 0, storage);
  ASSERT_FALSE(program.weights["out.weight"].is_contiguous());
  LoadedEngine e = round_trip(program, real_plan(program));
  const Tensor& w = e.program.weights.at("out.weight");
  EXPECT_EQ(w.data<float>()[1 * 4 + 2], f[1 + 10 * 2]);
}

TEST_F(EngineFileTest, TruncatedFilesAreRefused) {
  ir::Program program = load(kKvCache);
  auto bytes = serialize_engine(program, real_plan(program));
  ASSERT_TRUE(bytes.ok());
  for (size_t len : {size_t{0}, size_t{5}, size_t{8}, size_t{31}, size_t{32}, size_t{119}}) {
    expect_refused(bytes->substr(0, len), "truncated", fmt::format("length {}", len));
  }
  for (size_t len : {size_t{120}, size_t{200}, bytes->size() / 2, bytes->size() - 1}) {
    expect_refused(bytes->substr(0, len),
                   fmt::format("truncated or corrupt: the file has {} bytes", len),
                   fmt::format("length {}", len));
  }
}

TEST_F(EngineFileTest, AFlippedByteInAnySectionFailsTheChecksum) {
  ir::Program program = load(kKvCache);
  auto bytes = serialize_engine(program, real_plan(program));
  ASSERT_TRUE(bytes.ok());
  std::vector<size_t> where = {44, 110};  // the section table and the reserved bytes
  for (size_t s = 0; s < 4; ++s) {
    const uint64_t offset = get_u64(*bytes, 40 + 16 * s);
    const uint64_t size = get_u64(*bytes, 48 + 16 * s);
    ASSERT_GT(size, 0u) << "section " << s;
    where.push_back(offset + size / 2);
  }
  for (size_t at : where) {
    std::string bad = *bytes;
    bad[at] = static_cast<char>(bad[at] ^ 0x20);
    expect_refused(bad, "checksum mismatch", fmt::format("byte {}", at));
  }
  std::string bad = *bytes;
  bad[33] ^= 1;  // the checksum itself
  expect_refused(bad, "checksum mismatch", "checksum byte");
}

// A cache entry records its key after the last section (plan/cache.h); the checksum covers it,
// and `splice compile`'s files have none.
TEST_F(EngineFileTest, ACacheKeyTrailerIsReadBackAndChecksummed) {
  ir::Program program = load(kKvCache);
  const Plan plan = real_plan(program);
  const std::string key = "0123456789abcdef0123456789abcdef";
  const std::string path = (dir_ / "entry.splice").string();
  ASSERT_TRUE(write_engine_file(program, plan, path, key).ok());
  const std::string bytes = read_file(path);
  auto compiled = serialize_engine(program, plan);
  ASSERT_TRUE(compiled.ok());
  ASSERT_EQ(bytes.size(), compiled->size() + 40);
  EXPECT_EQ(bytes.substr(compiled->size()), std::string("SPLCKEY\0", 8) + key);
  auto loaded = load_engine_file(path, cpu_target());
  ASSERT_TRUE(loaded.ok()) << loaded.error().message();
  EXPECT_EQ(loaded->cache_key, key);
  EXPECT_EQ(loaded->plan, plan);

  std::string bad = bytes;
  bad[bad.size() - 1] = 'e';  // another key, same length
  expect_refused(bad, "checksum mismatch", "a key byte");
  write("compiled.splice", *compiled);
  auto plain = load_engine_file((dir_ / "compiled.splice").string(), cpu_target());
  ASSERT_TRUE(plain.ok()) << plain.error().message();
  EXPECT_EQ(plain->cache_key, "");

  for (const std::string& wrong : {std::string("not32"), std::string(32, 'g')}) {
    auto refused = write_engine_file(program, plan, path, wrong);
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.error().message(), "engine: cache key '" + wrong + "' is not 32 hex digits");
  }
}

TEST_F(EngineFileTest, ForeignAndOtherVersionFilesAreRefused) {
  ir::Program program = load(kRotary);
  auto bytes = serialize_engine(program, real_plan(program));
  ASSERT_TRUE(bytes.ok());

  std::string bad = *bytes;
  bad[3] = 'X';
  expect_refused(bad, "not a splice engine file", "magic");
  expect_refused("PK\x03\x04 a zip archive, not an engine", "not a splice engine file", "zip");

  bad = *bytes;
  bad[8] = 99;
  expect_refused(bad,
                 fmt::format("engine format 99), but this is splice {} (engine format {})",
                             kSpliceVersion, kPlanFormatVersion),
                 "format");
  expect_refused(bad, "recompile the model with `splice compile`", "format");

  bad = *bytes;
  std::memcpy(&bad[16], "0.5.0\0\0\0", 8);
  expect_refused(bad,
                 fmt::format("written by splice 0.5.0 (engine format {}), but this is splice {}",
                             kPlanFormatVersion, kSpliceVersion),
                 "version");
  expect_refused(bad, "splice compile", "version");
}

TEST_F(EngineFileTest, ChecksummedButInconsistentFilesAreRefused) {
  ir::Program program = load(kKvCache);
  auto bytes = serialize_engine(program, real_plan(program));
  ASSERT_TRUE(bytes.ok());
  const uint64_t plan_offset = get_u64(*bytes, 56);
  const uint64_t plan_size = get_u64(*bytes, 64);

  std::string bad = *bytes;
  put_u64(bad, 56, ~uint64_t{0} - 4);  // offset + size overflows
  reseal(bad);
  expect_refused(bad, "the plan section at offset", "overflowing section");

  bad = *bytes;
  put_u64(bad, 40, 16);  // the program section inside the header
  reseal(bad);
  expect_refused(bad, "the program section at offset 16", "section in header");

  bad = *bytes;
  put_u64(bad, 40 + 48, get_u64(bad, 40 + 48) + 8);  // weight data no longer aligned,
  put_u64(bad, 48 + 48, get_u64(bad, 48 + 48) - 8);  // though still inside the file
  reseal(bad);
  expect_refused(bad, "not 64-byte aligned", "unaligned data");

  bad = *bytes;
  bad[plan_offset] = '[';  // still checksummed, no longer the plan's JSON
  reseal(bad);
  expect_refused(bad, "engine plan:", "plan JSON");

  bad = *bytes;
  bad.replace(plan_offset, plan_size, std::string(plan_size, ' '));
  reseal(bad);
  expect_refused(bad, "engine plan: the plan section is not valid JSON", "blank plan");

  bad = *bytes;
  const uint64_t program_offset = get_u64(*bytes, 40);
  bad.replace(program_offset, 9, "%%%%%%%%%");
  reseal(bad);
  expect_refused(bad, "program section", "program text");

  bad = *bytes;
  const uint64_t table_offset = get_u64(*bytes, 72);
  const uint64_t table_size = get_u64(*bytes, 80);
  std::string table = bad.substr(table_offset, table_size);
  ASSERT_NE(table.find("\"f32\""), std::string::npos);
  table.replace(table.find("\"f32\""), 5, "\"i32\"");
  bad.replace(table_offset, table_size, table);
  reseal(bad);
  expect_refused(bad,
                 "weight 'cache' is i32[1, 2, 8, 4] in the weights table but the graph "
                 "expects f32[1, 2, 8, 4]",
                 "weight dtype");
}

TEST_F(EngineFileTest, IsEngineFile) {
  ir::Program program = load(kRotary);
  const std::string path = (dir_ / "m.splice").string();
  ASSERT_TRUE(write_engine_file(program, real_plan(program), path).ok());
  EXPECT_TRUE(is_engine_file(path));
  EXPECT_FALSE(is_engine_file(std::string(SPLICE_SOURCE_DIR) + kRotary));
  EXPECT_FALSE(is_engine_file((dir_ / "missing").string()));
  EXPECT_FALSE(is_engine_file(dir_.string()));
  EXPECT_FALSE(is_engine_file(write("short", "SPLC")));
}

TEST_F(EngineFileTest, WriteIsAtomicAndOverwrites) {
  ir::Program program = load(kRotary);
  const std::string path = (dir_ / "m.splice").string();
  write("m.splice", "an older, broken engine");
  ASSERT_TRUE(write_engine_file(program, real_plan(program), path).ok());
  const Plan naive = build_plan(program, PlanMode::kNaive, cpu_target());
  ASSERT_TRUE(write_engine_file(program, naive, path).ok());
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir_)) names.push_back(e.path().filename().string());
  EXPECT_EQ(names, std::vector<std::string>{"m.splice"}) << "no temporary file is left behind";
  auto loaded = load_engine_file(path, cpu_target());
  ASSERT_TRUE(loaded.ok()) << loaded.error().message();
  EXPECT_EQ(loaded->plan, naive);
  EXPECT_EQ(fs::status(path).permissions() & fs::perms::others_read, fs::perms::others_read);
}

TEST_F(EngineFileTest, AReplacedEngineKeepsItsPermissions) {
  ir::Program program = load(kRotary);
  const std::string path = write("m.splice", "an older engine");
  ASSERT_EQ(::chmod(path.c_str(), 0600), 0);
  ASSERT_TRUE(write_engine_file(program, real_plan(program), path).ok());
  EXPECT_EQ(fs::status(path).permissions(), fs::perms::owner_read | fs::perms::owner_write);
  EXPECT_TRUE(load_engine_file(path, cpu_target()).ok());
}

TEST_F(EngineFileTest, ANameAtTheSystemsLimitIsWritten) {
  ir::Program program = load(kRotary);
  const long name_max = ::pathconf(dir_.c_str(), _PC_NAME_MAX);
  ASSERT_GT(name_max, 20);
  const std::string path = (dir_ / (std::string(name_max - 7, 'e') + ".splice")).string();
  auto r = write_engine_file(program, real_plan(program), path);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_TRUE(load_engine_file(path, cpu_target()).ok());
}

TEST_F(EngineFileTest, OnlyARegularFileIsReplacedOrRead) {
  // A FIFO without a writer: writing refuses it (and leaves it), reading never blocks on it.
  ir::Program program = load(kRotary);
  const std::string fifo = (dir_ / "fifo.splice").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto r = write_engine_file(program, real_plan(program), fifo);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind(), ErrorKind::kIo);
  EXPECT_EQ(r.error().message(),
            "cannot write '" + fifo + "': it is a FIFO; splice only replaces regular files");
  EXPECT_EQ(fs::status(fifo).type(), fs::file_type::fifo);
  EXPECT_FALSE(is_engine_file(fifo));
  auto loaded = load_engine_file(fifo, cpu_target());
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.error().message(),
            "cannot read '" + fifo + "': it is a FIFO, not a regular file");
}

TEST_F(EngineFileTest, WriteIntoAMissingFolderIsAnIoError) {
  ir::Program program = load(kRotary);
  auto r = write_engine_file(program, real_plan(program), (dir_ / "no" / "m.splice").string());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind(), ErrorKind::kIo);
  EXPECT_NE(r.error().message().find("m.splice"), std::string::npos) << r.error().message();
}

TEST_F(EngineFileTest, MissingFileIsAnIoError) {
  auto r = load_engine_file((dir_ / "missing.splice").string(), cpu_target());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind(), ErrorKind::kIo);
}

// ---- plan_from_json: every check names its field ----

class PlanJsonTest : public ::testing::Test {
 protected:
  void SetUp() override {
    program_ = load(kDynamic);
    plan_ = sample_plan(program_);
    json_ = plan_to_json(plan_);
  }
  // Applies `edit` to a copy of the sample plan's JSON and expects `needle` in the error.
  template <typename Edit>
  void expect_refused(Edit edit, const std::string& needle) {
    json j = json_;
    edit(j);
    auto r = plan_from_json(j, program_.graph);
    ASSERT_FALSE(r.ok()) << needle;
    EXPECT_EQ(r.error().kind(), ErrorKind::kBadArchive);
    EXPECT_EQ(r.error().message().rfind("engine plan: ", 0), 0u) << r.error().message();
    EXPECT_NE(r.error().message().find(needle), std::string::npos) << r.error().message();
  }
  ir::Program program_;
  Plan plan_;
  json json_;
};

TEST_F(PlanJsonTest, RoundTrips) {
  auto r = plan_from_json(json_, program_.graph);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(*r, plan_);
  // Through text too, where nlohmann reads non-negative numbers back as unsigned.
  auto r2 = plan_from_json(json::parse(json_.dump()), program_.graph);
  ASSERT_TRUE(r2.ok()) << r2.error().message();
  EXPECT_EQ(*r2, plan_);
}

TEST_F(PlanJsonTest, RefusesWhatDoesNotFitTheGraph) {
  const size_t nodes = program_.graph.nodes().size();
  expect_refused([](json& j) { j = json::array(); }, "the plan is a JSON array, not an object");
  expect_refused([](json& j) { j["mode"] = "fast"; }, "plan.mode is 'fast'");
  expect_refused([](json& j) { j.erase("steps"); }, "plan.steps is missing");
  expect_refused([&](json& j) { j["writes"][0]["node"] = nodes; },
                 fmt::format("writes[0].node is {}, outside the {} graph nodes", nodes, nodes));
  expect_refused([](json& j) { j["writes"][0]["node"] = -1; }, "writes[0].node is -1");
  expect_refused([](json& j) { j["writes"][0]["node"] = "0"; },
                 "writes[0].node is a JSON string, not an integer");
  expect_refused([](json& j) { j["writes"][0]["node"] = 1e20; }, "not an integer");
  expect_refused([](json& j) { j["writes"][0]["node"] = ~uint64_t{0}; },
                 "does not fit a 64-bit integer");
  expect_refused([](json& j) { j["writes"].push_back(j["writes"][0]); }, "writes[1] decides node");
  expect_refused([](json& j) { j["writes"][0]["strategy"] = "teleport"; },
                 "writes[0].strategy is 'teleport'");
  expect_refused([](json& j) { j["writes"][0]["src"] = 3; }, "writes[0].src is a JSON number");
  expect_refused([](json& j) { j["writes"][0]["producer"] = -1; },
                 "writes[0] is producer_writes but names no producer");
  expect_refused([](json& j) { j["writes"][0]["dest_value"] = "nope"; },
                 "writes[0].dest_value 'nope' is not a tensor value");
  expect_refused([](json& j) { j["writes"][0]["rejected"][0].erase("reason"); },
                 "writes[0].rejected[0].reason is missing");
  expect_refused([](json& j) { j.erase("matmuls"); }, "plan.matmuls is missing");
  expect_refused(
      [&](json& j) {
        j["matmuls"].push_back({{"node", nodes}, {"kernel", "gemv"}, {"reason", "r"}});
      },
      fmt::format("matmuls[0].node is {}, outside the {} graph nodes", nodes, nodes));
  expect_refused(
      [&](json& j) {
        j["matmuls"].push_back({{"node", 0}, {"kernel", "gemv"}, {"reason", "r"}});
      },
      "matmuls[0].node 0 ('");
  expect_refused(
      [&](json& j) {
        j["matmuls"].push_back({{"node", 0}, {"reason", "r"}});
      },
      "matmuls[0].kernel is missing");
  expect_refused([](json& j) { j["buffers"][0]["bytes"] = "s0 +"; },
                 "buffers[0].bytes 's0 +' is not a size expression");
  expect_refused([](json& j) { j["buffers"][0]["bytes"] = "4*zz"; },
                 "uses symbol 'zz', which no value of the graph has");
  expect_refused([](json& j) { j["placements"][0]["value"] = "sym_size_int_1"; },
                 "placements[0].value 'sym_size_int_1' is not a tensor value");
  expect_refused([](json& j) { j["placements"][0]["buffer"] = 2; },
                 "placements[0].buffer is 2, outside the 2 buffers");
  expect_refused([](json& j) { j["placements"][1]["write"] = 1; },
                 "placements[1].write is 1, outside the 1 writes");
  expect_refused([](json& j) { j["placements"][1]["kind"] = "heap"; },
                 "placements[1].kind is 'heap'");
  expect_refused([](json& j) { j["placements"].push_back(j["placements"][0]); }, "places value");
  expect_refused([](json& j) { j["steps"].erase(0); }, "node 0 ('sym_size_int_1') has no step");
  expect_refused([](json& j) { j["steps"].push_back(j["steps"][0]); },
                 "runs node 0 ('sym_size_int_1') a second time");
  expect_refused(
      [](json& j) {
        j["steps"].push_back({{"kind", "base_copy"}, {"index", 1}});
      },
      "index is 1, outside the 1 writes");
  expect_refused([](json& j) { j["totals"]["peak_bytes"] = true; },
                 "totals.peak_bytes is a JSON boolean");
}

}  // namespace
}  // namespace splice::plan

namespace splice::plan {
namespace {

TEST_F(EngineFileTest, PointwiseGroupsRoundTripAndBadOnesAreRefused) {
  ir::Program program = load(kRotary);
  const Plan plan = real_plan(program);
  ASSERT_EQ(plan.groups.size(), 1u);  // the rotary chain
  const json good = plan_to_json(plan);
  auto back = plan_from_json(json::parse(good.dump()), program.graph);
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(*back, plan);
  auto refused = [&](auto edit, const std::string& needle) {
    json j = good;
    edit(j);
    auto r = plan_from_json(j, program.graph);
    ASSERT_FALSE(r.ok()) << needle;
    EXPECT_EQ(r.error().kind(), ErrorKind::kBadArchive);
    EXPECT_NE(r.error().message().find(needle), std::string::npos) << r.error().message();
  };
  const size_t nodes = program.graph.nodes().size();
  refused([](json& j) { j.erase("groups"); }, "plan.groups is missing");
  refused([&](json& j) { j["groups"][0]["nodes"][0] = nodes; },
          fmt::format("groups[0].nodes[0] is {}, outside the {} graph nodes", nodes, nodes));
  refused([](json& j) { j["groups"][0]["nodes"][1] = j["groups"][0]["nodes"][0]; },
          "groups[0].nodes[1] puts node");
  refused([](json& j) { std::swap(j["groups"][0]["nodes"][0], j["groups"][0]["nodes"][1]); },
          "members must be in program order");
  refused([](json& j) { j["groups"][0]["outputs"][0] = "nope"; },
          "groups[0].outputs[0] is not a value of the graph");
  refused([](json& j) { j["groups"][0]["outputs"] = json::array(); },
          "groups[0] has no members or no outputs");
  refused([](json& j) { j["groups"][0]["kind"] = "fused"; },
          "groups[0].kind is 'fused', which is not a known name");
  refused([](json& j) { j["fusion_notes"] = json::array({3}); }, "fusion_notes[0] is not a string");
  refused(
      [](json& j) {
        j["steps"].push_back({{"kind", "group"}, {"index", 0}});
      },
      "runs group 0 a second time");
  refused(
      [](json& j) {
        j["steps"].push_back({{"kind", "group"}, {"index", 1}});
      },
      "index is 1, outside the 1 groups");
  refused([](json& j) { j["totals"].erase("kernels"); }, "totals.kernels is missing");
  // A node both on its own and in the group.
  refused(
      [&](json& j) {
        j["steps"].push_back({{"kind", "node"}, {"index", j["groups"][0]["nodes"][0]}});
      },
      "a second time");
}

TEST_F(EngineFileTest, APlanOtherThanSplicesOwnIsRefused) {
  // A well-formed plan with a valid checksum that is not the plan splice makes (an edited
  // file) could name storage to write in place: the loader refuses it.
  ir::Program program = load(kRotary);
  const std::string path = (dir_ / "edited.splice").string();
  ASSERT_TRUE(write_engine_file(program, sample_plan(program), path).ok());
  auto r = load_engine_file(path, cpu_target());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind(), ErrorKind::kBadArchive);
  EXPECT_NE(r.error().message().find("is not the one splice"), std::string::npos)
      << r.error().message();
  EXPECT_NE(r.error().message().find("splice compile"), std::string::npos);
}

}  // namespace
}  // namespace splice::plan
