"""Every conformance case (tests/cases) through the Python package with numpy alone: the
program loaded with splice.load, each recorded call made with the recorded inputs, and every
output, mutated input (as written back into the caller's array) and buffer compared with
PyTorch's recorded values at the tolerances of tests/conformance/compare.cc (CPU)."""

import json
import os

import numpy as np
import pytest

import splice
from conftest import CASES
from safetensors_numpy import read

# tests/conformance/compare.cc, tolerance_for on the CPU: (rtol, atol) per dtype name.
TOLERANCE = {"float32": (1e-4, 1e-5), "float16": (1e-2, 1e-3), "bfloat16": (2e-2, 1e-2),
             "float64": (1e-9, 1e-12)}
DTYPE_NAME = {np.dtype(np.float32): "float32", np.dtype(np.float16): "float16",
              np.dtype(np.float64): "float64"}


def cpu_cases():
    if not os.path.isdir(CASES):
        return []
    return sorted(d for d in os.listdir(CASES)
                  if os.path.isfile(os.path.join(CASES, d, "case.json")) and
                  not d.endswith(".cuda"))


def bf16_to_float(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


def as_float64(array, bf16):
    return (bf16_to_float(array) if bf16 else array).astype(np.float64)


def compare(key, expected, bf16, actual, compute):
    exp, act = np.asarray(expected), np.asarray(actual)
    if bf16 and act.dtype != np.uint16:  # ml_dtypes.bfloat16 where installed: compare bits
        act = act.view(np.uint16)
    assert act.shape == exp.shape, f"{key}: shape {act.shape} but PyTorch gives {exp.shape}"
    assert act.dtype == exp.dtype, f"{key}: dtype {act.dtype} but PyTorch gives {exp.dtype}"
    name = "bfloat16" if bf16 else DTYPE_NAME.get(exp.dtype)
    if name is None:  # integers and bool compare exactly
        assert np.array_equal(act, exp), f"{key}: {np.sum(act != exp)} elements differ"
        return
    rtol, atol = TOLERANCE[name]
    if compute in TOLERANCE:
        rtol, atol = max(rtol, TOLERANCE[compute][0]), max(atol, TOLERANCE[compute][1])
    x, y = as_float64(exp, bf16), as_float64(act, bf16)
    nan = np.isnan(x) | np.isnan(y)
    inf = ~nan & (np.isinf(x) | np.isinf(y))
    with np.errstate(invalid="ignore"):  # inf - inf: those elements are decided by `inf`
        close = np.abs(x - y) <= atol + rtol * np.abs(x)
    ok = np.where(nan, np.isnan(x) & np.isnan(y), np.where(inf, x == y, close))
    bad = np.flatnonzero(~ok)
    assert bad.size == 0, (f"{key}: {bad.size} of {x.size} elements differ beyond rtol {rtol} "
                           f"atol {atol}; first at {bad[0]}: {y.flat[bad[0]]} vs PyTorch "
                           f"{x.flat[bad[0]]}")


@pytest.mark.parametrize("case", cpu_cases())
def test_case(case):
    folder = os.path.join(CASES, case)
    with open(os.path.join(folder, "case.json")) as f:
        meta = json.load(f)
    model = os.path.join(folder, "model.pt2")
    if "expect_load_error" in meta:
        with pytest.raises(splice.Error) as e:
            splice.load(model, cache_dir="", threads=1, outputs="numpy")
        assert meta["expect_load_error"] in str(e.value)
        return
    engine = splice.load(model, cache_dir="", threads=1, outputs="numpy")
    error_call = meta.get("expect_error", {}).get("call", -1)
    compute = {"bf16": "bfloat16"}.get(meta.get("compute_dtype"), meta.get("compute_dtype"))
    for k in range(meta["calls"]):
        inputs = {name: array for name, (array, _) in
                  read(os.path.join(folder, f"call{k}.inputs.safetensors")).items()}
        if k == error_call:
            with pytest.raises((splice.AssertFailed, splice.OutOfRange)):
                engine(**inputs)
            continue
        result = engine(**inputs)
        outputs = list(result) if isinstance(result, tuple) else [result]
        actual = {f"output.{i}": o for i, o in enumerate(outputs) if o is not None}
        for name in meta["mutated_inputs"]:
            actual[f"mutated.{name}"] = inputs[name]  # written back into the caller's array
        expected = read(os.path.join(folder, f"call{k}.outputs.safetensors"))
        for key, (array, bf16) in expected.items():
            assert key in actual, f"call {k}: {key} is missing from splice's outputs"
            compare(f"call {k}: {key}", array, bf16, actual[key], compute)
        for key in actual:
            assert key in expected, f"call {k}: splice returns {key}, PyTorch does not"
        state_file = os.path.join(folder, f"call{k}.state.safetensors")
        if os.path.exists(state_file):
            for name, (array, bf16) in read(state_file).items():
                compare(f"call {k}: buffer {name}", array, bf16, engine.state[name], None)
