#!/usr/bin/env python3
"""Writes tests/data/gguf/saved/tokenizers.json: llama.cpp's token ids for a few texts on the tokenizers `save` writes
from Hugging Face directories, for tests/tst_ggufsave.cpp (savesAHuggingFaceTokenizer). For each case it makes a
model with `new-model` (its arguments below), puts the tokenizer's files beside it, writes it with `save`, and has
llama.cpp tokenize the texts on the file (tests/tools/gguf_tokenizer_reference.mjs, node-llama-cpp 3.22.1's prebuilt
library, no BOS added). Run from the repository's root, after a build, in a directory where
`npm install node-llama-cpp@3.22.1` was run:
  /usr/bin/python3 tests/tools/make_gguf_tokenizer_reference.py build/src/transformer-atlas NPM_DIR
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
OUT = os.path.join(ROOT, "tests", "data", "gguf", "saved", "tokenizers.json")
TEXTS = [
    "Hello world! It's 2026; they'd paid $1,234.56 for 12345678 items...\n\n  Indented\tline\r\n"
    "Café naïve — Привет, 世界 🙂 the end",
    "   spaces   and\ttabs\n\nnewlines",
    "ÀÉÎõü ß ﬁ 한국어 日本語",
    "x = [i**2 for i in range(10)]  # comment",
    "<|endoftext|>between<|endoftext|>",
]
# name -> new-model arguments, the tokenizer's files
CASES = {
    "gpt2": (["--tokenizer", "gpt2", "--vocab", "50257", "--d-model", "16", "--layers", "1", "--heads", "2",
              "--seed", "1"],
             ["resources/tokenizers/gpt2/tokenizer.json", "resources/tokenizers/gpt2/tokenizer_config.json"]),
    "qwen2_5": (["--family", "qwen2", "--vocab", "151936", "--d-model", "16", "--layers", "1", "--heads", "2",
                 "--seed", "1"],
                ["tests/data/tokenizers/qwen2_5/tokenizer.json", "tests/data/tokenizers/qwen2_5/tokenizer_config.json"]),
}


def main():
    binary, npm = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    out = {"about": "llama.cpp's ids (node-llama-cpp 3.22.1, no BOS) on files `save` wrote; "
                    "tests/tools/make_gguf_tokenizer_reference.py", "texts": TEXTS, "ids": {}}
    with tempfile.TemporaryDirectory() as scratch:
        texts = os.path.join(scratch, "texts.json")
        with open(texts, "w") as f:
            json.dump(TEXTS, f)
        for name, (args, files) in CASES.items():
            model = os.path.join(scratch, name)
            subprocess.run([binary, "new-model", "--out", model] + args, check=True, stdout=subprocess.DEVNULL)
            for f in files:
                shutil.copy(os.path.join(ROOT, f), model)
            gguf = model + ".gguf"
            subprocess.run([binary, "save", "--model", model, "--out", gguf], check=True, stdout=subprocess.DEVNULL)
            script = os.path.join(npm, "gguf_tokenizer_reference.mjs")
            shutil.copy(os.path.join(HERE, "gguf_tokenizer_reference.mjs"), script)
            lines = subprocess.run(["node", script, gguf, texts], check=True, capture_output=True, text=True,
                                   cwd=npm).stdout.splitlines()
            out["ids"][name] = [json.loads(line) for line in lines if line.startswith("[")]
    with open(OUT, "w") as f:
        json.dump(out, f, ensure_ascii=False)
        f.write("\n")
    print(OUT)


if __name__ == "__main__":
    main()
