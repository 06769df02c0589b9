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
# The file with a real 't5' tokenizer (make_gguf_models.py's t5v11_tiny_unigram) runs on texts: llama.cpp's ids for
# them (gguf_t5_reference.mjs on the file), the source with the </s> llama.cpp adds to a Unigram vocabulary's text.
TEXTS = {"source_text": "The cat sat on the mat.", "decoder_text": "a small house"}
TEXT_SOURCE = [45, 27, 65, 52, 165, 9, 39, 6, 241, 9, 8, 1]
TEXT_TARGET = [13, 422, 141, 4, 243, 234]


def main():
    program, backends = sys.argv[1], sys.argv[2]
    out = {"llama_cpp": "node-llama-cpp 3.22.1's prebuilt library (llama.cpp v0.5.0) through llama_t5_reference.c, "
                        "CPU, 2 threads, F32 KV cache, no flash attention",
           "models": {}}
    for path in sorted(glob.glob(os.path.join(DIR, "t5*.gguf"))):
        texts = "_unigram" in path
        source, target = (TEXT_SOURCE, TEXT_TARGET) if texts else (SOURCE, TARGET)
        run = subprocess.run([program, backends, path, ",".join(map(str, source)), ",".join(map(str, target))],
                             check=True, capture_output=True, text=True)
        result = json.loads(run.stdout)
        # the decoder's input: its start token (the file's decoder_start_token_id, 0 in these), then the target
        row = {"source": result["source"], "tokens": [0] + result["target"], "logits": result["logits"]}
        if texts:
            row.update(TEXTS)
        out["models"][os.path.basename(path)] = row
    with open(os.path.join(DIR, "reference-t5.json"), "w") as f:
        json.dump(out, f)
        f.write("\n")


if __name__ == "__main__":
    main()
