#!/usr/bin/env python3
"""Trains tests/data/tokenizers/unigram_t5/spiece.model: a SentencePiece Unigram model made as T5's was (the
nmt_nfkc normaliser, whose rules sentencepiece compiles into the model's precompiled_charsmap; no byte
fallback, so an unknown character is <unk>; <pad> 0, </s> 1, <unk> 2 and no <s>), with Debian's
python3-sentencepiece on make_unigram_fixture.py's corpus, which was written for the fixtures. `save` writes such a
model as llama.cpp's 't5' tokenizer (tst_ggufsave::savesAT5Tokenizer).

    python3 tests/tools/make_unigram_t5_fixture.py

Then llama-ids.json in the same directory: llama.cpp's ids for the texts below on a file `save` wrote, through
node-llama-cpp (tests/tools/gguf_t5_reference.mjs, which says how to run it):

    transformer-atlas new-model --out /tmp/hf-t5tok --family llama --vocab 300 --d-model 16 --layers 1 --heads 2
    cp tests/data/tokenizers/unigram_t5/{spiece.model,tokenizer_config.json} /tmp/hf-t5tok/
    transformer-atlas save --model /tmp/hf-t5tok --out /tmp/hf-t5tok.gguf
    python3 tests/tools/make_unigram_t5_fixture.py --texts > /tmp/texts.json
    node gguf_t5_reference.mjs /tmp/hf-t5tok.gguf /tmp/texts.json \\
        | python3 tests/tools/make_unigram_t5_fixture.py --ids > tests/data/tokenizers/unigram_t5/llama-ids.json

and llama-t5-logits.json: llama.cpp's logits for a Hugging Face T5 directory with this tokenizer, saved, on the first
text (its ids and the </s> the tokenizer adds) and a target, through llama_t5_reference.c (make_gguf_t5_reference.py
says how it is built):

    transformer-atlas new-model --out /tmp/hf-t5 --family t5 --vocab 300 --d-model 32 --layers 2 --heads 2 --seed 1
    cp tests/data/tokenizers/unigram_t5/{spiece.model,tokenizer_config.json} /tmp/hf-t5/
    transformer-atlas save --model /tmp/hf-t5 --out /tmp/hf-t5.gguf
    llama_t5_reference BACKEND_DIR /tmp/hf-t5.gguf SOURCE_IDS 3,163,46 \\
        | python3 tests/tools/make_unigram_t5_fixture.py --logits > tests/data/tokenizers/unigram_t5/llama-t5-logits.json
"""
import io
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "data", "tokenizers", "unigram_t5")

TEXTS = [
    "The morning train to the coast leaves at seven.",
    "  Some read newspapers,   some read books\tand a few read faces.\n",
    "Ｆｕｌｌ-width letters and ﬁ ligatures fold under NFKC: ½ and ² too.",
    "Café naïve — Привет, 世界 🙂 and a character no piece holds: ꙮ",
    "</s> is a control symbol; the text spelling it is read as letters.",
    "",
]


def main():
    if sys.argv[1:] == ["--texts"]:
        json.dump(TEXTS, sys.stdout, ensure_ascii=False)
        return
    if sys.argv[1:] == ["--logits"]:
        result = json.loads(sys.stdin.read())
        json.dump({"llama_cpp": "node-llama-cpp 3.22.1's prebuilt library (llama.cpp v0.5.0) through "
                                "llama_t5_reference.c, CPU, 2 threads, F32 KV cache, no flash attention",
                   "source": result["source"], "tokens": [0] + result["target"], "logits": result["logits"]},
                  sys.stdout)
        sys.stdout.write("\n")
        return
    if sys.argv[1:] == ["--ids"]:
        rows = [json.loads(line) for line in sys.stdin if line.strip()]
        json.dump({"texts": [r["text"] for r in rows], "ids": [r["ids"] for r in rows]}, sys.stdout,
                  ensure_ascii=False, indent=1)
        sys.stdout.write("\n")
        return
    import sentencepiece as spm
    sys.path.insert(0, HERE)
    from make_unigram_fixture import CORPUS
    os.makedirs(OUT, exist_ok=True)
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter([line for line in CORPUS.splitlines() if line.strip()]), model_writer=model,
        model_type="unigram", vocab_size=300, normalization_rule_name="nmt_nfkc", byte_fallback=False,
        pad_id=0, eos_id=1, unk_id=2, bos_id=-1, character_coverage=1.0, num_threads=1, seed_sentencepiece_size=100000,
        minloglevel=2)
    with open(os.path.join(OUT, "spiece.model"), "wb") as f:
        f.write(model.getvalue())
    with open(os.path.join(OUT, "tokenizer_config.json"), "w") as f:
        json.dump({"eos_token": "</s>", "pad_token": "<pad>", "unk_token": "<unk>", "model_max_length": 512,
                   "tokenizer_class": "T5Tokenizer"}, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    main()
