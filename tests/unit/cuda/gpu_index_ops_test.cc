// Index ops on the GPU against the CPU kernels in every dtype: index_select, embedding,
// index.Tensor (broadcast, non-adjacent, negative, int32, bool/uint8 masks), index_put (last
// duplicate wins; accumulate in the CPU's order, bit for bit), index_copy, index_add, gather,
// scatter. A bad index must fail with the CPU's message (from the error word) and, for
// writes done in place, leave the tensor exactly as it was.
#include <gtest/gtest.h>

#include <functional>

#include "backends/cuda/index_ops.h"
#include "backends/cuda/shape_ops.h"
#include "cuda_test_util.h"

namespace splice::cuda::testing {
namespace {

using OptTensor = std::optional<Tensor>;

class GpuIndexOps : public GpuTest {
 protected:
  void SetUp() override {
    GpuTest::SetUp();
    if (IsSkipped()) return;
    ctx_.error_word = error_word_.device();
    ctx_.workspace = &workspace_;
  }

  // Device copies of every tensor argument (lists flattened, None kept as nullopt) in order.
  struct Uploaded {
    std::vector<DeviceCopy> copies;
    std::vector<std::optional<DeviceTensor>> tensors;
  };
  Uploaded upload_args(const std::vector<cpu::KernelArg>& args) {
    Uploaded u;
    u.copies.reserve(16);
    auto add = [&](const Tensor& t) {
      u.copies.push_back(upload(t));
      u.tensors.push_back(u.copies.back().view);
    };
    for (const auto& a : args) {
      if (const Tensor* t = std::get_if<Tensor>(&a)) add(*t);
      if (const auto* list = std::get_if<std::vector<std::optional<Tensor>>>(&a)) {
        for (const auto& t : *list) {
          if (t)
            add(*t);
          else
            u.tensors.push_back(std::nullopt);
        }
      }
    }
    return u;
  }

  // Launch(out, tensors) runs the CUDA op into `out`; in_place ops get the device copy of
  // argument 0 as out. Compares with the CPU result or its error (message equal; a failed
  // in-place write must leave self as it was).
  using Launch = std::function<Result<void>(const DeviceTensor& out,
                                            const std::vector<std::optional<DeviceTensor>>& t)>;
  // error_shape: the output's shape when the CPU fails on an index value (the caller knows the
  // result's shape; the device check then fails).
  void compare(FailureLog& log, const std::string& name, const char* target,
               std::vector<cpu::KernelArg> args, const Launch& launch, bool in_place = false,
               std::optional<Shape> error_shape = std::nullopt) {
    log.ran();
    Uploaded u = upload_args(args);
    auto expected = cpu_reference(target, args);
    const Tensor self0 = std::get<Tensor>(args[0]).contiguous_copy().value();
    Destination dest;
    DeviceTensor out;
    if (in_place) {
      out = *u.tensors[0];
    } else if (expected.ok()) {
      dest = make_destination((*expected)[0].dtype(), (*expected)[0].sizes(), Layout::kStrided);
      out = dest.view;
    } else {
      dest =
          make_destination(self0.dtype(), error_shape.value_or(self0.sizes()), Layout::kContiguous);
      out = dest.view;
    }
    auto r = launch(out, u.tensors);
    std::optional<DeviceCheckFailure> failure = take_failure();
    std::string error;
    if (!r.ok()) error = r.error().message();
    if (failure) error = failure_error(*failure, target).message();
    if (!expected.ok()) {
      if (error != expected.error().message()) {
        log.add(name + ": CPU fails with '" + expected.error().message() + "', CUDA says '" +
                (error.empty() ? "ok" : error) + "'");
      }
      if (in_place && failure) {
        // Nothing of a failed write may land in self.
        Destination again;
        again.host_layout = std::get<Tensor>(args[0]);
        again.view = *u.tensors[0];
        again.buffer = std::move(u.copies[0].buffer);
        const std::string diff = check_destination_values(again, self0);
        if (!diff.empty()) log.add(name + ": the failed write changed self: " + diff);
      }
      return;
    }
    if (!error.empty()) {
      log.add(name + ": " + error);
      return;
    }
    const Tensor& want = (*expected)[0];
    if (in_place) {
      Destination result;
      result.host_layout = std::get<Tensor>(args[0]);
      result.view = *u.tensors[0];
      result.buffer = std::move(u.copies[0].buffer);
      const std::string diff = check_destination_values(result, want);
      if (!diff.empty()) log.add(name + " (in place): " + diff);
      return;
    }
    const std::string diff = check_destination(dest, want, true);
    if (!diff.empty()) log.add(name + ": " + diff);
  }

  // Like check_destination, for a destination whose storage is not poisoned (self's own):
  // compares the view only.
  std::string check_destination_values(const Destination& d, const Tensor& want) {
    Tensor copy = d.host_layout.contiguous_copy().value();  // same sizes; refilled below
    const size_t bytes = d.host_layout.storage()->nbytes();
    Tensor storage = Tensor::empty(DType::kUInt8, {static_cast<int64_t>(bytes)}).value();
    if (cudaMemcpy(
            storage.raw_data(),
            static_cast<char*>(d.view.data) - d.host_layout.offset() * dtype_size(want.dtype()),
            bytes, cudaMemcpyDeviceToHost) != cudaSuccess)
      return "copy back failed";
    const Tensor got = Tensor(want.dtype(), d.host_layout.sizes(), d.host_layout.strides(),
                              d.host_layout.offset(), storage.storage())
                           .contiguous_copy()
                           .value();
    (void)copy;
    const Tensor w = want.contiguous_copy().value();
    int64_t bad = 0;
    std::string ex;
    dispatch_dtype(want.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      for (int64_t i = 0; i < got.numel(); ++i) {
        const double g = cast_value<double>(got.data<T>()[i]);
        const double e = cast_value<double>(w.data<T>()[i]);
        if (!close(g, e, want.dtype(), true) && ++bad <= 3)
          ex += fmt::format(" [{}] got {} want {};", i, g, e);
      }
    });
    return bad == 0 ? "" : fmt::format("{} elements differ{}", bad, ex);
  }

  Tensor random(DType dtype, const Shape& shape, Layout layout = Layout::kContiguous) {
    Tensor t = make_layout(dtype, shape, layout);
    fill_random(t, 0, rng_);
    return t;
  }
  Tensor ints(DType dtype, const Shape& shape, std::vector<int64_t> values) {
    Tensor t = Tensor::empty(dtype, shape).value();
    dispatch_dtype(dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      for (size_t i = 0; i < values.size(); ++i) t.data<T>()[i] = static_cast<T>(values[i]);
    });
    return t;
  }

  Workspace workspace_;
  LaunchContext ctx_;
  std::mt19937 rng_{77};
};

TEST_F(GpuIndexOps, SelectEmbeddingGather) {
  FailureLog log;
  for (DType dtype : kAllDTypes) {
    const std::string tag(dtype_name(dtype));
    const Tensor x = random(dtype, {5, 7, 6}, Layout::kTransposed);
    for (auto [dim, values] :
         {std::pair{0, std::vector<int64_t>{4, 0, 4, 2}}, std::pair{1, std::vector<int64_t>{6, 1}},
          std::pair{-1, std::vector<int64_t>{}}, std::pair{1, std::vector<int64_t>{7}},
          std::pair{2, std::vector<int64_t>{-1}}}) {
      for (DType idx_dtype : {DType::kInt64, DType::kInt32, DType::kInt16}) {
        const Tensor idx = ints(idx_dtype, {static_cast<int64_t>(values.size())}, values);
        Shape shape = x.sizes();
        shape[dim < 0 ? dim + 3 : dim] = static_cast<int64_t>(values.size());
        compare(
            log, fmt::format("index_select {} dim {} {}", tag, dim, dtype_name(idx_dtype)),
            "aten.index_select.default", {x, int64_t{dim}, idx},
            [&](const DeviceTensor& o, const auto& t) {
              return index_select(o, *t[0], dim, *t[1], ctx_);
            },
            false, shape);
      }
    }
    const Tensor scalar_idx = ints(DType::kInt64, {}, {3});
    compare(log, "index_select 0-d index " + tag, "aten.index_select.default",
            {x, int64_t{1}, scalar_idx}, [&](const DeviceTensor& o, const auto& t) {
              return index_select(o, *t[0], 1, *t[1], ctx_);
            });
    for (int64_t d : {3, 64, 67}) {
      const Tensor w = random(dtype, {9, d});
      for (const Shape& shape : {Shape{5}, Shape{2, 3}, Shape{}}) {
        std::vector<int64_t> v;
        for (int64_t i = 0; i < shape_numel(shape); ++i) v.push_back((i * 5 + 3) % 9);
        const Tensor idx = ints(DType::kInt64, shape, v);
        compare(
            log, fmt::format("embedding {} D={} {}", tag, d, shape_string(shape)),
            "aten.embedding.default", {w, idx, int64_t{-1}, false, false},
            [&](const DeviceTensor& o, const auto& t) { return embedding(o, *t[0], *t[1], ctx_); });
      }
      const Tensor bad = ints(DType::kInt32, {3}, {1, 9, 2});
      compare(
          log, "embedding out of range " + tag, "aten.embedding.default",
          {w, bad, int64_t{-1}, false, false},
          [&](const DeviceTensor& o, const auto& t) { return embedding(o, *t[0], *t[1], ctx_); },
          false, Shape{3, d});
    }
    for (int64_t dim : {0, 1, 2}) {
      Shape ishape = {4, 5, 3};
      std::vector<int64_t> v;
      for (int64_t i = 0; i < 60; ++i) v.push_back((i * 7) % x.size(dim));
      compare(
          log, fmt::format("gather {} dim {}", tag, dim), "aten.gather.default",
          {x, dim, ints(DType::kInt64, ishape, v), false},
          [&](const DeviceTensor& o, const auto& t) { return gather(o, *t[0], dim, *t[1], ctx_); });
      v[17] = -1;
      compare(
          log, fmt::format("gather bad {} dim {}", tag, dim), "aten.gather.default",
          {x, dim, ints(DType::kInt64, ishape, v), false},
          [&](const DeviceTensor& o, const auto& t) { return gather(o, *t[0], dim, *t[1], ctx_); },
          false, ishape);
    }
  }
  log.report("index_select / embedding / gather");
}

TEST_F(GpuIndexOps, AdvancedIndexRead) {
  FailureLog log;
  for (DType dtype : kAllDTypes) {
    const std::string tag(dtype_name(dtype));
    const Tensor x = random(dtype, {4, 5, 6}, Layout::kStrided);
    const Tensor i0 = ints(DType::kInt64, {3}, {3, -4, 0});
    const Tensor i1 = ints(DType::kInt32, {2, 1}, {4, -1});
    const Tensor i2 = ints(DType::kInt64, {3}, {5, 0, 2});
    Tensor mask = Tensor::empty(DType::kBool, {4, 5}).value();
    Tensor mask8 = Tensor::empty(DType::kUInt8, {5}).value();
    for (int i = 0; i < 20; ++i) mask.data<bool>()[i] = (i * 7) % 3 == 0;
    for (int i = 0; i < 5; ++i) mask8.data<uint8_t>()[i] = i % 2;
    Tensor none_mask = Tensor::empty(DType::kBool, {6}).value();
    struct Case {
      std::string name;
      std::vector<OptTensor> indices;
      std::optional<Shape> error_shape = std::nullopt;
    };
    const std::vector<Case> cases = {
        {"[i0]", {i0}},
        {"[None, i1]", {std::nullopt, i1}},
        {"[i0, i2] broadcast", {i0, std::nullopt, i2}},
        {"[i1, i0] (4 is out of range for dim 0)", {i1, i0}, Shape{2, 3, 6}},
        {"[None, i1, i2]", {std::nullopt, i1, i2}},
        {"[mask]", {mask}},
        {"[None, mask8]", {std::nullopt, mask8}},
        {"[None, None, empty mask]", {std::nullopt, std::nullopt, none_mask}},
        {"[mask, i2]", {mask, i2}},
        {"out of range", {ints(DType::kInt64, {2}, {1, 4})}, Shape{2, 5, 6}},
        {"too negative", {std::nullopt, ints(DType::kInt64, {1}, {-6})}, Shape{4, 1, 6}},
        {"too many", {i0, i0, i0, i0}},
    };
    for (const Case& c : cases) {
      compare(
          log, "index " + c.name + " " + tag, "aten.index.Tensor", {x, c.indices},
          [&](const DeviceTensor& o, const auto& t) -> Result<void> {
            std::vector<std::optional<DeviceTensor>> idx(t.begin() + 1, t.end());
            SPLICE_ASSIGN_OR_RETURN(
                ResolvedIndex r,
                resolve_indices("aten.index.Tensor", *t[0], idx, IndexPurpose::kRead, ctx_));
            // The test's destination has the CPU's shape; a mismatch is reported by the
            // launcher.
            return index_tensor(o, *t[0], r, ctx_);
          },
          false, c.error_shape);
    }
  }
  log.report("index.Tensor");
}

TEST_F(GpuIndexOps, Writes) {
  FailureLog log;
  for (DType dtype : kAllDTypes) {
    const std::string tag(dtype_name(dtype));
    const Tensor self = random(dtype, {6, 4, 5});
    for (bool in_place : {false, true}) {
      const std::string how = in_place ? " in place" : "";
      // index_put with duplicates (the last wins), broadcast values, accumulate.
      const Tensor dup = ints(DType::kInt64, {5}, {1, 3, 1, -1, 3});
      for (bool accumulate : {false, true}) {
        const Tensor values = random(dtype, {5, 4, 5});
        compare(
            log, fmt::format("index_put dup acc={} {}{}", accumulate, tag, how),
            "aten.index_put.default",
            {self.contiguous_copy().value(), std::vector<OptTensor>{dup}, values, accumulate},
            [&](const DeviceTensor& o, const auto& t) {
              std::vector<std::optional<DeviceTensor>> idx = {t[1]};
              return index_put(o, *t[0], idx, *t[2], accumulate, ctx_);
            },
            in_place);
        const Tensor row = random(dtype, {5});
        const Tensor j = ints(DType::kInt32, {2, 1}, {0, 3});
        compare(
            log, fmt::format("index_put [dup, j] broadcast acc={} {}{}", accumulate, tag, how),
            "aten.index_put.default",
            {self.contiguous_copy().value(), std::vector<OptTensor>{dup, j}, row, accumulate},
            [&](const DeviceTensor& o, const auto& t) {
              std::vector<std::optional<DeviceTensor>> idx = {t[1], t[2]};
              return index_put(o, *t[0], idx, *t[3], accumulate, ctx_);
            },
            in_place);
        Tensor mask = Tensor::empty(DType::kBool, {6, 4}).value();
        for (int i = 0; i < 24; ++i) mask.data<bool>()[i] = i % 5 == 1;
        const Tensor one = random(DType::kFloat64, {});
        compare(
            log, fmt::format("index_put mask acc={} {}{}", accumulate, tag, how),
            "aten.index_put.default",
            {self.contiguous_copy().value(), std::vector<OptTensor>{mask}, one, accumulate},
            [&](const DeviceTensor& o, const auto& t) {
              std::vector<std::optional<DeviceTensor>> idx = {t[1]};
              return index_put(o, *t[0], idx, *t[2], accumulate, ctx_);
            },
            in_place);
        const Tensor bad = ints(DType::kInt64, {3}, {0, 6, 1});
        compare(
            log, fmt::format("index_put bad acc={} {}{}", accumulate, tag, how),
            "aten.index_put.default",
            {self.contiguous_copy().value(),
             std::vector<OptTensor>{std::nullopt, std::nullopt, bad}, random(dtype, {3}),
             accumulate},
            [&](const DeviceTensor& o, const auto& t) {
              std::vector<std::optional<DeviceTensor>> idx = {t[1], t[2], t[3]};
              return index_put(o, *t[0], idx, *t[4], accumulate, ctx_);
            },
            in_place);
      }
      // index_copy / index_add along each dim, with duplicates and a bad index.
      for (int64_t dim : {0, 1, 2}) {
        const int64_t n = self.size(dim);
        const Tensor idx = ints(DType::kInt64, {3}, {n - 1, 0, n - 1});
        Shape sshape = self.sizes();
        sshape[dim] = 3;
        const Tensor source = random(dtype, sshape, Layout::kTransposed);
        compare(
            log, fmt::format("index_copy dim {} {}{}", dim, tag, how), "aten.index_copy.default",
            {self.contiguous_copy().value(), dim, idx, source},
            [&](const DeviceTensor& o, const auto& t) {
              return index_copy(o, *t[0], dim, *t[1], *t[2], ctx_);
            },
            in_place);
        for (Scalar alpha : {Scalar(int64_t{1}), Scalar(int64_t{-2}), Scalar(0.5)}) {
          cpu::KernelArg a = alpha.is_double() ? cpu::KernelArg(alpha.to_double())
                                               : cpu::KernelArg(alpha.to_int());
          compare(
              log, fmt::format("index_add dim {} alpha {} {}{}", dim, alpha.to_double(), tag, how),
              "aten.index_add.default", {self.contiguous_copy().value(), dim, idx, source, a},
              [&](const DeviceTensor& o, const auto& t) {
                return index_add(o, *t[0], dim, *t[1], *t[2], alpha, ctx_);
              },
              in_place);
        }
        // One index position (a KV-cache row): in place, the write kernel checks it alone.
        Shape rshape = self.sizes();
        rshape[dim] = 1;
        const Tensor row_source = random(dtype, rshape);
        for (int64_t at : {n - 1, n, int64_t{-1}}) {
          compare(
              log, fmt::format("index_copy one index {} dim {} {}{}", at, dim, tag, how),
              "aten.index_copy.default",
              {self.contiguous_copy().value(), dim, ints(DType::kInt64, {1}, {at}), row_source},
              [&](const DeviceTensor& o, const auto& t) {
                return index_copy(o, *t[0], dim, *t[1], *t[2], ctx_);
              },
              in_place);
        }
        const Tensor bad = ints(DType::kInt32, {3}, {0, n, 1});
        compare(
            log, fmt::format("index_copy bad dim {} {}{}", dim, tag, how),
            "aten.index_copy.default", {self.contiguous_copy().value(), dim, bad, source},
            [&](const DeviceTensor& o, const auto& t) {
              return index_copy(o, *t[0], dim, *t[1], *t[2], ctx_);
            },
            in_place);
        compare(
            log, fmt::format("index_add bad dim {} {}{}", dim, tag, how), "aten.index_add.default",
            {self.contiguous_copy().value(), dim, bad, source, int64_t{1}},
            [&](const DeviceTensor& o, const auto& t) {
              return index_add(o, *t[0], dim, *t[1], *t[2], Scalar(int64_t{1}), ctx_);
            },
            in_place);
        // scatter with duplicates along dim: the last in row-major order wins.
        Shape ishape = {3, 4, 5};
        ishape[dim] = 4;
        std::vector<int64_t> v;
        for (int64_t i = 0; i < shape_numel(ishape); ++i) v.push_back((i * 3) % n);
        const Tensor sidx = ints(DType::kInt64, ishape, v);
        const Tensor src = random(dtype, ishape);
        compare(
            log, fmt::format("scatter.src dim {} {}{}", dim, tag, how), "aten.scatter.src",
            {self.contiguous_copy().value(), dim, sidx, src},
            [&](const DeviceTensor& o, const auto& t) {
              return scatter(o, *t[0], dim, *t[1], &*t[2], Scalar(), ctx_);
            },
            in_place);
        compare(
            log, fmt::format("scatter.value dim {} {}{}", dim, tag, how), "aten.scatter.value",
            {self.contiguous_copy().value(), dim, sidx, 2.5},
            [&](const DeviceTensor& o, const auto& t) {
              return scatter(o, *t[0], dim, *t[1], nullptr, Scalar(2.5), ctx_);
            },
            in_place);
        v[5] = n;
        compare(
            log, fmt::format("scatter bad dim {} {}{}", dim, tag, how), "aten.scatter.src",
            {self.contiguous_copy().value(), dim, ints(DType::kInt64, ishape, v), src},
            [&](const DeviceTensor& o, const auto& t) {
              return scatter(o, *t[0], dim, *t[1], &*t[2], Scalar(), ctx_);
            },
            in_place);
      }
    }
  }
  log.report("index writes");
}

TEST_F(GpuIndexOps, RepeatInterleaveByTensor) {
  FailureLog log;
  for (DType dtype : kAllDTypes) {
    const Tensor self = random(dtype, {3, 4}, Layout::kTransposed);
    struct Case {
      std::vector<int64_t> counts;
      Shape shape;
      std::optional<int64_t> dim;
      DType rdtype;
    };
    for (const Case& c :
         {Case{{2, 0, 1}, {3}, 0, DType::kInt64}, Case{{1, 2, 0, 3}, {4}, -1, DType::kInt32},
          Case{{2}, {}, std::nullopt, DType::kInt64}, Case{{3}, {1}, 1, DType::kInt32},
          Case{{1, -1, 2}, {3}, 0, DType::kInt64}, Case{{1, 2}, {2}, 0, DType::kInt64},
          Case{{0, 0, 0}, {3}, 0, DType::kInt64}}) {
      const Tensor reps = ints(c.rdtype, c.shape, c.counts);
      const cpu::KernelArg dim = c.dim ? cpu::KernelArg(*c.dim) : cpu::KernelArg(std::monostate{});
      compare(log,
              fmt::format("repeat_interleave.self_Tensor {} {} dim {}", dtype_name(dtype),
                          shape_string(c.counts), c.dim.value_or(99)),
              "aten.repeat_interleave.self_Tensor", {self, reps, dim, std::monostate{}},
              [&](const DeviceTensor& o, const auto& t) -> Result<void> {
                SPLICE_ASSIGN_OR_RETURN(
                    auto plan, plan_repeat_interleave(&*t[0], *t[1], c.dim, std::nullopt, ctx_));
                return repeat_interleave_tensor(o, *t[1], plan, ctx_);
              });
    }
  }
  for (DType rdtype : {DType::kInt64, DType::kInt32}) {
    const Tensor reps = ints(rdtype, {4}, {1, 0, 3, 2});
    compare(log, fmt::format("repeat_interleave.Tensor {}", dtype_name(rdtype)),
            "aten.repeat_interleave.Tensor", {reps, std::monostate{}},
            [&](const DeviceTensor& o, const auto& t) -> Result<void> {
              SPLICE_ASSIGN_OR_RETURN(
                  auto plan,
                  plan_repeat_interleave(nullptr, *t[0], std::nullopt, std::nullopt, ctx_));
              return repeat_interleave_tensor(o, *t[0], plan, ctx_);
            });
  }
  log.report("repeat_interleave by tensor");
}

TEST_F(GpuIndexOps, KvCacheRowUpdateMovesOnlyTheRows) {
  // index_copy_(cache, 2, pos, new) on a [1, 8, 2048, 64] f16 cache with a device position: one
  // launch writes 8 x 64 values; the rest of the cache keeps its poison.
  const int64_t heads = 8, len = 2048, dim = 64;
  Destination cache = make_destination(DType::kFloat16, {1, heads, len, dim}, Layout::kContiguous);
  Tensor update = random(DType::kFloat16, {1, heads, 1, dim});
  DeviceCopy dupdate = upload(update);
  const Tensor pos = ints(DType::kInt64, {1}, {1234});
  DeviceCopy dpos = upload(pos);
  const int64_t mallocs_before = cuda_malloc_count();
  ASSERT_TRUE(index_copy(cache.view, cache.view, 2, dpos.view, dupdate.view, ctx_).ok());
  ASSERT_FALSE(take_failure().has_value());
  const int64_t mallocs_first = cuda_malloc_count();
  ASSERT_TRUE(index_copy(cache.view, cache.view, 2, dpos.view, dupdate.view, ctx_).ok());
  EXPECT_EQ(cuda_malloc_count(), mallocs_first) << "a repeated call allocated";
  (void)mallocs_before;
  std::vector<uint16_t> raw(heads * len * dim);
  ASSERT_EQ(cudaMemcpy(raw.data(), cache.buffer.data(), raw.size() * 2, cudaMemcpyDeviceToHost),
            cudaSuccess);
  int64_t written = 0, wrong = 0;
  for (int64_t h = 0; h < heads; ++h)
    for (int64_t s = 0; s < len; ++s)
      for (int64_t d = 0; d < dim; ++d) {
        const uint16_t v = raw[(h * len + s) * dim + d];
        if (s == 1234) {
          ++written;
          wrong += v != update.data<Half>()[h * dim + d].bits;
        } else {
          wrong += v != 0x5A5A;
        }
      }
  EXPECT_EQ(written, heads * dim);
  EXPECT_EQ(wrong, 0);
}

}  // namespace
}  // namespace splice::cuda::testing
