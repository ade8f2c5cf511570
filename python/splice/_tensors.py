"""Tensors in and out of the extension: torch tensors, numpy arrays and DLPack objects.

An input is handed to splice in its own memory when it is contiguous (row-major): numpy arrays,
torch tensors (CPU or CUDA) and anything with `__dlpack__`. Where it is not contiguous, a
contiguous copy is passed, and a mutated input's new value is written back into the caller's
tensor afterwards, as PyTorch eager writes it. Outputs come back as torch tensors when torch is
importable (through DLPack: no copy), numpy arrays otherwise.
"""

import functools
import importlib
import sys

import numpy as np

from . import _errors


@functools.lru_cache(maxsize=None)
def _optional_module(name: str):
    """The module `name` if it can be imported, else None. Asked once per process: a failed
    import searches the whole path again, and this is asked on every call."""
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def torch_module():
    """torch if the caller's process has it (imported or importable), else None."""
    return sys.modules.get("torch") or _optional_module("torch")


def _is_torch_tensor(x) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(x, torch.Tensor)


class Prepared:
    """One input as splice reads it: `array` (contiguous, in the caller's memory where it
    could be), the caller's object when a copy stands in for it (`write_back`), and whether
    `array` is uint16 holding bfloat16 values (`bf16_bits`: numpy has no bfloat16)."""

    __slots__ = ("array", "write_back", "bf16_bits")

    def __init__(self, array, write_back=None, bf16_bits=False):
        self.array = array
        self.write_back = write_back
        self.bf16_bits = bf16_bits


def prepare_input(name: str, value, mutated: bool, dtype: str = "") -> Prepared:
    """`value` as an array splice can read; raises BadInput where it cannot be one. `dtype`:
    the program's dtype for it, where known (a uint16 numpy array for a bfloat16 input is
    taken as the values' bits)."""
    prepared = _prepare(name, value, mutated)
    array = prepared.array
    if isinstance(array, np.ndarray):
        if array.dtype.kind not in "biufc":  # objects, strings: nothing DLPack can carry
            raise _errors.BadInput(f"input '{name}': {type(value).__name__} is not a tensor "
                                   f"(as a numpy array its dtype is {array.dtype})")
        bf16 = bfloat16_numpy_dtype()
        if bf16 is not None and array.dtype == bf16:
            prepared.array, prepared.bf16_bits = array.view(np.uint16), True
        elif dtype == "bfloat16" and array.dtype == np.uint16:
            prepared.bf16_bits = True
    return prepared


def _prepare(name: str, value, mutated: bool) -> Prepared:
    if _is_torch_tensor(value):
        tensor = value.detach()  # DLPack refuses tensors that require grad; same memory
        if tensor.is_contiguous():
            return Prepared(tensor)
        return Prepared(tensor.contiguous(), value if mutated else None)
    if isinstance(value, np.ndarray):
        if mutated and not value.flags.writeable:
            raise _errors.BadInput(
                f"input '{name}' is read-only, but the program writes it (a mutated input)")
        if value.flags.c_contiguous:
            return Prepared(value)
        return Prepared(np.ascontiguousarray(value), value if mutated else None)
    if hasattr(value, "__dlpack__"):
        return Prepared(value)
    if mutated:
        raise _errors.BadInput(
            f"input '{name}' is a {type(value).__name__}, but the program writes it: pass an "
            "array or tensor splice can write into")
    try:
        array = np.ascontiguousarray(value)
    except (TypeError, ValueError) as e:
        raise _errors.BadInput(f"input '{name}': {type(value).__name__} is not a tensor ({e})")
    return Prepared(array)


def write_back(prepared: Prepared, new_value) -> None:
    """Copies a mutated input's new value into the caller's object a copy stood in for."""
    target = prepared.write_back
    if target is None:
        return
    if _is_torch_tensor(target):
        torch = sys.modules["torch"]
        with torch.no_grad():
            target.copy_(new_value if _is_torch_tensor(new_value) else torch.from_numpy(new_value))
    else:
        target[...] = new_value


def bfloat16_numpy_dtype():
    """ml_dtypes.bfloat16 where installed (numpy itself has no bfloat16), else None."""
    ml_dtypes = _optional_module("ml_dtypes")
    return None if ml_dtypes is None else ml_dtypes.bfloat16


def to_caller(array):
    """An output of the extension as the caller gets it: a torch tensor as is; a numpy array
    with bfloat16 values arrives as their uint16 bits (numpy has no bfloat16; splice has no
    uint16 dtype, so such bits are always bfloat16) and is viewed as ml_dtypes.bfloat16 where
    that is installed."""
    if isinstance(array, np.ndarray) and array.dtype == np.uint16:
        bf16 = bfloat16_numpy_dtype()
        if bf16 is not None:
            return array.view(bf16)
    return array
