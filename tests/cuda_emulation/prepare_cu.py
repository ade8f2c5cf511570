"""Rewrites splice's .cu kernel files into host C++ for emu_cuda.h: launches become
emu_launch calls (kernels with __syncthreads get real threads per block), CUDA headers go,
cudaGetLastError becomes cudaSuccess. Usage: prepare_cu.py SRC.cu OUT.cc"""
import re
import sys

# Kernels with __syncthreads or warp shuffles: real threads per block (matched by name, template
# arguments aside).
BARRIER_KERNELS = ["nonzero_count", "nonzero_scan", "nonzero_write", "repeat_scan",
                   "fused_rms_norm_kernel", "row_norm_kernel", "group_norm_kernel",
                   "attention_decode_kernel", "gemv_rows_kernel", "gemv_cols_kernel"]

src, out = sys.argv[1], sys.argv[2]
s = open(src).read()
s = s.replace("#include <cuda_bf16.h>\n", "").replace("#include <cuda_fp16.h>\n", "")
s = '#include "emu_cuda.h"\n' + s
s = s.replace("return cudaGetLastError();", "return cudaSuccess;")


def split_top(text):
    """text split at the commas outside parentheses and angle brackets."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch in "(<[":
            depth += 1
        elif ch in ")>]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    return parts + [cur]


# Dynamic shared memory: the block's buffer emu_launch holds.
s = re.sub(r"extern __shared__ __align__\(16\) unsigned char ([A-Za-z_0-9]+)\[\];",
           r"unsigned char* \1 = emu_dynamic_smem();", s)


def launch(m):
    name, config, args = m.group(1).strip(), split_top(m.group(2)), m.group(3)
    barrier = name.split("<")[0] in BARRIER_KERNELS
    # A barrier kernel gets real threads and its dynamic shared memory (the third launch
    # argument) in bytes.
    extra = ""
    if barrier:
        extra = ", true" + (", " + config[2].strip() if len(config) > 2 else "")
    return "emu_launch(%s, %s, [&]{ %s(%s); }%s);" % (
        config[0].strip(), config[1].strip(), name, args, extra)


# kernel<T, ...>  <<<grid, block, smem, stream>>>(args);  (grid may hold calls with commas, and
# the launch may be split over lines)
s = re.sub(r"([A-Za-z_][A-Za-z0-9_]*(?:<[^<>;]*>)?)\s*<<<(.*?)>>>\(([^;]*)\);", launch, s,
           flags=re.S)


def rewrite_dependent_launches(text):
    """launch_dependent(kernel, grid, block, smem, stream, args...) (dependent_launch.cuh), an
    expression of type cudaError_t, becomes an emu_launch."""
    out, key = "", "launch_dependent("
    while (i := text.find(key)) >= 0:
        depth, j = 1, i + len(key)
        while depth:
            depth += {"(": 1, ")": -1}.get(text[j], 0)
            j += 1
        parts = [x.strip() for x in split_top(text[i + len(key):j - 1])]
        name, grid, block, smem, args = parts[0], parts[1], parts[2], parts[3], parts[5:]
        block = block[5:-1] if block.startswith("dim3(") else block
        extra = (", true, " + smem) if name.split("<")[0] in BARRIER_KERNELS else ""
        out += text[:i] + "(emu_launch(%s, %s, [&]{ %s(%s); }%s), cudaSuccess)" % (
            grid, block, name, ", ".join(args), extra)
        text = text[j:]
    return out + text


s = rewrite_dependent_launches(s)
open(out, "w").write(s)
