#!/usr/bin/env bash
# splice vs ONNX Runtime vs PyTorch eager in one run (issue 17): builds splice, generates
# the bench workloads when missing (bench/workloads/generate.py, seeded), then runs
# bench/compare.py, which checks every engine's outputs against eager before timing it and
# writes the table into bench/RESULTS.md and the chart into bench/compare.png.
#
#   bench/run_compare.sh [compare.py options]     # e.g. --seconds 5 --only hf_llama rotary
#
# SPLICE_BUILD names the build directory (default build-bench, configured Release here when it
# has no build.ninja yet; an existing build of another type is used as it is). Needs a python3
# with torch, onnxruntime, onnxscript, transformers and safetensors.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${SPLICE_BUILD:-$root/build-bench}"
workloads="$root/bench/workloads/generated"

if ! python3 -c 'import torch, onnxruntime, onnxscript, safetensors' 2>/dev/null; then
  echo "bench/run_compare.sh needs python3 with torch, onnxruntime, onnxscript and" \
       "safetensors" >&2
  exit 1
fi
for w in rotary block2; do
  if [[ ! -f "$workloads/$w/model.pt2" || ! -f "$workloads/$w/inputs.safetensors" ]]; then
    echo "== generating the workloads (python3 bench/workloads/generate.py)"
    python3 "$root/bench/workloads/generate.py" --out "$workloads"
    break
  fi
done
if [[ ! -f "$build/build.ninja" ]]; then
  # SPLICE_WERROR=OFF: see run_cpu.sh (a false -Wrestrict of GCC 12 at -O3).
  cmake -G Ninja -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DSPLICE_WERROR=OFF >/dev/null
fi
ninja -C "$build" splice >/dev/null
type="$(sed -n 's/^CMAKE_BUILD_TYPE:STRING=//p' "$build/CMakeCache.txt")"
meta="$(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) cores, load average"
meta="$meta $(cut -d' ' -f1 /proc/loadavg) at the start; splice built $type ($(git -C "$root" rev-parse --short HEAD))"
meta="$meta; torch $(python3 -c 'import torch; print(torch.__version__)')"
meta="$meta, onnxruntime $(python3 -c 'import onnxruntime; print(onnxruntime.__version__)')"
python3 "$root/bench/compare.py" --splice "$build/bin/splice" --meta "$meta" "$@"
