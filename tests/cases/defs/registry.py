"""The case registry: every conformance case is one short function registered with @case.

A case function takes no arguments and returns (module, inputs, dynamic_shapes):
  module          a torch.nn.Module (buffers included; a KV cache is a registered buffer)
  inputs          a list with one tuple of CPU tensors per call; call 0's tuple is also the
                  example input for torch.export.export
  dynamic_shapes  None, or what torch.export.export takes (e.g. {"x": {0: Dim("batch")}})

The generator seeds torch before calling the function, so torch.randn & co. are
deterministic per case. Helpers below keep the definitions to a few lines each.
"""

import torch

CASES = {}


class Case:
    def __init__(self, name, fn, calls, notes, expect_error=None, strict=False):
        self.name = name
        self.fn = fn
        self.calls = calls
        self.notes = notes
        self.expect_error = expect_error
        self.strict = strict


def case(name, calls=1, notes="", expect_error=None, strict=False):
    """Registers the decorated function as case `name`, run for `calls` calls (1-3).

    expect_error=(k, "substring"): eager PyTorch raises on call k (the last call), with a
    message containing "substring" (a failed torch._check, say); the generator records the
    expected error for that call instead of outputs and state.

    strict=True: the case is also written in the "strict" form, the training IR of
    torch.export.export(..., strict=True) (TorchDynamo traces the forward).
    """

    def register(fn):
        if name in CASES:
            raise ValueError(f"case {name!r} is defined twice")
        if not 1 <= calls <= 3:
            raise ValueError(f"case {name!r}: calls must be 1..3, got {calls}")
        if expect_error is not None and not (
                isinstance(expect_error, tuple) and len(expect_error) == 2
                and expect_error[0] == calls - 1 and expect_error[0] >= 1):
            raise ValueError(f"case {name!r}: expect_error must be (last call >= 1, "
                             f"'substring'), got {expect_error!r}")
        CASES[name] = Case(name, fn, calls, notes, expect_error, strict)
        return fn

    return register


def module(forward, **buffers):
    """A Module whose forward is `forward(self, ...)`; keyword tensors become buffers.

    The forward's parameter names become the exported program's input names.
    """

    def init(self):
        torch.nn.Module.__init__(self)
        for buffer_name, value in buffers.items():
            self.register_buffer(buffer_name, value.clone())

    cls = type(forward.__name__ if forward.__name__ != "forward" else "CaseModule",
               (torch.nn.Module,), {"__init__": init, "forward": forward})
    return cls()


def same(n, *args):
    """The same input tuple for n calls: [args] * n."""
    return [tuple(args)] * n


def randn(*shape, dtype=torch.float32):
    return torch.randn(*shape).to(dtype)


def positive(*shape, dtype=torch.float32):
    """Values in [0.5, 2.5): safe for sqrt, rsqrt, pow and division."""
    return (torch.rand(*shape) * 2 + 0.5).to(dtype)


def randint(low, high, *shape, dtype=torch.int64):
    return torch.randint(low, high, shape, dtype=torch.int64).to(dtype)


def randbool(*shape):
    return torch.rand(*shape) < 0.5


def batch_dim(name="batch", max=16):
    return torch.export.Dim(name, min=2, max=max)
