// Advanced indexing: index_put (wrap, accumulate, masks, errors), index.Tensor layouts and
// index_copy.
#include <gtest/gtest.h>

#include "cpu_test_util.h"

namespace splice::cpu {
namespace {

using namespace testing;

using OptTensors = std::vector<std::optional<Tensor>>;

TEST(IndexPut, NegativeIndicesWrap) {
  Tensor x = Tensor::empty(DType::kFloat32, {2, 4}).value();
  Tensor idx = make(DType::kInt64, {2}, {-1, 0});
  Tensor v = make(DType::kFloat32, {2, 2}, {1, 2, 3, 4});
  Tensor r = call1("aten.index_put.default", {x, OptTensors{std::nullopt, idx}, v, false});
  EXPECT_EQ(values(r), (std::vector<double>{2, 0, 0, 1, 4, 0, 0, 3}));
  // Values broadcast to the indexed shape.
  Tensor one = make(DType::kFloat32, {1}, {5});
  Tensor r2 = call1("aten.index_put.default", {x, OptTensors{idx}, one, false});
  EXPECT_EQ(values(r2), (std::vector<double>{5, 5, 5, 5, 5, 5, 5, 5}));
}

TEST(IndexPut, AccumulateWithDuplicates) {
  Tensor x = make(DType::kInt32, {3}, {1, 1, 1});
  Tensor idx = make(DType::kInt64, {4}, {0, 2, 0, -3});
  Tensor v = make(DType::kInt32, {4}, {10, 20, 30, 40});
  Tensor r = call1("aten.index_put.default", {x, OptTensors{idx}, v, true});
  EXPECT_EQ(values(r), (std::vector<double>{81, 1, 21}));
}

TEST(IndexPut, BoolMask) {
  Tensor x = make(DType::kFloat32, {2, 2}, {1, -2, -3, 4});
  Tensor mask = make(DType::kBool, {2, 2}, {0, 1, 1, 0});
  Tensor zero = make(DType::kFloat32, {}, {0});
  Tensor r = call1("aten.index_put.default", {x, OptTensors{mask}, zero, false});
  EXPECT_EQ(values(r), (std::vector<double>{1, 0, 0, 4}));
  // Reading with the mask gives the selected elements in row-major order.
  Tensor sel = call1("aten.index.Tensor", {x, OptTensors{mask}});
  EXPECT_EQ(values(sel), (std::vector<double>{-2, -3}));
}

TEST(IndexPut, Errors) {
  Tensor x = Tensor::empty(DType::kFloat32, {2, 4}).value();
  Tensor idx = make(DType::kInt64, {1}, {4});
  Tensor v = make(DType::kFloat32, {2, 1}, {1, 2});
  Error e = call_error("aten.index_put.default", {x, OptTensors{std::nullopt, idx}, v, false});
  EXPECT_EQ(e.kind(), ErrorKind::kOutOfRange);
  EXPECT_EQ(e.message(), "aten.index_put.default: index 4 is out of range for dim 1 of size 4");
  Tensor ok_idx = make(DType::kInt64, {1}, {3});
  Tensor wrong_dtype = make(DType::kFloat64, {2, 1}, {1, 2});
  EXPECT_EQ(call_error("aten.index_put.default",
                       {x, OptTensors{std::nullopt, ok_idx}, wrong_dtype, false})
                .kind(),
            ErrorKind::kShapeMismatch);
  // A one-element value of another dtype is cast.
  Tensor scalar = make(DType::kFloat64, {}, {2.5});
  Tensor r = call1("aten.index_put.default", {x, OptTensors{std::nullopt, ok_idx}, scalar, false});
  EXPECT_EQ(values(r), (std::vector<double>{0, 0, 0, 2.5, 0, 0, 0, 2.5}));
}

TEST(Index, AdjacentAndSeparatedIndices) {
  std::vector<double> v(24);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(i);
  Tensor x = make(DType::kInt64, {2, 3, 4}, v);
  Tensor i0 = make(DType::kInt64, {2}, {0, 1});
  Tensor i2 = make(DType::kInt32, {2}, {3, -4});
  // Separated indices (dims 0 and 2): the broadcast dim goes first → [2, 3].
  Tensor a = call1("aten.index.Tensor", {x, OptTensors{i0, std::nullopt, i2}});
  EXPECT_EQ(a.sizes(), (Shape{2, 3}));
  EXPECT_EQ(values(a), (std::vector<double>{3, 7, 11, 12, 16, 20}));
  // Adjacent indices (dims 1 and 2) stay in place → [2, 2].
  Tensor i1 = make(DType::kInt64, {2}, {2, 0});
  Tensor b = call1("aten.index.Tensor", {x, OptTensors{std::nullopt, i1, i2}});
  EXPECT_EQ(b.sizes(), (Shape{2, 2}));
  EXPECT_EQ(values(b), (std::vector<double>{11, 0, 23, 12}));
  // A 2-D index on dim 1 → [2, 2, 1, 4].
  Tensor i2d = make(DType::kInt64, {2, 1}, {1, 2});
  EXPECT_EQ(call1("aten.index.Tensor", {x, OptTensors{std::nullopt, i2d}}).sizes(),
            (Shape{2, 2, 1, 4}));
}

TEST(IndexCopy, CopiesRowsAndChecksRange) {
  Tensor x = Tensor::empty(DType::kFloat32, {2, 4}).value();
  Tensor idx = make(DType::kInt64, {2}, {3, 1});
  Tensor src = make(DType::kFloat32, {2, 2}, {1, 2, 3, 4});
  Tensor r = call1("aten.index_copy.default", {x, i64(1), idx, src});
  EXPECT_EQ(values(r), (std::vector<double>{0, 2, 0, 1, 0, 4, 0, 3}));
  Tensor bad = make(DType::kInt64, {2}, {3, 4});
  EXPECT_EQ(call_error("aten.index_copy.default", {x, i64(1), bad, src}).kind(),
            ErrorKind::kOutOfRange);
  Tensor neg = make(DType::kInt64, {2}, {3, -1});
  EXPECT_EQ(call_error("aten.index_copy.default", {x, i64(1), neg, src}).kind(),
            ErrorKind::kOutOfRange);
}

}  // namespace
}  // namespace splice::cpu
