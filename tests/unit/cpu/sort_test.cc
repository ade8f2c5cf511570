// sort, sort.stable and topk (backends/cpu/sort.cc): PyTorch's comparator (NaN largest and
// tied with NaN, -0.0 tied with 0.0), stable ties in both directions, strided lanes, every
// dtype, and topk's ties and sorted=False in eager's own order (the expected indices below are
// what torch.topk returned on CPU for these inputs).
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "cpu_test_util.h"

namespace splice::cpu {
namespace {

using namespace testing;

const double kNaN = std::nan("");
const double kInf = INFINITY;

bool same(const std::vector<double>& got, const std::vector<double>& want) {
  if (got.size() != want.size()) return false;
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i]) ? !std::isnan(got[i]) : got[i] != want[i]) return false;
  }
  return true;
}

std::vector<Tensor> call2(const std::string& target, std::vector<KernelArg> args) {
  auto r = call(target, std::move(args));
  EXPECT_TRUE(r.ok()) << target << ": " << (r.ok() ? "" : r.error().message());
  if (!r.ok() || r->size() != 2)
    return {make(DType::kFloat32, {0}, {}), make(DType::kInt64, {0}, {})};
  return *r;
}

TEST(Sort, NaNLargestTiesStableZerosTied) {
  Tensor x = make(DType::kFloat32, {7}, {1, kNaN, -0.0, 1, kNaN, 0.0, -kInf});
  auto up = call2("aten.sort.default", {x, i64(-1), false});
  EXPECT_TRUE(same(values(up[0]), {-kInf, -0.0, 0.0, 1, 1, kNaN, kNaN}));
  EXPECT_EQ(values(up[1]), (std::vector<double>{6, 2, 5, 0, 3, 1, 4}));
  EXPECT_TRUE(std::signbit(values(up[0])[1]));  // the elements themselves: -0.0 stays -0.0
  auto down = call2("aten.sort.stable", {x, true, i64(0), true});
  EXPECT_TRUE(same(values(down[0]), {kNaN, kNaN, 1, 1, -0.0, 0.0, -kInf}));
  EXPECT_EQ(values(down[1]), (std::vector<double>{1, 4, 0, 3, 2, 5, 6}));
}

TEST(Sort, AlongDimZeroOfAStridedView) {
  // x^T of a [2, 3] tensor: lanes along dim 0 of a transposed view.
  Tensor base = make(DType::kInt64, {2, 3}, {3, 1, 2, 1, 1, 0});
  Tensor x = base.view_as({3, 2}, {1, 3}, 0);  // [3, 2]: columns (3, 1, 2) and (1, 1, 0)
  auto r = call2("aten.sort.default", {x, i64(0), true});
  EXPECT_EQ(r[0].sizes(), (Shape{3, 2}));
  EXPECT_EQ(values(r[0]), (std::vector<double>{3, 1, 2, 1, 1, 0}));
  EXPECT_EQ(values(r[1]), (std::vector<double>{0, 0, 2, 1, 1, 2}));
}

TEST(Sort, EveryDtypeAndBool) {
  for (DType dtype : {DType::kUInt8, DType::kInt8, DType::kInt16, DType::kInt32, DType::kInt64,
                      DType::kFloat16, DType::kBFloat16, DType::kFloat32, DType::kFloat64}) {
    Tensor x = make(dtype, {6}, {5, 2, 7, 2, 0, 5});
    auto r = call2("aten.sort.default", {x, i64(-1), true});
    EXPECT_EQ(r[0].dtype(), dtype);
    EXPECT_EQ(values(r[0]), (std::vector<double>{7, 5, 5, 2, 2, 0})) << dtype_name(dtype);
    EXPECT_EQ(values(r[1]), (std::vector<double>{2, 0, 5, 1, 3, 4})) << dtype_name(dtype);
  }
  Tensor neg = make(DType::kInt8, {4}, {-3, 100, -128, 0});
  EXPECT_EQ(values(call2("aten.sort.default", {neg, i64(0), false})[1]),
            (std::vector<double>{2, 0, 3, 1}));
  Tensor flags = make(DType::kBool, {5}, {1, 0, 1, 0, 1});
  auto b = call2("aten.sort.stable", {flags, true, i64(-1), true});
  EXPECT_EQ(values(b[0]), (std::vector<double>{1, 1, 1, 0, 0}));
  EXPECT_EQ(values(b[1]), (std::vector<double>{0, 2, 4, 1, 3}));
}

TEST(Sort, ZeroDimAndEmpty) {
  auto s = call2("aten.sort.default", {make(DType::kFloat32, {}, {3}), i64(0), false});
  EXPECT_EQ(s[0].sizes(), (Shape{}));
  EXPECT_EQ(values(s[1]), (std::vector<double>{0}));
  auto e = call2("aten.sort.default", {make(DType::kFloat32, {2, 0}, {}), i64(1), false});
  EXPECT_EQ(e[1].sizes(), (Shape{2, 0}));
}

TEST(Sort, LongLanesKeepTiesInIndexOrder) {
  // 100k elements with many ties: sorted values ascend and each tie keeps index order.
  const int64_t n = 100000;
  std::vector<double> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<double>((i * 7919) % 1000);
  auto r = call2("aten.sort.default", {make(DType::kFloat32, {2, n / 2}, v), i64(1), false});
  const auto sv = values(r[0]), si = values(r[1]);
  for (int64_t row = 0; row < 2; ++row) {
    for (int64_t j = 1; j < n / 2; ++j) {
      const int64_t at = row * (n / 2) + j;
      ASSERT_LE(sv[at - 1], sv[at]);
      if (sv[at - 1] == sv[at]) {
        ASSERT_LT(si[at - 1], si[at]);
      }
      ASSERT_EQ(v[row * (n / 2) + static_cast<int64_t>(si[at])], sv[at]);
    }
  }
}

// Inputs and indices recorded from torch.topk on CPU: NaNs and ties come out in the order of
// ATen's heap select / nth_element, not index order.
TEST(Topk, TiesAndNaNInEagersOrder) {
  Tensor x = make(DType::kFloat32, {16}, {1, 1, kNaN, 0, 1, kNaN, 2, 0, 1, 1, 3, kNaN, 1, 4, 4, 2});
  auto largest = call2("aten.topk.default", {x, i64(5), i64(-1), true, true});
  EXPECT_EQ(values(largest[1]), (std::vector<double>{11, 5, 2, 14, 13}));
  EXPECT_TRUE(same(values(largest[0]), {kNaN, kNaN, kNaN, 4, 4}));
  Tensor y = make(DType::kFloat32, {16}, {1, 2, 0, 3, 0, kNaN, kNaN, 3, 0, 3, 4, 1, 4, 3, 2, 1});
  auto unsorted = call2("aten.topk.default", {y, i64(8), i64(-1), false, false});
  EXPECT_EQ(values(unsorted[1]), (std::vector<double>{15, 0, 2, 11, 4, 8, 1, 14}));
}

TEST(Topk, PartialSortPathForSmallK) {
  // k * 64 <= n: a partial sort. 128 elements, ties of 4.0 and NaNs; eager gives [35, 32].
  const std::vector<double> v = {
      0, 0, 2, 2,    1,    3, 0,    4,    2, 4, 2,    4, 1, 2,    0, 4, 2, 4, 3,    4,    1, 3,
      1, 1, 3, 4,    1,    0, 0,    2,    1, 4, kNaN, 0, 2, kNaN, 2, 2, 4, 1, kNaN, 3,    2, 4,
      3, 0, 0, 3,    2,    4, 1,    4,    3, 1, 2,    4, 3, 2,    0, 2, 0, 0, 3,    2,    4, 4,
      2, 4, 3, 1,    2,    0, kNaN, 0,    1, 0, kNaN, 2, 1, 4,    4, 3, 4, 2, 3,    0,    1, 2,
      0, 2, 2, 0,    3,    2, kNaN, kNaN, 4, 3, 1,    4, 2, 3,    3, 0, 1, 2, kNaN, kNaN, 4, 4,
      3, 0, 3, kNaN, kNaN, 0, 3,    1,    1, 2, kNaN, 0, 0, 2,    0, 4, 2, 4};
  ASSERT_EQ(v.size(), 128u);
  auto r =
      call2("aten.topk.default", {make(DType::kFloat32, {128}, v), i64(2), i64(0), true, true});
  EXPECT_EQ(values(r[1]), (std::vector<double>{35, 32}));
}

TEST(Topk, DistinctValuesAlongDimZeroAndChecks) {
  Tensor x = make(DType::kBFloat16, {3, 2}, {0.5, -1, 2, 3, -4, 1});
  auto r = call2("aten.topk.default", {x, i64(2), i64(0), false, true});
  EXPECT_EQ(r[0].sizes(), (Shape{2, 2}));
  EXPECT_EQ(values(r[0]), (std::vector<double>{-4, -1, 0.5, 1}));
  EXPECT_EQ(values(r[1]), (std::vector<double>{2, 0, 0, 2}));
  auto all = call2("aten.topk.default", {x, i64(2), i64(-1), true, true});
  EXPECT_EQ(values(all[1]), (std::vector<double>{0, 1, 1, 0, 1, 0}));
  EXPECT_EQ(call_error("aten.topk.default", {x, i64(4), i64(0), true, true}).kind(),
            ErrorKind::kOutOfRange);
  EXPECT_EQ(
      call_error("aten.topk.default", {make(DType::kBool, {2}, {1, 0}), i64(1), i64(0), true, true})
          .kind(),
      ErrorKind::kBadInput);
}

}  // namespace
}  // namespace splice::cpu
