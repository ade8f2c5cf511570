// index_select, gather, embedding, scatter (src/value, duplicates) and index_add (alpha,
// duplicates, per-add rounding), each with its out-of-range error.
#include <gtest/gtest.h>

#include "cpu_test_util.h"

namespace splice::cpu {
namespace {

using namespace testing;

void expect_message(const Error& e, ErrorKind kind, const std::string& part) {
  EXPECT_EQ(e.kind(), kind);
  EXPECT_NE(e.message().find(part), std::string::npos) << e.message();
}

TEST(IndexSelect, DimsDtypesAndErrors) {
  Tensor x = make(DType::kFloat32, {2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor i = make(DType::kInt64, {3}, {1, 1, 0});
  Tensor r = call1("aten.index_select.default", {x, i64(0), i});
  EXPECT_EQ(r.sizes(), (Shape{3, 3}));
  EXPECT_EQ(values(r), (std::vector<double>{4, 5, 6, 4, 5, 6, 1, 2, 3}));
  Tensor j = make(DType::kInt32, {2}, {2, 0});
  Tensor b = make(DType::kBool, {2, 3}, {1, 0, 0, 0, 1, 1});
  Tensor rb = call1("aten.index_select.default", {b, i64(-1), j});
  EXPECT_EQ(rb.dtype(), DType::kBool);
  EXPECT_EQ(values(rb), (std::vector<double>{0, 1, 1, 0}));
  Tensor s = make(DType::kInt8, {}, {-7});
  Tensor rs = call1("aten.index_select.default", {s, i64(0), make(DType::kInt64, {1}, {0})});
  EXPECT_EQ(rs.sizes(), Shape{});
  EXPECT_EQ(values(rs), (std::vector<double>{-7}));
  // Negative indices do not wrap.
  expect_message(
      call_error("aten.index_select.default", {x, i64(1), make(DType::kInt64, {1}, {-1})}),
      ErrorKind::kOutOfRange, "index -1 is out of range for dim 1 of size 3");
  expect_message(
      call_error("aten.index_select.default", {x, i64(0), make(DType::kInt64, {1}, {2})}),
      ErrorKind::kOutOfRange, "aten.index_select.default");
  EXPECT_EQ(
      call_error("aten.index_select.default", {x, i64(0), make(DType::kFloat32, {1}, {0})}).kind(),
      ErrorKind::kBadInput);
}

TEST(Gather, PicksAlongDim) {
  Tensor x = make(DType::kFloat16, {2, 2}, {1, 2, 3, 4});
  Tensor i = make(DType::kInt64, {2, 2}, {0, 0, 1, 0});
  Tensor r = call1("aten.gather.default", {x, i64(1), i, false});
  EXPECT_EQ(r.dtype(), DType::kFloat16);
  EXPECT_EQ(values(r), (std::vector<double>{1, 1, 4, 3}));
  // Index smaller than self on the other dim; gather along dim 0.
  Tensor i0 = make(DType::kInt64, {1, 2}, {1, 0});
  Tensor r0 = call1("aten.gather.default", {x, i64(0), i0, false});
  EXPECT_EQ(r0.sizes(), (Shape{1, 2}));
  EXPECT_EQ(values(r0), (std::vector<double>{3, 2}));
  expect_message(
      call_error("aten.gather.default", {x, i64(1), make(DType::kInt64, {1, 1}, {2}), false}),
      ErrorKind::kOutOfRange, "index 2 is out of range for dim 1 of size 2");
  expect_message(
      call_error("aten.gather.default", {x, i64(1), make(DType::kInt64, {1, 1}, {-1}), false}),
      ErrorKind::kOutOfRange, "index -1");
  EXPECT_EQ(call_error("aten.gather.default", {x, i64(1), make(DType::kInt32, {1, 1}, {0}), false})
                .kind(),
            ErrorKind::kBadInput);
  EXPECT_EQ(call_error("aten.gather.default", {x, i64(1), make(DType::kInt64, {2}, {0, 0}), false})
                .kind(),
            ErrorKind::kShapeMismatch);
}

TEST(Embedding, RowsForEachIndex) {
  Tensor w = make(DType::kBFloat16, {3, 2}, {0, 1, 2, 3, 4, 5});
  Tensor idx = make(DType::kInt64, {2, 2}, {2, 0, 1, 1});
  Tensor r = call1("aten.embedding.default", {w, idx, i64(-1), false, false});
  EXPECT_EQ(r.sizes(), (Shape{2, 2, 2}));
  EXPECT_EQ(r.dtype(), DType::kBFloat16);
  EXPECT_EQ(values(r), (std::vector<double>{4, 5, 0, 1, 2, 3, 2, 3}));
  Tensor i32 = make(DType::kInt32, {}, {1});
  Tensor r0 = call1("aten.embedding.default", {w, i32, i64(-1), false, false});
  EXPECT_EQ(r0.sizes(), (Shape{2}));
  EXPECT_EQ(values(r0), (std::vector<double>{2, 3}));
  expect_message(call_error("aten.embedding.default",
                            {w, make(DType::kInt64, {1}, {3}), i64(-1), false, false}),
                 ErrorKind::kOutOfRange, "index 3 is out of range for dim 0 of size 3");
  expect_message(call_error("aten.embedding.default",
                            {w, make(DType::kInt64, {1}, {-1}), i64(-1), false, false}),
                 ErrorKind::kOutOfRange, "index -1");
}

// A contiguous weight takes its rows by block copies; a transposed or offset view of the same
// values walks them element by element. Both give the same rows.
TEST(Embedding, ContiguousAndStridedWeightsGiveTheSameRows) {
  Tensor idx = make(DType::kInt64, {2, 3}, {3, 0, 3, 1, 2, 0});
  const std::vector<double> want = {9, 10, 11, 0, 1, 2, 9, 10, 11, 3, 4, 5, 6, 7, 8, 0, 1, 2};
  Tensor w = make(DType::kFloat32, {4, 3}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  EXPECT_EQ(values(call1("aten.embedding.default", {w, idx, i64(-1), false, false})), want);
  // The same values stored transposed, and after one leading element of padding.
  Tensor wt = make(DType::kFloat32, {3, 4}, {0, 3, 6, 9, 1, 4, 7, 10, 2, 5, 8, 11});
  EXPECT_EQ(values(call1("aten.embedding.default",
                         {wt.view_as({4, 3}, {1, 4}, 0), idx, i64(-1), false, false})),
            want);
  Tensor padded = make(DType::kFloat32, {13}, {-1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  EXPECT_EQ(values(call1("aten.embedding.default",
                         {padded.view_as({4, 3}, {3, 1}, 1), idx, i64(-1), false, false})),
            want);
}

TEST(Scatter, SrcValueAndDuplicates) {
  Tensor x = Tensor::empty(DType::kFloat32, {2, 3}).value();
  Tensor i = make(DType::kInt64, {2, 2}, {0, 1, 2, 0});
  Tensor src = make(DType::kFloat32, {2, 2}, {1, 2, 3, 4});
  EXPECT_EQ(values(call1("aten.scatter.src", {x, i64(1), i, src})),
            (std::vector<double>{1, 2, 0, 4, 0, 3}));
  // Duplicates: the last write in index order wins.
  Tensor y = make(DType::kInt64, {3}, {9, 9, 9});
  Tensor d = make(DType::kInt64, {3}, {0, 0, 2});
  Tensor s2 = make(DType::kInt64, {4}, {5, 6, 7, 8});  // src may be larger than index
  EXPECT_EQ(values(call1("aten.scatter.src", {y, i64(0), d, s2})), (std::vector<double>{6, 9, 7}));
  // scatter.value converts the scalar to self's dtype (2.7 → 2 for int32).
  Tensor z = make(DType::kInt32, {2, 2}, {1, 1, 1, 1});
  Tensor iz = make(DType::kInt64, {2, 1}, {1, 0});
  EXPECT_EQ(values(call1("aten.scatter.value", {z, i64(1), iz, f64(2.7)})),
            (std::vector<double>{1, 2, 2, 1}));
  Tensor bz = make(DType::kBool, {2}, {0, 0});
  EXPECT_EQ(values(call1("aten.scatter.value", {bz, i64(0), make(DType::kInt64, {1}, {1}), true})),
            (std::vector<double>{0, 1}));
  expect_message(call_error("aten.scatter.src", {x, i64(0), make(DType::kInt64, {1, 1}, {2}),
                                                 make(DType::kFloat32, {1, 1}, {1})}),
                 ErrorKind::kOutOfRange, "index 2 is out of range for dim 0 of size 2");
  expect_message(
      call_error("aten.scatter.value", {x, i64(1), make(DType::kInt64, {1, 1}, {-1}), f64(1)}),
      ErrorKind::kOutOfRange, "index -1 is out of range for dim 1 of size 3");
  EXPECT_EQ(
      call_error("aten.scatter.src", {x, i64(1), i, make(DType::kFloat64, {2, 2}, {1, 2, 3, 4})})
          .kind(),
      ErrorKind::kShapeMismatch);
  // Index larger than src.
  EXPECT_EQ(
      call_error("aten.scatter.src", {x, i64(1), i, make(DType::kFloat32, {1, 2}, {1, 2})}).kind(),
      ErrorKind::kShapeMismatch);
}

TEST(IndexAdd, AlphaDuplicatesAndRounding) {
  Tensor x = make(DType::kFloat32, {3, 2}, {1, 1, 1, 1, 1, 1});
  Tensor i = make(DType::kInt64, {3}, {0, 2, 0});
  Tensor src = make(DType::kFloat32, {3, 2}, {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(values(call1("aten.index_add.default", {x, i64(0), i, src, i64(2)})),
            (std::vector<double>{13, 17, 1, 1, 7, 9}));
  // Along dim 1 with int32 indices and int64 values.
  Tensor xi = make(DType::kInt64, {2, 2}, {0, 0, 0, 0});
  Tensor ii = make(DType::kInt32, {1}, {1});
  Tensor si = make(DType::kInt64, {2, 1}, {3, 4});
  EXPECT_EQ(values(call1("aten.index_add.default", {xi, i64(1), ii, si, i64(-1)})),
            (std::vector<double>{0, -3, 0, -4}));
  // bf16 rounds after each addition: 256 + 1 → 256 (ties to even), twice.
  Tensor b = make(DType::kBFloat16, {1}, {256});
  Tensor bi = make(DType::kInt64, {2}, {0, 0});
  Tensor bs = make(DType::kBFloat16, {2}, {1, 1});
  EXPECT_EQ(values(call1("aten.index_add.default", {b, i64(0), bi, bs, i64(1)})),
            (std::vector<double>{256}));
  expect_message(
      call_error("aten.index_add.default", {x, i64(0), make(DType::kInt64, {1}, {3}),
                                            make(DType::kFloat32, {1, 2}, {1, 1}), i64(1)}),
      ErrorKind::kOutOfRange, "index 3 is out of range for dim 0 of size 3");
  EXPECT_EQ(call_error("aten.index_add.default", {xi, i64(1), ii, si, f64(0.5)}).kind(),
            ErrorKind::kBadInput);
  EXPECT_EQ(call_error("aten.index_add.default",
                       {x, i64(0), i, make(DType::kFloat32, {2, 2}, {1, 1, 1, 1}), i64(1)})
                .kind(),
            ErrorKind::kShapeMismatch);
}

}  // namespace
}  // namespace splice::cpu
