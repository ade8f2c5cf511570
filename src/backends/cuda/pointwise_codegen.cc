// Generates the CUDA source of a PointwiseProgram: the parameter struct (PointwiseParamLayout),
// a compute() function holding the program's nodes in order (each operand converted to the
// node's compute type, the expression from pointwise_expressions.cc, the result converted to the
// node's result dtype), a prepare() step that applies positions read on the device (checked
// against their dim, recording the error word) and skips the launch when the call has already
// failed, and the three kernels that walk the iteration space.
#include "backends/cuda/pointwise_codegen.h"

#include <fmt/format.h>

#include "backends/cuda/error_word.h"
#include "backends/cuda/pointwise_expressions.h"

namespace splice::cuda {

using ir::PointwiseProgram;
using ir::PointwiseRef;

int PointwiseVariant::dynamic_count() const {
  int n = 0;
  for (bool d : dynamic) n += d ? 1 : 0;
  return n;
}

const char* pointwise_storage_type(DType dtype) {
  switch (dtype) {
    case DType::kBool:
      return "bool";
    case DType::kUInt8:
      return "unsigned char";
    case DType::kInt8:
      return "signed char";
    case DType::kInt16:
      return "short";
    case DType::kInt32:
      return "int";
    case DType::kInt64:
      return "long long";
    case DType::kFloat16:
      return "sp_half";
    case DType::kFloat32:
      return "float";
    case DType::kFloat64:
      return "double";
    case DType::kBFloat16:
      return "sp_bf16";
  }
  return "void";
}

namespace {

std::string operand_name(const PointwiseRef& r) {
  switch (r.kind) {
    case PointwiseRef::Kind::kInput:
      return fmt::format("a{}", r.index);
    case PointwiseRef::Kind::kNode:
      return fmt::format("n{}", r.index);
    case PointwiseRef::Kind::kConstant:
      return fmt::format("c{}", r.index);
    case PointwiseRef::Kind::kLinearIndex:
      return "li";
  }
  return "?";
}

// The dtype a Python number has before it is materialised (bool, int64 or float64).
DType python_dtype(const Scalar& s) {
  return s.is_bool() ? DType::kBool : s.is_int() ? DType::kInt64 : DType::kFloat64;
}

}  // namespace

Result<std::string> pointwise_compute_function(const PointwiseProgram& p) {
  const size_t nin = p.inputs.size(), nout = p.outputs.size();
  std::string params;
  for (size_t k = 0; k < nin; ++k)
    params += fmt::format(", const {} a{}", pointwise_storage_type(p.inputs[k].dtype), k);
  for (size_t k = 0; k < nout; ++k)
    params += fmt::format(", {}& r{}", pointwise_storage_type(p.outputs[k].dtype), k);
  std::string s = fmt::format(
      "__device__ __forceinline__ void compute(const Params& p, const long long li{}) {{\n",
      params);
  for (size_t k = 0; k < p.constants.size(); ++k) {
    const ir::PointwiseConstant& c = p.constants[k];
    const DType from = python_dtype(c.value);
    const std::string raw = from == DType::kFloat64
                                ? fmt::format("__longlong_as_double(p.consts[{}])", k)
                            : from == DType::kBool ? fmt::format("(p.consts[{}] != 0)", k)
                                                   : fmt::format("p.consts[{}]", k);
    s += fmt::format("  const {} c{} = {};\n", pointwise_storage_type(c.dtype), k,
                     convert_expression(from, c.dtype, raw));
  }
  for (size_t i = 0; i < p.nodes.size(); ++i) {
    const ir::PointwiseNode& n = p.nodes[i];
    const ir::PointwiseFnInfo& info = ir::pointwise_fn_info(n.fn);
    auto expr = pointwise_expression(n.fn, n.compute);
    if (!expr) {
      return make_error(ErrorKind::kUnsupportedOp,
                        "pointwise function {} has no CUDA expression for {} compute", info.name,
                        dtype_name(n.compute));
    }
    static constexpr const char* kSlots[] = {"{x}", "{y}", "{z}", "{w}"};
    for (size_t k = 0; k < n.operands.size(); ++k) {
      const PointwiseRef& r = n.operands[k];
      // where's condition is a bool; every other operand takes the compute type.
      const DType target = info.bool_condition && k == 0 ? DType::kBool : n.compute;
      const std::string var = fmt::format("n{}_{}", i, k);
      s += fmt::format("  const {} {} = {};\n", pointwise_storage_type(target), var,
                       convert_expression(operand_dtype(p, r), target, operand_name(r)));
      std::string& e = *expr;
      for (size_t pos = e.find(kSlots[k]); pos != std::string::npos; pos = e.find(kSlots[k], pos))
        e.replace(pos, 3, var);
    }
    const DType expr_dtype = info.bool_result ? DType::kBool : n.compute;
    s += fmt::format("  const {} n{} = {};  // {}\n", pointwise_storage_type(n.result), i,
                     convert_expression(expr_dtype, n.result, *expr), info.name);
  }
  for (size_t k = 0; k < nout; ++k) s += fmt::format("  r{} = n{};\n", k, p.outputs[k].node);
  s += "}\n";
  return s;
}

Result<std::string> generate_pointwise_source(const PointwiseProgram& p,
                                              const PointwiseVariant& variant) {
  SPLICE_TRY(ir::validate(p));
  const int nin = static_cast<int>(p.inputs.size());
  const int nout = static_cast<int>(p.outputs.size());
  const int nops = nin + nout;
  SPLICE_CHECK_OR_RETURN(nops <= kMaxPointwiseOperands, ErrorKind::kUnsupportedOp,
                         "a pointwise program with {} operands exceeds the {} a kernel takes", nops,
                         kMaxPointwiseOperands);
  SPLICE_CHECK_OR_RETURN(static_cast<int>(p.constants.size()) <= kMaxPointwiseConstants,
                         ErrorKind::kUnsupportedOp,
                         "a pointwise program with {} constants exceeds the {} a kernel takes",
                         p.constants.size(), kMaxPointwiseConstants);
  std::vector<DType> types;
  for (const auto& in : p.inputs) types.push_back(in.dtype);
  for (const auto& out : p.outputs) types.push_back(out.dtype);

  // Nothing value-dependent goes into the source: it is the cache key.
  std::string s = "// splice pointwise kernel (generated)\n";
  s += pointwise_preamble();
  // The parameter block (PointwiseParamLayout).
  s += "struct Dyn { const long long* pos; long long stride; long long size; long long extent; "
       "long long dim; };\n";
  s += "struct Params {\n  long long numel;\n  long long rank;\n  long long sizes[8];\n";
  s += fmt::format("  char* ptr[{}];\n  long long strides[{}][8];\n", nops, nops);
  s += "  long long* err;\n  long long site;\n";
  if (!p.constants.empty()) s += fmt::format("  long long consts[{}];\n", p.constants.size());
  const int ndyn = variant.dynamic_count();
  if (ndyn > 0) s += fmt::format("  Dyn dyn[{}];\n", ndyn);
  s += "  long long vec;\n  unsigned long long divs[8];\n};\n";
  SPLICE_ASSIGN_OR_RETURN(std::string compute, pointwise_compute_function(p));
  s += compute;

  // prepare(): the call's error word, then the positions read on the device.
  s += "__device__ __forceinline__ bool prepare(const Params& p, char** ptr) {\n";
  s += "  if (sp_failed(p.err)) return false;\n";
  s += fmt::format("  for (int k = 0; k < {}; ++k) ptr[k] = p.ptr[k];\n", nops);
  for (int k = 0, j = 0; k < nops; ++k) {
    if (!variant.is_dynamic(k)) continue;
    s += fmt::format(
        "  {{\n    const Dyn& d = p.dyn[{j}];\n    const long long pos = *d.pos;\n"
        "    if (pos < 0 || pos > d.size - d.extent) {{\n"
        "      sp_fail(p.err, p.site, {check}, pos, d.size, d.dim, d.extent);\n"
        "      return false;\n    }}\n"
        "    ptr[{k}] += pos * d.stride * (long long)sizeof({type});\n  }}\n",
        fmt::arg("j", j), fmt::arg("k", k),
        fmt::arg("check", static_cast<int64_t>(DeviceCheck::kPositionOutOfRange)),
        fmt::arg("type", pointwise_storage_type(types[k])));
    ++j;
  }
  s += "  return true;\n}\n";

  // One element at given operand offsets.
  std::string loads, call_args, stores;
  for (int k = 0; k < nin; ++k) {
    const char* t = pointwise_storage_type(types[k]);
    loads += fmt::format(
        "  const {t} a{k} = *(const {t}*)(ptr[{k}] + (long long)off[{k}] * "
        "(long long)sizeof({t}));\n",
        fmt::arg("t", t), fmt::arg("k", k));
    call_args += fmt::format(", a{}", k);
  }
  for (int k = 0; k < nout; ++k) {
    const char* t = pointwise_storage_type(types[nin + k]);
    loads += fmt::format("  {} r{};\n", t, k);
    call_args += fmt::format(", r{}", k);
    stores += fmt::format(
        "  *({t}*)(ptr[{o}] + (long long)off[{o}] * (long long)sizeof({t})) = "
        "r{k};\n",
        fmt::arg("t", t), fmt::arg("o", nin + k), fmt::arg("k", k));
  }
  s += fmt::format(
      "template <typename Index>\n"
      "__device__ __forceinline__ void element(const Params& p, char* const* ptr, const Index* "
      "off, long long li) {{\n{}  compute(p, li{});\n{}}}\n",
      loads, call_args, stores);

  // Coordinates from the linear index `rest`, offsets per operand (off[k]). The 32-bit
  // decomposition divides by each dim's size with its precomputed divisor (divisor_of), the
  // 64-bit one with the divide instruction.
  auto decompose = [&](const char* index) {
    const bool narrow = std::string_view(index) == "int";
    const char* divide =
        narrow ? "        const unsigned long long dv = p.divs[d];\n"
                 "        const unsigned q = (__umulhi((unsigned)rest, (unsigned)dv) + "
                 "(unsigned)rest) >> (unsigned)(dv >> 32);\n"
                 "        const int c = (int)((unsigned)rest - q * (unsigned)size);\n"
                 "        rest = (int)q;\n"
               : "        const long long c = rest % size;\n        rest /= size;\n";
    return fmt::format(
        "    {I} off[{n}];\n#pragma unroll\n    for (int k = 0; k < {n}; ++k) off[k] = 0;\n"
        "#pragma unroll\n    for (int d = 7; d >= 0; --d) {{\n"
        "      if (d < p.rank) {{\n        const {I} size = ({I})p.sizes[d];\n"
        "{divide}#pragma unroll\n"
        "        for (int k = 0; k < {n}; ++k) off[k] += c * ({I})p.strides[k][d];\n      }}\n"
        "    }}\n",
        fmt::arg("n", nops), fmt::arg("I", index), fmt::arg("divide", divide));
  };
  // Strided kernels: one element a thread per step.
  for (const char* index : {"int", "long long"}) {
    const bool narrow = std::string_view(index) == "int";
    s += fmt::format(
        "extern \"C\" __global__ void __launch_bounds__(256) {name}(const Params p) {{\n"
        "  sp_dependent_start();\n  char* ptr[{n}];\n  if (!prepare(p, ptr)) return;\n"
        "  const long long step = (long long)gridDim.x * blockDim.x;\n"
        "  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < p.numel; "
        "i += step) {{\n    {I} rest = ({I})i;\n{decompose}"
        "    element<{I}>(p, ptr, off, i);\n  }}\n}}\n",
        fmt::arg("name", narrow ? kPointwiseStrided32Kernel : kPointwiseStrided64Kernel),
        fmt::arg("n", nops), fmt::arg("I", index), fmt::arg("decompose", decompose(index)));
  }

  // Four elements a thread: `at(k)` is operand k's first element when its four are consecutive
  // (`spread(k)`), `single(k)` the element broadcast over them when they are not.
  auto vec_body = [&](auto at, auto single, auto spread) {
    std::string loads, compute, args, stores;
    for (int k = 0; k < nin; ++k) {
      const char* t = pointwise_storage_type(types[k]);
      loads += fmt::format(
          "      {t} a{k}[4];\n      if ({spread}) {{\n"
          "        const sp_vec4<{t}> v = *(const sp_vec4<{t}>*)({at});\n"
          "        for (int j = 0; j < 4; ++j) a{k}[j] = v.v[j];\n      }} else {{\n"
          "        for (int j = 0; j < 4; ++j) a{k}[j] = *(const {t}*)({single});\n      }}\n",
          fmt::arg("t", t), fmt::arg("k", k), fmt::arg("at", at(k, t)),
          fmt::arg("single", single(k, t)), fmt::arg("spread", spread(k)));
      args += fmt::format(", a{}[j]", k);
    }
    for (int k = 0; k < nout; ++k) {
      const char* t = pointwise_storage_type(types[nin + k]);
      compute += fmt::format("      sp_vec4<{}> r{};\n", t, k);
      args += fmt::format(", r{}.v[j]", k);
      stores += fmt::format("      *(sp_vec4<{t}>*)({at}) = r{k};\n", fmt::arg("t", t),
                            fmt::arg("at", at(nin + k, t)), fmt::arg("k", k));
    }
    return fmt::format(
        "{}{}#pragma unroll\n      for (int j = 0; j < 4; ++j) compute(p, first + j{});\n{}", loads,
        compute, args, stores);
  };

  // Contiguous kernel: each operand dense (strides[k][0] == 1) or one broadcast element (0).
  const std::string dense = vec_body(
      [](int k, const char* t) {
        return fmt::format("ptr[{}] + first * (long long)sizeof({})", k, t);
      },
      [](int k, const char*) { return fmt::format("ptr[{}]", k); },
      [](int k) { return fmt::format("p.strides[{}][0]", k); });
  s += fmt::format(
      "extern \"C\" __global__ void __launch_bounds__(256) {name}(const Params p) {{\n"
      "  sp_dependent_start();\n  char* ptr[{n}];\n  if (!prepare(p, ptr)) return;\n"
      "  const long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  const long long step = (long long)gridDim.x * blockDim.x;\n"
      "  long long tail = 0;\n"
      "  if (p.vec) {{\n    const long long groups = p.numel / 4;\n"
      "    for (long long g = tid; g < groups; g += step) {{\n"
      "      const long long first = g * 4;\n{body}"
      "    }}\n    tail = groups * 4;\n  }}\n"
      "  for (long long i = tail + tid; i < p.numel; i += step) {{\n"
      "    long long off[{n}];\n#pragma unroll\n"
      "    for (int k = 0; k < {n}; ++k) off[k] = i * p.strides[k][0];\n"
      "    element<long long>(p, ptr, off, i);\n  }}\n}}\n",
      fmt::arg("name", kPointwiseContiguousKernel), fmt::arg("n", nops), fmt::arg("body", dense));

  // Rows kernel: strided rows whose innermost dim (rank - 1) is dense in every operand, or
  // broadcast (stride 0) in an input, its size a multiple of 4 and every row start aligned for
  // four elements (pointwise_launch.cc checks): four elements a thread, the coordinates once
  // for the four (the rotary chain's half rows, slices of a wider row).
  const auto at_offset = [](int k, const char* t) {
    return fmt::format("ptr[{}] + (long long)off[{}] * (long long)sizeof({})", k, k, t);
  };
  const std::string rows = vec_body(
      at_offset, at_offset, [](int k) { return fmt::format("p.strides[{}][p.rank - 1]", k); });
  s += fmt::format(
      "extern \"C\" __global__ void __launch_bounds__(256) {name}(const Params p) {{\n"
      "  sp_dependent_start();\n  char* ptr[{n}];\n  if (!prepare(p, ptr)) return;\n"
      "  const long long step = (long long)gridDim.x * blockDim.x;\n"
      "  for (long long g = (long long)blockIdx.x * blockDim.x + threadIdx.x; g < p.numel / 4; "
      "g += step) {{\n    const long long first = g * 4;\n    int rest = (int)first;\n"
      "{decompose}{body}  }}\n}}\n",
      fmt::arg("name", kPointwiseRows4Kernel), fmt::arg("n", nops),
      fmt::arg("decompose", decompose("int")), fmt::arg("body", rows));
  return s;
}

uint64_t divisor_of(uint32_t d) {
  if (d == 0) return 0;  // no dim of size 0 reaches a launch (it has no elements)
  uint32_t shift = 0;
  while ((uint64_t{1} << shift) < d) ++shift;
  const uint64_t magic = ((uint64_t{1} << 32) * ((uint64_t{1} << shift) - d)) / d + 1;
  return magic | (uint64_t{shift} << 32);
}

}  // namespace splice::cuda
