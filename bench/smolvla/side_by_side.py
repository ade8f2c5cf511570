#!/usr/bin/env python3
"""SmolVLA through splice, PyTorch eager and torch.compile side by side on one GPU (issue 36).

Builds lerobot's SmolVLA with generate.py's builder (random weights, offline), exports
sample_actions on the GPU as torch.export.export returns it (and, with --forms, after
run_decompositions()), and for each form:
  - checks `splice run --device cuda --no-cache` against eager on the GPU, timing that fresh
    process from start to result (issue 36's "from .pt2 to first result");
  - times `splice bench --device cuda --device-io` with CUDA graphs on and off (kernels,
    copies and fills per call counted by CUPTI on calls apart from the timed ones);
  - with --profile, writes `splice bench --profile` (GPU time per kernel of one call) and the
    same call's time summed by kernel family and op (profile_<form>_by_kernel.txt).
Eager is timed in the same process (CUDA events), and torch.compile in the modes --compile
names, after splice's rows (its first call, the compile, timed too: about 200 s for
reduce-overhead on an H100). --rounds N then times eager, the compiled modes and splice (graphs
on, from an engine cache) in turn N times and reports the medians.

  PYTHONPATH=<lerobot wheel unpacked> python3 bench/smolvla/side_by_side.py --splice BIN \
      --out DIR [--layout bf16] [--forms train,default] [--compile reduce-overhead] [--profile]
      [--rounds 3]

Writes DIR/results.json and prints one JSON line per form.
"""

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import time

import torch
from safetensors.torch import load_file, save_file

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # bench/: the decoder comparison's timing helpers
import gpu_compare as timing  # noqa: E402


def load_generator():
    # This folder's generate.py, by path: bench/workloads has a generate.py too.
    spec = importlib.util.spec_from_file_location("smolvla_generate",
                                                  os.path.join(HERE, "generate.py"))
    module = importlib.util.module_from_spec(spec)
    # Registered, so that torch.compile (dynamo) can import the module the model's code is in.
    sys.modules["smolvla_generate"] = module
    spec.loader.exec_module(module)
    return module


def within(reference, out, layout):
    """Max |diff| and whether it is within the cases' bound for the layout (tests/cases/
    README.md: bfloat16's when the VLM computes in bfloat16, float32's otherwise)."""
    ref, out = reference.float().cpu(), out.float().cpu()
    diff = (ref - out).abs().max().item()
    scale = ref.abs().max().item()
    rel, atol = (4e-2, 1e-2) if layout == "bf16" else (1e-4, 1e-5)
    return diff, scale, diff <= rel * scale + atol


def first_result(args, program, inputs_file, out_file):
    """`splice run` in a fresh process, no engine cache: load, plan, compile, first call."""
    start = time.time()
    r = subprocess.run([args.splice, "run", program, "--inputs", inputs_file, "--device", "cuda",
                        "--no-cache", "--outputs", out_file], capture_output=True, text=True,
                       timeout=600)
    seconds = time.time() - start
    if r.returncode != 0:
        raise RuntimeError(f"splice run exited {r.returncode}: {(r.stderr or r.stdout)[-500:]}")
    return seconds, load_file(out_file)["output.0"]


def write_profile_by_kernel(args, program, inputs_file, form):
    """One profiled call's GPU time summed by kernel (template arguments dropped) and op:
    where the time of a call of ~3,500 kernels goes is a sum over families, not a top-N list."""
    r = subprocess.run([args.splice, "bench", program, "--inputs", inputs_file, "--device", "cuda",
                        "--device-io", "--profile", "--json", "--warmup", "3", "--iters", "5"],
                       capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        return
    families = {}
    for row in json.loads(r.stdout).get("profile", []):
        kernel = (row.get("kernel") or "?").split("<")[0].split("(")[0].replace("void ", "")
        key = (kernel, row.get("op") or "?")
        ms, n = families.get(key, (0.0, 0))
        families[key] = (ms + row.get("ms", 0.0), n + row.get("calls", 1))
    total = sum(ms for ms, _ in families.values())
    with open(os.path.join(args.out, f"profile_{form}_by_kernel.txt"), "w") as f:
        f.write(f"{total:.3f} ms of kernels in one call, by kernel and op\n")
        for (kernel, op), (ms, n) in sorted(families.items(), key=lambda kv: -kv[1][0]):
            f.write(f"{ms:9.3f} ms {100 * ms / max(total, 1e-9):5.1f}% {n:6d} launches  {op}  {kernel}\n")


def interleaved_rounds(args, mod, inputs, compiled, form):
    """Eager, each compiled mode and splice (graphs on) timed in turn, `args.rounds` times: the
    medians of interleaved runs are what bench/RESULTS.md records (one run alone varies by
    several percent on a shared host). splice's bench reads an engine cache made by its first
    round, so later rounds time the call, not the compile."""
    work = os.path.join(args.out, form)
    program = os.path.join(work, "model.pt2")
    inputs_file = os.path.join(work, "inputs.safetensors")
    cache = os.path.join(args.out, "engine-cache")
    times = {"eager": [], "splice_graphs": [], **{f"compile_{m}": [] for m in compiled}}
    for _ in range(args.rounds):
        times["eager"].append(timing.time_torch(mod, inputs, args.warmup, args.iters))
        for mode, fn in compiled.items():
            times[f"compile_{mode}"].append(timing.time_torch(fn, inputs, args.warmup, args.iters))
        r = subprocess.run([args.splice, "bench", program, "--inputs", inputs_file, "--device",
                            "cuda", "--device-io", "--json", "--cache-dir", cache, "--warmup",
                            str(args.warmup), "--iters", str(args.iters)],
                           capture_output=True, text=True, timeout=400)
        times["splice_graphs"].append(json.loads(r.stdout)["median_ms"] if r.returncode == 0
                                      else None)
    medians = {f"{k}_median_ms": statistics.median(v) for k, v in times.items()
               if v and None not in v}
    return {"form": form, "rounds": args.rounds, "ms": times, **medians}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--splice", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--size", choices=("reduced", "full"), default="full")
    p.add_argument("--layout", choices=("fp32", "bf16"), default="bf16")
    p.add_argument("--forms", default="train", help="comma-separated: train,default")
    p.add_argument("--compile", nargs="*", default=[],
                   help="torch.compile modes to time: default, reduce-overhead")
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--profile", action="store_true")
    p.add_argument("--rounds", type=int, default=0,
                   help="then time eager, the compiled modes and splice in turn this many times")
    args = p.parse_args()
    args.device = "cuda"  # what the timing helpers' splice_bench reads
    os.makedirs(args.out, exist_ok=True)

    gen = load_generator()
    helpers = gen.load_case_helpers()
    mod, config, vlm_config = gen.build(args.size, args.layout)
    mod = mod.to("cuda")
    inputs = tuple(t.to("cuda") for t in gen.make_inputs(vlm_config, config))
    with torch.no_grad():
        reference = mod(*(t.clone() for t in inputs)).detach()
    results = {"size": args.size, "layout": args.layout, "gpu": torch.cuda.get_device_name(),
               "torch": torch.__version__,
               "eager_ms": timing.time_torch(mod, inputs, args.warmup, args.iters)}
    print(json.dumps(results), flush=True)

    for form in args.forms.split(","):
        row = {"form": form}
        results[form] = row
        work = os.path.join(args.out, form)
        os.makedirs(work, exist_ok=True)
        program = os.path.join(work, "model.pt2")
        start = time.time()
        ep, _ = helpers.export_and_save(mod, inputs, None, "cuda", form, program, False)
        row["export_s"] = round(time.time() - start, 1)
        names = [s.arg.name for s in ep.graph_signature.input_specs
                 if s.kind == torch.export.graph_signature.InputKind.USER_INPUT]
        del ep
        inputs_file = os.path.join(work, "inputs.safetensors")
        save_file({n: helpers.as_saved(t) for n, t in zip(names, inputs)}, inputs_file)
        try:
            seconds, out = first_result(args, program, inputs_file,
                                        os.path.join(work, "splice.safetensors"))
            diff, scale, ok = within(reference, out, args.layout)
            row.update(first_result_s=round(seconds, 1), splice_max_diff=diff, ref_max_abs=scale)
            if not ok:
                raise RuntimeError(f"splice differs from eager by {diff:.3g} (max {scale:.3g})")
            for graphs in (True, False):
                j = timing.splice_bench(args, program, inputs_file, graphs)
                tag = "splice_graphs" if graphs else "splice_nographs"
                for key in ("median_ms", "kernels_per_call", "memcpys_per_call",
                            "memsets_per_call", "graph_replays", "graph_refusal"):
                    row[f"{tag}_{key}"] = j.get(key)
            if args.profile:
                r = subprocess.run([args.splice, "bench", program, "--inputs", inputs_file,
                                    "--device", "cuda", "--device-io", "--profile", "--top", "40"],
                                   capture_output=True, text=True, timeout=600)
                with open(os.path.join(args.out, f"profile_{form}.txt"), "w") as f:
                    f.write(r.stdout + r.stderr)
                write_profile_by_kernel(args, program, inputs_file, form)
        except Exception as e:
            row["splice_error"] = f"{type(e).__name__}: {str(e)[:500]}"
        print(json.dumps(row), flush=True)
    # torch.compile last: its compile takes minutes, and splice's rows are out by then.
    compiled = {}
    for mode in args.compile:
        fn = torch.compile(mod, mode=None if mode == "default" else mode)
        try:
            start = time.time()
            with torch.no_grad():
                diff, scale, ok = within(reference, fn(*inputs), args.layout)
            results[f"compile_{mode}_first_s"] = round(time.time() - start, 1)
            results[f"compile_{mode}_ms"] = (timing.time_torch(fn, inputs, args.warmup, args.iters)
                                             if ok else None)
            if ok:
                compiled[mode] = fn
            if not ok:
                results[f"compile_{mode}_error"] = f"differs from eager by {diff:.3g} of {scale:.3g}"
        except Exception as e:  # a failed baseline is a result, not the end of the run
            results[f"compile_{mode}_error"] = f"{type(e).__name__}: {str(e)[:300]}"
    print(json.dumps({k: v for k, v in results.items() if k.startswith("compile")}), flush=True)
    if args.rounds:
        results["rounds"] = interleaved_rounds(args, mod, inputs, compiled, args.forms.split(",")[0])
        print(json.dumps(results["rounds"]), flush=True)
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump(results, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
