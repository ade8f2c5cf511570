#!/usr/bin/env python3
"""splice vs ONNX Runtime vs PyTorch eager on the same programs and inputs, in one run (issue 17).

For each workload (a torch.export program and its inputs): PyTorch eager runs the exported
program's module (ep.module()); ONNX Runtime runs the same program exported with
torch.onnx.export(ep, dynamo=True); splice runs the .pt2 through `splice bench` (its public
API: one load, then timed Session::run calls).
Each engine's outputs are checked against eager's first; an engine whose outputs differ is
reported as wrong and not timed. Then each is timed for --seconds (after warm-up calls) on
--threads threads, and the median time per call is reported. Writes a markdown table and a PNG
bar chart into bench/RESULTS.md (between the compare markers) and bench/compare.png.

  bench/run_compare.sh          # builds splice, generates workloads, runs this
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnxruntime as ort
import torch
import torch.utils._pytree as pytree
from safetensors.torch import load_file
from torch.export.graph_signature import InputKind

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import png_chart  # noqa: E402

BEGIN = "<!-- compare:begin -->"
END = "<!-- compare:end -->"


def workloads():
    gen = os.path.join(ROOT, "bench", "workloads", "generated")
    cases = os.path.join(ROOT, "tests", "cases")
    out = [
        ("rotary", os.path.join(gen, "rotary", "model.pt2"),
         os.path.join(gen, "rotary", "inputs.safetensors"), "x f32[1,32,512,64]"),
        ("block2", os.path.join(gen, "block2", "model.pt2"),
         os.path.join(gen, "block2", "inputs.safetensors"), "2 Llama layers, hidden 256, T=128"),
    ]
    for name, what in [("hf_llama", "LlamaForCausalLM"), ("hf_gpt2", "GPT2LMHeadModel"),
                       ("hf_bert", "BertModel"), ("hf_qwen2", "Qwen2ForCausalLM")]:
        d = os.path.join(cases, f"{name}.default")
        out.append((name, os.path.join(d, "model.pt2"), os.path.join(d, "call0.inputs.safetensors"),
                    f"transformers {what}, tests/cases generator config"))
    return out


def time_calls(fn, seconds, warmup=10, min_calls=20):
    for _ in range(warmup):
        fn()
    times = []
    start = time.perf_counter()
    while len(times) < min_calls or time.perf_counter() - start < seconds:
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    times.sort()
    return times[len(times) // 2], times[0]


def max_rel_diff(got, want):
    """Largest |got - want| scaled by max(1, largest |want|); inf when shapes or dtypes differ
    in kind (integers compare exactly: any difference is inf)."""
    got = np.asarray(got)
    want = np.asarray(want)
    if got.shape != want.shape:
        return float("inf")
    if want.dtype.kind in "biu":
        return 0.0 if np.array_equal(got.astype(want.dtype), want) else float("inf")
    if want.size == 0:
        return 0.0
    g = got.astype(np.float64)
    w = want.astype(np.float64)
    return float(np.max(np.abs(g - w)) / max(1.0, float(np.max(np.abs(w)))))


def _empty_permuted(size, physical_layout, dtype=None, layout=None, device=None,
                    pin_memory=None):
    """aten.empty_permuted as empty + permute: the ONNX exporter has no function for it (the
    rotary program's empty_like exports as one)."""
    physical = torch.empty([size[i] for i in physical_layout], dtype=dtype, device=device)
    inverse = [0] * len(physical_layout)
    for i, p in enumerate(physical_layout):
        inverse[p] = i
    return physical.permute(inverse)


def for_onnx(ep):
    """The program the ONNX exporter can translate: ops it has no function for decomposed into
    ones it has, same semantics."""
    if any(n.target == torch.ops.aten.empty_permuted.default for n in ep.graph.nodes):
        return ep.run_decompositions({torch.ops.aten.empty_permuted.default: _empty_permuted})
    return ep


def run_one(name, model, inputs_path, args, splice, tmp):
    result = {"name": name}
    ep = torch.export.load(model)
    names = [s.arg.name for s in ep.graph_signature.input_specs if s.kind == InputKind.USER_INPUT]
    tensors = load_file(inputs_path)
    inputs = [tensors[n] for n in names]
    module = ep.module()
    with torch.no_grad():
        ref = [t for t in pytree.tree_flatten(module(*[t.clone() for t in inputs]))[0]]
    ref_np = [t.detach().numpy() if isinstance(t, torch.Tensor) else np.asarray(t) for t in ref]

    # splice: `splice bench` writes the first call's outputs, then times calls; a short first run
    # gives the call count that fills --seconds.
    out_path = os.path.join(tmp, f"{name}.splice.safetensors")
    base = [splice, "bench", model, "--inputs", inputs_path, "--threads", str(args.threads),
            "--no-cache", "--json"]
    proc = subprocess.run(base + ["--warmup", "2", "--iters", "20", "--outputs", out_path],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        result["splice_error"] = proc.stderr.strip()[-300:]
    else:
        got = load_file(out_path)
        diff = max(max_rel_diff(got[f"output.{i}"].numpy(), r) for i, r in enumerate(ref_np))
        result["splice_diff"] = diff
        if diff <= args.tolerance:
            first = json.loads(proc.stdout.strip().splitlines()[-1])
            iters = max(20, int(args.seconds * 1000 / max(first["median_ms"], 1e-3)))
            proc = subprocess.run(base + ["--warmup", "10", "--iters", str(iters)],
                                  capture_output=True, text=True, check=True)
            timing = json.loads(proc.stdout.strip().splitlines()[-1])
            result["splice_ms"], result["splice_min_ms"] = timing["median_ms"], timing["min_ms"]
        else:
            result["splice_error"] = f"outputs differ from eager (max rel diff {diff:.3g})"

    # ONNX Runtime: the same exported program through torch.onnx's dynamo exporter.
    try:
        onnx_path = os.path.join(tmp, f"{name}.onnx")
        onnx_program = torch.onnx.export(for_onnx(ep), tuple(inputs), dynamo=True,
                                         verbose=False)
        onnx_program.save(onnx_path)
        options = ort.SessionOptions()
        options.intra_op_num_threads = args.threads
        options.inter_op_num_threads = 1
        sess = ort.InferenceSession(onnx_path, options, providers=["CPUExecutionProvider"])
        by_name = dict(zip(names, inputs))
        feed = {}
        for i, inp in enumerate(sess.get_inputs()):
            t = by_name.get(inp.name, inputs[i] if i < len(inputs) else None)
            feed[inp.name] = t.numpy()
        outs = sess.run(None, feed)
        diff = max(max_rel_diff(o, r) for o, r in zip(outs, ref_np))
        result["ort_diff"] = diff
        if diff <= args.tolerance and len(outs) >= len(ref_np):
            result["ort_ms"], result["ort_min_ms"] = time_calls(lambda: sess.run(None, feed),
                                                                args.seconds)
        else:
            result["ort_error"] = f"outputs differ from eager (max rel diff {diff:.3g})"
    except Exception as e:  # an export or session failure is a result, not a crash
        result["ort_error"] = f"{type(e).__name__}: {str(e).splitlines()[0][:200]}"

    # PyTorch eager: the exported program's module, as the case generator's reference.
    def eager_call():
        with torch.no_grad():
            module(*inputs)

    result["eager_ms"], result["eager_min_ms"] = time_calls(eager_call, args.seconds)
    return result


def fmt_ms(r, key):
    if key + "_ms" in r:
        return f"{r[key + '_ms']:.3f} ({r[key + '_min_ms']:.3f})"
    return "error" if key + "_error" in r else "–"


def ratio(r, a, b):
    if a + "_ms" in r and b + "_ms" in r:
        return f"{r[a + '_ms'] / r[b + '_ms']:.2f}x"
    return "–"


def write_results(results, args, meta):
    lines = [BEGIN, "", "## splice vs ONNX Runtime vs PyTorch eager (issue 17)", ""]
    lines.append(f"One run of `bench/run_compare.sh`: {meta}. Median ms per call over "
                 f"≥ {args.seconds} s after 10 warm-up calls (fastest call in parentheses), "
                 f"{args.threads} threads for every engine; outputs checked against eager first "
                 f"(max relative diff ≤ {args.tolerance:g}). Ratios (of medians) below 1 mean "
                 "splice is faster.")
    lines.append("")
    lines.append("| workload | program | splice ms | ORT ms | eager ms | splice / ORT | "
                 "splice / eager |")
    lines.append("|---|---|---|---|---|---|---|")
    for r in results:
        lines.append(f"| {r['name']} | {r['what']} | {fmt_ms(r, 'splice')} | {fmt_ms(r, 'ort')} | "
                     f"{fmt_ms(r, 'eager')} | {ratio(r, 'splice', 'ort')} | "
                     f"{ratio(r, 'splice', 'eager')} |")
    errors = [(r["name"], k, r[k]) for r in results for k in ("splice_error", "ort_error")
              if k in r]
    if errors:
        lines += ["", "Not timed:", ""]
        lines += [f"- {n} ({k.split('_')[0]}): {e}" for n, k, e in errors]
    lines += ["", "![time per call relative to ONNX Runtime](compare.png)", "", END]
    block = "\n".join(lines) + "\n"
    path = os.path.join(ROOT, "bench", "RESULTS.md")
    text = open(path).read() if os.path.exists(path) else ""
    if BEGIN in text and END in text:
        text = text[:text.index(BEGIN)] + block + text[text.index(END) + len(END) + 1:]
    else:
        text = text.rstrip("\n") + "\n\n" + block
    with open(path, "w") as f:
        f.write(text)
    # Relative to ONNX Runtime (the line at 1), clipped at kClip so that one engine's outlier
    # (eager on an oversubscribed machine) does not flatten the others.
    clip = 4.0
    groups = []
    for r in results:
        base = r.get("ort_ms") or r.get("eager_ms")
        groups.append((r["name"].replace("hf_", ""),
                       [min(r[k] / base, clip) if (k in r and base) else None
                        for k in ("splice_ms", "ort_ms", "eager_ms")]))
    png_chart.grouped_bars(os.path.join(ROOT, "bench", "compare.png"),
                           "TIME PER CALL / ONNX RUNTIME (LOWER IS FASTER)", groups,
                           ["splice", "onnx runtime", "pytorch eager"],
                           [(31, 119, 180), (255, 127, 14), (150, 150, 150)],
                           f"{args.threads} THREADS, MEDIAN OF CALLS, BARS CUT AT {clip:g}",
                           reference=1.0)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--splice", required=True, help="path of the splice binary (`splice bench`)")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--seconds", type=float, default=3.0)
    p.add_argument("--tolerance", type=float, default=1e-3)
    p.add_argument("--only", nargs="*", help="workload names to run (default: all)")
    p.add_argument("--meta", default="", help="machine and build notes for the table")
    p.add_argument("--replot", metavar="JSONL",
                   help="write the table and chart from a previous run's printed results "
                        "(one JSON object a line) instead of running anything")
    args = p.parse_args()
    if args.replot:
        with open(args.replot) as f:
            results = [json.loads(line) for line in f if line.startswith("{")]
        write_results(results, args, args.meta)
        return 0
    torch.set_num_threads(args.threads)
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, model, inputs, what in workloads():
            if args.only and name not in args.only:
                continue
            if not os.path.exists(model):
                print(f"{name}: {model} is missing", file=sys.stderr)
                continue
            r = run_one(name, model, inputs, args, args.splice, tmp)
            r["what"] = what
            print(json.dumps(r), flush=True)
            results.append(r)
    write_results(results, args, args.meta or f"torch {torch.__version__}, onnxruntime "
                  f"{ort.__version__}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
