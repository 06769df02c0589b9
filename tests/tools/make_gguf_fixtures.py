#!/usr/bin/env python3
"""Writes tests/data/gguf/: GGUF files made by llama.cpp's own Python package, gguf-py, for tests/tst_gguf.cpp.

  types.gguf           one tensor of every weight type the app reads, two ways where gguf-py can quantize:
                       TYPE.quantized (random normal values quantized by gguf-py) and TYPE.random (random blocks,
                       every bit pattern but a scale's infinities and NaNs); and metadata of every GGUF value type
  types-expected.gguf  the same names in F32: gguf-py's dequantization of each (quants.dequantize), which the app's
                       must match bit for bit

gguf-py (MIT) is in llama.cpp's source, which the npm package node-llama-cpp ships as a git bundle:
  npm install node-llama-cpp@3.22.1        # in a scratch directory
  git clone node_modules/node-llama-cpp/llama/gitRelease.bundle llama.cpp
  /usr/bin/python3 tests/tools/make_gguf_fixtures.py llama.cpp
Needs Debian's python3-numpy. The values come from a fixed seed: running it again writes the same files.
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(sys.argv[1], "gguf-py"))
import gguf  # noqa: E402
from gguf import GGMLQuantizationType as T  # noqa: E402
from gguf import quants  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "gguf")

# Byte offsets of each block's float16 scales: their exponent's top bit is cleared in random blocks, so no scale is
# an infinity or a NaN (the app refuses those in a model; here the values are what is compared).
HALF_SCALES = {
    T.Q4_0: [0], T.Q4_1: [0, 2], T.Q5_0: [0], T.Q5_1: [0, 2], T.Q8_0: [0],
    T.Q2_K: [80, 82], T.Q3_K: [108], T.Q4_K: [0, 2], T.Q5_K: [0, 2], T.Q6_K: [208],
    T.IQ4_NL: [0], T.IQ4_XS: [0], T.MXFP4: [],
}
QUANTIZABLE = [T.Q4_0, T.Q4_1, T.Q5_0, T.Q5_1, T.Q8_0, T.MXFP4, T.BF16]
ROWS, COLUMNS = 2, 512  # two K-quant super-blocks, or sixteen 32-element blocks, per row


def random_blocks(rng, qtype):
    block, size = gguf.GGML_QUANT_SIZES[qtype]
    n_blocks = ROWS * COLUMNS // block
    data = rng.integers(0, 256, size=(n_blocks, size), dtype=np.uint8)
    for at in HALF_SCALES[qtype]:
        data[:, at + 1] &= 0xBF  # bit 14 of the little-endian half
    return data.reshape(ROWS, COLUMNS // block * size)


def main():
    rng = np.random.default_rng(20261201)
    tensors = {}  # name -> (raw bytes array, type, expected float32)
    values = rng.standard_normal((ROWS, COLUMNS)).astype(np.float32)
    tensors["F32.random"] = (values, T.F32, values)
    halves = rng.integers(0, 1 << 16, size=(ROWS, COLUMNS), dtype=np.uint16) & 0xBFFF
    tensors["F16.random"] = (halves.view(np.float16), T.F16, halves.view(np.float16).astype(np.float32))
    brains = (rng.integers(0, 1 << 16, size=(ROWS, COLUMNS), dtype=np.uint16) & 0xBFFF).view(np.uint8)
    tensors["BF16.random"] = (brains, T.BF16, quants.dequantize(brains, T.BF16))
    for qtype in QUANTIZABLE:
        raw = quants.quantize(rng.standard_normal((ROWS, COLUMNS)).astype(np.float32), qtype)
        tensors[qtype.name + ".quantized"] = (raw, qtype, quants.dequantize(raw, qtype))
    for qtype in HALF_SCALES:
        raw = random_blocks(rng, qtype)
        tensors[qtype.name + ".random"] = (raw, qtype, quants.dequantize(raw, qtype))

    writer = gguf.GGUFWriter(os.path.join(OUT, "types.gguf"), "atlas-test")
    writer.add_uint8("test.uint8", 200)
    writer.add_int8("test.int8", -100)
    writer.add_uint16("test.uint16", 60000)
    writer.add_int16("test.int16", -30000)
    writer.add_uint32("test.uint32", 4000000000)
    writer.add_int32("test.int32", -2000000000)
    writer.add_float32("test.float32", 0.1)
    writer.add_uint64("test.uint64", 18000000000000000000)
    writer.add_int64("test.int64", -9000000000000000000)
    writer.add_float64("test.float64", 0.1)
    writer.add_bool("test.bool", True)
    writer.add_string("test.string", "naïve “quotes” 🙂")
    writer.add_array("test.strings", ["", "a", "β", "longer text"])
    writer.add_key_value("test.int32s", [-1, 0, 7], gguf.GGUFValueType.ARRAY, gguf.GGUFValueType.INT32)
    writer.add_key_value("test.float32s", [0.5, -2.25], gguf.GGUFValueType.ARRAY, gguf.GGUFValueType.FLOAT32)
    for name, (raw, qtype, _) in tensors.items():
        writer.add_tensor(name, raw, raw_dtype=qtype)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()

    writer = gguf.GGUFWriter(os.path.join(OUT, "types-expected.gguf"), "atlas-test")
    for name, (_, _, expected) in tensors.items():
        writer.add_tensor(name, np.ascontiguousarray(expected, dtype=np.float32).reshape(ROWS, COLUMNS))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


if __name__ == "__main__":
    main()
