"""The harness the model sweeps share (sweep_hf.py, sweep_torchvision.py): a model exported in
each form with generate.py's machinery, run call by call through the splice CLI (`splice run
... --state-in/--state-out`, buffers chained from call to call), and every output, mutated
input and buffer compared with eager PyTorch within the conformance suite's CPU tolerance
(tests/conformance/compare.cc: float32 |d| <= 1e-5 + 1e-4 |x|).

Each architecture x form cell is one of:
  pass              splice's results match PyTorch's
  export: MSG       torch.export (or run_decompositions) itself fails; nothing to run
  splice: MSG       splice exits non-zero (first line of its message)
  mismatch: MSG     splice runs but a result differs (key, worst error)
"""

import copy
import json
import os
import subprocess
import sys
import traceback

import torch
from safetensors.torch import load_file

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import generate  # noqa: E402


def conv_fan_in(model):
    """Redraws convolution weights N(0, 1/fan_in) with fan_in = in_channels/groups x kernel
    (hf.randomize takes the kernel width as the fan-in, so deep CNNs blow up to 1e9 and ReLU6
    saturates: float32 rounding, eager's as much as splice's, then decides the result)."""
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() >= 3:
                p.normal_(0.0, p[0].numel() ** -0.5)
    return model


# (rtol, atol) per dtype on the CPU, as tests/conformance/compare.cc's tolerance_for
TOLERANCES = {torch.float32: (1e-4, 1e-5), torch.float16: (1e-2, 1e-3),
              torch.bfloat16: (2e-2, 1e-2), torch.float64: (1e-9, 1e-12)}


def first_line(text, limit=160):
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    line = next((ln for ln in lines if "error" in ln.lower()), lines[0] if lines else "")
    return line[:limit]


def compare(expected, actual, what, tolerances=None):
    """'' or a description of the first difference (tolerances: {dtype: (rtol, atol)},
    TOLERANCES by default)."""
    for key, e in expected.items():
        if key not in actual:
            return f"{what} {key} missing"
        a = actual[key]
        if a.dtype != e.dtype or a.shape != e.shape:
            return f"{what} {key}: {a.dtype}{list(a.shape)} vs PyTorch {e.dtype}{list(e.shape)}"
        if not e.is_floating_point():
            if not torch.equal(a, e):
                return f"{what} {key}: {int((a != e).sum())} of {e.numel()} elements differ"
            continue
        rtol, atol = (tolerances or TOLERANCES)[e.dtype]
        e64, a64 = e.double(), a.double()
        bad = ~((a64 - e64).abs() <= atol + rtol * e64.abs())
        bad &= ~(torch.isnan(a64) & torch.isnan(e64))
        bad &= ~(torch.isinf(e64) & (a64 == e64))
        if bad.any():
            worst = float((a64 - e64).abs().nan_to_num(float("inf")).max())
            return (f"{what} {key}: {int(bad.sum())} of {e.numel()} elements differ, "
                    f"max |d| {worst:.3g}")
    return ""


def rounding_verdict(expected, actual, truth):
    """For a float16/bfloat16 model whose output differs from eager's beyond the per-op
    tolerance: whole models accumulate one-ulp differences of their intermediate values, so the
    output is judged against the same model run in float64 instead. '' when splice is further
    from it than eager itself (mean error over 1.25x eager's, or max error over 2x), else the
    two errors."""
    e = (expected.double() - truth).abs()
    a = (actual.double() - truth).abs()
    if float(a.mean()) > 1.25 * float(e.mean()) or float(a.max()) > 2 * float(e.max()):
        return ""
    return (f"error vs float64 mean/max: splice {float(a.mean()):.2g}/{float(a.max()):.2g}, "
            f"PyTorch {float(e.mean()):.2g}/{float(e.max()):.2g}")


def float64_outputs(mod, inputs):
    """The user outputs of the module run in float64 on the same inputs (output.N keys)."""
    ref = copy.deepcopy(mod).double()
    with torch.no_grad():
        leaves, _ = torch.utils._pytree.tree_flatten(ref(*[t.clone() for t in inputs]))
    return {f"output.{i}": t for i, t in enumerate(leaves) if isinstance(t, torch.Tensor)}


def run_splice(splice, case_dir, calls, mod=None, tolerances=None):
    """'' when every call matches, else 'splice: ...', 'mismatch: ...' or, with mod (a
    float16/bfloat16 model), 'rounding: ...' where an output differs from eager's beyond the
    per-op tolerance but is as close to the float64 model's as eager's (rounding_verdict)."""
    model = os.path.join(case_dir, "model.pt2")
    with open(os.path.join(case_dir, "case.json")) as f:
        input_names = json.load(f)["inputs"]
    state = None
    note = ""
    for k in range(calls):
        out = os.path.join(case_dir, f"splice{k}.outputs.safetensors")
        st = os.path.join(case_dir, f"splice{k}.state.safetensors")
        inputs = os.path.join(case_dir, f"call{k}.inputs.safetensors")
        cmd = [splice, "run", model, "--inputs", inputs, "--outputs", out, "--state-out", st,
               "--no-cache"]
        if state:
            cmd += ["--state-in", state]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        if p.returncode != 0:
            text = (p.stderr + p.stdout).replace(model + ": ", "").replace("splice: error: ", "")
            return f"splice: (rc {p.returncode}) " + first_line(text, 240)
        for what, exp, act in (("output", f"call{k}.outputs.safetensors", out),
                               ("state", f"call{k}.state.safetensors", st)):
            expected, actual = load_file(os.path.join(case_dir, exp)), load_file(act)
            diff = compare(expected, actual, what, tolerances)
            if diff and mod is not None and what == "output":
                named = load_file(inputs)
                truth = float64_outputs(mod, [named[n] for n in input_names])
                verdicts = [rounding_verdict(expected[key], actual[key], truth[key])
                            if compare({key: expected[key]}, {key: actual[key]}, what, tolerances)
                            else "ok"
                            for key in expected]
                if all(verdicts):
                    note = note or f"rounding: call {k}, " + next(
                        v for v in verdicts if v != "ok")
                    diff = ""
            if diff:
                return f"mismatch: call {k} {diff}"
        state = st
    return note


def sweep_one(name, c, forms, splice, scratch, reuse=False, lowp=False, tolerances=None):
    """{form: cell} for one architecture (a defs.registry.Case): each form exported with
    generate.py's machinery into scratch/name/ and run through splice. lowp: the model is
    float16/bfloat16 (an output beyond the per-op tolerance is judged against float64)."""
    results = {}
    try:
        torch.manual_seed(generate.case_seed(c.name))
        mod, calls, dims = c.fn()
        calls = [tuple(x) for x in calls]
        mod.eval()
    except Exception as e:
        return {f: f"build: {type(e).__name__}: {first_line(str(e))}" for f in forms}
    for form in forms:
        out_dir = os.path.join(scratch, name)
        os.makedirs(out_dir, exist_ok=True)
        case_dir = os.path.join(out_dir, generate.case_dir_name(c, form, "cpu"))
        try:
            if not (reuse and os.path.exists(os.path.join(case_dir, "case.json"))):
                generate.generate_form(c, mod, calls, dims, "cpu", form, out_dir)
        except Exception as e:
            lines = (str(e) or repr(e)).strip().splitlines()
            results[form] = f"export: {type(e).__name__}: {lines[0][:200] if lines else ''}"
            continue
        try:
            results[form] = run_splice(splice, case_dir, len(calls), mod if lowp else None,
                                       tolerances) or "pass"
        except Exception as e:
            results[form] = f"harness: {type(e).__name__}: {first_line(str(e))}"
            traceback.print_exc()
    return results


def markdown_table(title, rows, forms, label="architecture"):
    """rows: [(name, {form: cell})] -> the lines of a markdown table."""
    lines = [f"### {title}", "", f"| {label} | " + " | ".join(forms) + " |",
             "| --- |" + " --- |" * len(forms)]
    for name, res in rows:
        cells = [res[f].replace("|", "\\|") for f in forms]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return lines


def report(lines, markdown, scratch, kept):
    """Prints a sweep's tables, writes them to `markdown` if given, and says where the exported
    programs are when they were not written to a folder the user chose (`kept`)."""
    print("\n".join(lines))
    if markdown:
        with open(markdown, "w") as f:
            f.write("\n".join(lines) + "\n")
    if not kept:
        print(f"programs in {scratch} (delete when done)")
