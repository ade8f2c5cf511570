// Which .item() symbols a recorded call may read on the device (runtime/device_positions.h):
// those that only say where a window of fixed size starts. Each program here differs from the
// first in one use of u0, and the reason a symbol is not a position names that use. The
// recorded cases with .item() positions are checked too, so the archive's form (exprs on every
// SymInt) is covered besides the text IR's.
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "compiler/driver.h"
#include "ir/parser.h"
#include "plan/build.h"
#include "runtime/device_positions.h"
#include "tests/test_backends.h"

namespace splice::runtime {
namespace {

namespace fs = std::filesystem;

DevicePositions positions_of(const ir::Program& program) {
  return find_device_positions(
      program, plan::build_plan(program, PlanMode::kPlanned, splice::testing::cpu_target()));
}

// The positions of a text-IR program, which stays alive with them (they point into it).
struct Parsed {
  std::unique_ptr<ir::Program> program;
  DevicePositions positions;
};
Parsed parsed(std::string_view text) {
  auto program = ir::parse_program(text);
  EXPECT_TRUE(program.ok()) << program.error().message();
  if (!program.ok()) return {};
  auto owned = std::make_unique<ir::Program>(std::move(*program));
  DevicePositions positions = positions_of(*owned);
  return {std::move(owned), std::move(positions)};
}

// The graph of a program over x f32[4, 8], s f32[4, 1] and pos i64[] with u0 in [0, 7]; `body`
// is its nodes after u0 is read and its return.
std::string program(std::string_view body, std::string_view range = "[0, 7]") {
  return fmt::format(R"(symbols {{
  u0: {}
}}
signature {{
  input %x: user_input
  input %s: user_input
  input %pos: user_input
  output 0: user_output
}}
graph(%x: f32[4, 8], %s: f32[4, 1], %pos: i64[]) {{
  %p: SymInt(u0) = aten._local_scalar_dense.default(%pos)
  %ge: SymBool = _operator.ge(%p, 0)
  aten._assert_scalar.default(%ge, "u0 >= 0")
  %end: SymInt = _operator.add(%p, 1)
{}
}}
)",
                     range, body);
}

constexpr std::string_view kWrite =
    R"(  %y: f32[4, 8] = aten.slice_scatter.default(%x, %s, 1, %p, %end, 1)
  return (%y))";

TEST(DevicePositions, ASliceWriteAtTheItemIsAPosition) {
  const Parsed parsed_program = parsed(program(kWrite));
  const DevicePositions& p = parsed_program.positions;
  ASSERT_EQ(p.symbols.size(), 1u) << p.not_positions;
  EXPECT_EQ(p.symbols[0].name, "u0");
  EXPECT_EQ(p.symbols[0].item_node, 0);
  EXPECT_EQ(p.symbols[0].source->name(), "pos");
  EXPECT_EQ(p.symbols[0].offsets, std::vector<int64_t>{0});
  ASSERT_EQ(p.nodes.size(), 1u);
  const PositionalNode& write = p.nodes.begin()->second;
  EXPECT_EQ(write.dim, 1);
  EXPECT_EQ(write.extent, 1);
  EXPECT_FALSE(write.select);
  EXPECT_TRUE(p.not_positions.empty()) << p.not_positions;
}

TEST(DevicePositions, ReadsAtOffsetsOfTheItemArePositionsEach) {
  // A select at u0 + 2 and a slice of two columns from u0 - 1 (u0 starts at 1 here, so that
  // start is never negative).
  const DevicePositions p = parsed(program(R"(  %i: SymInt = _operator.add(%p, 2)
  %col: f32[4] = aten.select.int(%x, 1, %i)
  %a: SymInt = _operator.sub(%p, 1)
  %b: SymInt = _operator.add(%p, 1)
  %two: f32[4, 2] = aten.slice.Tensor(%x, 1, %a, %b, 1)
  %sum: f32[4] = aten.sum.dim_IntList(%two, [1], False)
  %y: f32[4] = aten.add.Tensor(%col, %sum)
  return (%y))",
                                           "[1, 5]"))
                                .positions;
  ASSERT_EQ(p.symbols.size(), 1u) << p.not_positions;
  EXPECT_EQ(p.symbols[0].offsets, (std::vector<int64_t>{2, -1}));
  ASSERT_EQ(p.nodes.size(), 2u);
  int selects = 0;
  for (const auto& [node, window] : p.nodes) {
    selects += window.select;
    EXPECT_EQ(window.extent, window.select ? 1 : 2);
  }
  EXPECT_EQ(selects, 1);
}

TEST(DevicePositions, ANegativeStartIsNotAPosition) {
  // u0 - 1 is -1 at u0 = 0, which PyTorch wraps to the last column.
  const DevicePositions p = parsed(program(R"(  %a: SymInt = _operator.sub(%p, 1)
  %col: f32[4] = aten.select.int(%x, 1, %a)
  return (%col))"))
                                .positions;
  EXPECT_TRUE(p.symbols.empty());
  EXPECT_NE(p.not_positions.find("u0 is used by node 'col'"), std::string::npos) << p.not_positions;
}

TEST(DevicePositions, ASymbolThatSetsASizeIsNotAPosition) {
  const DevicePositions p =
      parsed(program(R"(  %head: f32[4, u0 + 1] = aten.slice.Tensor(%x, 1, 0, %end, 1)
  %y: f32[4] = aten.sum.dim_IntList(%head, [1], False)
  return (%y))"))
          .positions;
  EXPECT_TRUE(p.symbols.empty());
  EXPECT_NE(p.not_positions.find("u0 sets the size of head"), std::string::npos) << p.not_positions;
}

TEST(DevicePositions, ASymbolAKernelComputesWithIsNotAPosition) {
  const DevicePositions p = parsed(program(R"(  %y: f32[4, 8] = aten.add.Tensor(%x, %p)
  return (%y))"))
                                .positions;
  EXPECT_TRUE(p.symbols.empty());
  EXPECT_NE(p.not_positions.find("u0 is used by node 'y' (aten.add.Tensor)"), std::string::npos)
      << p.not_positions;
}

TEST(DevicePositions, AnAssertTheRangeDoesNotImplyIsNotAPosition) {
  // u0 <= 5 inside [0, 7]: the device checks only the range, so the assert must run on the
  // host and the symbol stays a key.
  const DevicePositions p = parsed(program(R"(  %le: SymBool = _operator.le(%p, 5)
  aten._assert_scalar.default(%le, "u0 <= 5")
  %y: f32[4, 8] = aten.slice_scatter.default(%x, %s, 1, %p, %end, 1)
  return (%y))"))
                                .positions;
  EXPECT_TRUE(p.symbols.empty());
  EXPECT_NE(p.not_positions.find("is checked by"), std::string::npos) << p.not_positions;
}

TEST(DevicePositions, AnUnboundedSymbolIsNotAPosition) {
  const DevicePositions p = parsed(program(kWrite, "[0, inf]")).positions;
  EXPECT_TRUE(p.symbols.empty());
  EXPECT_NE(p.not_positions.find("bounded range"), std::string::npos) << p.not_positions;
}

TEST(DevicePositions, ASymbolReturnedByTheProgramIsNotAPosition) {
  const DevicePositions p =
      parsed(program(R"(  %y: f32[4, 8] = aten.slice_scatter.default(%x, %s, 1, %p, %end, 1)
  return (%y, %end))"))
          .positions;
  EXPECT_TRUE(p.symbols.empty());
  EXPECT_NE(p.not_positions.find("is an output"), std::string::npos) << p.not_positions;
}

// The recorded cases: KV caches written at pos.item() (a position), and one whose attention
// mask compares pos.item() with an arange (a kernel computes with it: not a position).
TEST(DevicePositions, RecordedCases) {
  const fs::path cases = fs::path(SPLICE_SOURCE_DIR) / "tests/cases";
  for (const std::string name : {"kv_cache_item_slice.default", "kv_cache_item_slice.train",
                                 "w_kv_item_slice_3_7_0_bf16.default"}) {
    SCOPED_TRACE(name);
    auto program = compiler::load_program((cases / name / "model.pt2").string());
    ASSERT_TRUE(program.ok()) << program.error().message();
    const DevicePositions p = positions_of(*program);
    ASSERT_EQ(p.symbols.size(), 1u) << p.not_positions;
    EXPECT_FALSE(p.nodes.empty());
  }
  auto program =
      compiler::load_program((cases / "f_kv_slice_item_sdpa_mask.default/model.pt2").string());
  ASSERT_TRUE(program.ok()) << program.error().message();
  const DevicePositions p = positions_of(*program);
  EXPECT_TRUE(p.symbols.empty());
  EXPECT_NE(p.not_positions.find("u0 is used by node 'le_1' (aten.le.Scalar)"), std::string::npos)
      << p.not_positions;
}

}  // namespace
}  // namespace splice::runtime
