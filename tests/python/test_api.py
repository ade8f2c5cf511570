"""The Python API on numpy alone: inputs by position and by name, mutated inputs written into
the caller's memory (no copy where it is contiguous, written back where it is not), state,
reset, plan, bench, engine files, and every bad input raising a splice.Error subclass with
the CLI's message instead of crashing. Expected values are PyTorch's, recorded in the cases."""

import json
import os

import numpy as np
import pytest

import splice
from conftest import case_dir
from safetensors_numpy import read
from splice import _core, _errors

# x[:, 1:3] = s; return x * 2   (x is a user input the program mutates)
SLICE_WRITE = "f_input_slice_write.default"
# buf[idx] = v (index_put on a buffer); returns a reduction and the buffer
BUFFER_WRITE = "f_buffer_index_put.default"
# an .item() position outside its torch._check range on the last call
OUT_OF_RANGE = "w_kv_item_position_out_of_range.default"


def recorded(case, k, what):
    return {name: array for name, (array, _) in
            read(os.path.join(case_dir(case), f"call{k}.{what}.safetensors")).items()}


def load(case, **options):
    options.setdefault("outputs", "numpy")
    return splice.load(os.path.join(case_dir(case), "model.pt2"), cache_dir="", **options)


def test_every_error_kind_has_its_class():
    for kind in _core.error_kind_names():
        cls = _errors.error_class(kind)
        assert issubclass(cls, splice.Error)
        assert (cls is splice.InternalError) == (kind == "internal error"), kind


def test_inputs_by_position_and_by_name():
    engine = load(SLICE_WRITE)
    assert [(i.name, i.dtype, i.shape, i.mutated) for i in engine.inputs] == [
        ("x", "float32", (3, 5), True), ("s", "float32", (3, 2), False)]
    inputs, expected = recorded(SLICE_WRITE, 0, "inputs"), recorded(SLICE_WRITE, 0, "outputs")
    by_position = engine(inputs["x"].copy(), inputs["s"])
    by_name = engine(s=inputs["s"], x=inputs["x"].copy())
    mixed = engine(inputs["x"].copy(), s=inputs["s"])
    for out in (by_position, by_name, mixed):
        np.testing.assert_allclose(out, expected["output.0"], rtol=1e-6)


def test_binding_errors_name_the_input():
    engine = load(SLICE_WRITE)
    x, s = recorded(SLICE_WRITE, 0, "inputs")["x"], recorded(SLICE_WRITE, 0, "inputs")["s"]
    with pytest.raises(splice.BadInput, match="unknown input 'z'"):
        engine(x=x, s=s, z=s)
    with pytest.raises(splice.BadInput, match="given both by position and by name"):
        engine(x, x=x)
    with pytest.raises(splice.BadInput, match="3 positional inputs"):
        engine(x, s, s)
    with pytest.raises(splice.Error, match="s"):
        engine(x=x.copy())  # s missing
    with pytest.raises(splice.BadInput, match="dtype f64, the program expects f32"):
        engine(x=x.astype(np.float64), s=s)
    with pytest.raises(splice.Error, match="s"):
        engine(x=x.copy(), s=np.zeros((3, 3), np.float32))
    with pytest.raises(splice.BadInput, match="not a tensor"):
        engine(x=x.copy(), s=object())


def test_a_mutated_input_is_written_in_the_callers_memory_without_a_copy():
    engine = load(SLICE_WRITE)
    inputs = recorded(SLICE_WRITE, 0, "inputs")
    x = inputs["x"].copy()
    address = x.ctypes.data
    assert _core.address_of(x) == address  # the extension reads the caller's own memory
    engine(x, inputs["s"])
    assert x.ctypes.data == address
    np.testing.assert_allclose(x, recorded(SLICE_WRITE, 0, "outputs")["mutated.x"], rtol=1e-6)


def test_a_non_contiguous_mutated_input_is_written_back():
    engine = load(SLICE_WRITE)
    inputs = recorded(SLICE_WRITE, 0, "inputs")
    x = np.asfortranarray(inputs["x"])
    assert not x.flags.c_contiguous
    engine(x, np.asfortranarray(inputs["s"]))
    np.testing.assert_allclose(x, recorded(SLICE_WRITE, 0, "outputs")["mutated.x"], rtol=1e-6)


def test_a_read_only_input_is_refused_only_where_the_program_writes_it():
    engine = load(SLICE_WRITE)
    inputs = recorded(SLICE_WRITE, 0, "inputs")
    x, s = inputs["x"].copy(), inputs["s"].copy()
    s.flags.writeable = False
    engine(x, s)  # s is only read
    frozen = inputs["x"].copy()
    frozen.flags.writeable = False
    with pytest.raises(splice.BadInput, match="'x' is read-only"):
        engine(frozen, s)
    np.testing.assert_array_equal(frozen, inputs["x"])


def test_outputs_belong_to_the_caller():
    engine = load(BUFFER_WRITE)
    inputs = recorded(BUFFER_WRITE, 0, "inputs")
    first = engine(**inputs)
    kept = [o.copy() for o in first]
    for o in first:
        o[...] = 7  # writable, and no later call or state sees it
    engine.reset()
    again = engine(**inputs)
    for a, b in zip(again, kept):
        np.testing.assert_array_equal(a, b)


def test_state_carries_over_and_can_be_read_replaced_and_reset():
    engine = load(BUFFER_WRITE)
    assert list(engine.state) == ["buf"] and len(engine.state) == 1
    initial = engine.state["buf"]
    for k in range(2):
        engine(**recorded(BUFFER_WRITE, k, "inputs"))
        np.testing.assert_allclose(engine.state["buf"], recorded(BUFFER_WRITE, k, "state")["buf"],
                                   rtol=1e-6)
    engine.reset()
    np.testing.assert_array_equal(engine.state["buf"], initial)
    engine.state["buf"] = recorded(BUFFER_WRITE, 0, "state")["buf"]
    engine(**recorded(BUFFER_WRITE, 1, "inputs"))
    np.testing.assert_allclose(engine.state["buf"], recorded(BUFFER_WRITE, 1, "state")["buf"],
                               rtol=1e-6)
    with pytest.raises(splice.Error, match="buf"):
        engine.state["buf"] = np.zeros((2, 2), np.float32)
    with pytest.raises(splice.Error, match="nope"):
        engine.state["nope"]  # noqa: B018 (the lookup is the test)
    with pytest.raises(TypeError):
        del engine.state["buf"]


def test_a_failed_check_raises_and_keeps_the_state():
    with open(os.path.join(case_dir(OUT_OF_RANGE), "case.json")) as f:
        failing = json.load(f)["expect_error"]["call"]
    engine = load(OUT_OF_RANGE)
    for k in range(failing):
        engine(**recorded(OUT_OF_RANGE, k, "inputs"))
    before = {name: engine.state[name] for name in engine.state}
    with pytest.raises((splice.OutOfRange, splice.AssertFailed)):
        engine(**recorded(OUT_OF_RANGE, failing, "inputs"))
    for name, value in before.items():
        np.testing.assert_array_equal(engine.state[name], value)


def test_plan_bench_and_engine_files(scratch):
    engine = load(BUFFER_WRITE, threads=1)
    plan = engine.plan()
    assert plan["totals"]["kernels"] >= 1 and isinstance(plan["writes"], list)
    inputs = recorded(BUFFER_WRITE, 0, "inputs")
    b = engine.bench(**inputs, iters=3, warmup=1)
    assert b["clock"] == "host" and b["min_ms"] > 0 and b["median_ms"] >= b["min_ms"]
    assert b["kernels_per_call"] is None and b["cupti_note"]
    path = os.path.join(scratch, "model.engine")
    engine.save(path)
    again = splice.load(path, cache_dir="", outputs="numpy")
    again.save(os.path.join(scratch, "copy.engine"))
    engine.reset()
    for a, b in zip(engine(**inputs), again(**inputs)):
        np.testing.assert_array_equal(a, b)  # the same plan: bit for bit


def test_load_errors(scratch):
    with pytest.raises(splice.IoError):
        splice.load(os.path.join(scratch, "missing.pt2"))
    garbage = os.path.join(scratch, "garbage.pt2")
    with open(garbage, "wb") as f:
        f.write(b"PK\x03\x04 not really a zip archive" * 8)
    with pytest.raises(splice.BadArchive):
        splice.load(garbage, cache_dir="")
    with pytest.raises(splice.BadUsage, match="plan_mode"):
        load(SLICE_WRITE, plan_mode="fastest")
    with pytest.raises(splice.BadUsage, match="outputs"):
        load(SLICE_WRITE, outputs="lists")
    with pytest.raises(splice.BadUsage, match="ExportedProgram"):
        splice.compile(42)
    with pytest.raises(splice.Error, match="tpu"):
        load(SLICE_WRITE, device="tpu")
    with pytest.raises(splice.BadUsage):
        load(SLICE_WRITE, threads=-1)
