// matmul over every rank combination (dot, mv, vm, mm, folded, broadcast batches), and linear
// with and without bias (float, transposed-weight BLAS path, integer and half rounding).
#include <gtest/gtest.h>

#include "cpu_test_util.h"

namespace splice::cpu {
namespace {

using namespace testing;

Tensor f32(const Shape& s, const std::vector<double>& v) { return make(DType::kFloat32, s, v); }

TEST(Matmul, VectorAndMatrixRanks) {
  // 1-D · 1-D: a dot product with a 0-d result.
  Tensor d = call1("aten.matmul.default", {f32({3}, {1, 2, 3}), f32({3}, {4, 5, 6})});
  EXPECT_EQ(d.sizes(), Shape{});
  EXPECT_EQ(values(d), (std::vector<double>{32}));
  Tensor m = f32({2, 2}, {1, 2, 3, 4});
  // 2-D · 1-D (mv) and 1-D · 2-D (vm): the vector's unit dim is dropped.
  Tensor mv = call1("aten.matmul.default", {m, f32({2}, {5, 6})});
  EXPECT_EQ(mv.sizes(), (Shape{2}));
  EXPECT_EQ(values(mv), (std::vector<double>{17, 39}));
  Tensor vm = call1("aten.matmul.default", {f32({2}, {5, 6}), m});
  EXPECT_EQ(vm.sizes(), (Shape{2}));
  EXPECT_EQ(values(vm), (std::vector<double>{23, 34}));
  Tensor mm = call1("aten.matmul.default", {m, f32({2, 2}, {5, 6, 7, 8})});
  EXPECT_EQ(values(mm), (std::vector<double>{19, 22, 43, 50}));
}

TEST(Matmul, BatchedRanks) {
  Tensor a = f32({2, 1, 2}, {1, 2, 3, 4});
  // 3-D · 2-D folds the batch into rows.
  Tensor r = call1("aten.matmul.default", {a, f32({2, 2}, {5, 6, 7, 8})});
  EXPECT_EQ(r.sizes(), (Shape{2, 1, 2}));
  EXPECT_EQ(values(r), (std::vector<double>{19, 22, 43, 50}));
  // 3-D · 1-D.
  Tensor r2 = call1("aten.matmul.default", {a, f32({2}, {1, 1})});
  EXPECT_EQ(r2.sizes(), (Shape{2, 1}));
  EXPECT_EQ(values(r2), (std::vector<double>{3, 7}));
  // 1-D · 3-D: the vector is a row broadcast over the batch.
  Tensor b = f32({2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  Tensor r3 = call1("aten.matmul.default", {f32({2}, {1, 1}), b});
  EXPECT_EQ(r3.sizes(), (Shape{2, 2}));
  EXPECT_EQ(values(r3), (std::vector<double>{4, 6, 12, 14}));
  // 2-D · 3-D.
  Tensor r4 = call1("aten.matmul.default", {f32({1, 2}, {1, 2}), f32({2, 2, 1}, {1, 0, 0, 1})});
  EXPECT_EQ(r4.sizes(), (Shape{2, 1, 1}));
  EXPECT_EQ(values(r4), (std::vector<double>{1, 2}));
  // Batch dims broadcast: [2,1] with [3] → [2,3].
  Tensor x = f32({2, 1, 1, 2}, {1, 2, 3, 4});
  Tensor y = f32({3, 2, 1}, {1, 0, 0, 1, 1, 1});
  Tensor r5 = call1("aten.matmul.default", {x, y});
  EXPECT_EQ(r5.sizes(), (Shape{2, 3, 1, 1}));
  EXPECT_EQ(values(r5), (std::vector<double>{1, 2, 3, 3, 4, 7}));
  // A strided (transposed) left operand.
  Tensor at = call1("aten.t.default", {f32({2, 2}, {1, 3, 2, 4})});
  EXPECT_EQ(values(call1("aten.matmul.default", {at, f32({2, 2}, {5, 6, 7, 8})})),
            (std::vector<double>{19, 22, 43, 50}));
  // Integers.
  Tensor i = make(DType::kInt64, {2, 2}, {1, 2, 3, 4});
  Tensor iv = make(DType::kInt64, {2}, {-1, 1});
  Tensor ir = call1("aten.matmul.default", {i, iv});
  EXPECT_EQ(ir.dtype(), DType::kInt64);
  EXPECT_EQ(values(ir), (std::vector<double>{1, 1}));
}

// Strided float operands go to BLAS where they lie (no contiguous copy): k transposed as in
// attention (bmm, and 4-D matmul whose batch dims are views), a left operand that is a slice of
// wider rows, and a transposed left operand. An operand with no unit stride is copied once,
// and still multiplies right.
// Empty operands, as torch 2.11 gives them: bmm([2,0,3], [2,3,4]) is [2,0,4]; an empty inner
// dim k sums nothing, so bmm([2,3,0], [2,0,4]) is zeros([2,3,4]) (float and integer alike).
TEST(Matmul, EmptyDims) {
  for (DType dt : {DType::kFloat32, DType::kInt32}) {
    Tensor rows = call1("aten.bmm.default",
                        {make(dt, {2, 0, 3}, {}), make(dt, {2, 3, 4}, std::vector<double>(24, 1))});
    EXPECT_EQ(rows.sizes(), (Shape{2, 0, 4}));
    Tensor inner = call1("aten.bmm.default", {make(dt, {2, 3, 0}, {}), make(dt, {2, 0, 4}, {})});
    EXPECT_EQ(inner.sizes(), (Shape{2, 3, 4}));
    EXPECT_EQ(values(inner), std::vector<double>(24, 0));
  }
}

TEST(Matmul, StridedFloatOperandsGoToBlasUncopied) {
  const Tensor q = f32({2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  const Tensor k = f32({2, 3, 2}, {1, 0, 0, 1, 1, 1, 2, 0, 0, 2, 1, -1});
  const Tensor kt = call1("aten.transpose.int", {k, i64(1), i64(2)});  // [2, 2, 3], strided
  ASSERT_FALSE(kt.is_contiguous());
  const std::vector<double> qk = {1, 2, 3, 3, 4, 7, 10, 12, -1, 14, 16, -1};
  int64_t before = matmul_operand_copies();
  EXPECT_EQ(values(call1("aten.bmm.default", {q, kt})), qk);
  const Tensor q4 = call1("aten.unsqueeze.default", {q, i64(0)});
  const Tensor kt4 = call1("aten.unsqueeze.default", {kt, i64(0)});
  const Tensor r4 = call1("aten.matmul.default", {q4, kt4});
  EXPECT_EQ(r4.sizes(), (Shape{1, 2, 2, 3}));
  EXPECT_EQ(values(r4), qk);
  // Rows of 4 of which the product reads 2 (leading dimension 4), and a transposed left operand.
  const Tensor wide = f32({2, 4}, {1, 2, 9, 9, 3, 4, 9, 9});
  const Tensor sliced = call1("aten.slice.Tensor", {wide, i64(1), i64(0), i64(2), i64(1)});
  const Tensor right = f32({2, 2}, {5, 6, 7, 8});
  EXPECT_EQ(values(call1("aten.mm.default", {sliced, right})),
            (std::vector<double>{19, 22, 43, 50}));
  const Tensor at = call1("aten.t.default", {f32({2, 2}, {1, 3, 2, 4})});
  EXPECT_EQ(values(call1("aten.matmul.default", {at, right})),
            (std::vector<double>{19, 22, 43, 50}));
  EXPECT_EQ(matmul_operand_copies(), before);
  // Every other column: no unit stride, so BLAS needs a copy.
  const Tensor strided = call1("aten.slice.Tensor", {wide, i64(1), i64(0), i64(4), i64(2)});
  EXPECT_EQ(values(call1("aten.mm.default", {strided, right})),
            (std::vector<double>{68, 78, 78, 90}));
  EXPECT_EQ(matmul_operand_copies(), before + 1);
}

TEST(Matmul, Errors) {
  Error e = call_error("aten.matmul.default", {f32({2, 3}, {1, 2, 3, 4, 5, 6}), f32({2}, {1, 2})});
  EXPECT_EQ(e.kind(), ErrorKind::kShapeMismatch);
  EXPECT_NE(e.message().find("cannot be multiplied"), std::string::npos) << e.message();
  EXPECT_EQ(call_error("aten.matmul.default", {f32({}, {1}), f32({1}, {1})}).kind(),
            ErrorKind::kShapeMismatch);
  // Batch dims that do not broadcast.
  EXPECT_EQ(
      call_error("aten.matmul.default", {f32({2, 1, 1}, {1, 2}), f32({3, 1, 1}, {1, 2, 3})}).kind(),
      ErrorKind::kShapeMismatch);
}

TEST(Linear, WithAndWithoutBias) {
  Tensor x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor w = f32({2, 3}, {1, 0, 1, 0, 1, 0});
  Tensor b = f32({2}, {0.5, -1});
  EXPECT_EQ(values(call1("aten.linear.default", {x, w, none()})),
            (std::vector<double>{4, 2, 10, 5}));
  EXPECT_EQ(values(call1("aten.linear.default", {x, w, b})),
            (std::vector<double>{4.5, 1, 10.5, 4}));
  // 3-D and 1-D inputs.
  Tensor x3 = f32({1, 2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor r3 = call1("aten.linear.default", {x3, w, b});
  EXPECT_EQ(r3.sizes(), (Shape{1, 2, 2}));
  EXPECT_EQ(values(r3), (std::vector<double>{4.5, 1, 10.5, 4}));
  Tensor r1 = call1("aten.linear.default", {f32({3}, {1, 2, 3}), w, b});
  EXPECT_EQ(r1.sizes(), (Shape{2}));
  EXPECT_EQ(values(r1), (std::vector<double>{4.5, 1}));
  // float64 and int64.
  Tensor xd = make(DType::kFloat64, {1, 2}, {2, 3});
  Tensor wd = make(DType::kFloat64, {2, 2}, {1, 2, 3, 4});
  EXPECT_EQ(values(call1("aten.linear.default", {xd, wd, none()})), (std::vector<double>{8, 18}));
  Tensor xi = make(DType::kInt64, {1, 2}, {2, 3});
  Tensor wi = make(DType::kInt64, {2, 2}, {1, 2, 3, 4});
  Tensor bi = make(DType::kInt64, {2}, {1, 1});
  EXPECT_EQ(values(call1("aten.linear.default", {xi, wi, bi})), (std::vector<double>{9, 19}));
}

TEST(Linear, HalfRoundsOnceAfterBias) {
  // 1 + 2048 = 2049 in float; + bias 1 = 2050, exact in half. Rounding the product to half
  // first would give 2048 (ties to even) and then 2048 again.
  for (DType dt : {DType::kFloat16}) {
    Tensor x = make(dt, {1, 2}, {1, 2048});
    Tensor w = make(dt, {1, 2}, {1, 1});
    Tensor b = make(dt, {1}, {1});
    Tensor r = call1("aten.linear.default", {x, w, b});
    EXPECT_EQ(r.dtype(), dt);
    EXPECT_EQ(values(r), (std::vector<double>{2050}));
  }
  Tensor xb = make(DType::kBFloat16, {1, 2}, {1.5, 2});
  Tensor wb = make(DType::kBFloat16, {1, 2}, {2, 0.25});
  EXPECT_EQ(values(call1("aten.linear.default", {xb, wb, none()})), (std::vector<double>{3.5}));
  Error e = call_error("aten.linear.default", {xb, make(DType::kFloat32, {1, 2}, {1, 1}), none()});
  EXPECT_EQ(e.kind(), ErrorKind::kShapeMismatch);
  EXPECT_NE(e.message().find("aten.linear.default"), std::string::npos);
}

}  // namespace
}  // namespace splice::cpu
