// The training IR's CompositeImplicit ops (composite.cc, composite_math.cc): to/type_as,
// pad in every mode, narrow/chunk/flatten/unflatten/*_as/movedim, dropout, diagonal, einsum,
// baddbmm, outer, the vector norms, std_mean and group_norm. Expected values are PyTorch's.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "backends/cpu/composite.h"
#include "cpu_test_util.h"

namespace splice::cpu {
namespace {

using namespace testing;

void expect_near(const std::vector<double>& got, const std::vector<double>& want,
                 double tol = 1e-5) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "at " << i;
}

Tensor iota(DType dtype, const Shape& sizes) {
  std::vector<double> v(shape_numel(sizes));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(i);
  return make(dtype, sizes, v);
}

TEST(CompositeTo, CastsOrAliases) {
  Tensor x = make(DType::kFloat32, {3}, {1.5, -2.7, 300.0});
  Tensor h = call1("aten.to.dtype", {x, DType::kInt32, false, false, none()});
  EXPECT_EQ(h.dtype(), DType::kInt32);
  EXPECT_EQ(values(h), (std::vector<double>{1, -2, 300}));
  // Same dtype without copy: self itself; with copy=True: new storage.
  EXPECT_EQ(call1("aten.to.dtype", {x, DType::kFloat32, false, false, none()}).storage(),
            x.storage());
  EXPECT_NE(call1("aten.to.dtype", {x, DType::kFloat32, false, true, none()}).storage(),
            x.storage());
  Tensor u = call1("aten.to.dtype_layout", {x, DType::kUInt8, std::string("strided"),
                                            std::string("cpu"), none(), false, false, none()});
  EXPECT_EQ(values(u), (std::vector<double>{1, 254, 44}));  // c10: through int64, wraps
  EXPECT_EQ(call1("aten.to.dtype_layout", {x}).storage(), x.storage());  // dtype None
  Tensor d = call1("aten.to.device", {x, std::string("cpu"), DType::kFloat64});
  EXPECT_EQ(d.dtype(), DType::kFloat64);
  Tensor i = make(DType::kInt64, {1}, {0});
  EXPECT_EQ(call1("aten.to.other", {x, i}).dtype(), DType::kInt64);
  Tensor t = call1("aten.type_as.default", {x, x});
  EXPECT_NE(t.storage(), x.storage());  // type_as's schema has no alias: always new
  EXPECT_EQ(call_error("aten.to.dtype", {x, none()}).kind(), ErrorKind::kBadInput);
}

TEST(CompositePad, ConstantCropsAndFills) {
  Tensor x = iota(DType::kFloat32, {2, 2});
  auto r = pad_all_modes("aten.pad.default", std::vector<KernelArg>{x, ints({1, -1, 0, 1}),
                                                                    std::string("constant"), 9.0});
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ((*r)[0].sizes(), (Shape{3, 2}));
  EXPECT_EQ(values((*r)[0]), (std::vector<double>{9, 0, 9, 2, 9, 9}));
}

TEST(CompositePad, ReflectReplicateCircular) {
  Tensor x = iota(DType::kInt64, {1, 2, 3});
  auto run = [&](const char* mode, std::vector<int64_t> pads) {
    auto r = pad_all_modes("aten.pad.default",
                           std::vector<KernelArg>{x, ints(pads), std::string(mode), none()});
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message());
    return r.ok() ? values((*r)[0]) : std::vector<double>{};
  };
  EXPECT_EQ(run("reflect", {2, 1}), (std::vector<double>{2, 1, 0, 1, 2, 1, 5, 4, 3, 4, 5, 4}));
  EXPECT_EQ(run("replicate", {1, 2}), (std::vector<double>{0, 0, 1, 2, 2, 2, 3, 3, 4, 5, 5, 5}));
  EXPECT_EQ(run("circular", {2, 1}), (std::vector<double>{1, 2, 0, 1, 2, 0, 4, 5, 3, 4, 5, 3}));
  auto err = [&](std::vector<KernelArg> args) {
    auto r = pad_all_modes("aten.pad.default", args);
    EXPECT_FALSE(r.ok());
    return r.ok() ? Error(ErrorKind::kInternal, "") : r.error();
  };
  Error bogus = err({x, ints({1, 1}), std::string("bogus"), none()});
  EXPECT_EQ(bogus.kind(), ErrorKind::kUnsupportedOp);
  EXPECT_NE(bogus.message().find("'bogus'"), std::string::npos);
  EXPECT_EQ(err({x, ints({3, 0}), std::string("reflect"), none()}).kind(),
            ErrorKind::kShapeMismatch);  // reflect pad must be < size
  EXPECT_EQ(err({x, ints({1, 1}), std::string("reflect"), 2.0}).kind(), ErrorKind::kBadInput);
  EXPECT_EQ(err({iota(DType::kInt64, {3}), ints({1, 1}), std::string("reflect"), none()}).kind(),
            ErrorKind::kShapeMismatch);  // non-constant modes need a batch/channel dim
  EXPECT_EQ(err({x, ints({1}), std::string("constant"), none()}).kind(), ErrorKind::kShapeMismatch);
}

TEST(CompositeShape, NarrowChunkFlattenUnflatten) {
  Tensor x = iota(DType::kInt32, {2, 5});
  Tensor n = call1("aten.narrow.default", {x, i64(1), i64(-2), i64(2)});
  EXPECT_EQ(n.storage(), x.storage());
  EXPECT_EQ(values(n), (std::vector<double>{3, 4, 8, 9}));
  EXPECT_EQ(call_error("aten.narrow.default", {x, i64(1), i64(4), i64(2)}).kind(),
            ErrorKind::kOutOfRange);
  auto c = call("aten.chunk.default", {x, i64(3), i64(1)});
  ASSERT_TRUE(c.ok());
  ASSERT_EQ(c->size(), 3u);  // 5 / 3 → pieces of 2, 2, 1
  EXPECT_EQ(values((*c)[2]), (std::vector<double>{4, 9}));
  auto many = call("aten.chunk.default", {x, i64(9), i64(0)});
  ASSERT_TRUE(many.ok());
  EXPECT_EQ(many->size(), 2u);
  auto empty = call("aten.chunk.default", {iota(DType::kInt32, {0, 2}), i64(3), i64(0)});
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->size(), 3u);
  EXPECT_EQ(call_error("aten.chunk.default", {x, i64(0), i64(0)}).kind(), ErrorKind::kOutOfRange);
  Tensor y = iota(DType::kFloat32, {2, 3, 4});
  EXPECT_EQ(call1("aten.flatten.using_ints", {y, i64(0), i64(-1)}).sizes(), (Shape{24}));
  EXPECT_EQ(call1("aten.flatten.using_ints", {y, i64(1), i64(2)}).sizes(), (Shape{2, 12}));
  EXPECT_EQ(
      call1("aten.flatten.using_ints", {make(DType::kFloat32, {}, {7}), i64(0), i64(-1)}).sizes(),
      (Shape{1}));
  EXPECT_EQ(call_error("aten.flatten.using_ints", {y, i64(2), i64(1)}).kind(),
            ErrorKind::kBadInput);
  EXPECT_EQ(call1("aten.unflatten.int", {y, i64(-1), ints({-1, 2})}).sizes(), (Shape{2, 3, 2, 2}));
  EXPECT_EQ(call_error("aten.unflatten.int", {y, i64(2), ints({3, 2})}).kind(),
            ErrorKind::kShapeMismatch);
  // A transposed input flattens through a copy with the values in logical order.
  Tensor t = call1("aten.transpose.int", {iota(DType::kInt32, {2, 3}), i64(0), i64(1)});
  EXPECT_EQ(values(call1("aten.flatten.using_ints", {t, i64(0), i64(1)})),
            (std::vector<double>{0, 3, 1, 4, 2, 5}));
}

TEST(CompositeShape, AsOpsMovedimContiguousDropout) {
  Tensor x = iota(DType::kFloat32, {2, 3});
  Tensor other = iota(DType::kFloat32, {3, 2});
  EXPECT_EQ(call1("aten.view_as.default", {x, other}).sizes(), (Shape{3, 2}));
  EXPECT_EQ(call1("aten.reshape_as.default", {x, iota(DType::kInt32, {6})}).sizes(), (Shape{6}));
  Tensor row = iota(DType::kFloat32, {1, 3});
  Tensor e = call1("aten.expand_as.default", {row, x});
  EXPECT_EQ(values(e), (std::vector<double>{0, 1, 2, 0, 1, 2}));
  Tensor z = iota(DType::kFloat32, {2, 3, 4, 5});
  EXPECT_EQ(call1("aten.movedim.intlist", {z, ints({0, 1}), ints({2, 0})}).sizes(),
            (Shape{3, 4, 2, 5}));
  EXPECT_EQ(call1("aten.movedim.int", {z, i64(0), i64(-1)}).sizes(), (Shape{3, 4, 5, 2}));
  EXPECT_EQ(call1("aten.moveaxis.int", {z, i64(3), i64(0)}).sizes(), (Shape{5, 2, 3, 4}));
  EXPECT_EQ(call1("aten.swapaxes.default", {z, i64(0), i64(3)}).sizes(), (Shape{5, 3, 4, 2}));
  EXPECT_EQ(call_error("aten.movedim.intlist", {z, ints({0, 0}), ints({1, 2})}).kind(),
            ErrorKind::kBadInput);
  Tensor t = call1("aten.swapdims.default", {x, i64(0), i64(1)});
  Tensor c = call1("aten.contiguous.default", {t});
  EXPECT_TRUE(c.is_contiguous());
  EXPECT_EQ(values(c), (std::vector<double>{0, 3, 1, 4, 2, 5}));
  EXPECT_EQ(call1("aten.contiguous.default", {x}).storage(), x.storage());
  Tensor d = call1("aten.dropout.default", {x, f64(0.5), false});
  EXPECT_EQ(values(d), values(x));
  Error train = call_error("aten.dropout.default", {x, f64(0.5), true});
  EXPECT_EQ(train.kind(), ErrorKind::kUnsupportedOp);
  EXPECT_NE(train.message().find("dropout in training mode is not supported"), std::string::npos);
  EXPECT_EQ(call_error("aten.dropout.default", {x, f64(1.5), false}).kind(),
            ErrorKind::kOutOfRange);
}

TEST(CompositeShape, Diagonal) {
  Tensor x = iota(DType::kFloat32, {3, 4});
  EXPECT_EQ(values(call1("aten.diagonal.default", {x, i64(1), i64(0), i64(1)})),
            (std::vector<double>{1, 6, 11}));
  EXPECT_EQ(values(call1("aten.diagonal.default", {x, i64(-1), i64(0), i64(1)})),
            (std::vector<double>{4, 9}));
  EXPECT_EQ(call1("aten.diagonal.default", {x, i64(9), i64(0), i64(1)}).numel(), 0);
  EXPECT_EQ(call_error("aten.diagonal.default", {x, i64(0), i64(1), i64(-1)}).kind(),
            ErrorKind::kBadInput);
}

TEST(CompositeEinsum, TransformerContractions) {
  Tensor a = make(DType::kFloat32, {2, 2}, {1, 2, 3, 4});
  Tensor b = make(DType::kFloat32, {2, 2}, {5, 6, 7, 8});
  auto ein = [](std::string eq, std::vector<Tensor> ts) {
    return call1("aten.einsum.default", {std::move(eq), std::move(ts), none()});
  };
  EXPECT_EQ(values(ein("ij,jk->ik", {a, b})), (std::vector<double>{19, 22, 43, 50}));
  EXPECT_EQ(values(ein("ij,jk", {a, b})), (std::vector<double>{19, 22, 43, 50}));
  EXPECT_EQ(values(ein("bi,bj->bij", {a, b})), (std::vector<double>{5, 6, 10, 12, 21, 24, 28, 32}));
  EXPECT_EQ(values(ein("ii", {a})), (std::vector<double>{5}));
  EXPECT_EQ(values(ein("ii->i", {a})), (std::vector<double>{1, 4}));
  Tensor tr = ein("ij->ji", {a});
  EXPECT_NE(tr.storage(), a.storage());
  EXPECT_EQ(values(tr), (std::vector<double>{1, 3, 2, 4}));
  EXPECT_EQ(values(ein("i j , j k -> ", {a, b})), (std::vector<double>{134}));
  // bhqd,bhkd->bhqk against a direct loop.
  Tensor q = iota(DType::kFloat32, {1, 2, 3, 4});
  Tensor k = iota(DType::kFloat32, {1, 2, 5, 4});
  Tensor s = ein("bhqd,bhkd->bhqk", {q, k});
  ASSERT_EQ(s.sizes(), (Shape{1, 2, 3, 5}));
  std::vector<double> want;
  for (int h = 0; h < 2; ++h)
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 5; ++j) {
        double acc = 0;
        for (int d = 0; d < 4; ++d) acc += (h * 12 + i * 4 + d) * (h * 20 + j * 4 + d);
        want.push_back(acc);
      }
  EXPECT_EQ(values(s), want);
  EXPECT_EQ(
      ein("...ij,...jk->...ik", {q, call1("aten.transpose.int", {k, i64(-1), i64(-2)})}).sizes(),
      (Shape{1, 2, 3, 5}));
  // Size-1 subscripts broadcast ('ij,j->i' with j of size 1 sums a's rows).
  EXPECT_EQ(values(ein("ij,j->i", {a, make(DType::kFloat32, {1}, {2})})),
            (std::vector<double>{6, 14}));
  EXPECT_EQ(
      call_error("aten.einsum.default", {std::string("ij->"), std::vector<Tensor>{a, b}}).kind(),
      ErrorKind::kBadInput);
  EXPECT_EQ(call_error("aten.einsum.default",
                       {std::string("i,i->i"), std::vector<Tensor>{iota(DType::kFloat32, {3}),
                                                                   iota(DType::kFloat32, {2})}})
                .kind(),
            ErrorKind::kShapeMismatch);
  EXPECT_EQ(
      call_error("aten.einsum.default", {std::string("ij->k"), std::vector<Tensor>{a}}).kind(),
      ErrorKind::kBadInput);
}

TEST(CompositeMath, BaddbmmOuter) {
  Tensor c = make(DType::kFloat32, {2, 2, 2}, {1, 1, 1, 1, 1, 1, 1, 1});
  Tensor ones23 = make(DType::kFloat32, {2, 2, 3}, std::vector<double>(12, 1));
  Tensor ones32 = make(DType::kFloat32, {2, 3, 2}, std::vector<double>(12, 1));
  Tensor r = call1("aten.baddbmm.default", {c, ones23, ones32, f64(0.5), i64(2)});
  EXPECT_EQ(values(r), std::vector<double>(8, 6.5));
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Tensor n = make(DType::kFloat32, {2}, {nan, nan});  // broadcast; beta=0 ignores NaN
  EXPECT_EQ(values(call1("aten.baddbmm.default", {n, ones23, ones32, f64(0.0), i64(1)})),
            std::vector<double>(8, 3));
  Tensor ci = make(DType::kInt64, {2, 2, 2}, std::vector<double>(8, 1));
  Tensor ai = make(DType::kInt64, {2, 2, 3}, std::vector<double>(12, 2));
  Tensor bi = make(DType::kInt64, {2, 3, 2}, std::vector<double>(12, 3));
  EXPECT_EQ(values(call1("aten.baddbmm.default", {ci, ai, bi, i64(2), i64(-1)})),
            std::vector<double>(8, -16));
  Tensor o = call1("aten.outer.default",
                   {make(DType::kInt32, {2}, {1, 2}), make(DType::kFloat32, {3}, {1, 0.5, -1})});
  EXPECT_EQ(o.dtype(), DType::kFloat32);
  EXPECT_EQ(values(o), (std::vector<double>{1, 0.5, -1, 2, 1, -2}));
  EXPECT_EQ(call_error("aten.outer.default", {c, c}).kind(), ErrorKind::kShapeMismatch);
}

TEST(CompositeMath, VectorNorms) {
  Tensor v = make(DType::kFloat32, {4}, {3, -4, 0, 1});
  const double inf = std::numeric_limits<double>::infinity();
  auto norm = [&](double ord) {
    return values(call1("aten.linalg_vector_norm.default", {v, f64(ord)}))[0];
  };
  EXPECT_NEAR(norm(2), 5.0990195, 1e-6);
  EXPECT_EQ(norm(1), 8);
  EXPECT_EQ(norm(inf), 4);
  EXPECT_EQ(norm(-inf), 0);
  EXPECT_EQ(norm(0), 3);
  EXPECT_NEAR(norm(3), 4.5143576, 1e-6);
  EXPECT_NEAR(norm(0.5), 22.3923054, 1e-5);
  Tensor m = make(DType::kFloat32, {2, 2}, {3, 4, -6, 8});
  Tensor rows = call1("aten.linalg_vector_norm.default", {m, i64(2), ints({1}), true, none()});
  EXPECT_EQ(rows.sizes(), (Shape{2, 1}));
  EXPECT_EQ(values(rows), (std::vector<double>{5, 10}));
  Tensor d = call1("aten.linalg_vector_norm.default", {m, i64(1), none(), false, DType::kFloat64});
  EXPECT_EQ(d.dtype(), DType::kFloat64);
  EXPECT_EQ(values(d), (std::vector<double>{21}));
  expect_near(values(call1("aten.norm.ScalarOpt_dim", {m, none(), ints({0}), false})),
              {std::sqrt(45.0), std::sqrt(80.0)});
  EXPECT_EQ(values(call1("aten.norm.Scalar", {m, i64(1)})), (std::vector<double>{21}));
  Tensor with_nan = make(DType::kFloat32, {3}, {1, std::nan(""), 3});
  EXPECT_TRUE(
      std::isnan(values(call1("aten.linalg_vector_norm.default", {with_nan, f64(inf)}))[0]));
  EXPECT_EQ(
      call_error("aten.linalg_vector_norm.default", {make(DType::kInt64, {2}, {1, 2})}).kind(),
      ErrorKind::kBadInput);
  EXPECT_EQ(
      call_error("aten.linalg_vector_norm.default", {make(DType::kFloat32, {0}, {}), f64(inf)})
          .kind(),
      ErrorKind::kShapeMismatch);
}

TEST(CompositeMath, StdMean) {
  Tensor x = make(DType::kFloat32, {2, 4}, {1, 2, 3, 4, 2, 4, 6, 8});
  auto r = call("aten.std_mean.dim", {x, ints({1}), true, false});
  ASSERT_TRUE(r.ok()) << r.error().message();
  expect_near(values((*r)[0]), {1.2909944, 2.5819889});
  EXPECT_EQ(values((*r)[1]), (std::vector<double>{2.5, 5}));
  auto c = call("aten.std_mean.correction", {x, none(), i64(0), true});
  ASSERT_TRUE(c.ok()) << c.error().message();
  EXPECT_EQ((*c)[0].sizes(), (Shape{1, 1}));
  double m2 = 0;
  for (double v : {1, 2, 3, 4, 2, 4, 6, 8}) m2 += (v - 3.75) * (v - 3.75);
  expect_near(values((*c)[0]), {std::sqrt(m2 / 8)});
  EXPECT_EQ(values((*c)[1]), (std::vector<double>{3.75}));
}

TEST(CompositeMath, GroupNorm) {
  Tensor g = iota(DType::kFloat32, {1, 4, 2});
  Tensor w = make(DType::kFloat32, {4}, {1, 2, 1, 1});
  Tensor b = make(DType::kFloat32, {4}, {0, 0, 1, 0});
  Tensor out = call1("aten.group_norm.default", {g, i64(2), w, b, f64(1e-5), true});
  expect_near(values(out), {-1.3416355, -0.4472119, 0.8944235, 2.6832707, -0.3416355, 0.5527881,
                            0.4472120, 1.3416356});
  auto native = call("aten.native_group_norm.default",
                     {g, none(), none(), i64(1), i64(4), i64(2), i64(2), f64(1e-5)});
  ASSERT_TRUE(native.ok()) << native.error().message();
  ASSERT_EQ(native->size(), 3u);
  EXPECT_EQ((*native)[1].sizes(), (Shape{1, 2}));
  EXPECT_EQ(values((*native)[1]), (std::vector<double>{1.5, 5.5}));
  const double rstd = 1.0 / std::sqrt(1.25 + 1e-5);  // both groups have variance 1.25
  expect_near(values((*native)[2]), {rstd, rstd});
  EXPECT_EQ(
      call_error("aten.group_norm.default", {g, i64(3), none(), none(), f64(1e-5), true}).kind(),
      ErrorKind::kShapeMismatch);
}

}  // namespace
}  // namespace splice::cpu
