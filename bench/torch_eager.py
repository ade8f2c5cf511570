#!/usr/bin/env python3
"""PyTorch eager's side of the CPU benchmark (issue 6): the same programs, inputs and CPU.

Loads each workload's model.pt2 with torch.export.load(...).module(), checks its output against
expected_outputs.safetensors, and times it on CPU with 2 threads under torch.inference_mode():
warm-up calls, then the median of many calls timed with time.perf_counter. Prints ms per call.

  /tmp/torchenv/bin/python bench/torch_eager.py [--iters 500] [--workloads rotary,block2]
"""

import argparse
import os
import statistics
import sys
import time
import warnings

import torch
from safetensors.torch import load_file
from torch.export.graph_signature import InputKind

# torch.export.load warns that the archive's weight buffers are read-only; eager never writes
# them, and one warning per workload would hide the numbers.
warnings.filterwarnings("ignore", message=".*non-writable.*")


def user_input_names(ep):
    # The exported module takes its user inputs positionally, in the signature's order.
    return [s.arg.name for s in ep.graph_signature.input_specs if s.kind == InputKind.USER_INPUT]


def time_workload(folder, iters, warmup):
    ep = torch.export.load(os.path.join(folder, "model.pt2"))
    module = ep.module()
    inputs = load_file(os.path.join(folder, "inputs.safetensors"))
    args = [inputs[n] for n in user_input_names(ep)]
    expected = load_file(os.path.join(folder, "expected_outputs.safetensors"))["output.0"]
    with torch.inference_mode():
        diff = (module(*args) - expected).abs().max().item()
        for _ in range(warmup):
            module(*args)
        times = []
        for _ in range(iters):
            start = time.perf_counter()
            module(*args)
            times.append(time.perf_counter() - start)
    # The median, not the mean: one descheduled call on a shared machine must not move it.
    return 1e3 * statistics.median(times), 1e3 * min(times), diff


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", default=os.path.join(here, "workloads", "generated"))
    parser.add_argument("--workloads", default="rotary,block2")
    parser.add_argument("--iters", type=int, default=500)
    parser.add_argument("--warmup", type=int, default=20)
    args = parser.parse_args()
    # The same thread count bench_cpu gives splice, so the comparison is like for like.
    torch.set_num_threads(2)
    print(f"PyTorch {torch.__version__} eager, CPU, {torch.get_num_threads()} threads, "
          f"median of {args.iters} calls after {args.warmup} warm-up calls")
    for name in [w for w in args.workloads.split(",") if w]:
        median, best, diff = time_workload(os.path.join(args.dir, name), args.iters, args.warmup)
        print(f"torch_eager {name:8s} {median:9.3f} ms/call (min {best:.3f}; "
              f"max |eager - expected| {diff:.3g})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
