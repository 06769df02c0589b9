#!/usr/bin/env python3
"""Helper of make_tokenizer_fixtures.sh (run that, not this): trains a small SentencePiece BPE model, laid out as
Llama's tokenizer.model, with Debian's python3-sentencepiece (Apache-2.0) on make_unigram_fixture.py's CORPUS.

    python3 make_spm_bpe_fixture.py OUT_DIR TEXTS.json SPM.json

writes OUT_DIR/tokenizer.model and tokenizer_config.json, and SPM.json: for every text in TEXTS.json,
sentencepiece's encode(text, out_type=int), encode(text, out_type=str) and decode(ids), as
[{"text", "ids", "pieces", "decoded"}].

The settings are the unigram fixture's (byte fallback, split digits, full character coverage, unk/bos/eos
0/1/2 as in Llama, no pad, one thread, no shuffling, a fixed seed) but for model_type bpe and the normalizer:
this model keeps sentencepiece's default nmt_nfkc rule, whose precompiled charsmap (most of the file's size)
makes the C++ side run sentencepiece's own normalizer (NFKC, and control characters such as "\\n" and "\\t" to
spaces). There is no tokenizer.json: the references are sentencepiece's alone.
"""
import json
import os
import sys

import sentencepiece as spm

sys.dont_write_bytecode = True  # no __pycache__ next to the scripts for the import below
from make_unigram_fixture import train, write_spm_encodings  # noqa: E402 (sys.path[0] is this folder)


def train_bpe():
    return train(model_type="bpe", normalization_rule_name="nmt_nfkc")  # nmt_nfkc: the default, named to make it plain


def main():
    out_dir, texts_file, spm_file = sys.argv[1:4]
    os.makedirs(out_dir, exist_ok=True)
    proto = train_bpe()
    if proto != train_bpe():
        sys.exit("make_spm_bpe_fixture: sentencepiece's training is not deterministic here")
    with open(os.path.join(out_dir, "tokenizer.model"), "wb") as f:
        f.write(proto)
    sp = spm.SentencePieceProcessor(model_proto=proto)
    config = {"tokenizer_class": "LlamaTokenizer", "add_bos_token": True, "add_eos_token": False}
    with open(os.path.join(out_dir, "tokenizer_config.json"), "w", encoding="utf-8") as f:
        json.dump(config, f, indent=2)
        f.write("\n")
    write_spm_encodings(sp, texts_file, spm_file)
    print("spm_bpe: sentencepiece %s, %d pieces" % (spm.__version__, sp.get_piece_size()))


if __name__ == "__main__":
    main()
