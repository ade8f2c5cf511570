// The CUDA pointwise lowering against the CPU kernels, without a GPU: for every case and dtype
// the lowering fails exactly when the CPU kernel does, with the same message, and otherwise
// gives the CPU result's dtype; every lowered program compiles with NVRTC (merged per dtype, so
// the test makes ten compiles); every lowered target has a case.
#include <gtest/gtest.h>

#include <set>

#include "backends/cuda/nvrtc_compiler.h"
#include "backends/cuda/pointwise_codegen.h"
#include "ir/ops.h"
#include "passes/pass.h"
#include "pointwise_case_args.h"

namespace splice::cuda::testing {
namespace {

using ir::PointwiseProgram;
using ir::PointwiseRef;

// All programs' nodes in one program (one input per dtype, constants and node refs
// renumbered); one output, the last node. Nodes no output needs are still generated, so every
// expression compiles.
PointwiseProgram merge(const std::vector<PointwiseProgram>& programs) {
  PointwiseProgram m;
  std::map<DType, int32_t> input_of;
  std::map<std::pair<int, DType>, int32_t> constant_of;  // (Python kind, dtype)
  for (const PointwiseProgram& p : programs) {
    const int32_t n0 = static_cast<int32_t>(m.nodes.size());
    for (const auto& in : p.inputs)
      if (!input_of.count(in.dtype)) input_of[in.dtype] = m.add_input(in.dtype).index;
    for (const auto& c : p.constants) {
      const auto key = std::make_pair(static_cast<int>(c.value.kind()), c.dtype);
      if (!constant_of.count(key)) constant_of[key] = m.add_constant(c.value, c.dtype).index;
    }
    for (ir::PointwiseNode n : p.nodes) {
      for (PointwiseRef& r : n.operands) {
        if (r.kind == PointwiseRef::Kind::kInput) r.index = input_of[p.inputs[r.index].dtype];
        if (r.kind == PointwiseRef::Kind::kConstant) {
          const auto& c = p.constants[r.index];
          r.index = constant_of[std::make_pair(static_cast<int>(c.value.kind()), c.dtype)];
        }
        if (r.kind == PointwiseRef::Kind::kNode) r.index += n0;
      }
      m.nodes.push_back(n);
    }
  }
  m.add_output(PointwiseRef::node(static_cast<int32_t>(m.nodes.size() - 1)));
  return m;
}

TEST(CudaPointwiseLowering, AgreesWithTheCpuKernelsAndCompiles) {
  std::mt19937 rng(12345);
  std::map<DType, std::vector<PointwiseProgram>> by_dtype;
  FailureLog log;
  int lowered = 0, rejected = 0;
  for (const PointwiseCase& c : pointwise_cases()) {
    for (DType dtype : kAllDTypes) {
      log.ran();
      const std::string name = case_name(c, dtype);
      std::vector<std::optional<Tensor>> tensors;
      auto cpu_arg_list = cpu_args(c, dtype, 3, 5, Layout::kContiguous, rng, tensors);
      cpu::KernelFn kernel = cpu::find_kernel(c.target);
      if (kernel == nullptr && reaches_no_backend(c.target)) continue;
      if (kernel == nullptr) {
        log.add(name + ": no CPU kernel");
        continue;
      }
      auto cpu_result = cpu::call_kernel(kernel, cpu_arg_list);
      const std::vector<OpArg> args = op_args(c, dtype);
      auto program = lower_pointwise_op(c.target, args);
      if (!cpu_result.ok() && c.target == "aten.fill.Tensor" &&
          cpu_result.error().message().find("without overflow") != std::string::npos) {
        // The value lives on the device: the CUDA fill does not check that it fits the dtype
        // (documented in pointwise_lowering_copy.cc).
        continue;
      }
      if (!cpu_result.ok()) {
        ++rejected;
        if (program.ok()) {
          log.add(name + ": the CPU rejects it (" + cpu_result.error().message() +
                  ") but the lowering accepts it");
        } else if (program.error().message() != cpu_result.error().message() ||
                   program.error().kind() != cpu_result.error().kind()) {
          log.add(name + ": CPU says '" + cpu_result.error().message() + "', lowering says '" +
                  program.error().message() + "'");
        }
        continue;
      }
      if (!program.ok()) {
        log.add(name + ": lowering failed: " + program.error().message());
        continue;
      }
      ++lowered;
      const DType want = (*cpu_result)[0].dtype();
      const DType got = program->program.outputs[0].dtype;
      if (got != want) {
        log.add(fmt::format("{}: lowered to {}, the CPU gives {}", name, dtype_name(got),
                            dtype_name(want)));
      }
      for (size_t k = 0; k < program->inputs.size(); ++k) {
        const int arg = program->inputs[k];
        if (arg < 0 || arg >= static_cast<int>(tensors.size()) || !tensors[arg] ||
            tensors[arg]->dtype() != program->program.inputs[k].dtype) {
          log.add(fmt::format("{}: program input {} does not match argument {}", name, k, arg));
        }
      }
      by_dtype[dtype].push_back(program->program);
    }
  }
  log.report("lowering vs CPU kernels");
  EXPECT_GT(lowered, 1000);
  EXPECT_GT(rejected, 50);
  for (auto& [dtype, programs] : by_dtype) {
    auto source = generate_pointwise_source(merge(programs), {});
    ASSERT_TRUE(source.ok()) << dtype_name(dtype) << ": " << source.error().message();
    auto cubin = compile_to_cubin(*source, 90);
    EXPECT_TRUE(cubin.ok()) << dtype_name(dtype) << ": " << cubin.error().message().substr(0, 4000);
  }
}

TEST(CudaPointwiseLowering, EveryTargetHasACase) {
  std::set<std::string> covered;
  for (const PointwiseCase& c : pointwise_cases()) covered.insert(c.target);
  for (std::string_view target : pointwise_lowering_targets()) {
    const bool in_cases = covered.count(std::string(target)) > 0;
    const bool extra =
        target == "aten.bitwise_and.Scalar_Tensor" || target == "aten.bitwise_or.Scalar_Tensor" ||
        target == "aten.bitwise_xor.Scalar_Tensor" || target == "aten.floor_divide.Scalar";
    EXPECT_TRUE(in_cases || extra) << target << " has no test case";
    if (!reaches_no_backend(target)) {
      EXPECT_NE(cpu::find_kernel(target), nullptr) << target << " has no CPU kernel";
    }
  }
}

TEST(CudaPointwiseLowering, UnknownTargetsAndArgumentErrors) {
  const OpArg x = OpArg::tensor(DType::kFloat32, 2);
  auto r = lower_pointwise_op("aten.mm.default", std::vector<OpArg>{x, x});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind(), ErrorKind::kUnsupportedOp);
  r = lower_pointwise_op("aten.add.Tensor", std::vector<OpArg>{x});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message(),
            "aten.add.Tensor: argument 1 (Scalar) is missing (got 1 arguments)");
  r = lower_pointwise_op("aten.add.Tensor", std::vector<OpArg>{OpArg::number(Scalar(1.0)),
                                                               OpArg::number(Scalar(2.0))});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message(), "aten.add.Tensor: expects a tensor operand, got two numbers");
}

TEST(CudaPointwiseLowering, HalfOperandsAreRoundedFirst) {
  // add(f16 tensor, f32 0-d tensor): PyTorch rounds the f32 value to f16 first (result_type is
  // f16); mul keeps it (PyTorch's mul/div kernels read a 0-d second operand in float).
  const std::vector<OpArg> args = {OpArg::tensor(DType::kFloat16, 2),
                                   OpArg::tensor(DType::kFloat32, 0),
                                   OpArg::number(Scalar(int64_t{1}))};
  auto add = lower_pointwise_op("aten.add.Tensor", args);
  ASSERT_TRUE(add.ok()) << add.error().message();
  EXPECT_EQ(ir::to_string(add->program),
            "in0 : f16\nin1 : f32\nn0 = copy(in1) : f16 via f32\nn1 = add(in0, n0) : f16 via "
            "f32\nout0 = n1 : f16\n");
  auto mul = lower_pointwise_op("aten.mul.Tensor", std::vector<OpArg>{args[0], args[1]});
  ASSERT_TRUE(mul.ok()) << mul.error().message();
  EXPECT_EQ(ir::to_string(mul->program),
            "in0 : f16\nin1 : f32\nn0 = mul(in0, in1) : f16 via f32\nout0 = n0 : f16\n");
}

TEST(CudaPointwiseLowering, ArangeLength) {
  EXPECT_EQ(*arange_length("arange", Scalar(int64_t{0}), Scalar(int64_t{10}), Scalar(int64_t{3})),
            4);
  EXPECT_EQ(*arange_length("arange", Scalar(1.0), Scalar(-2.0), Scalar(-0.3)), 10);
  auto bad = arange_length("arange", Scalar(int64_t{0}), Scalar(int64_t{10}), Scalar(int64_t{-1}));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message(),
            "arange: upper bound and larger bound inconsistent with step sign (0 -> 10 step -1)");
}

}  // namespace
}  // namespace splice::cuda::testing
