#!/usr/bin/env python3
"""Writes tests/data/gguf/saved/tokenizers.json: llama.cpp's token ids for a few texts on the tokenizers `save` writes
from Hugging Face directories, for tests/tst_ggufsave.cpp (savesAHuggingFaceTokenizer). For each case it makes a
model with `new-model` (its arguments below), puts the tokenizer's files beside it, writes it with `save`, and has
llama.cpp tokenize the texts on the file (tests/tools/gguf_tokenizer_reference.mjs, node-llama-cpp 3.22.1's prebuilt
library, no BOS added). Run from the repository's root, after a build, in a directory where
`npm install node-llama-cpp@3.22.1` was run:
  /usr/bin/python3 tests/tools/make_gguf_tokenizer_reference.py build/src/transformer-atlas NPM_DIR

The SentencePiece case's tokenizer.model (tests/data/gguf/saved/spm_llama/) is trained first, when it is not there,
with Debian's python3-sentencepiece on make_unigram_fixture.py's CORPUS, with Llama 2's settings: BPE, byte fallback,
split digits, no normalization rule and no removal of spaces (llama.cpp's 'llama' tokenizer applies neither),
<unk> <s> </s> at 0 1 2.
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
    "spm_llama": (["--family", "llama", "--vocab", "1000", "--d-model", "16", "--layers", "1", "--heads", "2",
                   "--seed", "1"],
                  ["tests/data/gguf/saved/spm_llama/tokenizer.model",
                   "tests/data/gguf/saved/spm_llama/tokenizer_config.json"]),
}


def train_spm_llama():
    directory = os.path.join(ROOT, "tests", "data", "gguf", "saved", "spm_llama")
    if os.path.exists(os.path.join(directory, "tokenizer.model")):
        return
    import io
    import sentencepiece as spm
    sys.path.insert(0, HERE)
    from make_unigram_fixture import CORPUS
    os.makedirs(directory, exist_ok=True)
    model = io.BytesIO()
    spm.set_random_generator_seed(20261205)
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter([line for line in CORPUS.split("\n") if line.strip()]), model_writer=model,
        model_type="bpe", vocab_size=1000, byte_fallback=True, split_digits=True, character_coverage=1.0,
        normalization_rule_name="identity", remove_extra_whitespaces=False, add_dummy_prefix=True, unk_id=0,
        bos_id=1, eos_id=2, pad_id=-1, num_threads=1, input_sentence_size=0, shuffle_input_sentence=False,
        minloglevel=2)
    with open(os.path.join(directory, "tokenizer.model"), "wb") as f:
        f.write(model.getvalue())
    with open(os.path.join(directory, "tokenizer_config.json"), "w") as f:
        json.dump({"tokenizer_class": "LlamaTokenizer", "add_bos_token": True, "add_eos_token": False}, f, indent=2)
        f.write("\n")


def main():
    train_spm_llama()
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
