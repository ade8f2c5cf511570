"""Engine: a loaded program and its session, called like the exported module.

An Engine holds one splice::Model and one Session on it: its buffers (a KV cache) carry over
from call to call, as the module's do in eager PyTorch. Like a Session, an Engine is used by one
thread at a time; load another Engine for another thread (the engine cache makes that cheap).
"""

import collections.abc
import json
import os
import shutil
import tempfile
from typing import Any, Dict, Iterator, List, NamedTuple, Optional, Tuple, Union

from . import _core, _errors, _tensors

_OUTPUT_KINDS = ("auto", "torch", "numpy")
# An engine file's first bytes (src/plan/engine_file.h); anything else load() reads is a .pt2.
_ENGINE_MAGIC = b"SPLCENG\0"


class InputSpec(NamedTuple):
    """One input of the program as a call takes it: its name, dtype (a name such as
    "float32"), shape (each dim an int, or a symbol's expression such as "s0 + 1") and
    whether the program writes it (a mutated input is written back into the caller's tensor)."""

    name: str
    dtype: str
    shape: Tuple[Union[int, str], ...]
    mutated: bool


def _dim(text: str) -> Union[int, str]:
    return int(text) if text.lstrip("-").isdigit() else text


def _stats(ms: List[float]) -> Dict[str, float]:
    """Nearest-rank median and p90, min and mean, as `splice bench` computes them."""
    s = sorted(ms)

    def rank(q: float) -> float:
        i = int(q * len(s) + 0.5)
        return s[min(len(s) - 1, max(i, 1) - 1)]

    return {"median_ms": rank(0.5), "p90_ms": rank(0.9), "min_ms": s[0],
            "mean_ms": sum(s) / len(s)}


class State(collections.abc.MutableMapping):
    """The engine's buffers by fully qualified name: read (a copy the caller owns) and replace
    (same dtype and shape). Buffers cannot be added or removed."""

    def __init__(self, engine: "Engine"):
        self._engine = engine

    def __getitem__(self, name: str):
        e = self._engine
        return _tensors.to_caller(e._session.state(name, torch=e._as_torch()))

    def __setitem__(self, name: str, value) -> None:
        # splice has no uint16 dtype: uint16 values for a buffer can only be bfloat16 bits.
        prepared = _tensors.prepare_input(name, value, mutated=False, dtype="bfloat16")
        self._engine._session.set_state(name, prepared.array, prepared.bf16_bits)

    def __delitem__(self, name: str) -> None:
        raise TypeError("an engine's buffers cannot be removed (assign a new value instead)")

    def __iter__(self) -> Iterator[str]:
        return iter(self._engine._model.state_names())

    def __len__(self) -> int:
        return len(self._engine._model.state_names())


class Engine:
    """A program splice loaded (splice.compile, splice.load): call it with the program's inputs
    by position or by name; it returns what the exported module returns — one tensor for one
    output, a tuple for several."""

    def __init__(self, model, source: str, options: Dict[str, Any], outputs: str,
                 scratch: Optional[tempfile.TemporaryDirectory] = None):
        if outputs not in _OUTPUT_KINDS:
            raise _errors.BadUsage(f"outputs must be one of {_OUTPUT_KINDS}, not {outputs!r}")
        self._model = model
        self._session = model.open_session()
        self._source = source
        self._options = options
        self._outputs = outputs
        self._scratch = scratch  # keeps an exported program's .pt2 for save()
        self._inputs = [
            InputSpec(i["name"], i["dtype"], tuple(_dim(d) for d in i["shape"]), i["mutated"])
            for i in model.inputs()]

    # ---- what the program is -------------------------------------------------------------
    @property
    def inputs(self) -> List[InputSpec]:
        return list(self._inputs)

    @property
    def device(self) -> str:
        return self._model.device

    @property
    def threads(self) -> int:
        return self._model.threads

    @property
    def from_cache(self) -> bool:
        """Whether loading found this program's engine in the engine cache."""
        return self._model.from_cache

    @property
    def warnings(self) -> List[str]:
        return list(self._model.warnings)

    @property
    def state(self) -> State:
        return State(self)

    def plan(self) -> Dict[str, Any]:
        """The `splice inspect --plan --json` document of this engine's plan."""
        return json.loads(self._model.plan_json())

    def reset(self) -> None:
        """Every buffer back to the program's initial value."""
        self._session.reset_state()

    def save(self, path: Union[str, os.PathLike]) -> None:
        """Writes this program as an engine file (`splice.load` reads it without re-planning)."""
        path = os.fspath(path)
        if self._options.get("engine_file"):
            shutil.copyfile(self._source, path)
            return
        _core.Model.compile(self._source, path, self._options["device"], self._options["threads"],
                            self._options["plan_mode"], self._options["cuda_graphs"])

    # ---- calls -------------------------------------------------------------------------
    def _as_torch(self) -> bool:
        if self._outputs == "numpy":
            return False
        if self._outputs == "torch":
            if _tensors.torch_module() is None:
                raise _errors.BadUsage("outputs='torch' but torch cannot be imported")
            return True
        return _tensors.torch_module() is not None

    def _bind(self, args: tuple, kwargs: dict) -> Dict[str, "_tensors.Prepared"]:
        if len(args) > len(self._inputs):
            raise _errors.BadInput(
                f"{len(args)} positional inputs, but the program takes {len(self._inputs)}: "
                + ", ".join(i.name for i in self._inputs))
        values = {spec.name: value for spec, value in zip(self._inputs, args)}
        specs = {spec.name: spec for spec in self._inputs}
        for name, value in kwargs.items():
            if name not in specs:
                raise _errors.BadInput(
                    f"unknown input '{name}'; the program's inputs are: "
                    + ", ".join(i.name for i in self._inputs))
            if name in values:
                raise _errors.BadInput(f"input '{name}' given both by position and by name")
            values[name] = value
        return {name: _tensors.prepare_input(name, value, specs[name].mutated, specs[name].dtype)
                for name, value in values.items()}

    @staticmethod
    def _arrays(prepared: Dict[str, "_tensors.Prepared"]) -> Tuple[Dict[str, Any], List[str]]:
        """The extension's arguments: the arrays by name, and the names of bfloat16 bits."""
        return ({name: p.array for name, p in prepared.items()},
                [name for name, p in prepared.items() if p.bf16_bits])

    def _stream(self, prepared: Dict[str, "_tensors.Prepared"]) -> int:
        """The caller's current CUDA stream when a CUDA torch tensor is among the inputs."""
        torch = _tensors.torch_module() if self.device == "cuda" else None
        if torch is None:
            return 0
        for p in prepared.values():
            if isinstance(p.array, torch.Tensor) and p.array.is_cuda:
                return torch.cuda.current_stream(p.array.device).cuda_stream
        return 0

    def __call__(self, *args, **kwargs):
        prepared = self._bind(args, kwargs)
        as_torch = self._as_torch()
        arrays, bf16_inputs = self._arrays(prepared)
        outputs, mutated = self._session.run(
            arrays, bf16_inputs, stream=self._stream(prepared),
            outputs_on_device=as_torch and self.device != "cpu", torch=as_torch)
        for name, value in mutated.items():
            if name in prepared:
                _tensors.write_back(prepared[name], value)
        results = tuple(_tensors.to_caller(o) for o in outputs)
        return results[0] if len(results) == 1 else results

    def bench(self, *args, iters: int = 100, warmup: int = 10, device_io: bool = False,
              **kwargs) -> Dict[str, Any]:
        """Times calls on these inputs as `splice bench` does (each from the same state) and
        returns its --json fields: median_ms, p90_ms, min_ms, mean_ms, clock, and the kernels,
        memcpys and memsets per call where a GPU counted them (None elsewhere)."""
        prepared = self._bind(args, kwargs)
        arrays, bf16_inputs = self._arrays(prepared)
        t = self._session.measure(arrays, bf16_inputs, warmup=warmup, iters=iters,
                                  device_io=device_io)
        result: Dict[str, Any] = {"device": self.device, "threads": self.threads,
                                  "warmup": warmup, "iters": iters, "clock": t["clock"],
                                  "device_io": device_io}
        result.update(_stats(t["ms"]))
        calls = len(t["ms"])
        for key in ("kernels", "memcpys", "memsets"):
            result[f"{key}_per_call"] = t[key] / calls if t["counted"] else None
        if not t["counted"]:
            result["cupti_note"] = t["count_note"]
        return result


def _load(path: str, device: str, cache_dir: Optional[str], plan_mode: str,
          threads: Optional[int], cuda_graphs: bool, outputs: str,
          scratch: Optional[tempfile.TemporaryDirectory] = None) -> Engine:
    options = {"device": device, "threads": 0 if threads is None else threads,
               "plan_mode": plan_mode, "cuda_graphs": cuda_graphs}
    cache = _core.default_cache_dir() if cache_dir is None else os.fspath(cache_dir)
    model = _core.Model.load(path, device, options["threads"], plan_mode, cuda_graphs, cache)
    with open(path, "rb") as f:
        options["engine_file"] = f.read(8) == _ENGINE_MAGIC
    return Engine(model, path, options, outputs, scratch)


def load(path: Union[str, os.PathLike], device: str = "cpu", *,
         cache_dir: Optional[Union[str, os.PathLike]] = None, plan_mode: str = "planned",
         threads: Optional[int] = None, cuda_graphs: bool = True,
         outputs: str = "auto") -> Engine:
    """Loads a .pt2 archive (torch.export.save) or an engine file (Engine.save).

    cache_dir: the engine cache (None: the CLI's default, $XDG_CACHE_HOME/splice or
    ~/.cache/splice; "": none). threads: host threads of the CPU backend (None: all cores).
    outputs: "torch", "numpy", or "auto" (torch tensors when torch is importable)."""
    return _load(os.fspath(path), device, cache_dir, plan_mode, threads, cuda_graphs, outputs)


def compile(program, device: str = "cpu", *,  # noqa: A001 (the name users expect)
            cache_dir: Optional[Union[str, os.PathLike]] = None, plan_mode: str = "planned",
            threads: Optional[int] = None, cuda_graphs: bool = True,
            outputs: str = "auto") -> Engine:
    """Compiles a torch.export.ExportedProgram, or the path of a saved one, for `device`
    ("cpu" or "cuda"); see load() for the options. An ExportedProgram is saved to a temporary
    .pt2 first (kept until the engine is gone)."""
    if isinstance(program, (str, os.PathLike)):
        return load(program, device, cache_dir=cache_dir, plan_mode=plan_mode, threads=threads,
                    cuda_graphs=cuda_graphs, outputs=outputs)
    torch = _tensors.torch_module()
    if torch is None or not isinstance(program, torch.export.ExportedProgram):
        raise _errors.BadUsage(
            "splice.compile takes a torch.export.ExportedProgram or the path of a .pt2 "
            f"archive, not {type(program).__name__}")
    scratch = tempfile.TemporaryDirectory(prefix="splice-")
    path = os.path.join(scratch.name, "model.pt2")
    torch.export.save(program, path)
    return _load(path, device, cache_dir, plan_mode, threads, cuda_graphs, outputs, scratch)
