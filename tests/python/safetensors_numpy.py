"""A safetensors reader on numpy alone (the conformance cases' files), for the Python tests
that run without torch. bfloat16 tensors come back as their uint16 bits, as splice's numpy path
takes and returns them."""

import json
import struct

import numpy as np

# safetensors dtype -> (numpy dtype, whether it is bfloat16 bits)
_DTYPES = {
    "BOOL": (np.bool_, False), "U8": (np.uint8, False), "I8": (np.int8, False),
    "I16": (np.int16, False), "I32": (np.int32, False), "I64": (np.int64, False),
    "F16": (np.float16, False), "F32": (np.float32, False), "F64": (np.float64, False),
    "BF16": (np.uint16, True),
}


def read(path):
    """{name: (array, is_bf16)} of a .safetensors file."""
    with open(path, "rb") as f:
        blob = f.read()
    (header_len,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + header_len])
    data = memoryview(blob)[8 + header_len:]
    out = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        dtype, bf16 = _DTYPES[entry["dtype"]]
        begin, end = entry["data_offsets"]
        array = np.frombuffer(data[begin:end], dtype=dtype).reshape(entry["shape"]).copy()
        out[name] = (array, bf16)
    return out
