#pragma once
// Helpers for the CPU kernel tests: build tensors from literal values, read them back as
// doubles, and call a registered kernel by its export target.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "backends/cpu/registry.h"
#include "tensor/convert.h"
#include "tensor/dtype_dispatch.h"
#include "tensor/tensor.h"

namespace splice::cpu::testing {

inline Tensor make(DType dtype, const Shape& sizes, const std::vector<double>& values) {
  Tensor t = Tensor::empty(dtype, sizes).value();
  EXPECT_EQ(static_cast<int64_t>(values.size()), t.numel());
  dispatch_dtype(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    for (size_t i = 0; i < values.size(); ++i) t.data<T>()[i] = cast_value<T>(values[i]);
  });
  return t;
}

inline std::vector<double> values(const Tensor& t) {
  const Tensor c = t.contiguous_copy().value();
  std::vector<double> out(c.numel());
  dispatch_dtype(c.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    for (size_t i = 0; i < out.size(); ++i) out[i] = cast_value<double>(c.data<T>()[i]);
  });
  return out;
}

inline Result<std::vector<Tensor>> call(const std::string& target, std::vector<KernelArg> args) {
  KernelFn fn = find_kernel(target);
  if (fn == nullptr) return make_error(ErrorKind::kUnsupportedOp, "no kernel for {}", target);
  return call_kernel(fn, args);
}

// Calls a kernel that must succeed and returns its single output.
inline Tensor call1(const std::string& target, std::vector<KernelArg> args) {
  auto r = call(target, std::move(args));
  EXPECT_TRUE(r.ok()) << target << ": " << (r.ok() ? "" : r.error().message());
  if (!r.ok()) return Tensor::empty(DType::kFloat32, {0}).value();
  EXPECT_EQ(r->size(), 1u);
  return (*r)[0];
}

// The error of a kernel call that must fail.
inline Error call_error(const std::string& target, std::vector<KernelArg> args) {
  auto r = call(target, std::move(args));
  EXPECT_FALSE(r.ok()) << target << " unexpectedly succeeded";
  if (r.ok()) return Error(ErrorKind::kInternal, "");
  return r.error();
}

inline KernelArg none() { return std::monostate{}; }
inline KernelArg i64(int64_t v) { return v; }
inline KernelArg f64(double v) { return v; }
inline KernelArg ints(std::vector<int64_t> v) { return v; }

}  // namespace splice::cpu::testing
