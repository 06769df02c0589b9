#!/usr/bin/env python3
"""Writes tests/data/gguf/models/reference-t5.json: llama.cpp's logits for the t5 files of tests/data/gguf/models/
(make_gguf_models.py's convert_t5), at every decoder position of one source and one target, through llama_t5_reference.c
(built as it says, against node-llama-cpp 3.22.1's prebuilt library):
  /usr/bin/python3 tests/tools/make_gguf_t5_reference.py PATH/TO/llama_t5_reference BACKEND_DIR
"""
import glob
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DIR = os.path.join(HERE, "..", "data", "gguf", "models")
SOURCE = [1, 5, 9, 13, 2, 40, 7, 33, 21, 49, 0, 17]  # within the vocabularies of 64
TARGET = [3, 8, 22, 41, 9, 60, 12]


def main():
    program, backends = sys.argv[1], sys.argv[2]
    out = {"llama_cpp": "node-llama-cpp 3.22.1's prebuilt library (llama.cpp v0.5.0) through llama_t5_reference.c, "
                        "CPU, 2 threads, F32 KV cache, no flash attention",
           "models": {}}
    for path in sorted(glob.glob(os.path.join(DIR, "t5*.gguf"))):
        run = subprocess.run([program, backends, path, ",".join(map(str, SOURCE)), ",".join(map(str, TARGET))],
                             check=True, capture_output=True, text=True)
        result = json.loads(run.stdout)
        # the decoder's input: its start token (the file's decoder_start_token_id, 0 in these), then the target
        out["models"][os.path.basename(path)] = {"source": result["source"], "tokens": [0] + result["target"],
                                                 "logits": result["logits"]}
    with open(os.path.join(DIR, "reference-t5.json"), "w") as f:
        json.dump(out, f)
        f.write("\n")


if __name__ == "__main__":
    main()
