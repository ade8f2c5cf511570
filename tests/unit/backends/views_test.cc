// The view computation both backends share (backends/common/views.h), called directly: each view
// op's sizes, strides and offset into the input's own storage, the same for a host tensor and
// for one whose storage is a GPU's (never read: the computation touches no element), reshape's
// view-or-copy decision, and the ops' argument errors. The CPU kernels' values through these
// views are tests/unit/cpu/views_test.cc's.
#include "backends/common/views.h"

#include <gtest/gtest.h>

#include <vector>

namespace splice::backend {
namespace {

// A [2, 3, 4] float32 tensor on `device` over storage nothing reads (a GPU's address would
// fault if dereferenced here; the view computation must not).
Tensor tensor_on(Device device) {
  static float host[24];
  auto storage = Storage::borrow(host, sizeof(host), nullptr, true, device);
  return Tensor(DType::kFloat32, {2, 3, 4}, {12, 4, 1}, 0, storage);
}

using Args = std::vector<KernelArg>;

struct Layout {
  Shape sizes, strides;
  int64_t offset;
  bool operator==(const Layout&) const = default;
};

Layout layout(const Tensor& t) { return {t.sizes(), t.strides(), t.offset()}; }

// The single view `fn` returns for `args`, checked to share x's storage.
template <typename Fn>
Layout one_view(Fn fn, std::string_view op, const std::vector<KernelArg>& args) {
  auto r = fn(op, args);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message());
  if (!r.ok() || r->size() != 1) return {};
  EXPECT_EQ((*r)[0].storage(), std::get<Tensor>(args[0]).storage()) << op;
  return layout((*r)[0]);
}

class SharedViews : public ::testing::TestWithParam<DeviceType> {
 protected:
  Tensor x_ = tensor_on(Device{GetParam(), 0});
};

TEST_P(SharedViews, EveryViewOpGivesSizesStridesAndOffsetOfTheSameStorage) {
  using L = Layout;
  const Tensor& x = x_;
  EXPECT_EQ(one_view(permute_view, "permute", {x, std::vector<int64_t>{2, 0, 1}}),
            (L{{4, 2, 3}, {1, 12, 4}, 0}));
  EXPECT_EQ(one_view(transpose_view, "transpose", {x, int64_t{0}, int64_t{-1}}),
            (L{{4, 3, 2}, {1, 4, 12}, 0}));
  EXPECT_EQ(one_view(unsqueeze_view, "unsqueeze", {x, int64_t{1}}),
            (L{{2, 1, 3, 4}, {12, 12, 4, 1}, 0}));
  EXPECT_EQ(one_view(expand_view, "expand", {x, std::vector<int64_t>{5, -1, 3, 4}}),
            (L{{5, 2, 3, 4}, {0, 12, 4, 1}, 0}));
  // slice(dim 2, start 1, end None, step 2) and select(dim 1, index -1).
  EXPECT_EQ(
      one_view(slice_view, "slice", {x, int64_t{2}, int64_t{1}, std::monostate{}, int64_t{2}}),
      (L{{2, 3, 2}, {12, 4, 2}, 1}));
  EXPECT_EQ(one_view(select_view, "select", {x, int64_t{1}, int64_t{-1}}), (L{{2, 4}, {12, 1}, 8}));
  // diagonal(offset 1, dims 1 and 2): elements (i, j, j + 1), j < 3.
  EXPECT_EQ(one_view(diagonal_view, "diagonal", {x, int64_t{1}, int64_t{1}, int64_t{2}}),
            (L{{2, 3}, {12, 5}, 1}));
  EXPECT_EQ(one_view(alias_view, "alias", {x}), layout(x));

  auto pieces =
      split_with_sizes_view("split_with_sizes", Args{x, std::vector<int64_t>{1, 3}, int64_t{2}});
  ASSERT_TRUE(pieces.ok()) << pieces.error().message();
  ASSERT_EQ(pieces->size(), 2u);
  EXPECT_EQ(layout((*pieces)[0]), (L{{2, 3, 1}, {12, 4, 1}, 0}));
  EXPECT_EQ(layout((*pieces)[1]), (L{{2, 3, 3}, {12, 4, 1}, 1}));
  auto rows = unbind_view("unbind", Args{x, int64_t{1}});
  ASSERT_TRUE(rows.ok()) << rows.error().message();
  ASSERT_EQ(rows->size(), 3u);
  EXPECT_EQ(layout((*rows)[2]), (L{{2, 4}, {12, 1}, 8}));
  for (const Tensor& t : *rows) EXPECT_EQ(t.storage(), x.storage());
}

// reshape gives a view when the strides allow one; otherwise no view, and the inferred sizes
// for the backend's copy.
TEST_P(SharedViews, ReshapeViewsWhenTheStridesAllowElseLeavesTheCopyToTheBackend) {
  auto flat = reshape_view("view", Args{x_, std::vector<int64_t>{-1, 4}});
  ASSERT_TRUE(flat.ok()) << flat.error().message();
  EXPECT_EQ(flat->sizes, (Shape{6, 4}));
  ASSERT_TRUE(flat->view.has_value());
  EXPECT_EQ(layout(*flat->view), (Layout{{6, 4}, {4, 1}, 0}));
  EXPECT_EQ(flat->view->storage(), x_.storage());

  // x[:, :, 1:3]: rows no longer follow each other, so no flat view; merging the two leading
  // dims (contiguous with each other) is one.
  const Tensor sliced = x_.view_as({2, 3, 2}, {12, 4, 1}, 1);
  auto copy = reshape_view("reshape", Args{sliced, std::vector<int64_t>{12}});
  ASSERT_TRUE(copy.ok()) << copy.error().message();
  EXPECT_EQ(copy->sizes, (Shape{12}));
  EXPECT_FALSE(copy->view.has_value());
  EXPECT_EQ(copy->self.storage(), x_.storage());
  auto merged = reshape_view("reshape", Args{sliced, std::vector<int64_t>{6, 2}});
  ASSERT_TRUE(merged.ok()) << merged.error().message();
  ASSERT_TRUE(merged->view.has_value());
  EXPECT_EQ(layout(*merged->view), (Layout{{6, 2}, {4, 1}, 1}));
}

TEST_P(SharedViews, ArgumentErrorsNameTheOp) {
  auto two_unknown = reshape_view("aten.view.default", Args{x_, std::vector<int64_t>{-1, -1}});
  ASSERT_FALSE(two_unknown.ok());
  EXPECT_EQ(two_unknown.error().message(),
            "aten.view.default: only one dimension can be inferred in [-1, -1]");
  auto bad_dim = transpose_view("aten.transpose.int", Args{x_, int64_t{3}, int64_t{0}});
  ASSERT_FALSE(bad_dim.ok());
  EXPECT_EQ(bad_dim.error().kind(), ErrorKind::kOutOfRange);
  auto missing = permute_view("aten.permute.default", Args{x_});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message(),
            "aten.permute.default: argument 1 (int[]) is missing (got 1 arguments)");
}

INSTANTIATE_TEST_SUITE_P(HostAndDevice, SharedViews,
                         ::testing::Values(DeviceType::kCPU, DeviceType::kCUDA),
                         [](const auto& info) {
                           return info.param == DeviceType::kCPU ? "Host" : "Cuda";
                         });

}  // namespace
}  // namespace splice::backend
