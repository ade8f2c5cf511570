#!/usr/bin/env python3
"""splice vs PyTorch eager vs torch.compile on one GPU, side by side in one run.

The workloads of docs/performance.md (shared/docs), built here with random weights and exported
on the GPU as torch.export.export returns them (the training IR: scaled_dot_product_attention
stays one op):
  rotary   the rotary write chain, fp16, x [1, 32, 8192, 64]
  prefill  the 16-layer Llama-3.2-1B-shaped decoder (hidden 2048, 32 heads of 64, 8 KV heads,
           MLP 8192), fp16, batch 1, T = 64 and 2048 (one program, T dynamic)
  decode   the same decoder, one token at position 1024 against a static KV cache of 2048
           positions per layer, written in place with index_copy_ (registered buffers)
Every engine's outputs are checked against eager before it is timed. Times are medians of
CUDA-event timings after a warm-up; splice's come from `splice bench --device cuda --json`
(CUDA events on its stream, kernels per call counted with CUPTI; --device-io: inputs and outputs
stay on the GPU, as PyTorch's do), with CUDA graphs on and off.
torch.compile runs in its default mode and, for decode, in "reduce-overhead" (CUDA graphs).

  python3 bench/gpu_compare.py --splice BIN --out DIR [--only rotary decode] [--iters N]

Writes DIR/results.json and prints a table (ms per call; the ratios are within this run).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import traceback

import torch
import torch.nn as nn
import torch.nn.functional as F
from safetensors.torch import load_file, save_file

# The rotary chain is the CPU benchmark's (bench/workloads/generate.py), at this file's shapes.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from workloads.generate import Rotary, rotary  # noqa: E402

HIDDEN, HEADS, KV_HEADS, HEAD_DIM, MLP, LAYERS, CACHE = 2048, 32, 8, 64, 8192, 16, 2048
DTYPE = torch.float16
DEV = "cuda:0"


class RMSNorm(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(HIDDEN))

    def forward(self, x):
        xf = x.float()
        return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-5)).to(x.dtype) * self.weight


class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm1, self.norm2 = RMSNorm(), RMSNorm()
        self.q = nn.Linear(HIDDEN, HEADS * HEAD_DIM, bias=False)
        self.k = nn.Linear(HIDDEN, KV_HEADS * HEAD_DIM, bias=False)
        self.v = nn.Linear(HIDDEN, KV_HEADS * HEAD_DIM, bias=False)
        self.o = nn.Linear(HEADS * HEAD_DIM, HIDDEN, bias=False)
        self.gate = nn.Linear(HIDDEN, MLP, bias=False)
        self.up = nn.Linear(HIDDEN, MLP, bias=False)
        self.down = nn.Linear(MLP, HIDDEN, bias=False)

    def qkv(self, x, cos, sin):
        b, t, _ = x.shape
        h = self.norm1(x)
        q = self.q(h).view(b, t, HEADS, HEAD_DIM).transpose(1, 2)
        k = self.k(h).view(b, t, KV_HEADS, HEAD_DIM).transpose(1, 2)
        v = self.v(h).view(b, t, KV_HEADS, HEAD_DIM).transpose(1, 2)
        return rotary(q, cos, sin), rotary(k, cos, sin), v

    def finish(self, x, attn):
        b, _, t, _ = attn.shape
        x = x + self.o(attn.transpose(1, 2).reshape(b, t, HEADS * HEAD_DIM))
        h = self.norm2(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


class Prefill(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList(Layer() for _ in range(LAYERS))
        self.norm = RMSNorm()

    def forward(self, x, cos, sin):
        for layer in self.layers:
            q, k, v = layer.qkv(x, cos, sin)
            attn = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
            x = layer.finish(x, attn)
        return self.norm(x)


class Decode(nn.Module):
    """One token against a static KV cache per layer (buffers, written with index_copy_)."""

    def __init__(self, prefill):
        super().__init__()
        self.layers, self.norm = prefill.layers, prefill.norm
        for i in range(LAYERS):
            self.register_buffer(f"k_cache_{i}", torch.zeros(1, KV_HEADS, CACHE, HEAD_DIM))
            self.register_buffer(f"v_cache_{i}", torch.zeros(1, KV_HEADS, CACHE, HEAD_DIM))

    def forward(self, x, cos, sin, pos):
        mask = (torch.arange(CACHE, device=x.device) <= pos).view(1, 1, 1, CACHE)
        for i, layer in enumerate(self.layers):
            q, k, v = layer.qkv(x, cos, sin)
            kc, vc = getattr(self, f"k_cache_{i}"), getattr(self, f"v_cache_{i}")
            kc.index_copy_(2, pos, k)
            vc.index_copy_(2, pos, v)
            attn = F.scaled_dot_product_attention(q, kc, vc, attn_mask=mask, enable_gqa=True)
            x = layer.finish(x, attn)
        return self.norm(x)


def cos_sin(positions):
    inv = 1.0 / (10000 ** (torch.arange(0, HEAD_DIM // 2, dtype=torch.float32) / (HEAD_DIM // 2)))
    ang = positions.float()[:, None] * inv[None, :]
    return ang.cos().to(DTYPE).to(DEV), ang.sin().to(DTYPE).to(DEV)


def time_torch(fn, args, warmup, iters):
    """Median ms per call over `iters` calls, each timed with CUDA events (the host clock when
    checking the script on the CPU)."""
    with torch.no_grad():
        for _ in range(warmup):
            fn(*args)
        if DEV != "cpu":
            torch.cuda.synchronize()
        times = []
        for _ in range(iters):
            if DEV == "cpu":
                t0 = time.perf_counter()
                fn(*args)
                times.append((time.perf_counter() - t0) * 1e3)
                continue
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn(*args)
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end))
    return statistics.median(times)


def close(ref, out):
    """Max |diff| against the reference, and whether it is within fp16 bounds for its scale."""
    ref, out = ref.float().cpu(), out.float().cpu()
    diff = (ref - out).abs().max().item()
    scale = ref.abs().max().item()
    return diff, scale, diff <= 2e-2 * scale + 5e-3


def splice_bench(args, program, inputs_file, graphs):
    cmd = [args.splice, "bench", program, "--inputs", inputs_file, "--device", args.device, "--json",
           "--no-cache", "--warmup", str(args.warmup), "--iters", str(args.iters)]
    if not graphs:
        cmd.append("--no-graphs")
    if args.device == "cuda":
        # PyTorch's tensors are on the GPU already: so are splice's (no host copies timed).
        cmd.append("--device-io")
    start = time.time()
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=400)
    if r.returncode != 0:
        raise RuntimeError(f"splice bench exited {r.returncode}: {(r.stderr or r.stdout)[-500:]}")
    j = json.loads(r.stdout)
    j["process_s"] = round(time.time() - start, 2)
    return j


def splice_check(args, program, inputs_file, out_file, reference):
    r = subprocess.run([args.splice, "run", program, "--inputs", inputs_file, "--device", args.device,
                        "--no-cache", "--outputs", out_file], capture_output=True, text=True,
                       timeout=400)
    if r.returncode != 0:
        raise RuntimeError(f"splice run exited {r.returncode}: {(r.stderr or r.stdout)[-500:]}")
    return close(reference, load_file(out_file)["output.0"])


def run_workload(args, name, module, calls, dynamic_shapes, modes):
    """calls: {label: tuple of inputs}; every label is one row of the table."""
    work = os.path.join(args.out, name)
    os.makedirs(work, exist_ok=True)
    first = next(iter(calls.values()))
    export_start = time.time()
    ep = torch.export.export(module, first, dynamic_shapes=dynamic_shapes)
    program = os.path.join(work, "model.pt2")
    torch.export.save(ep, program)
    export_s = time.time() - export_start
    names = [s.arg.name for s in ep.graph_signature.input_specs
             if s.kind == torch.export.graph_signature.InputKind.USER_INPUT]
    rows = []
    compiled = {mode: torch.compile(module, mode=mode) for mode in modes}
    for label, call in calls.items():
        row = {"workload": label, "export_s": round(export_s, 1)}
        rows.append(row)
        inputs_file = os.path.join(work, f"{label}.inputs.safetensors")
        save_file({n: t.contiguous().cpu() for n, t in zip(names, call)}, inputs_file)
        with torch.no_grad():
            reference = module(*call).detach()
        row["eager_ms"] = time_torch(module, call, args.warmup, args.iters)
        for mode, fn in compiled.items():
            key = f"compile_{mode or 'default'}_ms"
            try:
                t0 = time.time()
                with torch.no_grad():
                    diff, scale, ok = close(reference, fn(*call))
                row[f"compile_{mode or 'default'}_first_s"] = round(time.time() - t0, 1)
                row[key] = time_torch(fn, call, args.warmup, args.iters) if ok else None
                if not ok:
                    row[key + "_error"] = f"differs from eager by {diff:.3g} (max {scale:.3g})"
            except Exception as e:
                row[key] = None
                row[key + "_error"] = f"{type(e).__name__}: {str(e)[:300]}"
        try:
            diff, scale, ok = splice_check(args, program, inputs_file,
                                           os.path.join(work, f"{label}.splice.safetensors"),
                                           reference)
            row["splice_max_diff"], row["ref_max_abs"] = diff, scale
            if not ok:
                raise RuntimeError(f"splice differs from eager by {diff:.3g} (max {scale:.3g})")
            for graphs in (True, False):
                j = splice_bench(args, program, inputs_file, graphs)
                tag = "splice_graphs" if graphs else "splice_nographs"
                row[f"{tag}_ms"] = j["median_ms"]
                row[f"{tag}_kernels"] = j.get("kernels_per_call")
                row[f"{tag}_replays"] = j.get("graph_replays")
                row[f"{tag}_refusal"] = j.get("graph_refusal")
                row[f"{tag}_process_s"] = j["process_s"]
        except Exception as e:
            row["splice_error"] = f"{type(e).__name__}: {str(e)[:500]}"
        print(json.dumps(row), flush=True)
    return rows


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--splice", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--only", nargs="*", default=["rotary", "prefill", "decode"])
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--iters", type=int, default=50)
    p.add_argument("--device", default="cuda",
                   help="cpu: check the script where there is no GPU (with --tiny)")
    p.add_argument("--tiny", action="store_true",
                   help="2 layers of hidden 256 and a cache of 64, to check the script quickly")
    args = p.parse_args()
    global DEV, HIDDEN, HEADS, KV_HEADS, MLP, LAYERS, CACHE, DTYPE
    DEV = "cuda:0" if args.device == "cuda" else args.device
    if args.tiny:
        HIDDEN, HEADS, KV_HEADS, MLP, LAYERS, CACHE = 256, 4, 2, 512, 2, 64
    if args.device == "cpu":
        DTYPE = torch.float32  # what the check needs is the pipeline, not fp16 on a CPU
    torch.manual_seed(0)
    os.makedirs(args.out, exist_ok=True)
    rows = []
    meta = {"gpu": torch.cuda.get_device_name(0) if DEV != "cpu" else "none (cpu check)",
            "torch": torch.__version__,
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}

    def attempt(fn):
        try:
            rows.extend(fn())
        except Exception:
            traceback.print_exc()

    if "rotary" in args.only:
        t = 256 if args.tiny else 8192
        x = torch.randn(1, 32, t, HEAD_DIM, dtype=DTYPE, device=DEV)
        cos, sin = cos_sin(torch.arange(t))
        attempt(lambda: run_workload(args, "rotary", Rotary(), {f"rotary T={t}": (x, cos, sin)},
                                     None, [None]))
    prefill = None
    if "prefill" in args.only or "decode" in args.only:
        prefill = Prefill()
        for prm in prefill.parameters():
            if prm.dim() > 1:
                nn.init.normal_(prm, std=0.02)
        prefill = prefill.to(DEV, DTYPE).eval()
    if "prefill" in args.only:
        calls = {}
        for t in ((16, 64) if args.tiny else (64, 2048)):
            c, s = cos_sin(torch.arange(t))
            calls[f"prefill T={t}"] = (torch.randn(1, t, HIDDEN, dtype=DTYPE, device=DEV), c, s)
        seq = torch.export.Dim("seq", min=2, max=CACHE)
        attempt(lambda: run_workload(args, "prefill", prefill, calls,
                                     ({1: seq}, {0: seq}, {0: seq}), [None]))
    if "decode" in args.only:
        decode = Decode(prefill).to(DEV, DTYPE).eval()
        pos = CACHE // 2
        c, s = cos_sin(torch.tensor([pos]))
        call = (torch.randn(1, 1, HIDDEN, dtype=DTYPE, device=DEV), c, s,
                torch.tensor([pos], device=DEV))
        attempt(lambda: run_workload(args, "decode", decode, {f"decode KV {CACHE}": call}, None,
                                     [None, "reduce-overhead"]))
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump({"meta": meta, "rows": rows}, f, indent=1)
    cols = ["eager_ms", "compile_default_ms", "compile_reduce-overhead_ms", "splice_graphs_ms",
            "splice_nographs_ms", "splice_graphs_kernels"]
    print("\n" + " | ".join(["workload"] + cols))
    for r in rows:
        print(" | ".join([r["workload"]] + [
            (f"{r[c]:.4g}" if isinstance(r.get(c), (int, float)) else "-") for c in cols]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
