#!/usr/bin/env bash
# The CPU benchmark of issue 6 in one run on one machine: generates the workloads when missing
# (bench/workloads/generated, seeded), builds splice and bench_cpu (Release, in build-bench),
# checks splice's outputs against PyTorch's recorded ones, times splice planned and naive
# (Google Benchmark), then PyTorch eager on the same inputs where a Python with torch exists.
# Results go in bench/RESULTS.md.
#
#   bench/run_cpu.sh            # from the repository root or anywhere
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$root/build-bench"
# Generated, not committed (15 MB; ignored by git): bench/workloads/generate.py writes them,
# seeded, so every machine times the same tensors and programs.
workloads="$root/bench/workloads/generated"

# A python with torch and safetensors: the one the workloads were generated with, else python3.
python=""
for p in /tmp/torchenv/bin/python python3; do
  if command -v "$p" >/dev/null && "$p" -c 'import torch, safetensors' 2>/dev/null; then
    python="$p"
    break
  fi
done

# (Re)generate the workloads when one is missing or older than the script that writes them.
stale=""
for w in rotary block2; do
  for f in model.pt2 inputs.safetensors expected_outputs.safetensors; do
    if [[ ! -f "$workloads/$w/$f" || "$root/bench/workloads/generate.py" -nt "$workloads/$w/$f" ]]; then
      stale=1
    fi
  done
done
if [[ -n "$stale" ]]; then
  if [[ -z "$python" ]]; then
    echo "the workloads in $workloads are missing or stale, and generating them needs a python" \
         "with torch 2.11 and safetensors (python3 bench/workloads/generate.py)" >&2
    exit 1
  fi
  echo "== generating the workloads ($python bench/workloads/generate.py)"
  "$python" "$root/bench/workloads/generate.py" --out "$workloads"
fi

# SPLICE_WERROR=OFF: GCC 12 at -O3 reports a false -Wrestrict inside libstdc++'s string code
# for src/ir/printer.cc; the project's own builds (RelWithDebInfo) keep warnings as errors.
cmake -G Ninja -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DSPLICE_WERROR=OFF >/dev/null
ninja -C "$build" splice bench_cpu >/dev/null
if [[ ! -x "$build/bin/bench_cpu" ]]; then
  echo "bench_cpu was not built: install Google Benchmark (libbenchmark-dev)" >&2
  exit 1
fi

echo "== machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores; commit $(git -C "$root" rev-parse HEAD 2>/dev/null || echo unknown)"

# Correctness once, through the CLI and without the engine cache, before any number is taken:
# a fast wrong answer is not a result. The 1e-3 bound is far above f32 rounding noise here.
echo "== splice vs PyTorch's recorded outputs (splice run --compare --no-cache)"
for w in rotary block2; do
  for mode in planned naive; do
    line=$("$build/bin/splice" run "$workloads/$w/model.pt2" --inputs "$workloads/$w/inputs.safetensors" \
             --compare "$workloads/$w/expected_outputs.safetensors" --no-cache --threads 2 \
             --plan-mode "$mode" | grep 'max |splice - PyTorch|')
    echo "$w/$mode: $line"
    awk -v v="${line##*= }" 'BEGIN { exit !(v + 0 <= 1e-3) }' || { echo "$w/$mode: outputs differ" >&2; exit 1; }
  done
done

# Both sets of numbers are kept so the run ends with one table (a speed claim is a
# ratio measured side by side in one run).
splice_out="$(mktemp)"
torch_out="$(mktemp)"
trap 'rm -f "$splice_out" "$torch_out"' EXIT

echo "== splice (bench_cpu, 2 threads; median of 5 repetitions)"
"$build/bin/bench_cpu" "$@" | tee "$splice_out"

# PyTorch eager: the python found above (the venv the workloads were generated with, else any
# python3 with torch).
if [[ -n "$python" ]]; then
  echo "== PyTorch eager ($python)"
  "$python" "$root/bench/torch_eager.py" --dir "$workloads" | tee "$torch_out"
else
  echo "== PyTorch eager: skipped (no python with torch and safetensors)"
fi

echo "== summary (ms per call)"
printf '%-8s %9s %9s %9s %14s %14s\n' workload planned naive eager naive/planned planned/eager
for w in rotary block2; do
  planned=$(awk -v n="$w/planned" 'index($1, n) == 1 && $1 ~ /_median$/ { print $2 }' "$splice_out")
  naive=$(awk -v n="$w/naive" 'index($1, n) == 1 && $1 ~ /_median$/ { print $2 }' "$splice_out")
  eager=$(awk -v n="$w" '$1 == "torch_eager" && $2 == n { print $3 }' "$torch_out")
  awk -v w="$w" -v p="${planned:-0}" -v n="${naive:-0}" -v e="${eager:-0}" 'BEGIN {
    printf "%-8s %9.2f %9.2f %9s %14s %14s\n", w, p, n, (e > 0 ? sprintf("%.2f", e) : "-"),
           (p > 0 ? sprintf("%.2fx", n / p) : "-"), (p > 0 && e > 0 ? sprintf("%.2fx", p / e) : "-") }'
done
