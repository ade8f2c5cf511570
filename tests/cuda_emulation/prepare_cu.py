"""Rewrites splice's .cu kernel files into host C++ for emu_cuda.h: launches become
emu_launch calls (kernels with __syncthreads get real threads per block), CUDA headers go,
cudaGetLastError becomes cudaSuccess. Usage: prepare_cu.py SRC.cu OUT.cc"""
import re
import sys

# Kernels that synchronise a block (__syncthreads, warp shuffles): their threads are threads.
BARRIER_KERNELS = ["nonzero_count", "nonzero_scan", "nonzero_write", "repeat_scan",
                   "gemv_rows_kernel", "gemv_cols_kernel"]

src, out = sys.argv[1], sys.argv[2]
s = open(src).read()
s = s.replace("#include <cuda_bf16.h>\n", "").replace("#include <cuda_fp16.h>\n", "")
s = s.replace("#include <cuda_runtime.h>\n", "")
s = '#include "emu_cuda.h"\n' + s
s = s.replace("return cudaGetLastError();", "return cudaSuccess;")
s = re.sub(r"([A-Za-z_][A-Za-z0-9_<>, ]*?)<<<([^,]+),\s*([^,]+),\s*[^,]+,\s*[^>]+>>>\(([^;]*)\);",
           lambda m: "emu_launch(%s, %s, [&]{ %s(%s); }%s);" % (
               m.group(2), m.group(3), m.group(1).strip(), m.group(4),
               ", true" if m.group(1).split("<")[0].strip() in BARRIER_KERNELS else ""), s)
open(out, "w").write(s)
