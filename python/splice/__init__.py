"""splice from Python: compile a torch.export program and call it with torch tensors.

    import torch, splice
    ep = torch.export.export(model, (x,))
    engine = splice.compile(ep)               # or splice.load("model.pt2"), device="cuda"
    y = engine(x)                             # what ep.module()(x) returns
    engine.save("model.engine")               # splice.load() reads it without re-planning

Inputs are read in place where they are contiguous (numpy arrays, torch tensors on the CPU or
the engine's GPU, anything with __dlpack__); outputs are torch tensors when torch is importable,
numpy arrays otherwise. Deployment needs neither: the same .pt2 or engine runs from C++
(include/splice/splice.h) and the `splice` CLI.
"""

from ._engine import Engine, InputSpec, State, compile, load
from ._errors import (AssertFailed, BackendError, BadArchive, BadInput, BadUsage, Error,
                      InternalError, IoError, OutOfRange, ShapeMismatch, Unsupported)

__all__ = [
    "compile", "load", "Engine", "InputSpec", "State", "Error", "BadUsage", "IoError",
    "BadArchive", "Unsupported", "ShapeMismatch", "OutOfRange", "BadInput", "AssertFailed",
    "BackendError", "InternalError",
]
__version__ = "0.1.0"
