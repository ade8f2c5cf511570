#!/usr/bin/env python3
"""Generates the CPU benchmark's workloads (issue 6): exported programs plus PyTorch's results.

For each workload it writes bench/workloads/generated/<name>/ (ignored by git: the files are
15 MB; everything is seeded, so a rerun writes the same tensors and the same program, up to the
archive's random serialization id). bench/run_cpu.sh runs this script when a workload is missing
or older than this script.
  model.pt2                       torch.export.export(...).run_decompositions(), saved with
                                  torch.export.save
  inputs.safetensors              the user inputs, keyed by the program's input names (what
                                  `splice inspect model.pt2` lists), as tests/cases does
  expected_outputs.safetensors    PyTorch eager's outputs as output.N, the keys `splice run`
                                  writes, so `splice run --compare` checks splice against them

Workloads:
  rotary  the rotary chain: both halves written into torch.empty_like(x);
          x f32 [1, 32, 512, 64], cos/sin [512, 32]
  block2  a 2-layer Llama-style decoder block: RMSNorm, q/k/v/o projections, rotary on q and
          k, causal scaled_dot_product_attention, SwiGLU MLP, residuals; hidden 256, 4 heads of
          64, MLP 704, seq 128, batch 1, f32 (~6.4 MB of weights)

  python3 bench/workloads/generate.py [--out bench/workloads/generated]
"""

import argparse
import os
import sys
import warnings
import zlib

import torch
import torch.nn.functional as F
from safetensors.torch import save_file
from torch.export.graph_signature import InputKind

# Same pin as tests/cases/generate.py: the archives' schema depends on the torch release.
PINNED_TORCH = "2.11.0"

# torch 2.11 warns about its own pytree internals once per export.
warnings.filterwarnings("ignore", message=".*LeafSpec.*", category=FutureWarning)

HIDDEN, HEADS, HEAD_DIM, MLP, SEQ, LAYERS, EPS = 256, 4, 64, 704, 128, 2, 1e-6


def seed_of(name):
    # crc32, unlike hash(), is the same in every Python process: the files are reproducible.
    return zlib.crc32(name.encode("utf-8"))


def rotary(x, cos, sin):
    # Written half by half into a fresh tensor: the write chain splice plans as one buffer
    # (and that the naive plan runs as copy-the-base-then-write, twice). bench/gpu_compare.py
    # imports it (and Rotary) for its GPU rotary workload.
    h = x.shape[-1] // 2
    x1, x2 = x[..., :h], x[..., h:]
    res = torch.empty_like(x)
    res[..., :h] = x1 * cos - x2 * sin
    res[..., h:] = x2 * cos + x1 * sin
    return res


class Rotary(torch.nn.Module):
    def forward(self, x, cos, sin):
        return rotary(x, cos, sin)


class RMSNorm(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = torch.nn.Parameter(1 + 0.1 * torch.randn(HIDDEN))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + EPS) * self.weight


def linear(n_in, n_out):
    layer = torch.nn.Linear(n_in, n_out, bias=False)
    with torch.no_grad():
        # Small weights keep activations in range across layers, so the f32 comparison is
        # meaningful rather than dominated by huge values.
        layer.weight.normal_(0.0, 0.05)
    return layer


class Layer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.attn_norm = RMSNorm()
        self.wq = linear(HIDDEN, HEADS * HEAD_DIM)
        self.wk = linear(HIDDEN, HEADS * HEAD_DIM)
        self.wv = linear(HIDDEN, HEADS * HEAD_DIM)
        self.wo = linear(HEADS * HEAD_DIM, HIDDEN)
        self.mlp_norm = RMSNorm()
        self.gate = linear(HIDDEN, MLP)
        self.up = linear(HIDDEN, MLP)
        self.down = linear(MLP, HIDDEN)

    def forward(self, x, cos, sin):
        b, t = x.shape[0], x.shape[1]
        h = self.attn_norm(x)
        q = self.wq(h).view(b, t, HEADS, HEAD_DIM).transpose(1, 2)
        k = self.wk(h).view(b, t, HEADS, HEAD_DIM).transpose(1, 2)
        v = self.wv(h).view(b, t, HEADS, HEAD_DIM).transpose(1, 2)
        attn = F.scaled_dot_product_attention(rotary(q, cos, sin), rotary(k, cos, sin), v,
                                              is_causal=True)
        x = x + self.wo(attn.transpose(1, 2).reshape(b, t, HEADS * HEAD_DIM))
        h = self.mlp_norm(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


class Block2(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = torch.nn.ModuleList([Layer() for _ in range(LAYERS)])

    def forward(self, x, cos, sin):
        for layer in self.layers:
            x = layer(x, cos, sin)
        return x


def cos_sin(seq, half):
    # The usual rotary tables (base 10000) as inputs, so the timed program is only the chain.
    inv_freq = 1.0 / (10000.0 ** (torch.arange(0, half, dtype=torch.float32) / half))
    freqs = torch.arange(seq, dtype=torch.float32)[:, None] * inv_freq[None, :]
    return freqs.cos(), freqs.sin()


def rotary_workload():
    # The rotary shape of the benchmark brief, (1, 32, T, 64), at T = 512: 4 MB of x.
    cos, sin = cos_sin(512, 32)
    return Rotary(), (torch.randn(1, 32, 512, 64), cos, sin)


def block2_workload():
    cos, sin = cos_sin(SEQ, HEAD_DIM // 2)
    return Block2(), (torch.randn(1, SEQ, HIDDEN), cos, sin)


WORKLOADS = {"rotary": rotary_workload, "block2": block2_workload}


def write_workload(name, out_dir):
    torch.manual_seed(seed_of(name))
    mod, args = WORKLOADS[name]()
    mod.eval()
    ep = torch.export.export(mod, args, strict=False).run_decompositions()
    # The archive would otherwise carry a pickled copy of the example inputs (8 MB for rotary);
    # inputs.safetensors already holds them and splice never reads them.
    ep.example_inputs = None
    folder = os.path.join(out_dir, name)
    os.makedirs(folder, exist_ok=True)
    torch.export.save(ep, os.path.join(folder, "model.pt2"))
    names = [s.arg.name for s in ep.graph_signature.input_specs
             if s.kind == InputKind.USER_INPUT]
    # contiguous().clone(): safetensors wants dense tensors that share no memory.
    save_file({n: a.contiguous().clone() for n, a in zip(names, args)},
              os.path.join(folder, "inputs.safetensors"))
    # The reference is the original module run eagerly, never the exported program.
    with torch.no_grad():
        out = mod(*args)
    save_file({"output.0": out.contiguous().clone()},
              os.path.join(folder, "expected_outputs.safetensors"))
    size = os.path.getsize(os.path.join(folder, "model.pt2"))
    print(f"wrote {folder}: inputs {names}, output {list(out.shape)}, model.pt2 {size} bytes")


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=os.path.join(here, "generated"),
                        help="output folder (default: bench/workloads/generated)")
    parser.add_argument("--any-torch", action="store_true",
                        help=f"allow a torch other than the pinned {PINNED_TORCH}")
    args = parser.parse_args()
    if not torch.__version__.startswith(PINNED_TORCH) and not args.any_torch:
        parser.error(f"the workloads are pinned to torch=={PINNED_TORCH} "
                     f"(found {torch.__version__}); pass --any-torch to use another version")
    for name in WORKLOADS:
        write_workload(name, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
