// mm/bmm/addmm (BLAS against a naive loop, half and integer paths), cat and reductions.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "cpu_test_util.h"

namespace splice::cpu {
namespace {

using namespace testing;

std::vector<double> random_values(int64_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<double> v(n);
  for (auto& x : v) x = dist(gen);
  return v;
}

TEST(Matmul, BlasMatchesNaiveLoop) {
  const int64_t m = 7, k = 13, n = 5;
  const auto av = random_values(m * k, 1), bv = random_values(k * n, 2);
  for (DType dtype : {DType::kFloat32, DType::kFloat64}) {
    Tensor a = make(dtype, {m, k}, av), b = make(dtype, {k, n}, bv);
    const auto got = values(call1("aten.mm.default", {a, b}));
    const auto ar = values(a), br = values(b);
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double acc = 0;
        for (int64_t p = 0; p < k; ++p) acc += ar[i * k + p] * br[p * n + j];
        EXPECT_NEAR(got[i * n + j], acc, dtype == DType::kFloat32 ? 1e-5 : 1e-12);
      }
    }
  }
}

// addmm with beta = alpha = 1 is exactly mm then add, bit for bit, for every bias layout: one
// row ([n], [1, n]: the per-row loop), a column, a full matrix, a strided row and a 0-d bias
// (the general path), in float32 and float64.
TEST(Matmul, AddmmIsMmThenAddForEveryBiasLayout) {
  const int64_t m = 6, k = 9, n = 5;
  for (DType dtype : {DType::kFloat32, DType::kFloat64}) {
    SCOPED_TRACE(dtype_name(dtype));
    const Tensor a = make(dtype, {m, k}, random_values(m * k, 3));
    const Tensor b = make(dtype, {k, n}, random_values(k * n, 4));
    const Tensor wide = make(dtype, {2 * n}, random_values(2 * n, 5));
    const std::vector<Tensor> biases = {
        make(dtype, {n}, random_values(n, 6)),
        make(dtype, {1, n}, random_values(n, 7)),
        make(dtype, {m, 1}, random_values(m, 8)),
        make(dtype, {m, n}, random_values(m * n, 9)),
        wide.view_as({n}, {2}, 1),
        make(dtype, {}, {0.25}),
    };
    const Tensor product = call1("aten.mm.default", {a, b});
    for (size_t i = 0; i < biases.size(); ++i) {
      const Tensor want = call1("aten.add.Tensor", {product, biases[i]});
      EXPECT_EQ(values(call1("aten.addmm.default", {biases[i], a, b})), values(want))
          << "bias " << i;
      EXPECT_EQ(values(call1("aten.addmm.default", {biases[i], a, b, i64(1), i64(1)})),
                values(want))
          << "bias " << i;
    }
  }
}

TEST(Matmul, StridedHalfIntegerAndBatched) {
  Tensor a = make(DType::kFloat32, {2, 3}, {1, 2, 3, 4, 5, 6});
  // b = a.t() (a strided view): a @ a.t() = [[14, 32], [32, 77]].
  Tensor at = call1("aten.t.default", {a});
  EXPECT_EQ(values(call1("aten.mm.default", {a, at})), (std::vector<double>{14, 32, 32, 77}));
  Tensor h = make(DType::kFloat16, {1, 2}, {1, 2049});
  Tensor hb = make(DType::kFloat16, {2, 1}, {1, 1});
  // 1 + 2048 (2049 rounds to 2048 in half) = 2049 in float → rounds to 2048 in half.
  Tensor hr = call1("aten.mm.default", {h, hb});
  EXPECT_EQ(hr.dtype(), DType::kFloat16);
  EXPECT_EQ(values(hr), (std::vector<double>{2048}));
  Tensor i = make(DType::kInt64, {1, 2}, {3, 4});
  Tensor j = make(DType::kInt64, {2, 1}, {5, 6});
  EXPECT_EQ(values(call1("aten.mm.default", {i, j})), (std::vector<double>{39}));
  Tensor x = make(DType::kFloat32, {2, 1, 2}, {1, 2, 3, 4});
  Tensor y = make(DType::kFloat32, {2, 2, 1}, {1, 1, 2, 2});
  EXPECT_EQ(values(call1("aten.bmm.default", {x, y})), (std::vector<double>{3, 14}));
  Tensor bias = make(DType::kFloat32, {1}, {0.5});
  EXPECT_EQ(values(call1("aten.addmm.default", {bias, a, at, i64(1), i64(2)})),
            (std::vector<double>{28.5, 64.5, 64.5, 154.5}));
  // Integer addmm with a float beta or alpha is PyTorch's error, not a crash (a float read as
  // an integer threw std::bad_variant_access).
  Tensor ibias = make(DType::kInt64, {1}, {1});
  const Error float_beta = call_error("aten.addmm.default", {ibias, i, j, f64(0.5), i64(1)});
  EXPECT_EQ(float_beta.kind(), ErrorKind::kBadInput);
  EXPECT_NE(float_beta.message().find("beta and alpha must not be floating point"),
            std::string::npos)
      << float_beta.message();
  EXPECT_EQ(call_error("aten.addmm.default", {ibias, i, j, i64(1), f64(2.0)}).kind(),
            ErrorKind::kBadInput);
  EXPECT_EQ(values(call1("aten.addmm.default", {ibias, i, j, i64(2), i64(3)})),
            (std::vector<double>{119}));
  Tensor bm = make(DType::kBool, {1, 1}, {1});
  const Error bool_addmm = call_error("aten.addmm.default", {bm, bm, bm});
  EXPECT_EQ(bool_addmm.kind(), ErrorKind::kBadInput);
  EXPECT_NE(bool_addmm.message().find("not implemented for bool tensors"), std::string::npos)
      << bool_addmm.message();
  EXPECT_EQ(call_error("aten.mm.default", {a, a}).kind(), ErrorKind::kShapeMismatch);
  EXPECT_EQ(call_error("aten.mm.default", {a, make(DType::kFloat64, {3, 1}, {1, 1, 1})}).kind(),
            ErrorKind::kShapeMismatch);
}

TEST(Cat, PromotesAndChecksShapes) {
  Tensor a = make(DType::kInt32, {2, 1}, {1, 2});
  Tensor b = make(DType::kFloat32, {2, 2}, {0.5, 1.5, 2.5, 3.5});
  Tensor r = call1("aten.cat.default", {std::vector<Tensor>{a, b}, i64(-1)});
  EXPECT_EQ(r.dtype(), DType::kFloat32);
  EXPECT_EQ(values(r), (std::vector<double>{1, 0.5, 1.5, 2, 2.5, 3.5}));
  Tensor legacy = Tensor::empty(DType::kInt32, {0}).value();
  EXPECT_EQ(values(call1("aten.cat.default", {std::vector<Tensor>{legacy, a}, i64(0)})),
            (std::vector<double>{1, 2}));
  EXPECT_EQ(call_error("aten.cat.default", {std::vector<Tensor>{a, b}, i64(0)}).kind(),
            ErrorKind::kShapeMismatch);
}

TEST(Reduce, SumMeanAny) {
  Tensor b = make(DType::kBool, {2, 3}, {1, 0, 1, 1, 1, 1});
  Tensor s = call1("aten.sum.default", {b, none()});
  EXPECT_EQ(s.dtype(), DType::kInt64);
  EXPECT_EQ(s.dim(), 0);
  EXPECT_EQ(values(s), (std::vector<double>{5}));
  Tensor f = make(DType::kFloat32, {2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor sd = call1("aten.sum.dim_IntList", {f, ints({-1}), true, none()});
  EXPECT_EQ(sd.sizes(), (Shape{2, 1}));
  EXPECT_EQ(values(sd), (std::vector<double>{6, 15}));
  EXPECT_EQ(values(call1("aten.sum.dim_IntList", {f, ints({0}), false, DType::kFloat64})),
            (std::vector<double>{5, 7, 9}));
  Tensor m = call1("aten.mean.dim", {f, ints({0}), false, none()});
  EXPECT_EQ(values(m), (std::vector<double>{2.5, 3.5, 4.5}));
  EXPECT_EQ(values(call1("aten.mean.default", {f, none()})), (std::vector<double>{3.5}));
  EXPECT_EQ(call_error("aten.mean.default", {b, none()}).kind(), ErrorKind::kBadInput);
  // f16 sum accumulates wider: 2048 + 1 + 1 would stay 2048 in half steps.
  Tensor h = make(DType::kFloat16, {3}, {2048, 1, 1});
  EXPECT_EQ(values(call1("aten.sum.default", {h, none()})), (std::vector<double>{2050}));
  Tensor z = make(DType::kFloat32, {2, 2}, {0, 0, 0, 3});
  Tensor a = call1("aten.any.dim", {z, i64(1), false});
  EXPECT_EQ(a.dtype(), DType::kBool);
  EXPECT_EQ(values(a), (std::vector<double>{0, 1}));
  EXPECT_EQ(values(call1("aten.any.default", {z})), (std::vector<double>{1}));
  EXPECT_EQ(call1("aten.any.dims", {z, ints({0, 1}), true}).sizes(), (Shape{1, 1}));
  // any with an explicit empty dim list reduces nothing (unlike sum).
  Tensor noop = call1("aten.any.dims", {z, ints({}), false});
  EXPECT_EQ(noop.sizes(), (Shape{2, 2}));
  EXPECT_EQ(values(noop), (std::vector<double>{0, 0, 0, 1}));
  EXPECT_EQ(call1("aten.sum.dim_IntList", {f, ints({}), false, none()}).dim(), 0);
  // Integer sums wrap in int64.
  Tensor big = make(DType::kInt64, {2}, {0, 1});
  big.data<int64_t>()[0] = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(call1("aten.sum.default", {big, none()}).data<int64_t>()[0],
            std::numeric_limits<int64_t>::min());
}

// Reductions over the trailing dims of a contiguous tensor take a row path; the same data
// through a transposed (strided) view takes the generic one. They must agree.
TEST(Reduce, TrailingRowsMatchTheStridedPath) {
  const int64_t rows = 19, n = 133;
  std::vector<double> v(rows * n), vt(rows * n);
  for (int64_t i = 0; i < rows * n; ++i) v[i] = std::cos(0.11 * i) * 3;
  for (int64_t j = 0; j < n; ++j) v[4 * n + j] = 0;  // a row of zeros: any false, all false
  v[7 * n + 100] = 0;                                // one zero: all false
  v[8 * n + 3] = NAN;                                // NaN is true, and sums to NaN
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < n; ++j) vt[j * rows + r] = v[r * n + j];
  const Tensor dense = make(DType::kFloat32, {rows, n}, v);
  const Tensor t = make(DType::kFloat32, {n, rows}, vt);
  const Tensor strided = t.view_as({rows, n}, {1, rows}, t.offset());
  for (const char* op : {"aten.sum.dim_IntList", "aten.mean.dim"}) {
    const auto a = values(call1(op, {dense, ints({-1}), false, none()}));
    const auto b = values(call1(op, {strided, ints({-1}), false, none()}));
    ASSERT_EQ(a.size(), static_cast<size_t>(rows));
    for (int64_t r = 0; r < rows; ++r) {
      if (std::isnan(b[r])) {
        EXPECT_TRUE(std::isnan(a[r])) << op << " row " << r;
      } else {
        EXPECT_NEAR(a[r], b[r], 1e-5) << op << " row " << r;
      }
    }
  }
  for (const char* op : {"aten.any.dim", "aten.all.dim"}) {
    EXPECT_EQ(values(call1(op, {dense, i64(1), false})),
              values(call1(op, {strided, i64(1), false})))
        << op;
  }
  // A mean over the two trailing dims of a 3-d tensor is one run per output too.
  const Tensor cube = make(DType::kFloat32, {2, 3, 2}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  EXPECT_EQ(values(call1("aten.mean.dim", {cube, ints({1, 2}), false, none()})),
            (std::vector<double>{3.5, 9.5}));
}

TEST(Registry, CoversTheRequiredTargets) {
  const char* required[] = {"aten.view.default",
                            "aten._unsafe_view.default",
                            "aten.reshape.default",
                            "aten.permute.default",
                            "aten.transpose.int",
                            "aten.t.default",
                            "aten.unsqueeze.default",
                            "aten.squeeze.dim",
                            "aten.squeeze.dims",
                            "aten.squeeze.default",
                            "aten.expand.default",
                            "aten.slice.Tensor",
                            "aten.select.int",
                            "aten.alias.default",
                            "aten.clone.default",
                            "aten.copy.default",
                            "aten._to_copy.default",
                            "aten.lift_fresh_copy.default",
                            "aten.empty.memory_format",
                            "aten.empty_like.default",
                            "aten.empty_permuted.default",
                            "aten.empty_strided.default",
                            "aten.zeros.default",
                            "aten.ones.default",
                            "aten.full.default",
                            "aten.zeros_like.default",
                            "aten.ones_like.default",
                            "aten.full_like.default",
                            "aten.scalar_tensor.default",
                            "aten.arange.default",
                            "aten.arange.start",
                            "aten.arange.start_step",
                            "aten.add.Tensor",
                            "aten.add.Scalar",
                            "aten.sub.Tensor",
                            "aten.sub.Scalar",
                            "aten.mul.Tensor",
                            "aten.mul.Scalar",
                            "aten.div.Tensor",
                            "aten.div.Scalar",
                            "aten.neg.default",
                            "aten.pow.Tensor_Scalar",
                            "aten.pow.Tensor_Tensor",
                            "aten.pow.Scalar",
                            "aten.sqrt.default",
                            "aten.rsqrt.default",
                            "aten.exp.default",
                            "aten.sin.default",
                            "aten.cos.default",
                            "aten.sigmoid.default",
                            "aten.where.self",
                            "aten.where.ScalarSelf",
                            "aten.where.ScalarOther",
                            "aten.where.Scalar",
                            "aten.eq.Tensor",
                            "aten.eq.Scalar",
                            "aten.ne.Tensor",
                            "aten.ne.Scalar",
                            "aten.lt.Tensor",
                            "aten.lt.Scalar",
                            "aten.le.Tensor",
                            "aten.le.Scalar",
                            "aten.gt.Tensor",
                            "aten.gt.Scalar",
                            "aten.ge.Tensor",
                            "aten.ge.Scalar",
                            "aten.logical_not.default",
                            "aten.logical_and.default",
                            "aten.any.default",
                            "aten.any.dim",
                            "aten.any.dims",
                            "aten.sum.default",
                            "aten.sum.dim_IntList",
                            "aten.mean.default",
                            "aten.mean.dim",
                            "aten.mm.default",
                            "aten.bmm.default",
                            "aten.cat.default",
                            "aten.slice_scatter.default",
                            "aten.select_scatter.default",
                            "aten.index_put.default",
                            "aten.index_copy.default",
                            "aten.index.Tensor"};
  for (const char* t : required) EXPECT_NE(find_kernel(t), nullptr) << t;
  EXPECT_EQ(find_kernel("aten.nonexistent.default"), nullptr);
  const auto targets = kernel_targets();
  EXPECT_TRUE(std::is_sorted(targets.begin(), targets.end()));
  EXPECT_EQ(std::adjacent_find(targets.begin(), targets.end()), targets.end());
}

TEST(Registry, BadArgumentsAreErrors) {
  EXPECT_EQ(call_error("aten.add.Tensor", {}).kind(), ErrorKind::kBadInput);
  EXPECT_EQ(call_error("aten.add.Tensor", {i64(1), i64(2)}).kind(), ErrorKind::kBadInput);
  Error e = call_error("aten.mm.default", {make(DType::kFloat32, {1}, {1})});
  EXPECT_EQ(e.kind(), ErrorKind::kBadInput);
  EXPECT_NE(e.message().find("aten.mm.default"), std::string::npos);
}

}  // namespace
}  // namespace splice::cpu
