#!/usr/bin/env bash
# Times splice on the GPU host, side by side with PyTorch in one run, from the repo root of a
# checkout with gpu-bundle/splice-gpu.tar.xz (scripts/gpu_test) beside it:
#   1. the kernel micro-benchmarks of unit_cuda (disabled by default, so the test suite stays
#      quick): GpuGemvBench (GEMV GB/s per weight shape next to a device copy of the same bytes
#      and cuBLASLt), GpuAttentionBench (decode attention µs per call and bandwidth) and
#      GpuNormBench (layer / RMS norm µs per call next to a device copy of the same bytes);
#   2. bench/gpu_compare.py: the decode step, prefill and the rotary chain through eager,
#      torch.compile (and reduce-overhead for decode) and splice with graphs on and off;
#   3. `splice bench --profile` of the decode step and of prefill at T=2048: GPU time per
#      kernel of one call (CUPTI).
# Logs and results.json go to $OUT (default gpu-out/); every step runs under its own time limit
# (GPU_PERF_{MICRO,COMPARE,PROFILE}_SECONDS: 150, 330, 60), about 8 minutes in all.
set -u
cd "$(dirname "$0")/.."
out=${OUT:-gpu-out}
mkdir -p "$out"
work=$(mktemp -d)
trap 'case "$work" in /tmp/tmp.*) rm -rf -- "$work";; esac' EXIT
tar -xJf gpu-bundle/splice-gpu.tar.xz -C "$work" || { echo "cannot unpack the bundle"; exit 1; }
root="$work/splice-gpu"
export LD_LIBRARY_PATH="$root/lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export SPLICE_TEST_SOURCE_DIR="$PWD" XDG_CACHE_HOME="$work/cache"
{
  echo "commit: $(cat "$root/COMMIT" 2>/dev/null || echo unknown), $(date -u +%FT%TZ)"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
} >"$out/gpu.txt" 2>&1
timeout "${GPU_PERF_MICRO_SECONDS:-150}" "$root/bin/unit_cuda" --gtest_also_run_disabled_tests \
  --gtest_filter='*GpuGemvBench.*:*GpuAttentionBench.*:*GpuNormBench.*' >"$out/micro.log" 2>&1
echo "micro-benchmarks: rc=$?" >>"$out/gpu.txt"
timeout "${GPU_PERF_COMPARE_SECONDS:-330}" python3 bench/gpu_compare.py \
  --splice "$root/bin/splice" --out "$work/cmp" --only decode prefill rotary >"$out/compare.log" 2>&1
echo "gpu_compare: rc=$?" >>"$out/gpu.txt"
cp "$work/cmp/results.json" "$out/" 2>/dev/null
for w in "decode/decode KV 2048" "prefill/prefill T=2048"; do
  name=${w%%/*}
  timeout "${GPU_PERF_PROFILE_SECONDS:-60}" "$root/bin/splice" bench "$work/cmp/$name/model.pt2" \
    --inputs "$work/cmp/$w.inputs.safetensors" --device cuda --device-io --no-cache \
    --profile --top 30 >"$out/profile_$name.txt" 2>&1
  echo "profile $name: rc=$?" >>"$out/gpu.txt"
done
cat "$out/gpu.txt"
