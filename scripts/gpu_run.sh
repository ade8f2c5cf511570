#!/usr/bin/env bash
# Runs every GPU test of splice on the GPU host, in one go, from the repo root of a checkout
# with gpu-bundle/splice-gpu.tar.xz (made by scripts/gpu_test) beside it:
#   1. the GPU unit tests (unit_cuda's Gpu* suites: kernels against the CPU backend, the
#      backend end to end: no cudaMalloc on a repeated call, a bad index leaves the CPU's state,
#      CUDA graphs recorded once and replayed with the results of a session without them);
#   2. the conformance suite with SPLICE_TEST_DEVICE=cuda (every case's outputs, mutated
#      inputs and state after every call against PyTorch's, with the GPU's float bounds,
#      docs/cuda.md): the planned route, the naive-plan, engine-file and cache routes, and the
#      two CUDA-graph routes (graphs off; every call replayed from a recording);
#   3. `splice bench --device cuda` (unit_cuda's GpuBench suite, step gpu_bench): the kernels
#      CUPTI counts per call equal the plan's launches for programs without library calls;
#   4. transformers models (Llama, Qwen2, GPT-2, BERT, ...) exported on CUDA, run with
#      `splice run --device cuda` against PyTorch on CUDA (scripts/gpu_hf_models.py);
#   5. compute-sanitizer: memcheck on a few cases (graphs on, off and replayed) and the backend
#      tests; racecheck on cases whose kernels use shared memory (attention, norms, softmax,
#      reductions, scans, index writes); memcheck and racecheck on the GEMV, decode attention
#      and RMSNorm group kernels' own tests.
# Logs and summary.txt go to $OUT (default gpu-out/). Every step runs even when another one
# fails, each under a time limit (GPU_RUN_{UNIT,CONFORMANCE,ROUTES,GRAPHS,BENCH,HF,SANITIZER}_
# SECONDS: 300, 260, 260, 260, 180, 300, 120 by default; next to the conformance runs the unit
# tests took over 130 s, and four conformance routes side by side ran ~5 cases a second each on
# an H100 on 2026-12-07, NVRTC compiling every program's kernels afresh). Everything but the sanitizer runs goes at the same time, then those:
# device time is the scarce thing, and the host's 16 cores and the GPU's memory hold them all
# at once (the bench test checks counts, not times, so sharing the GPU is fine; CUPTI counts
# only its own session's stream). The summary is always written, and the exit status is 0 only
# when every step passed.
set -u
cd "$(dirname "$0")/.."
out=${OUT:-gpu-out}
mkdir -p "$out"
summary="$out/summary.txt"
: >"$summary"
say() { echo "$*" | tee -a "$summary"; }
failed=0

bundle=gpu-bundle/splice-gpu.tar.xz
work=$(mktemp -d)
trap 'case "$work" in /tmp/tmp.*) rm -rf -- "$work";; esac' EXIT
say "splice GPU run $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname)"
if ! tar -xJf "$bundle" -C "$work" 2>"$out/unpack.log"; then
  say "FAILED: cannot unpack $bundle ($(head -c 300 "$out/unpack.log"))"
  exit 1
fi
root="$work/splice-gpu"
say "bundle commit: $(cat "$root/COMMIT" 2>/dev/null || echo unknown)"
export LD_LIBRARY_PATH="$root/lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export SPLICE_TEST_SOURCE_DIR="$PWD"
# The CLI the GpuBench tests run (the build folder they were compiled in is not here).
export SPLICE_TEST_SPLICE_BINARY="$root/bin/splice"
export XDG_CACHE_HOME="$work/cache"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader >"$out/gpu.txt" 2>&1 ||
  say "warning: nvidia-smi failed"
say "gpu: $(head -n 1 "$out/gpu.txt")"
# The libcupti bench will count kernels with (it loads libcupti.so.13 through LD_LIBRARY_PATH,
# then from the toolkit's folders); without one, kernels are n/a and gpu_bench fails saying so.
cupti=$(ls /usr/local/cuda/lib64/libcupti.so.* /usr/local/cuda/extras/CUPTI/lib64/libcupti.so.* \
  2>/dev/null | head -n 1)
say "libcupti: ${cupti:-none in /usr/local/cuda/lib64 or extras/CUPTI/lib64}"

# Runs a gtest binary as one step: step NAME SECONDS CMD...; the log keeps the last 8 MiB.
# Its summary lines go to $out/NAME.summary (steps run in the background, so no shared state):
# finish() appends them to the summary in order.
step() {
  local name=$1 seconds=$2
  shift 2
  local log="$out/$name.log" start rc
  local notes="$out/$name.summary"
  : >"$notes"
  start=$(date +%s)
  timeout --kill-after=10 "$seconds" "$@" >"$log.full" 2>&1
  rc=$?
  tail -c 8388608 "$log.full" >"$log"
  rm -f "$log.full"
  local took=$(( $(date +%s) - start ))
  local passed failed_n
  passed=$(grep -Eo '^\[  PASSED  \] [0-9]+' "$log" | grep -Eo '[0-9]+$' | tail -n 1)
  failed_n=$(grep -Eo '^\[  FAILED  \] [0-9]+ test' "$log" | grep -Eo '[0-9]+' | tail -n 1)
  local what="rc=$rc, ${took}s, passed ${passed:-?}, failed ${failed_n:-0}"
  [ "$rc" = 124 ] && what="$what, TIMED OUT after ${seconds}s"
  # Not a gtest binary (a script): its last line is its summary.
  [ -z "$passed" ] && what="$what: $(tail -n 1 "$log")"
  if [ "$rc" = 0 ]; then
    echo "ok      $name ($what)" >>"$notes"
  else
    echo "FAILED  $name ($what)" >>"$notes"
    grep -E '^\[  FAILED  \] [A-Za-z]|^FAILED ' "$log" | sort -u | head -n 40 | sed 's/^/          /' \
      >>"$notes"
  fi
}
# finish NAME...: appends the steps' summaries in this order; any FAILED line fails the run.
finish() {
  local name
  for name in "$@"; do
    tee -a "$summary" <"$out/$name.summary"
    grep -q '^FAILED' "$out/$name.summary" && failed=1
  done
  return 0
}

step gpu_unit "${GPU_RUN_UNIT_SECONDS:-300}" "$root/bin/unit_cuda" --gtest_filter='Gpu*:-GpuBench.*' &
step gpu_bench "${GPU_RUN_BENCH_SECONDS:-180}" "$root/bin/unit_cuda" --gtest_filter='GpuBench.*' &
step conformance_cuda "${GPU_RUN_CONFORMANCE_SECONDS:-260}" \
  env SPLICE_TEST_DEVICE=cuda "$root/bin/conformance" --gtest_filter='Conformance.*' &
step conformance_cuda_routes "${GPU_RUN_ROUTES_SECONDS:-260}" \
  env SPLICE_TEST_DEVICE=cuda "$root/bin/conformance" \
  --gtest_filter='ConformanceNaive.*:ConformanceEngine.*:ConformanceCache.*' &
# transformers models exported on CUDA (scripts/gpu_hf_models.py): mostly export on the host's
# CPUs, next to the GPU-bound steps.
step hf_models "${GPU_RUN_HF_SECONDS:-300}" \
  python3 scripts/gpu_hf_models.py --splice "$root/bin/splice" --out "$work/hf" --device cuda &
step conformance_cuda_replay "${GPU_RUN_GRAPHS_SECONDS:-260}" \
  env SPLICE_TEST_DEVICE=cuda "$root/bin/conformance" --gtest_filter='ConformanceReplay.*' &
step conformance_cuda_graphs_off "${GPU_RUN_GRAPHS_SECONDS:-260}" \
  env SPLICE_TEST_DEVICE=cuda "$root/bin/conformance" --gtest_filter='ConformanceGraphsOff.*' &
wait
finish gpu_unit gpu_bench conformance_cuda conformance_cuda_routes conformance_cuda_replay \
  conformance_cuda_graphs_off hf_models
sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
if [ -x "$sanitizer" ]; then
  # gtest filter of the same case names in each of the given route suites.
  in_routes() {
    local names=$1 filter="" route name
    shift
    for route in "$@"; do
      for name in $names; do filter="$filter${filter:+:}$route.$name"; done
    done
    echo "$filter"
  }
  memcheck_cases="kv_cache_reads_old_state_default kv_cache_item_slice_default w_kv_item_position_out_of_range_default embedding_default f_kv_index_copy_two_positions_default rotary_halves_into_empty_like_default hf_llama_static_cache_default"
  racecheck_cases="attn_causal_default attn_gqa_bf16_default attn_decode_q1_mask_default attn_float_mask_default layer_norm_default x2_rms_norm_default softmax_default log_softmax_default sum_default var_mean_default argmax_default cumsum_default m_sort_topk_default index_put_accumulate_default w_index_put_accumulate_dups_default"
  seconds=${GPU_RUN_SANITIZER_SECONDS:-120}
  step memcheck "$seconds" env SPLICE_TEST_DEVICE=cuda "$sanitizer" --tool memcheck \
    --error-exitcode 3 "$root/bin/conformance" \
    --gtest_filter="$(in_routes "$memcheck_cases" Conformance ConformanceGraphsOff ConformanceReplay)" &
  step memcheck_backend "$seconds" "$sanitizer" --tool memcheck --error-exitcode 3 \
    "$root/bin/unit_cuda" --gtest_filter='GpuBackend.*:GpuGraphs.*' &
  step racecheck "$seconds" env SPLICE_TEST_DEVICE=cuda "$sanitizer" --tool racecheck \
    --error-exitcode 3 "$root/bin/conformance" \
    --gtest_filter="$(in_routes "$racecheck_cases" ConformanceGraphsOff)" &
  # The kernels of issue 35 (GEMV, split-KV decode attention, the RMSNorm group) on their own
  # tests: split-K and the in-launch combine count arrivals in device memory. The decode
  # attention through DecodeCountersReturnToZero (a split decode whose last blocks combine in
  # the launch, three times): DecodeCasesEveryDtype's long caches ran past the time limit under
  # the sanitizers.
  new_kernels='GpuGemv.Small*:GpuGemv.SplitK*:GpuAttention.DecodeCountersReturnToZero:GpuNormFusion.*'
  step memcheck_kernels "$seconds" "$sanitizer" --tool memcheck --error-exitcode 3 \
    "$root/bin/unit_cuda" --gtest_filter="$new_kernels" &
  step racecheck_kernels "$seconds" "$sanitizer" --tool racecheck --error-exitcode 3 \
    "$root/bin/unit_cuda" --gtest_filter="$new_kernels" &
  wait
  finish memcheck memcheck_backend racecheck memcheck_kernels racecheck_kernels
else
  failed=1
  say "FAILED  memcheck (no compute-sanitizer)"
fi
say "result: $([ "$failed" = 0 ] && echo all passed || echo some steps failed)"
exit "$failed"
