// The loader on real archives exported by PyTorch, read through the compiler driver: tied
// weights share one storage, weights are read-only views of the archive, and buffers and
// symbols come through.
#include "compiler/driver.h"

#include <gtest/gtest.h>

#include <string>

namespace splice::pt2 {
namespace {

std::string case_model(const std::string& name) {
  return std::string(SPLICE_SOURCE_DIR) + "/tests/cases/" + name + "/model.pt2";
}

TEST(Loader, TiedWeightsShareOneStorage) {
  auto program = compiler::load_program(case_model("tied_weights.default"));
  ASSERT_TRUE(program.ok()) << program.error().message();
  const auto& w = program->weights;
  ASSERT_TRUE(w.count("emb.weight"));
  // The archive names both parameters with one payload; export may lift either or both.
  if (w.count("out.weight")) {
    EXPECT_EQ(w.at("emb.weight").storage(), w.at("out.weight").storage());
  }
  const Tensor& t = w.at("emb.weight");
  EXPECT_EQ(t.sizes(), (Shape{10, 4}));
  EXPECT_FALSE(t.storage()->writable()) << "weights are read-only views of the archive";
}

TEST(Loader, WeightsOfAnAlignedArchiveAreViewsOfTheFile) {
  // torch.export.save aligns stored entries to 64 bytes, so weights are used in place; the
  // weights concat_sibling_matmuls joins (q/k/v, gate/up) are new memory, as read-only.
  auto program = compiler::load_program(case_model("llama_block_2layer.default"));
  ASSERT_TRUE(program.ok()) << program.error().message();
  ASSERT_FALSE(program->weights.empty());
  for (const auto& [name, t] : program->weights) {
    EXPECT_FALSE(t.storage()->writable()) << name;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(t.storage()->data()) % 64, 0u) << name;
  }
}

TEST(Loader, BuffersAndSymbolsComeThrough) {
  auto program = compiler::load_program(case_model("kv_cache_item_slice.default"));
  ASSERT_TRUE(program.ok()) << program.error().message();
  EXPECT_TRUE(program->weights.count("k_cache"));
  ASSERT_TRUE(program->ranges.count("u0"));
  EXPECT_EQ(program->ranges.at("u0").min, 0);
  EXPECT_EQ(program->ranges.at("u0").max, 7);
}

TEST(Loader, MissingFileIsAnIoError) {
  auto program = compiler::load_program("/nonexistent/model.pt2");
  ASSERT_FALSE(program.ok());
  EXPECT_EQ(program.error().exit_code(), 2);
  EXPECT_NE(program.error().message().find("/nonexistent/model.pt2"), std::string::npos);
}

}  // namespace
}  // namespace splice::pt2
