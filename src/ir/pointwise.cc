// The table of pointwise functions (name, arity, compute classes), PointwiseProgram's builders,
// its validation and its text form.
#include "ir/pointwise.h"

#include <fmt/format.h>

#include <array>
#include <iterator>

namespace splice::ir {

namespace {

// One row per function, in enum order, from the formulas' structs.
template <class F>
constexpr PointwiseFnInfo info_of() {
  return {F::name,
          F::arity,
          pw::compute_classes<F>(),
          pw::is_predicate<F>(),
          pw::has_bool_condition<F>(),
          pw::kernel_only_classes<F>(),
          pw::device_only_classes<F>()};
}

#define SPLICE_PW_ROW(Name) info_of<pw::Name>(),
constexpr PointwiseFnInfo kRows[] = {SPLICE_POINTWISE_FNS(SPLICE_PW_ROW)};
#undef SPLICE_PW_ROW
#define SPLICE_PW_VALUE(Name) PointwiseFn::k##Name,
constexpr PointwiseFn kFns[] = {SPLICE_POINTWISE_FNS(SPLICE_PW_VALUE)};
#undef SPLICE_PW_VALUE
constexpr size_t kFnCount = std::size(kRows);

uint8_t compute_class(DType d) {
  if (d == DType::kBool) return kComputeBool;
  if (is_integral(d)) return kComputeInt;
  return kComputeFloat;
}

std::string ref_string(const PointwiseRef& r) {
  switch (r.kind) {
    case PointwiseRef::Kind::kInput:
      return fmt::format("in{}", r.index);
    case PointwiseRef::Kind::kNode:
      return fmt::format("n{}", r.index);
    case PointwiseRef::Kind::kConstant:
      return fmt::format("c{}", r.index);
    case PointwiseRef::Kind::kLinearIndex:
      return "linear_index";
  }
  return "?";
}

}  // namespace

const PointwiseFnInfo& pointwise_fn_info(PointwiseFn fn) { return kRows[static_cast<size_t>(fn)]; }

const std::vector<PointwiseFn>& all_pointwise_fns() {
  static const std::vector<PointwiseFn> fns = [] {
    std::vector<PointwiseFn> v;
    for (PointwiseFn fn : kFns) v.push_back(fn);
    return v;
  }();
  return fns;
}

PointwiseRef PointwiseProgram::add_input(DType dtype) {
  inputs.push_back({dtype});
  return PointwiseRef::input(static_cast<int32_t>(inputs.size() - 1));
}

PointwiseRef PointwiseProgram::add_constant(Scalar value, DType dtype) {
  constants.push_back({value, dtype});
  return PointwiseRef::constant(static_cast<int32_t>(constants.size() - 1));
}

PointwiseRef PointwiseProgram::add_node(PointwiseFn fn, std::vector<PointwiseRef> operands,
                                        DType result, DType compute) {
  nodes.push_back({fn, std::move(operands), result, compute});
  return PointwiseRef::node(static_cast<int32_t>(nodes.size() - 1));
}

int32_t PointwiseProgram::add_output(PointwiseRef node) {
  outputs.push_back({node.index, nodes[node.index].result});
  return static_cast<int32_t>(outputs.size() - 1);
}

DType operand_dtype(const PointwiseProgram& p, const PointwiseRef& ref) {
  switch (ref.kind) {
    case PointwiseRef::Kind::kInput:
      return p.inputs[ref.index].dtype;
    case PointwiseRef::Kind::kNode:
      return p.nodes[ref.index].result;
    case PointwiseRef::Kind::kConstant:
      return p.constants[ref.index].dtype;
    case PointwiseRef::Kind::kLinearIndex:
      return DType::kInt64;
  }
  return DType::kInt64;
}

DType opmath_dtype(DType dtype) {
  return dtype == DType::kFloat16 || dtype == DType::kBFloat16 ? DType::kFloat32 : dtype;
}

Result<void> validate(const PointwiseProgram& p) {
  auto bad = [](size_t node, std::string what) {
    return make_error(ErrorKind::kInternal, "pointwise program node n{}: {}", node, what);
  };
  for (size_t i = 0; i < p.nodes.size(); ++i) {
    const PointwiseNode& n = p.nodes[i];
    if (static_cast<size_t>(n.fn) >= kFnCount) return bad(i, "unknown function");
    const PointwiseFnInfo& info = pointwise_fn_info(n.fn);
    if (static_cast<int>(n.operands.size()) != info.arity) {
      return bad(
          i, fmt::format("{} takes {} operands, got {}", info.name, info.arity, n.operands.size()));
    }
    for (const PointwiseRef& r : n.operands) {
      const size_t limit = r.kind == PointwiseRef::Kind::kInput      ? p.inputs.size()
                           : r.kind == PointwiseRef::Kind::kNode     ? i
                           : r.kind == PointwiseRef::Kind::kConstant ? p.constants.size()
                                                                     : 1;
      if (r.index < 0 || static_cast<size_t>(r.index) >= limit) {
        return bad(i, fmt::format("operand {} does not name an earlier node, an input or a "
                                  "constant",
                                  ref_string(r)));
      }
    }
    if (n.compute == DType::kFloat16 || n.compute == DType::kBFloat16) {
      return bad(i, fmt::format("{} computes in {}; 16-bit floats compute in float32", info.name,
                                dtype_name(n.compute)));
    }
    if ((info.classes & compute_class(n.compute)) == 0) {
      return bad(i,
                 fmt::format("{} is not defined for {} compute", info.name, dtype_name(n.compute)));
    }
    if (info.bool_result && n.result != DType::kBool) {
      return bad(i, fmt::format("{} gives bool, not {}", info.name, dtype_name(n.result)));
    }
  }
  for (size_t k = 0; k < p.outputs.size(); ++k) {
    const PointwiseOutput& o = p.outputs[k];
    if (o.node < 0 || static_cast<size_t>(o.node) >= p.nodes.size()) {
      return make_error(ErrorKind::kInternal, "pointwise program output {} names node n{} of {}", k,
                        o.node, p.nodes.size());
    }
    if (p.nodes[o.node].result != o.dtype) {
      return make_error(ErrorKind::kInternal,
                        "pointwise program output {} is {} but node n{} gives {}", k,
                        dtype_name(o.dtype), o.node, dtype_name(p.nodes[o.node].result));
    }
  }
  if (p.outputs.empty()) {
    return make_error(ErrorKind::kInternal, "pointwise program has no output");
  }
  return ok_result();
}

std::string to_string(const PointwiseProgram& p) {
  std::string s;
  for (size_t i = 0; i < p.inputs.size(); ++i)
    s += fmt::format("in{} : {}\n", i, dtype_name(p.inputs[i].dtype));
  for (size_t i = 0; i < p.constants.size(); ++i) {
    const Scalar& v = p.constants[i].value;
    const std::string value = v.is_double() ? fmt::format("{}", v.to_double())
                              : v.is_bool() ? (v.to_bool() ? "True" : "False")
                                            : fmt::format("{}", v.to_int());
    s += fmt::format("c{} = {} : {}\n", i, value, dtype_name(p.constants[i].dtype));
  }
  for (size_t i = 0; i < p.nodes.size(); ++i) {
    const PointwiseNode& n = p.nodes[i];
    std::string args;
    for (const PointwiseRef& r : n.operands) args += (args.empty() ? "" : ", ") + ref_string(r);
    s += fmt::format("n{} = {}({}) : {} via {}\n", i, pointwise_fn_info(n.fn).name, args,
                     dtype_name(n.result), dtype_name(n.compute));
  }
  for (size_t k = 0; k < p.outputs.size(); ++k)
    s += fmt::format("out{} = n{} : {}\n", k, p.outputs[k].node, dtype_name(p.outputs[k].dtype));
  return s;
}

}  // namespace splice::ir
