"""Rewrites splice's .cu kernel files into host C++ for emu_cuda.h: launches become
emu_launch calls (kernels with __syncthreads get real threads per block), CUDA headers go,
cudaGetLastError becomes cudaSuccess. Usage: prepare_cu.py SRC.cu OUT.cc"""
import re
import sys

BARRIER_KERNELS = ["nonzero_count", "nonzero_scan", "nonzero_write", "repeat_scan",
                   "attention_decode_kernel"]

src, out = sys.argv[1], sys.argv[2]
s = open(src).read()
s = s.replace("#include <cuda_bf16.h>\n", "").replace("#include <cuda_fp16.h>\n", "")
s = '#include "emu_cuda.h"\n' + s
s = s.replace("return cudaGetLastError();", "return cudaSuccess;")
# Dynamic shared memory: the block's buffer emu_launch holds.
s = re.sub(r"extern __shared__ __align__\(16\) unsigned char ([A-Za-z_0-9]+)\[\];",
           r"unsigned char* \1 = emu_dynamic_smem();", s)


def launch(m):
    kernel = m.group(1).strip()
    barrier = kernel.split("<")[0] in BARRIER_KERNELS
    return "emu_launch(%s, %s, [&]{ %s(%s); }%s);" % (
        m.group(2), m.group(3), kernel, m.group(5),
        ", true, %s" % m.group(4) if barrier else "")


s = re.sub(r"([A-Za-z_][A-Za-z0-9_<>, ]*?)<<<([^,]+),\s*([^,]+),\s*([^,]+),\s*[^>]+>>>\(([^;]*)\);",
           launch, s)
open(out, "w").write(s)
