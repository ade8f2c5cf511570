#!/usr/bin/env python3
"""transformers models exported on CUDA, run by `splice run --device cuda`, against PyTorch on CUDA.

The GPU host has PyTorch but not transformers (and installs nothing), so the models come from
the recorded conformance cases built from transformers (tests/cases/hf_*, tests/cases/defs/
hf_models.py): each case's training-IR program (form "train", what torch.export.export returns)
is loaded, moved to the GPU (torch.export.passes.move_to_device_pass), and its module exported
again with CUDA tensors, with the same dims dynamic (Dim.AUTO). That gives two CUDA programs
per model, as a user would save them: the training IR, and the same after run_decompositions()
(where PyTorch picks its CUDA attention kernels). The reference is that module run eagerly on
the GPU over the case's recorded calls in order (buffers, e.g. a static KV cache, persist
between calls); splice runs each call with `splice run --device cuda`, the state carried from
call to call through --state-in/--state-out, and every output must match within the GPU
conformance bounds (docs/cuda.md).

  python3 scripts/gpu_hf_models.py --splice BIN [--device cuda] [--only 'hf_llama*,v_*'] --out DIR

--only takes comma-separated globs over every case with a train form (default hf_*), so the
cases of other plain modules can be exported on CUDA the same way.

Prints one line per model and form, and exits 1 when any fails. --device cpu runs the same
pipeline on the CPU backend (to check the script where there is no GPU).
"""

import argparse
import fnmatch
import json
import os
import subprocess
import sys
import traceback

import torch
import torch.utils._pytree as pytree
from safetensors.torch import load_file, save_file
from torch.export import Dim
from torch.export.passes import move_to_device_pass

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CASES = os.path.join(ROOT, "tests", "cases")
# (rtol, atol) per dtype: the CUDA conformance bounds of docs/cuda.md.
BOUNDS = {torch.float32: (1e-3, 1e-4), torch.float64: (1e-7, 1e-10),
          torch.float16: (2e-2, 5e-3), torch.bfloat16: (5e-2, 2e-2)}


class Skipped(Exception):
    """A model this script cannot build the CUDA programs of (not a splice failure)."""


def hf_cases(patterns):
    """The cases with a training-IR form matching any of the comma-separated globs."""
    names = sorted({d.split(".")[0] for d in os.listdir(CASES)})
    return [n for n in names if any(fnmatch.fnmatch(n, p) for p in patterns.split(",") if p)
            and os.path.exists(os.path.join(CASES, f"{n}.train", "model.pt2"))]


def user_input_names(ep):
    return list(ep.graph_signature.user_inputs)


def dynamic_dims(ep, auto=False):
    """Per user input (in order), {dim: Dim} for every dim the recorded program keeps symbolic,
    with the recorded symbol's range (inputs sharing a symbol share its Dim)."""
    spec, dims_by_symbol = [], {}
    ranges = {str(sym): r for sym, r in ep.range_constraints.items()}
    placeholders = {n.name: n for n in ep.graph.nodes if n.op == "placeholder"}
    for name in user_input_names(ep):
        val = placeholders[name].meta.get("val")
        dims = {}
        for i, d in enumerate(getattr(val, "shape", ())):
            if not isinstance(d, torch.SymInt):
                continue
            symbol = str(d.node.expr)
            if auto:
                dims[i] = Dim.AUTO
            elif symbol not in dims_by_symbol:
                r = ranges.get(symbol)
                lo = int(r.lower) if r is not None else 0
                # An unbounded symbol's upper end is sympy's oo or torch's int_oo.
                bounded = r is not None and str(r.upper) not in ("oo", "int_oo")
                hi = int(r.upper) if bounded else None
                dims_by_symbol[symbol] = Dim(f"d_{symbol}", min=lo, max=hi)
            if not auto:
                dims[i] = dims_by_symbol[symbol]
        spec.append(dims or None)
    return tuple(spec)


def leaves(out):
    return [t for t in pytree.tree_leaves(out)]


def compare(name, expected, actual):
    if expected.dtype != actual.dtype or expected.shape != actual.shape:
        return f"{name}: splice {actual.dtype}{list(actual.shape)}, PyTorch " \
               f"{expected.dtype}{list(expected.shape)}"
    if not expected.is_floating_point():
        return "" if torch.equal(expected, actual) else f"{name}: integer values differ"
    rtol, atol = BOUNDS[expected.dtype]
    e, a = expected.double(), actual.double()
    bad = ~torch.isclose(a, e, rtol=rtol, atol=atol, equal_nan=True)
    if bad.any():
        worst = (a - e).abs().max().item()
        return f"{name}: {int(bad.sum())} of {e.numel()} elements differ (max |diff| {worst:.3g})"
    return ""


def run_splice(splice, device, program, inputs, outputs, state_in, state_out):
    cmd = [splice, "run", program, "--device", device, "--no-cache", "--inputs", inputs,
           "--outputs", outputs, "--state-out", state_out]
    if state_in:
        cmd += ["--state-in", state_in]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        raise RuntimeError(f"splice run exited {r.returncode}: {(r.stderr or r.stdout)[-600:]}")


def check_model(case, form, args):
    src = os.path.join(CASES, f"{case}.train")
    meta = json.load(open(os.path.join(src, "case.json")))
    try:
        recorded_program = torch.export.load(os.path.join(src, "model.pt2"))
    except Exception as e:
        # hf_grouped_mm_fallback's training IR does not load back into torch 2.11 itself.
        raise Skipped(f"PyTorch cannot load the recorded program ({type(e).__name__})")
    # "cuda:0", not "cuda": the moved program's metadata asserts must name the inputs' device.
    device = "cuda:0" if args.device == "cuda" else args.device
    ep = move_to_device_pass(recorded_program, device)
    names = user_input_names(ep)
    calls = []
    for k in range(meta["calls"]):
        recorded = load_file(os.path.join(src, f"call{k}.inputs.safetensors"))
        calls.append({n: recorded[n].to(device) for n in names})
    # Two copies of the module: one exported (export may run it), one the eager reference.
    # The recorded programs take their inputs positionally, in the signature's order.
    try:
        exported = torch.export.export(ep.module(), tuple(calls[0].values()),
                                       dynamic_shapes=dynamic_dims(ep), strict=False)
    except torch._dynamo.exc.UserError:
        # The recorded ranges can be wider than what export proves again for the unlifted
        # module (a relation between symbols it now derives): let export choose the ranges.
        exported = torch.export.export(ep.module(), tuple(calls[0].values()),
                                       dynamic_shapes=dynamic_dims(ep, auto=True), strict=False)
    if form == "default":
        exported = exported.run_decompositions()
    work = os.path.join(args.out, f"{case}.{form}")
    os.makedirs(work, exist_ok=True)
    program = os.path.join(work, "model.pt2")
    torch.export.save(exported, program)
    reference = ep.module()
    state = None
    for k, call in enumerate(calls):
        with torch.no_grad():
            expected = leaves(reference(*call.values()))
        inputs = os.path.join(work, f"call{k}.inputs.safetensors")
        save_file({n: t.cpu().contiguous() for n, t in call.items()}, inputs)
        outputs = os.path.join(work, f"call{k}.splice.safetensors")
        state_out = os.path.join(work, f"call{k}.state.safetensors")
        run_splice(args.splice, args.device, program, inputs, outputs, state, state_out)
        state = state_out
        actual = load_file(outputs)
        problems = []
        for i, e in enumerate(expected):
            if not isinstance(e, torch.Tensor):
                continue
            key = f"output.{i}"
            if key not in actual:
                problems.append(f"{key} missing from splice's outputs")
                continue
            diff = compare(key, e.detach().cpu(), actual[key])
            if diff:
                problems.append(diff)
        if problems:
            return f"call {k}: " + "; ".join(problems)
    return ""


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--splice", required=True, help="the splice binary")
    parser.add_argument("--out", required=True, help="scratch folder for programs and results")
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--only", default="hf_*")
    args = parser.parse_args()
    torch.manual_seed(0)
    failed = passed = 0
    for case in hf_cases(args.only):
        for form in ("train", "default"):
            try:
                problem = check_model(case, form, args)
            except Skipped as e:
                print(f"skip   {case}.{form}: {e}", flush=True)
                continue
            except Exception as e:  # one model's failure must not hide the others'
                problem = f"{type(e).__name__}: {str(e)[-600:]}"
                traceback.print_exc(file=sys.stderr)
            failed += bool(problem)
            passed += not problem
            print(f"{'ok    ' if not problem else 'FAILED'} {case}.{form} on {args.device}"
                  + (f": {problem}" if problem else ""), flush=True)
    print(f"{passed} of {passed + failed} transformers programs match PyTorch on {args.device}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
