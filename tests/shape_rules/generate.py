#!/usr/bin/env python3
"""Writes tests/shape_rules/pytorch_cases.txt: one-node programs whose recorded output types are
what PyTorch's own meta functions give (FakeTensorMode), so that the C++ test
(tests/unit/ir/shape_rules_golden_test.cc) checks splice's shape rules against PyTorch op by op
over many dtype and shape combinations: type promotion with tensors of one or more dims, 0-d
tensors and Python numbers; broadcasting; reductions with dim/keepdim/dtype; views; indexing;
factories; the matmul family; normalisation and attention. Calls PyTorch refuses are left out
(the recorded cases and tests/shape_rules/type_check.txt test refusals).

Needs torch 2.11. Run from anywhere:  python3 tests/shape_rules/generate.py
Output is deterministic (no random values are involved).
"""

import itertools
import logging
import math
import os

import torch
from torch._subclasses.fake_tensor import FakeTensorMode

logging.getLogger("torch._subclasses.fake_tensor").setLevel(logging.CRITICAL)

HERE = os.path.dirname(os.path.abspath(__file__))
aten = torch.ops.aten

SHORT = {
    torch.bool: "bool", torch.uint8: "u8", torch.int8: "i8", torch.int16: "i16",
    torch.int32: "i32", torch.int64: "i64", torch.float16: "f16", torch.bfloat16: "bf16",
    torch.float32: "f32", torch.float64: "f64",
}
b, u8, i8, i16, i32, i64 = torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64
f16, bf16, f32, f64 = torch.float16, torch.bfloat16, torch.float32, torch.float64
ALL = [b, u8, i8, i16, i32, i64, f16, bf16, f32, f64]
FLOATS = [f16, bf16, f32, f64]


class T:
    """A tensor input of the program."""

    def __init__(self, dtype, shape):
        self.dtype, self.shape = dtype, tuple(shape)


class Kw(dict):
    """Keyword arguments of a call."""


def fmt_value(v, names):
    if isinstance(v, T):
        return "%" + names[id(v)]
    if v is None:
        return "None"
    if isinstance(v, bool):
        return "True" if v else "False"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        s = repr(v)
        return s if ("." in s or "e" in s) else s + ".0"
    if isinstance(v, str):
        return '"' + v + '"'
    if isinstance(v, torch.dtype):
        return SHORT[v]
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(fmt_value(x, names) for x in v) + "]"
    raise TypeError(v)


def type_str(dtype, shape):
    return "%s[%s]" % (SHORT[dtype], ", ".join(str(int(s)) for s in shape))


def tensors_in(args):
    out = []
    for a in args:
        if isinstance(a, T):
            out.append(a)
        elif isinstance(a, (list, tuple)):
            out.extend(x for x in a if isinstance(x, T))
    return out


def materialize(v, mode, made, device="cpu"):
    """A fake tensor under `mode`, or (mode None) a real one of zeros, the data every index,
    repeat count and mask can take."""
    if isinstance(v, T):
        if id(v) not in made:
            if mode is None:
                made[id(v)] = torch.zeros(v.shape, dtype=v.dtype)
            else:
                with mode:
                    made[id(v)] = torch.empty(v.shape, dtype=v.dtype, device=device)
        return made[id(v)]
    if isinstance(v, (list, tuple)):
        return [materialize(x, mode, made, device) for x in v]
    return v


blocks = []
labels = {}
refused = []  # calls the meta functions accept and eager PyTorch refuses


def case(target, *args, kw=None, device="cpu"):
    """Runs aten.<target>(*args, **kw) on fake tensors and records a block, unless PyTorch
    refuses the call. device="cuda" makes fake CUDA tensors (the CUDA-only attention kernels,
    whose meta functions need no GPU; eager is not consulted then)."""
    kw = kw or {}
    name, overload = target.rsplit(".", 1)
    op = getattr(getattr(aten, name), overload)
    mode = FakeTensorMode()
    made = {}
    try:
        real_args = [materialize(a, mode, made, device) for a in args]
        real_kw = {k: materialize(v, mode, made, device) for k, v in kw.items()}
        with mode:
            result = op(*real_args, **real_kw)
    except Exception:
        return False
    # Eager PyTorch must accept the call too: meta functions skip some dtype checks that the
    # CPU kernels make (bitwise ops on floats, var of integers, einsum of mixed dtypes).
    try:
        if device != "cpu":
            raise ZeroDivisionError  # no eager run
        eager_made = {}
        eager_args = [materialize(a, None, eager_made) for a in args]
        eager_kw = {k: materialize(v, None, eager_made) for k, v in kw.items()}
        op(*eager_args, **eager_kw)
    except ZeroDivisionError:
        pass  # integer division of the zeros: a value, not a type, PyTorch refuses
    except Exception as e:
        message = str(e).splitlines()[0] if str(e) else type(e).__name__
        if "allocated size does not match" not in message:  # zero repeats vs output_size
            refused.append("%s: %s" % (target, message[:100]))
            return False
    outs = list(result) if isinstance(result, (tuple, list)) else [result]
    if not any(isinstance(o, torch.Tensor) and o.dtype in SHORT for o in outs):
        return False
    inputs = []
    for t in tensors_in(list(args) + list(kw.values())):
        if id(t) not in [id(x) for x in inputs]:
            inputs.append(t)
    names = {id(t): "x%d" % i for i, t in enumerate(inputs)}
    header = ", ".join("%%%s: %s" % (names[id(t)], type_str(t.dtype, t.shape)) for t in inputs)
    def result_str(i, o):
        # An output splice cannot represent (None, a uint64 seed) is unused: `_`.
        if isinstance(o, torch.Tensor) and o.dtype in SHORT:
            return "%%out%d: %s" % (i, type_str(o.dtype, o.shape))
        if isinstance(o, int) and not isinstance(o, bool):
            return "%%out%d: SymInt(%d)" % (i, o)
        return "_"

    results = [result_str(i, o) for i, o in enumerate(outs)]
    used = ["%%out%d" % i for i, r in enumerate(results) if r.startswith("%") and "SymInt" not in r]
    call = ", ".join([fmt_value(a, names) for a in args] +
                     ["%s=%s" % (k, fmt_value(v, names)) for k, v in kw.items()])
    base = "aten_" + target.replace(".", "_")
    labels[base] = labels.get(base, 0) + 1
    blocks.append("// RUN %s_%d\ngraph(%s) {\n  %s = aten.%s(%s)\n  return (%s)\n}\n// OK\n" % (
        base, labels[base], header, ", ".join(results), target, call, ", ".join(used)))
    return True


def operands(dtype):
    """A dimensioned tensor, a 0-d tensor and Python numbers of a dtype's kind."""
    yield T(dtype, (3, 1))
    yield T(dtype, ())


NUMBERS = [True, 2, 2.5]

# ---- pointwise binary: promotion over dtype pairs and numbers ----
for x, y in itertools.product(ALL, ALL):
    case("add.Tensor", T(x, (2, 3)), T(y, (3,)))
    case("add.Tensor", T(x, (2, 3)), T(y, ()))
for x in ALL:
    for n in NUMBERS:
        case("add.Tensor", T(x, (2, 3)), n)
        case("add.Scalar", T(x, (2, 3)), n)
        case("mul.Tensor", T(x, ()), n)
binary = ["sub.Tensor", "mul.Tensor", "div.Tensor", "remainder.Tensor", "fmod.Tensor",
          "floor_divide.default", "atan2.default", "minimum.default", "maximum.default",
          "pow.Tensor_Tensor", "bitwise_and.Tensor", "bitwise_or.Tensor", "bitwise_xor.Tensor",
          "__and__.Tensor", "__or__.Tensor", "__xor__.Tensor", "logical_and.default",
          "logical_or.default", "logical_xor.default", "eq.Tensor", "ne.Tensor", "lt.Tensor",
          "le.Tensor", "gt.Tensor", "ge.Tensor", "rsub.Tensor"]
pairs = [(b, b), (b, i32), (u8, i8), (i32, i64), (i32, f16), (f16, bf16), (bf16, f32),
         (f32, f64), (i64, f64)]
for target in binary:
    for x, y in pairs:
        case(target, T(x, (4, 1, 3)), T(y, (2, 1)))
        case(target, T(x, (2, 3)), T(y, ()))
scalar_binary = ["sub.Scalar", "mul.Scalar", "div.Scalar", "remainder.Scalar", "fmod.Scalar",
                 "pow.Tensor_Scalar", "bitwise_and.Scalar", "bitwise_or.Scalar",
                 "bitwise_xor.Scalar", "__and__.Scalar", "__or__.Scalar", "__xor__.Scalar",
                 "eq.Scalar", "ne.Scalar", "lt.Scalar", "le.Scalar", "gt.Scalar", "ge.Scalar",
                 "rsub.Scalar"]
for target in scalar_binary:
    for x in [b, u8, i32, f16, f32]:
        for n in NUMBERS:
            case(target, T(x, (2, 3)), n)
for x in [b, i32, f16, f32]:
    for n in [2, 2.5]:
        case("pow.Scalar", n, T(x, (2, 3)))
    for mode in [None, "trunc", "floor"]:
        case("div.Tensor_mode", T(x, (2, 3)), T(i64, (3,)), kw={"rounding_mode": mode})
        case("div.Scalar_mode", T(x, (2, 3)), 2, kw={"rounding_mode": mode})

# ---- where, masked_fill, masked_scatter, clamp ----
for x, y in pairs:
    case("where.self", T(b, (2, 1, 3)), T(x, (4, 1)), T(y, ()))
for x in [b, i32, f16, f32]:
    for n in NUMBERS:
        case("where.ScalarSelf", T(b, (2, 3)), n, T(x, (3,)))
        case("where.ScalarOther", T(b, (2, 3)), T(x, (3,)), n)
        case("masked_fill.Scalar", T(x, (3,)), T(b, (2, 3)), n)
        case("clamp.default", T(x, (2, 3)), n, None)
        case("clamp.default", T(x, (2, 3)), None, n)
        case("clamp_min.default", T(x, (2, 3)), n)
        case("clamp_max.default", T(x, (2, 3)), n)
    case("masked_fill.Tensor", T(x, (2, 3)), T(b, (3,)), T(f32, ()))
    case("masked_scatter.default", T(x, (2, 3)), T(b, (3,)), T(x, (6,)))
    case("masked_scatter.default", T(x, (3,)), T(b, (2, 1)), T(x, (2, 5)))
    case("clamp.Tensor", T(x, (2, 3)), T(f16, (3,)), T(i64, ()))
    case("clamp_min.Tensor", T(x, (2, 3)), T(f16, (1, 3)))
    case("clamp_max.Tensor", T(x, (2, 3)), T(f64, ()))
for n, m in itertools.product(NUMBERS, NUMBERS):
    case("where.Scalar", T(b, (2, 3)), n, m)

# ---- pointwise unary ----
unary = ["neg.default", "abs.default", "sqrt.default", "rsqrt.default", "exp.default",
         "log.default", "sin.default", "cos.default", "tanh.default", "sigmoid.default",
         "silu.default", "relu.default", "gelu.default", "erf.default", "reciprocal.default",
         "log1p.default", "expm1.default", "log2.default", "sinh.default", "cosh.default",
         "asin.default", "acos.default", "atan.default", "sign.default", "isnan.default",
         "isinf.default", "hardtanh.default", "softplus.default", "floor.default",
         "ceil.default", "round.default", "bitwise_not.default", "logical_not.default"]
for target in unary:
    for x in [b, u8, i32, i64, f16, bf16, f32]:
        case(target, T(x, (2, 3)))
        case(target, T(x, ()))
for x in [f16, f32]:
    case("leaky_relu.default", T(x, (2, 3)), 0.2)
    case("elu.default", T(x, (2, 3)))
    case("round.decimals", T(x, (2, 3)), kw={"decimals": 2})
    case("gelu.default", T(x, (2, 3)), kw={"approximate": "tanh"})
for x in [i32, f32]:
    case("fill.Scalar", T(x, (2, 3)), 1.5)
    case("fill.Tensor", T(x, (2, 3)), T(f64, ()))

# ---- reductions ----
for x in [b, u8, i32, f16, f32]:
    case("sum.default", T(x, (2, 3)))
    case("sum.default", T(x, (2, 3)), kw={"dtype": f64})
    case("prod.default", T(x, (2, 3)))
    case("any.default", T(x, (2, 3)))
    case("all.default", T(x, (2, 3)))
    case("max.default", T(x, (2, 3)))
    case("min.default", T(x, (2, 3)))
    case("cumsum.default", T(x, (2, 3)), 1)
    case("cumsum.default", T(x, (2, 3)), -1, kw={"dtype": f32})
    for dims, keep in [([1], False), ([0, -1], True), ([], False), (None, True)]:
        case("sum.dim_IntList", T(x, (2, 3, 4)), dims, keep)
        case("mean.dim", T(x, (2, 3, 4)), dims, keep)
        case("any.dims", T(x, (2, 3, 4)), dims, keep)
        case("all.dims", T(x, (2, 3, 4)), dims, keep)
        case("var.correction", T(x, (2, 3, 4)), dims, kw={"keepdim": keep})
        case("linalg_vector_norm.default", T(x, (2, 3, 4)), 2, dims, keep)
    case("mean.dim", T(x, (2, 3)), [1], kw={"dtype": f64})
    for dim, keep in [(0, False), (-1, True)]:
        case("any.dim", T(x, (2, 3)), dim, keep)
        case("all.dim", T(x, (2, 3)), dim, keep)
        case("max.dim", T(x, (2, 3)), dim, keep)
        case("min.dim", T(x, (2, 3)), dim, keep)
        case("prod.dim_int", T(x, (2, 3)), dim, keep)
        case("argmax.default", T(x, (2, 3)), dim, keep)
        case("argmin.default", T(x, (2, 3)), None, keep)
        case("amax.default", T(x, (2, 3)), [dim], keep)
        case("amin.default", T(x, (2, 3)), [], keep)
    case("max.dim", T(x, ()), 0)
for x in FLOATS:
    case("mean.default", T(x, (2, 3)))
    case("var.dim", T(x, (2, 3)), [1], True, True)
    case("std.dim", T(x, (2, 3)), None)
    case("std.correction", T(x, (2, 3)), [0], kw={"correction": 0, "keepdim": True})
    case("var_mean.correction", T(x, (2, 3)), [1], kw={"keepdim": True})
    case("std_mean.correction", T(x, (2, 3)), None)
    case("std_mean.dim", T(x, (2, 3)), [0], True, True)
    case("norm.Scalar", T(x, (2, 3)))
    case("norm.ScalarOpt_dim", T(x, (2, 3)), 1, [1], True)
    case("linalg_vector_norm.default", T(x, (2, 3)), float("inf"), [1], False, kw={"dtype": f64})

# ---- views and shape ops ----
x = T(f32, (2, 3, 4))
for shape in [[6, 4], [-1], [2, -1, 2], [4, 3, 2], [1, 24, 1]]:
    case("view.default", x, shape)
    case("reshape.default", x, shape)
    case("_unsafe_view.default", x, shape)
case("reshape.default", T(i32, ()), [1, 1])
for dims in [[2, 0, 1], [-1, 1, 0]]:
    case("permute.default", x, dims)
case("transpose.int", x, 0, -1)
case("transpose.int", T(f32, ()), 0, -1)
for shape in [(2, 3), (3,), ()]:
    case("t.default", T(i64, shape))
for d in [0, 2, -1, 3]:
    case("unsqueeze.default", x, d)
y = T(f16, (2, 1, 3, 1))
case("squeeze.dim", y, 1)
case("squeeze.dim", y, 0)
case("squeeze.dims", y, [1, -1])
case("squeeze.default", y)
case("squeeze.default", T(f16, ()))
case("expand.default", T(f32, (3, 1)), [2, 3, 4])
case("expand.default", T(f32, (3, 1)), [-1, 5])
case("expand.default", T(f32, ()), [2, 2])
for args in [(1, 1, 3, 1), (2, None, None, 2), (0, -3, -1, 1), (1, -10, 10, 1), (2, 3, 1, 1),
             (2, 1, 9223372036854775807, 2)]:
    case("slice.Tensor", x, *args)
case("select.int", x, 1, -1)
case("select.int", x, 0, 1)
for target in ["alias.default", "detach.default", "clone.default", "lift_fresh_copy.default",
               "contiguous.default"]:
    case(target, x)
case("split_with_sizes.default", x, [1, 3], 2)
case("split_with_sizes.default", x, [2, 0, 1], 1)
case("split.Tensor", x, 3, 2)
case("split.Tensor", x, 2, -2)
case("split.Tensor", T(f32, (0, 2)), 2)
case("unbind.int", x, 1)
case("chunk.default", x, 3, 2)
case("chunk.default", T(f32, (2, 7)), 3, 1)
case("flatten.using_ints", x)
case("flatten.using_ints", x, 1, 2)
case("flatten.using_ints", T(f32, ()))
case("unflatten.int", x, 2, [2, -1])
case("unflatten.int", x, 0, [1, 2, 1])
case("view_as.default", x, T(i64, (4, 6)))
case("reshape_as.default", x, T(i64, (24,)))
case("expand_as.default", T(f32, (3, 1)), T(i64, (2, 3, 4)))
case("movedim.int", x, 0, -1)
case("movedim.intlist", x, [0, 1], [2, 0])
case("moveaxis.int", x, 2, 0)
case("moveaxis.intlist", x, [2], [1])
case("swapaxes.default", x, 0, 2)
case("swapdims.default", x, 1, 2)
for off, d1, d2 in [(0, 0, 1), (1, 0, 2), (-1, 2, 0), (5, 1, 2)]:
    case("diagonal.default", x, off, d1, d2)
case("narrow.default", x, 1, 1, 2)
case("narrow.default", x, -1, -3, 2)

# ---- copies, conversions, factories ----
for d in [b, i32, f16, f32]:
    case("_to_copy.default", T(f32, (2, 3)), kw={"dtype": d})
    case("to.dtype", T(i64, (2, 3)), d)
    case("to.dtype_layout", T(i64, (2, 3)), kw={"dtype": d})
    case("to.other", T(i64, (2, 3)), T(d, (5,)))
    case("type_as.default", T(i64, (2, 3)), T(d, ()))
    case("empty_like.default", T(d, (2, 3)))
    case("zeros_like.default", T(d, (2, 3)), kw={"dtype": f16})
    case("ones_like.default", T(d, (2, 3)))
    case("full_like.default", T(d, (2, 3)), 7)
    case("new_empty.default", T(d, (2, 3)), [4])
    case("new_zeros.default", T(d, (2, 3)), [4, 1], kw={"dtype": i64})
    case("new_ones.default", T(d, (2, 3)), [])
    case("new_full.default", T(d, (2, 3)), [2], 1.5)
case("to.dtype_layout", T(i64, (2, 3)))
case("copy.default", T(f32, (2, 3)), T(i64, (3,)))
case("copy.default", T(f16, (2, 3)), T(f64, ()))
for fill in NUMBERS:
    case("full.default", [2, 3], fill)
    case("scalar_tensor.default", fill)
case("full.default", [2], 1, kw={"dtype": f16})
case("zeros.default", [2, 3])
case("ones.default", [4], kw={"dtype": i32})
case("empty.memory_format", [0, 3], kw={"dtype": b})
case("empty_permuted.default", [2, 3], [1, 0])
case("empty_strided.default", [2, 3], [1, 2], kw={"dtype": i64})
for args in [(5,), (5.5,), (0, 7), (2, 9, 3), (9, 2, -2), (0.0, 1.0, 0.3), (1, 10, 2.5)]:
    target = {1: "arange.default", 2: "arange.start", 3: "arange.start_step"}[len(args)]
    case(target, *args)
case("arange.default", 6, kw={"dtype": f16})
case("repeat.default", x, [2, 1, 1, 3])
case("repeat.default", T(i8, ()), [2, 2])
case("repeat_interleave.self_int", x, 2)
case("repeat_interleave.self_int", x, 3, 1)
case("repeat_interleave.Tensor", T(i64, (3,)), kw={"output_size": 7})
case("repeat_interleave.self_Tensor", x, T(i64, (3,)), 1, kw={"output_size": 5})
case("tril.default", x)
case("triu.default", x, 1)
case("flip.default", x, [0, -1])
case("roll.default", x, [1], [2])
case("roll.default", x, [2, -1], [0, 1])
for pad in [[1, 2], [1, 1, 0, 2], [-1, 2, 1, 0]]:
    case("constant_pad_nd.default", x, pad, 1.5)
    case("pad.default", x, pad)
for mode in ["reflect", "replicate", "circular"]:
    case("pad.default", T(f32, (2, 3, 4, 5)), [1, 2, 2, 1], mode)
    case("pad.default", T(f32, (3, 4, 5)), [1, 0], mode)
case("stack.default", [x, x], 1)
case("stack.default", [T(f16, (2,)), T(f32, (2,)), T(i64, (2,))], -1)

# ---- indexing, concatenation, writes ----
case("cat.default", [T(f16, (2, 3)), T(f32, (1, 3))])
case("cat.default", [T(i32, (2, 3)), T(f16, (0,)), T(i64, (2, 5))], 1)
case("cat.default", [T(f32, (0,)), T(f32, (0,))])
idx = T(i64, (2, 1))
case("index.Tensor", x, [None, idx, T(i64, (5,))])
case("index.Tensor", x, [idx, None, T(i32, (5,))])
case("index.Tensor", x, [T(i64, ())])
case("index.Tensor", x, [None, None, T(i64, (2, 2))])
case("index_select.default", x, 1, T(i64, (5,)))
case("index_select.default", x, -1, T(i32, ()))
case("index_select.default", T(f32, ()), 0, T(i64, (1,)))
case("gather.default", x, 2, T(i64, (2, 3, 2)))
case("gather.default", x, 0, T(i32, (1, 3, 4)))
case("embedding.default", T(f16, (10, 4)), T(i64, (2, 3)))
case("embedding.default", T(f32, (10, 4)), T(i32, ()))
case("scatter.src", x, 1, T(i64, (2, 2, 4)), T(f32, (2, 3, 4)))
case("scatter.value", x, 1, T(i64, (2, 2, 4)), 2.5)
case("scatter.value", x, 1, T(i32, (2, 2, 4)), 2)
case("index_add.default", x, 1, T(i64, (5,)), T(f32, (2, 5, 4)))
case("slice_scatter.default", x, T(f32, (2, 3, 2)), 2, 1, 3)
case("slice_scatter.default", x, T(f16, (2, 2, 4)), 1, 0, None, 2)
case("select_scatter.default", x, T(f32, (2, 4)), 1, -1)
case("diagonal_scatter.default", x, T(f32, (4, 2)), 0, 0, 1)
case("diagonal_scatter.default", x, T(i64, (3, 2)), -1, 2, 0)
case("diagonal_scatter.default", x, T(f32, (3, 0)), 5, 0, 2)
case("index_put.default", x, [None, T(i64, (2,))], T(f32, (2, 2, 4)))
case("index_put.default", x, [T(i64, (2,))], T(f64, ()), True)
case("index_copy.default", x, 1, T(i64, (2,)), T(f32, (2, 2, 4)))

# ---- matrix products, normalisation, attention ----
case("mm.default", T(f32, (2, 3)), T(f32, (3, 5)))
case("bmm.default", T(f16, (4, 2, 3)), T(f16, (4, 3, 5)))
case("addmm.default", T(f32, (5,)), T(f32, (2, 3)), T(f32, (3, 5)))
case("addmm.default", T(f32, (2, 1)), T(f32, (2, 3)), T(f32, (3, 5)), kw={"beta": 0.5})
case("baddbmm.default", T(f32, (2, 1)), T(f32, (4, 2, 3)), T(f32, (4, 3, 5)))
for s1, s2 in [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((5, 2, 3), (3,)), ((3,), (5, 3, 2)),
               ((5, 1, 2, 3), (7, 3, 4)), ((2, 3), (4, 3, 5))]:
    case("matmul.default", T(f32, s1), T(f32, s2))
case("linear.default", T(f32, (5, 3)), T(f32, (4, 3)), T(f32, (4,)))
case("linear.default", T(f32, (2, 5, 3)), T(f32, (3,)))
case("linear.default", T(f16, (3,)), T(f16, (4, 3)))
case("outer.default", T(i32, (2,)), T(f16, (3,)))
for eq, shapes in [("ij,jk->ik", [(2, 3), (3, 4)]), ("bij,bjk", [(5, 2, 3), (5, 3, 4)]),
                   ("...ij,...jk", [(5, 1, 2, 3), (7, 3, 4)]), ("ii->i", [(3, 3)]), ("ii", [(3, 3)]),
                   ("ij,ij->ij", [(1, 3), (4, 1)]), ("i,j", [(2,), (3,)]),
                   ("bhqd,bhkd->bhqk", [(2, 4, 5, 8), (2, 4, 6, 8)]), ("ji", [(2, 3)])]:
    case("einsum.default", eq, [T(f32, s) for s in shapes])
case("einsum.default", "ij,jk->ik", [T(f32, (2, 3)), T(f16, (3, 4))])
for d in [f16, bf16, f32]:
    case("_softmax.default", T(d, (2, 3)), 1, d != f32)
    case("_log_softmax.default", T(d, (2, 3)), -1, False)
    case("softmax.int", T(d, (2, 3)), 1)
    case("softmax.int", T(d, (2, 3)), 0, f64)
    case("log_softmax.int", T(d, (2, 3)), 1, f32)
    case("layer_norm.default", T(d, (2, 3, 4)), [4], T(d, (4,)), T(d, (4,)))
    case("layer_norm.default", T(d, (2, 3, 4)), [3, 4])
    case("native_layer_norm.default", T(d, (2, 3, 4)), [3, 4], None, None, 1e-5)
    case("rms_norm.default", T(d, (2, 3, 4)), [4], T(d, (4,)))
    case("_fused_rms_norm.default", T(d, (2, 3, 4)), [4], T(d, (4,)), None)
    case("group_norm.default", T(d, (2, 4, 3, 3)), 2, T(d, (4,)), T(d, (4,)))
    case("native_group_norm.default", T(d, (2, 4, 3, 3)), None, None, 2, 4, 9, 2, 1e-5)
    case("scaled_dot_product_attention.default", T(d, (2, 4, 5, 8)), T(d, (2, 4, 6, 8)),
         T(d, (2, 4, 6, 3)))
    case("scaled_dot_product_attention.default", T(d, (4, 5, 8)), T(d, (4, 6, 8)),
         T(d, (4, 6, 8)), T(b, (5, 6)), kw={"is_causal": False})
    case("scaled_dot_product_attention.default", T(d, (2, 4, 5, 8)), T(d, (2, 2, 6, 8)),
         T(d, (2, 2, 6, 8)), kw={"enable_gqa": True})
    case("_scaled_dot_product_flash_attention_for_cpu.default", T(d, (2, 4, 5, 8)),
         T(d, (2, 4, 6, 8)), T(d, (2, 4, 6, 8)))
case("dropout.default", T(f32, (2, 3)), 0.0, False)
# zero, min.other and diff: ops the training IR keeps (decomposed by decompose_composites).
case("zero.default", T(i64, (2, 3)))
case("min.other", T(f32, (3, 1)), T(f16, (4,)))
case("min.other", T(i32, (2, 3)), T(i64, ()))
case("diff.default", T(f32, (2, 5)))
case("diff.default", T(i64, (1, 6)), 1, -1, T(i64, (1, 1)))
case("diff.default", T(f32, (4, 3)), 2, 0, T(i32, (1, 3)), T(f32, (2, 3)))
case("diff.default", T(f32, (2, 3)), 5, 1)
case("diff.default", T(b, (4,)), 2)
case("diff.default", T(f32, (2, 3)), 0, 1, T(f32, (2, 2)))
# The CNN ops (decomposed by decompose_composites): eval batch norm in its export spellings
# (empty save_mean/save_invstd in the input's dtype, a half input with float32 stats),
# batch norm without running stats, max_pool2d with and without indices (ceil mode, padding,
# dilation, a 3-d input, an empty stride meaning the kernel), adaptive_avg_pool2d.
for d in [f32, f16, bf16]:
    c = T(f32, (4,))
    case("_native_batch_norm_legit_no_training.default", T(d, (2, 4, 3, 3)), c, c, c, c, 0.1,
         1e-5)
    case("batch_norm.default", T(d, (2, 4, 5)), c, None, c, c, False, 0.1, 1e-5, False)
case("_native_batch_norm_legit_no_training.default", T(f32, (3, 4)), None, None,
     T(f32, (4,)), T(f32, (4,)), 0.1, 1e-3)
case("_native_batch_norm_legit.no_stats", T(f32, (2, 4, 3, 3)), T(f32, (4,)), None, True, 0.1,
     1e-5)
case("_native_batch_norm_legit.no_stats", T(f16, (2, 4, 3)), None, None, True, 0.1, 1e-5)
case("_native_batch_norm_legit_functional.default", T(f16, (2, 4, 3)), None, None,
     T(f32, (4,)), T(f32, (4,)), True, 0.1, 1e-5)
for op in ["max_pool2d.default", "max_pool2d_with_indices.default"]:
    case(op, T(f32, (2, 3, 7, 9)), [2, 2], [], [0, 0], [1, 1], True)
    case(op, T(f32, (2, 3, 7, 9)), [3, 2], [2, 1], [1, 1], [1, 2])
    case(op, T(bf16, (3, 7, 9)), [3], [2], [1], [1], True)
    case(op, T(i64, (1, 2, 4, 5)), [2, 2], [1, 1])
for op in ["adaptive_avg_pool2d.default", "_adaptive_avg_pool2d.default"]:
    case(op, T(f32, (2, 3, 8, 6)), [1, 1])
    case(op, T(bf16, (3, 8, 6)), [4, 3])
case("instance_norm.default", T(f32, (2, 3, 4, 5)), T(f32, (3,)), None, None, None, True, 0.1,
     1e-5, False)
case("instance_norm.default", T(f16, (2, 4, 7)), None, None, T(f16, (4,)), T(f16, (4,)), False,
     0.1, 1e-5, False)
for op in ["adaptive_avg_pool3d.default", "_adaptive_avg_pool3d.default"]:
    case(op, T(f32, (2, 3, 4, 8, 6)), [1, 1, 1])
    case(op, T(bf16, (3, 4, 8, 6)), [2, 4, 3])
# max_pool3d with and without indices and avg_pool3d (torchvision's s3d): ceil mode, padding,
# dilation, a 4-d input, one int for all three dims, an empty stride meaning the kernel; the
# average with padding counted and not and divisor_override (bfloat16 and float16 averages are
# left out: eager's CPU kernel refuses them).
for op in ["max_pool3d.default", "max_pool3d_with_indices.default"]:
    case(op, T(f32, (2, 3, 5, 7, 9)), [2, 2, 2], [], [0, 0, 0], [1, 1, 1], True)
    case(op, T(f32, (2, 3, 5, 7, 9)), [3, 3, 2], [2, 2, 1], [1, 1, 1], [1, 2, 1])
    case(op, T(bf16, (3, 5, 7, 9)), [3], [2], [1], [1], True)
    case(op, T(f16, (1, 2, 8, 7, 7)), [1, 3, 3], [1, 2, 2], [0, 1, 1])
    case(op, T(i64, (1, 2, 4, 4, 5)), [2, 2, 2], [1, 1, 1])
case("avg_pool3d.default", T(f32, (2, 3, 5, 8, 8)), [3, 3, 3], [2, 2, 2], [1, 1, 1], True, False)
case("avg_pool3d.default", T(f32, (3, 5, 7, 6)), [2, 3, 3], [1, 2, 2], [1, 1, 0], True)
case("avg_pool3d.default", T(f64, (1, 2, 4, 4, 4)), [2], [], [0], False, True, 3)
case("avg_pool3d.default", T(f32, (1, 4, 2, 7, 7)), [2, 7, 7], [1, 1, 1])
# avg_pool2d (ceil mode, padding, a 3-d input, a kernel larger than the input in ceil mode),
# adaptive_avg_pool1d, square (a bool squares to int64), hardswish and hardsigmoid.
case("avg_pool2d.default", T(f32, (2, 3, 8, 8)), [3, 3], [2, 2], [1, 1], True, False)
case("avg_pool2d.default", T(bf16, (3, 5, 7)), [2, 3], [1, 2])
case("avg_pool2d.default", T(f32, (1, 2, 3, 3)), [320, 320], [], [0, 0], True, True, 5)
case("adaptive_avg_pool1d.default", T(f32, (2, 4, 6)), [3])
case("adaptive_avg_pool1d.default", T(f16, (3, 8)), [1])
for d in [f32, i32, b]:
    case("square.default", T(d, (2, 3)))
for op in ["hardswish.default", "hardsigmoid.default"]:
    case(op, T(bf16, (2, 3)))
# sort and topk (kernels on every backend), argsort (decomposed to a sort's indices): values
# keep the dtype, indices are int64; topk's size k at dim.
for d in [f32, bf16, i64, b]:
    case("sort.default", T(d, (2, 5)), 0, True)
case("sort.stable", T(f16, (3, 4)), kw={"stable": True, "dim": -1, "descending": False})
case("argsort.default", T(i32, (2, 5)), 1, True)
case("argsort.stable", T(f32, (4,)), kw={"stable": True, "dim": 0})
case("topk.default", T(f32, (2, 7)), 3)
case("topk.default", T(i64, (5, 3)), 2, 0, False, False)
# The ops of issue 33 (decomposed by decompose_composites): bucketize (int64, or int32 with
# out_int32; a number's result is 0-d), linspace (the default float32, or dtype), the upsample
# ops by size and by scale factor (floor(size * scale)), meshgrid (ij, xy), tensor_split
# (sections, uneven, and indices clamped as slices), as_strided and _unsafe_index.
case("bucketize.Tensor", T(f32, (2, 3)), T(f32, (5,)))
case("bucketize.Tensor", T(i64, (4,)), T(i64, (3,)), kw={"out_int32": True, "right": True})
case("bucketize.Scalar", 0.5, T(f32, (4,)))
case("linspace.default", -1.0, 2.0, 5)
case("linspace.default", 0, 10, 4, kw={"dtype": i64})
case("linspace.default", 0.0, 1.0, 6, kw={"dtype": f16})
case("upsample_nearest2d.default", T(f32, (2, 3, 5, 6)), [7, 4])
case("upsample_nearest2d.vec", T(bf16, (1, 2, 5, 6)), None, [1.5, 2.0])
case("upsample_bilinear2d.default", T(f32, (2, 3, 5, 6)), [8, 9], False, 1.5, None)
case("upsample_bilinear2d.vec", T(f16, (1, 2, 5, 6)), None, True, [0.5, 0.7])
case("upsample_bicubic2d.default", T(f32, (2, 3, 5, 6)), [9, 11], True)
case("upsample_bicubic2d.vec", T(f32, (1, 2, 5, 6)), [4, 4], False, None)
case("meshgrid.indexing", [T(f32, (3,)), T(f32, (4,)), T(f32, ())], kw={"indexing": "xy"})
case("meshgrid.default", [T(i64, (2,)), T(i64, (5,))])
case("tensor_split.sections", T(f32, (3, 7)), 3, 1)
case("tensor_split.indices", T(f32, (3, 7)), [5, 2, -1], -1)
case("as_strided.default", T(f32, (4, 4)), [3, 4], [2, 1], 1)
case("_unsafe_index.Tensor", T(f32, (4, 5)), [None, T(i64, (2, 3))])
# Grid sampling (decompose_grid_sample.cc): [N, C, H, W] at [N, oH, oW, 2] is [N, C, oH, oW].
case("grid_sampler.default", T(f32, (2, 3, 5, 6)), T(f32, (2, 4, 7, 2)), 0, 0, False)
case("grid_sampler_2d.default", T(f16, (1, 2, 3, 4)), T(f16, (1, 5, 2, 2)), 2, 2, True)
for d in [f16, bf16]:
    q, k, v = T(d, (2, 4, 5, 8)), T(d, (2, 4, 6, 8)), T(d, (2, 4, 6, 8))
    case("_scaled_dot_product_flash_attention.default", q, k, v, device="cuda")
    case("_scaled_dot_product_flash_attention.default", q, k, v, 0.0, True, device="cuda")
    case("_scaled_dot_product_efficient_attention.default", q, k, v, None, True, device="cuda")
    case("_scaled_dot_product_efficient_attention.default", T(d, (2, 4, 40, 8)), k,
         T(d, (2, 4, 6, 3)), T(d, (2, 4, 40, 6)), False, device="cuda")
    case("_scaled_dot_product_cudnn_attention.default", q, k, v, None, True, device="cuda")
    case("to.device", T(f32, (2, 3)), "cuda", d, device="cuda")

with open(os.path.join(HERE, "pytorch_cases.txt"), "w") as f:
    f.write("// Generated by tests/shape_rules/generate.py from PyTorch %s's meta functions: each\n"
            "// block's recorded output types are PyTorch's (format: "
            "tests/unit/ir/shape_rules_golden_test.cc).\n" % torch.__version__)
    for block in blocks:
        f.write("// -----\n" + block)
print("%d blocks; %d calls eager PyTorch refuses after the meta functions accepted them:" % (
    len(blocks), len(refused)))
for r in refused:
    print("  " + r)
