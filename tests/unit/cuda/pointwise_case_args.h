#pragma once
// Turns a PointwiseCase into the CPU kernel's arguments (random tensors) and the
// pointwise lowering's OpArgs, for one dtype and one (N, M).

#include <random>
#include <vector>

#include "backends/cpu/registry.h"
#include "cuda_test_util.h"
#include "ir/pointwise_lowering.h"
#include "pointwise_cases.h"

namespace splice::cuda::testing {

// The lowering lives in the IR (the planner fuses with it); the tests name it unqualified.
using ir::arange_length;
using ir::has_pointwise_lowering;
using ir::lower_pointwise_op;
using ir::LoweredPointwise;
using ir::OpArg;
using ir::pointwise_lowering_targets;

inline Shape instantiate(const std::vector<int64_t>& shape, int64_t n, int64_t m) {
  Shape s;
  for (int64_t d : shape) s.push_back(d == -1 ? n : d == -2 ? m : d);
  return s;
}

// The CPU arguments; `tensors` receives each tensor argument (nullopt for the others).
inline std::vector<cpu::KernelArg> cpu_args(const PointwiseCase& c, DType dtype, int64_t n,
                                            int64_t m, Layout layout, std::mt19937& rng,
                                            std::vector<std::optional<Tensor>>& tensors) {
  std::vector<cpu::KernelArg> args;
  tensors.clear();
  for (const ArgSpec& a : c.args) {
    std::optional<Tensor> tensor;
    switch (a.kind) {
      case ArgSpec::Kind::kTensor: {
        Tensor t = make_layout(a.dtype.value_or(dtype), instantiate(a.shape, n, m), layout);
        fill_random(t, a.values, rng);
        tensor = t;
        args.push_back(t);
        break;
      }
      case ArgSpec::Kind::kNumber:
        if (a.number.is_bool())
          args.push_back(a.number.to_bool());
        else if (a.number.is_int())
          args.push_back(a.number.to_int());
        else
          args.push_back(a.number.to_double());
        break;
      case ArgSpec::Kind::kString:
        args.push_back(a.text);
        break;
      case ArgSpec::Kind::kNone:
        args.push_back(std::monostate{});
        break;
      case ArgSpec::Kind::kDType:
        args.push_back(a.dtype.value_or(dtype));
        break;
      case ArgSpec::Kind::kIntList:
        args.push_back(instantiate(a.shape, n, m));
        break;
    }
    tensors.push_back(tensor);
  }
  return args;
}

inline std::vector<OpArg> op_args(const PointwiseCase& c, DType dtype) {
  std::vector<OpArg> args;
  for (const ArgSpec& a : c.args) {
    switch (a.kind) {
      case ArgSpec::Kind::kTensor:
        args.push_back(
            OpArg::tensor(a.dtype.value_or(dtype), static_cast<int64_t>(a.shape.size())));
        break;
      case ArgSpec::Kind::kNumber:
        args.push_back(OpArg::number(a.number));
        break;
      case ArgSpec::Kind::kString:
        args.push_back(OpArg::string(a.text));
        break;
      case ArgSpec::Kind::kNone:
      case ArgSpec::Kind::kIntList:  // sizes only matter to the caller, not the program
        args.push_back(OpArg::none());
        break;
      case ArgSpec::Kind::kDType:
        args.push_back(OpArg::scalar_type(a.dtype.value_or(dtype)));
        break;
    }
  }
  return args;
}

inline std::string case_name(const PointwiseCase& c, DType dtype) {
  std::string s = c.target + "(";
  for (size_t i = 0; i < c.args.size(); ++i) {
    const ArgSpec& a = c.args[i];
    if (i) s += ", ";
    switch (a.kind) {
      case ArgSpec::Kind::kTensor:
        s += std::string(dtype_name(a.dtype.value_or(dtype))) + shape_string(a.shape);
        break;
      case ArgSpec::Kind::kNumber:
        s += a.number.is_double() ? fmt::format("{}", a.number.to_double())
             : a.number.is_bool() ? (a.number.to_bool() ? "True" : "False")
                                  : fmt::format("{}", a.number.to_int());
        break;
      case ArgSpec::Kind::kString:
        s += "'" + a.text + "'";
        break;
      case ArgSpec::Kind::kNone:
        s += "None";
        break;
      case ArgSpec::Kind::kDType:
        s += dtype_name(a.dtype.value_or(dtype));
        break;
      case ArgSpec::Kind::kIntList:
        s += shape_string(a.shape);
        break;
    }
  }
  return s + ")";
}

}  // namespace splice::cuda::testing
