"""splice's exceptions: one class per kind of failure of the C++ API (splice::ErrorKind).

Every error carries the message the `splice` CLI prints for the same failure. The classes a
caller can fix (a bad archive, a bad input, an op splice lacks, ...) and splice's own bugs
(`InternalError`) all derive from `Error`.
"""


class Error(Exception):
    """A failure reported by splice."""


class BadUsage(Error, ValueError):
    """The API was called wrongly (an unknown option value, a moved-from engine, ...)."""


class IoError(Error, OSError):
    """A file that cannot be read or written."""


class BadArchive(Error):
    """A malformed, corrupted or unsupported .pt2, engine or safetensors file."""


class Unsupported(Error):
    """The program uses an op (or an op x dtype) that the chosen backend does not run."""


class ShapeMismatch(Error, ValueError):
    """Shapes or dtypes that do not fit the program."""


class OutOfRange(Error, IndexError):
    """An index, position or symbol value outside its allowed range."""


class BadInput(Error, ValueError):
    """A missing, unknown or malformed input (wrong dtype, device, a read-only mutated input)."""


class AssertFailed(Error):
    """The program's own runtime assertion (torch._check) failed."""


class BackendError(Error, RuntimeError):
    """A backend library failed (CUDA, cuBLAS, out of memory)."""


class InternalError(Error, RuntimeError):
    """A bug in splice; please report it with the program."""


# By splice::error_kind_name (src/support/error.cc).
_BY_KIND = {
    "bad usage": BadUsage,
    "i/o error": IoError,
    "bad archive": BadArchive,
    "unsupported op": Unsupported,
    "shape mismatch": ShapeMismatch,
    "out of range": OutOfRange,
    "bad input": BadInput,
    "assertion failed": AssertFailed,
    "backend failure": BackendError,
    "internal error": InternalError,
}


def error_class(kind_name: str) -> type:
    """The class for an ErrorKind's name (the extension raises through this)."""
    return _BY_KIND.get(kind_name, InternalError)
