#!/usr/bin/env python3
"""Writes tests/data/gguf/quantized.gguf: rows of floats and ggml's own quantization of them, for
tests/tst_ggufsave.cpp, which checks that the app's quantizers write the same bytes.

  input           F32 [rows, 512]: normal values at several scales, zeros, constants, one outlier in a row of small
                  values, values whose scale falls below half precision's normal range, large values, and rows whose
                  values sit on the Q8_0 and Q4_0 rounding ties
  TYPE            the same rows quantized by ggml_quantize_chunk (no importance matrix), for F16, Q8_0, Q4_0 and Q4_K

ggml_quantize_chunk is called in llama.cpp's prebuilt libggml-base.so, which the npm package node-llama-cpp ships; the
file is written with gguf-py from llama.cpp's source, which the same package ships as a git bundle:
  npm install node-llama-cpp@3.22.1        # in a scratch directory
  git clone node_modules/node-llama-cpp/llama/gitRelease.bundle llama.cpp
  /usr/bin/python3 tests/tools/make_gguf_quantize_fixture.py llama.cpp \\
      node_modules/@node-llama-cpp/linux-x64/bins/linux-x64/libggml-base.so
Needs Debian's python3-numpy. The values come from a fixed seed: running it again writes the same file.
"""
import ctypes
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(sys.argv[1], "gguf-py"))
import gguf  # noqa: E402
from gguf import GGMLQuantizationType as T  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "gguf", "quantized.gguf")
COLUMNS = 512  # two Q4_K super-blocks, sixteen Q8_0 and Q4_0 blocks

ggml = ctypes.CDLL(sys.argv[2])
ggml.ggml_quantize_chunk.restype = ctypes.c_size_t
ggml.ggml_quantize_chunk.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64,
                                     ctypes.c_int64, ctypes.c_void_p]
ggml.ggml_row_size.restype = ctypes.c_size_t
ggml.ggml_row_size.argtypes = [ctypes.c_int, ctypes.c_int64]


def rows():
    rng = np.random.default_rng(20261201)
    out = [rng.normal(0, s, COLUMNS) for s in (0.02, 0.1, 1.0, 3.0)]
    out.append(np.zeros(COLUMNS))
    out.append(np.full(COLUMNS, 0.37))
    out.append(np.full(COLUMNS, -2.5))
    outlier = rng.normal(0, 0.01, COLUMNS)
    outlier[77] = 4.0
    out.append(outlier)
    out.append(rng.normal(0, 1e-6, COLUMNS))  # scales below float16's normal range
    out.append(rng.normal(0, 1e3, COLUMNS))
    out.append(rng.uniform(-1, 1, COLUMNS) ** 3)
    out.append(rng.standard_t(2, COLUMNS))  # heavy tails
    ties = np.tile(np.arange(-127, 129, dtype=np.float64) / 2, 2)[:COLUMNS]  # x·id lands on .5 for Q8_0's roundf
    out.append(ties)
    out.append(np.tile(np.arange(-8, 8, dtype=np.float64), COLUMNS // 16))  # Q4_0's levels exactly
    return np.stack(out).astype(np.float32)


def quantized(qtype, x):
    n_rows, n_per_row = x.shape
    size = ggml.ggml_row_size(int(qtype), n_per_row) * n_rows
    dst = np.zeros(size, dtype=np.uint8)
    src = np.ascontiguousarray(x, dtype=np.float32)
    written = ggml.ggml_quantize_chunk(int(qtype), src.ctypes.data, dst.ctypes.data, 0, n_rows, n_per_row, None)
    assert written == size, (qtype, written, size)
    return dst.reshape(n_rows, -1)


def main():
    x = rows()
    w = gguf.GGUFWriter(OUT, "quantize-fixture")
    w.add_tensor("input", x)
    for qtype in (T.F16, T.Q8_0, T.Q4_0, T.Q4_K):
        data = quantized(qtype, x)
        w.add_tensor(qtype.name, data, raw_shape=data.shape, raw_dtype=qtype)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    print(OUT, os.path.getsize(OUT), "bytes")


main()
