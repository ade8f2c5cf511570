#pragma once
// What every backend's kernels share to read their arguments: typed access to a kernel's
// argument list (Args), the error macro that prefixes the op name (KCHECK) and the c10
// conversion of a Python number into a 0-d tensor. Every accessor error names the op and the
// argument position, so a malformed plan step is reported (with the same message on every
// backend) rather than crashing.

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "backends/kernel_abi.h"
#include "support/error.h"
#include "tensor/scalar.h"
#include "tensor/tensor.h"

// Returns an Error of `kind` prefixed with the op name (a local `op` must be in scope).
#define KCHECK(cond, kind, fmt_str, ...) \
  SPLICE_CHECK_OR_RETURN(cond, kind, "{}: " fmt_str, op __VA_OPT__(, ) __VA_ARGS__)

namespace splice::backend {

class Args {
 public:
  Args(std::string_view op, std::span<const KernelArg> args) : op_(op), args_(args) {}

  size_t size() const { return args_.size(); }
  // Whether argument i is absent (past the end) or None.
  bool is_none(size_t i) const;
  // Whether argument i is a defined tensor (checks nothing else, formats nothing).
  bool is_tensor(size_t i) const {
    const Tensor* t = i < args_.size() ? std::get_if<Tensor>(&args_[i]) : nullptr;
    return t != nullptr && t->defined();
  }

  Result<Tensor> tensor(size_t i) const;
  Result<int64_t> integer(size_t i) const;
  Result<std::optional<int64_t>> opt_integer(size_t i) const;
  Result<bool> boolean(size_t i) const;
  // A missing or None argument reads as `fallback`.
  Result<bool> boolean_or(size_t i, bool fallback) const;
  Result<Scalar> scalar(size_t i) const;
  Result<Scalar> scalar_or(size_t i, Scalar fallback) const;
  Result<std::optional<DType>> opt_dtype(size_t i) const;
  // int[] argument; a single int is accepted as a one-element list (int[1] dims).
  Result<std::vector<int64_t>> int_list(size_t i) const;
  Result<std::optional<std::vector<int64_t>>> opt_int_list(size_t i) const;
  Result<std::vector<Tensor>> tensor_list(size_t i) const;
  Result<std::vector<std::optional<Tensor>>> opt_tensor_list(size_t i) const;
  Result<std::optional<std::string>> opt_string(size_t i) const;

 private:
  Error bad(size_t i, std::string_view expected) const;
  std::string_view op_;
  std::span<const KernelArg> args_;
};

// A 0-d host tensor of `dtype` holding s converted as c10 converts it (300 into int8 is 44),
// or kBackend when its eight bytes cannot be allocated. The CUDA backend takes the bytes of a
// fill constant from it.
Result<Tensor> scalar_to_tensor(const Scalar& s, DType dtype);

}  // namespace splice::backend
