#!/bin/bash
# Host emulation of splice's CUDA kernels, for checking their logic on a machine without a GPU
# (a developer tool, not part of CI). It runs
#  1. every generated pointwise kernel of tests/unit/cuda/pointwise_cases.h (the generated CUDA
#     source compiled as host C++, PTX conversions replaced by splice's own) against the CPU
#     kernels, every case x dtype x shape x layout, bit for bit (host libm on both sides);
#  2. the GPU tests of the index, shape and copy ops (tests/unit/cuda/gpu_*_ops_test.cc) with
#     the .cu kernels rewritten to host C++ (prepare_cu.py; each block's threads are threads,
#     so __syncthreads and shared memory work), the CUDA runtime calls served from host memory
#     (emu_stubs.cc) and the generated copy kernels replaced by a host interpreter.
#  3. the RMSNorm group's kernel (norm.cu, tests/unit/cuda/gpu_norm_fusion_test.cc), its warp
#     shuffles exchanged through the block's barrier; the layer norm and RMS norm kernels
#     (norm_test.cc's GpuNorm.RowsOfAtMost1024Columns: every dtype and layout).
#  4. the GEMV kernels (gemv.cu) against the CPU backend's matmuls (gpu_gemv_test.cc: every row
#     count, shape, layout, dtype and bias, with and without split k), the split-k arrival
#     counters included (blocks run one after another, so the last block is the last in order).
# What it cannot check: PTX, the GPU's math functions, real memory and launch behaviour.
# Usage: tests/cuda_emulation/run.sh [BUILD_DIR=build-cuda]  (needs the built splice libraries)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build-cuda}
work=$(mktemp -d)
case "$work" in /tmp/*) ;; *) echo "unexpected scratch dir $work"; exit 1 ;; esac
trap 'rm -rf -- "$work"' EXIT
here=$root/tests/cuda_emulation
src=$root/src/backends/cuda
inc="-I$root/src -I$root/include -I$root/tests/unit/cuda -I/usr/local/cuda/include -I$here -I$work"
# A group: the static libraries refer to each other (splice_cpu to the backend interface and
# the op table), so one pass in any order would leave symbols undefined; splice_cpu whole, as
# its kernels register from static initializers.
libs="-L$build/lib -Wl,--start-group -lsplice_cuda -Wl,--whole-archive -lsplice_cpu -Wl,--no-whole-archive -lsplice_backend_common -lsplice_backend_api -lsplice_ir -lsplice_tensor -lsplice_support -Wl,--end-group -lfmt -lopenblas -lpthread"
cuda_libs="-L/usr/local/cuda/lib64 -lcudart -lnvrtc"

echo "== generated pointwise kernels"
g++ -std=c++20 -O1 -w $inc "$here/emu_pointwise_gen.cc" $libs $cuda_libs -lgtest -o "$work/gen"
(cd "$work" && LD_LIBRARY_PATH=/usr/local/cuda/lib64 ./gen)
g++ -std=c++20 -O1 -w $inc -I"$work" "$here/emu_pointwise_run.cc" $libs $cuda_libs -lgtest \
  -o "$work/run"
(cd "$work" && LD_LIBRARY_PATH=/usr/local/cuda/lib64 ./run | tail -25)

echo "== index, shape and copy ops"
python3 "$here/prepare_cu.py" "$src/remap_kernel.cu" "$work/remap_kernel_emu.cc"
python3 "$here/prepare_cu.py" "$src/index_kernels.cu" "$work/index_kernels_emu.cc"
g++ -std=c++20 -O1 -w $inc "$here/emu_stubs.cc" "$work/remap_kernel_emu.cc" \
  "$work/index_kernels_emu.cc" "$src/index_ops.cc" "$src/shape_ops.cc" "$src/copy_ops.cc" \
  "$src/repeat_interleave.cc" "$src/device_info.cc" "$src/device_memory.cc" \
  "$src/error_word.cc" "$src/cuda_check.cc" "$src/indexing.cc" \
  "$root/tests/unit/cuda/gpu_index_ops_test.cc" "$root/tests/unit/cuda/gpu_shape_ops_test.cc" \
  -L"$build/lib" -Wl,--start-group -Wl,--whole-archive -lsplice_cpu -Wl,--no-whole-archive \
  -lsplice_backend_common -lsplice_backend_api -lsplice_ir -lsplice_tensor -lsplice_support -Wl,--end-group -lfmt -lopenblas \
  -lgtest_main -lgtest -lpthread -o "$work/emu_tests"
"$work/emu_tests" | tail -15

echo "== RMSNorm group kernel"
python3 "$here/prepare_cu.py" "$src/norm.cu" "$work/norm_emu.cc"
# device_dtype.cuh includes the toolkit's 16-bit float headers, which emu_cuda.h stands in for.
mkdir -p "$work/no_fp16" && touch "$work/no_fp16/cuda_fp16.h" "$work/no_fp16/cuda_bf16.h"
g++ -std=c++20 -O1 -w -I"$work/no_fp16" $inc "$here/emu_stubs.cc" "$work/norm_emu.cc" "$src/reduce_plan.cc" \
  "$src/cuda_check.cc" "$root/tests/unit/cuda/gpu_norm_fusion_test.cc" \
  -L"$build/lib" -Wl,--start-group -Wl,--whole-archive -lsplice_cpu -Wl,--no-whole-archive \
  -lsplice_backend_common -lsplice_backend_api -lsplice_ir -lsplice_tensor -lsplice_support -Wl,--end-group -lfmt -lopenblas \
  -lgtest_main -lgtest -lpthread -o "$work/emu_norm"
"$work/emu_norm" | tail -8
echo "== layer norm and RMS norm kernels"
# norm_test.cc's GpuNorm suite against the CPU backend (softmax.cu too: the suite tests it).
# device_info.cc includes cuBLASLt's header (its version names the device), which needs the real
# half types: compiled apart, without the stand-ins, once for this step and the GEMV one.
python3 "$here/prepare_cu.py" "$src/softmax.cu" "$work/softmax_emu.cc"
g++ -std=c++20 -O1 -w $inc -c "$src/device_info.cc" -o "$work/device_info.o"
g++ -std=c++20 -O1 -w -I"$work/no_fp16" $inc "$here/emu_stubs.cc" "$work/norm_emu.cc" \
  "$work/softmax_emu.cc" "$work/device_info.o" "$src/reduce_plan.cc" "$src/lane_plan.cc" \
  "$src/cuda_check.cc" "$root/tests/unit/cuda/norm_test.cc" \
  -L"$build/lib" -Wl,--start-group -Wl,--whole-archive -lsplice_cpu -Wl,--no-whole-archive \
  -lsplice_backend_common -lsplice_backend_api -lsplice_ir -lsplice_tensor -lsplice_support -Wl,--end-group -lfmt -lopenblas \
  -lgtest_main -lgtest -lpthread -o "$work/emu_norm_test"
"$work/emu_norm_test" --gtest_filter='GpuNorm.RowsOfAtMost1024Columns:GpuNorm.ErrorsNameTheProblem' | tail -6
echo "== decode attention"
python3 "$here/prepare_cu.py" "$src/attention_decode.cu" "$work/attention_decode_emu.cc"
# device_dtype.cuh includes CUDA's 16-bit float headers, whose types emu_cuda.h replaces: empty
# stand-ins come first on the include path.
mkdir -p "$work/shim" && touch "$work/shim/cuda_fp16.h" "$work/shim/cuda_bf16.h"
g++ -std=c++20 -O2 -w -I"$work/shim" $inc "$here/emu_stubs.cc" "$work/attention_decode_emu.cc" \
  "$src/attention_plan.cc" "$src/cuda_check.cc" "$here/emu_attention_run.cc" \
  -L"$build/lib" -Wl,--start-group -Wl,--whole-archive -lsplice_cpu -Wl,--no-whole-archive \
  -lsplice_backend_common -lsplice_backend_api -lsplice_ir -lsplice_tensor -lsplice_support -Wl,--end-group -lfmt -lopenblas \
  -lgtest_main -lgtest -lpthread -o "$work/emu_attention"
"$work/emu_attention" | tail -15
echo "== GEMV kernels"
python3 "$here/prepare_cu.py" "$src/gemv.cu" "$work/gemv_emu.cc"
# device_dtype.cuh includes the CUDA half headers; emu_cuda.h has the types instead.
mkdir -p "$work/no_cuda_half" && touch "$work/no_cuda_half/cuda_fp16.h" "$work/no_cuda_half/cuda_bf16.h"
# device_info.o: compiled apart in the norm step.
g++ -std=c++20 -O1 -w -I"$work/no_cuda_half" $inc "$here/emu_stubs.cc" "$work/gemv_emu.cc" "$src/gemv_plan.cc" \
  "$src/matmul_exec.cc" "$src/matmul_plan.cc" "$src/reduce_plan.cc" "$work/device_info.o" \
  "$src/cuda_check.cc" "$root/tests/unit/cuda/gpu_gemv_test.cc" \
  -L"$build/lib" -Wl,--start-group -Wl,--whole-archive -lsplice_cpu -Wl,--no-whole-archive \
  -lsplice_passes -lsplice_backend_common -lsplice_backend_api -lsplice_ir -lsplice_tensor \
  -lsplice_support -Wl,--end-group -lfmt -lopenblas -lgtest_main -lgtest -lpthread \
  -o "$work/emu_gemv"
# The small products, the layout choice, split-k determinism and the scratch error; the full
# sweep (EveryRowCount...) takes hours emulated: SPLICE_EMU_GEMV_FILTER='*' runs it.
"$work/emu_gemv" --gtest_filter="${SPLICE_EMU_GEMV_FILTER:-GpuGemv.Small*:GpuGemv.Sixteen*:GpuGemv.SplitK*:GpuGemv.TooLittle*}" | tail -15
echo "== GEMV epilogue kernels"
# Generated (NVRTC) source: written out by a first program, compiled into the second as host C++.
g++ -std=c++20 -O1 -w $inc "$here/emu_gemv_epilogue_gen.cc" $libs $cuda_libs -o "$work/epi_gen"
(cd "$work" && LD_LIBRARY_PATH=/usr/local/cuda/lib64 ./epi_gen)
g++ -std=c++20 -O1 -w $inc -I"$work" "$here/emu_gemv_epilogue_run.cc" $libs $cuda_libs \
  -lpthread -o "$work/epi_run"
(cd "$work" && LD_LIBRARY_PATH=/usr/local/cuda/lib64 ./epi_run | tail -40)
