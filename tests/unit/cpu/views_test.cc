// View kernels: shapes, strides, shared storage and bounds errors.
#include <gtest/gtest.h>

#include <limits>

#include "cpu_test_util.h"

namespace splice::cpu {
namespace {

using namespace testing;

Tensor iota(DType dtype, const Shape& sizes) {
  std::vector<double> v(shape_numel(sizes));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(i);
  return make(dtype, sizes, v);
}

TEST(Views, ViewReshapePermute) {
  Tensor x = iota(DType::kFloat32, {2, 3});
  Tensor v = call1("aten.view.default", {x, ints({3, -1})});
  EXPECT_EQ(v.sizes(), (Shape{3, 2}));
  EXPECT_EQ(v.storage(), x.storage());
  Tensor t = call1("aten.permute.default", {x, ints({1, 0})});
  EXPECT_EQ(values(t), (std::vector<double>{0, 3, 1, 4, 2, 5}));
  // A transposed tensor cannot be flattened by a view; reshape, view and _unsafe_view all copy
  // (a graph's view may rely on a layout PyTorch's kernels produced and splice's did not).
  for (const char* target :
       {"aten.reshape.default", "aten.view.default", "aten._unsafe_view.default"}) {
    Tensor r = call1(target, {t, ints({6})});
    EXPECT_EQ(values(r), (std::vector<double>{0, 3, 1, 4, 2, 5})) << target;
    EXPECT_NE(r.storage(), x.storage()) << target;
    EXPECT_TRUE(r.is_contiguous()) << target;
  }
  Tensor d = call1("aten.detach.default", {x});
  EXPECT_EQ(d.storage(), x.storage());
  EXPECT_EQ(call_error("aten.view.default", {x, ints({4, 2})}).kind(), ErrorKind::kShapeMismatch);
  Tensor tt = call1("aten.t.default", {x});
  EXPECT_EQ(tt.sizes(), (Shape{3, 2}));
  EXPECT_EQ(values(call1("aten.transpose.int", {x, i64(-1), i64(0)})), values(tt));
}

TEST(Views, SliceBoundsAndSelect) {
  Tensor x = iota(DType::kInt64, {2, 5});
  const int64_t kMax = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(values(call1("aten.slice.Tensor", {x, i64(1), i64(-2), i64(kMax), i64(1)})),
            (std::vector<double>{3, 4, 8, 9}));
  EXPECT_EQ(values(call1("aten.slice.Tensor", {x, i64(1), i64(1), none(), i64(2)})),
            (std::vector<double>{1, 3, 6, 8}));
  EXPECT_EQ(call1("aten.slice.Tensor", {x, i64(1), i64(4), i64(2), i64(1)}).sizes(), (Shape{2, 0}));
  EXPECT_EQ(values(call1("aten.select.int", {x, i64(1), i64(-1)})), (std::vector<double>{4, 9}));
  Error e = call_error("aten.select.int", {x, i64(1), i64(5)});
  EXPECT_EQ(e.kind(), ErrorKind::kOutOfRange);
  EXPECT_EQ(e.message(), "aten.select.int: index 5 is out of range for dim 1 of size 5");
  EXPECT_EQ(call_error("aten.select.int", {x, i64(2), i64(0)}).kind(), ErrorKind::kOutOfRange);
}

TEST(Views, UnsqueezeSqueezeExpand) {
  Tensor x = iota(DType::kFloat32, {3});
  Tensor u = call1("aten.unsqueeze.default", {x, i64(0)});
  EXPECT_EQ(u.sizes(), (Shape{1, 3}));
  Tensor e = call1("aten.expand.default", {u, ints({2, -1})});
  EXPECT_EQ(e.sizes(), (Shape{2, 3}));
  EXPECT_EQ(e.strides(), (Shape{0, 1}));
  EXPECT_EQ(values(e), (std::vector<double>{0, 1, 2, 0, 1, 2}));
  EXPECT_EQ(call_error("aten.expand.default", {x, ints({2, 4})}).kind(), ErrorKind::kShapeMismatch);
  Tensor s = call1("aten.squeeze.dim", {u, i64(0)});
  EXPECT_EQ(s.sizes(), (Shape{3}));
  Tensor y = iota(DType::kFloat32, {1, 3, 1});
  EXPECT_EQ(call1("aten.squeeze.default", {y}).sizes(), (Shape{3}));
  EXPECT_EQ(call1("aten.squeeze.dims", {y, ints({1, 2})}).sizes(), (Shape{1, 3}));
  EXPECT_EQ(call1("aten.unsqueeze.default", {y, i64(-1)}).sizes(), (Shape{1, 3, 1, 1}));
}

TEST(Copies, CopyBroadcastsAndCasts) {
  Tensor self = make(DType::kInt32, {2, 2}, {0, 0, 0, 0});
  Tensor src = make(DType::kFloat32, {2}, {2.7, -1.5});
  Tensor r = call1("aten.copy.default", {self, src, false});
  EXPECT_EQ(r.dtype(), DType::kInt32);
  EXPECT_EQ(values(r), (std::vector<double>{2, -1, 2, -1}));
  Tensor c = call1("aten.clone.default", {src, none()});
  EXPECT_NE(c.storage(), src.storage());
  EXPECT_EQ(values(c), values(src));
}

TEST(Factories, DTypeInference) {
  Tensor a = call1("aten.arange.default", {i64(4), none(), none(), none(), none()});
  EXPECT_EQ(a.dtype(), DType::kInt64);
  EXPECT_EQ(values(a), (std::vector<double>{0, 1, 2, 3}));
  Tensor b = call1("aten.arange.start_step",
                   {i64(1), f64(2.0), f64(0.25), none(), none(), none(), none()});
  EXPECT_EQ(b.dtype(), DType::kFloat32);
  EXPECT_EQ(values(b), (std::vector<double>{1, 1.25, 1.5, 1.75}));
  Tensor c = call1("aten.arange.start", {i64(3), i64(3), none(), none(), none(), none()});
  EXPECT_EQ(c.numel(), 0);
  // Like PyTorch, an end before start with a positive step is an error, not an empty range.
  EXPECT_EQ(
      call_error("aten.arange.start", {i64(5), i64(1), none(), none(), none(), none()}).kind(),
      ErrorKind::kBadInput);
  Tensor d =
      call1("aten.arange.start_step", {i64(10), i64(0), i64(-3), none(), none(), none(), none()});
  EXPECT_EQ(values(d), (std::vector<double>{10, 7, 4, 1}));
  Tensor f = call1("aten.full.default", {ints({2}), f64(1.5), none(), none(), none(), none()});
  EXPECT_EQ(f.dtype(), DType::kFloat32);
  EXPECT_EQ(values(f), (std::vector<double>{1.5, 1.5}));
  Tensor g = call1("aten.full.default", {ints({1}), true, none(), none(), none(), none()});
  EXPECT_EQ(g.dtype(), DType::kBool);
  Tensor o = call1("aten.ones_like.default", {g, DType::kFloat16, none(), none(), none(), none()});
  EXPECT_EQ(o.dtype(), DType::kFloat16);
  EXPECT_EQ(values(o), (std::vector<double>{1}));
  Tensor s = call1("aten.scalar_tensor.default", {i64(3), none(), none(), none(), none()});
  EXPECT_EQ(s.dtype(), DType::kFloat32);
  EXPECT_EQ(s.dim(), 0);
  EXPECT_EQ(call_error("aten.zeros.default", {ints({-1}), none(), none(), none(), none()}).kind(),
            ErrorKind::kShapeMismatch);
}

}  // namespace
}  // namespace splice::cpu
