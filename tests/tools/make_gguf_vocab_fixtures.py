#!/usr/bin/env python3
"""Writes tests/data/gguf/vocab/NAME.gguf: llama.cpp's own vocabulary files (models/ggml-vocab-NAME.gguf, written by
its converter from each model's tokenizer), cut to the tokens and merges that llama.cpp's test texts
(models/ggml-vocab-NAME.gguf.inp) need, every other key kept. Then tests/tools/gguf_vocab_reference.mjs tokenizes
the texts with llama.cpp on the whole file and on the cut one, checks that both give the same token strings, and
writes the cut file's ids to NAME.cases.json for tests/tst_gguftokenizers.cpp.

A token is kept when a test text's tokens (the .out file) hold it, when it is one of the 256 byte-level characters,
when it is a control or user-defined token, or when a kept token is made by a merge of it (every merge that makes a
kept token is kept, with both halves, down to single characters).

A SentencePiece vocabulary ('llama', phi-3's) keeps its scores, its byte tokens <0x00>…<0xFF>, and every way of
cutting a kept token into two tokens, down to single characters: llama.cpp merges any two neighbours that make a token.

A WordPiece vocabulary ('bert', bert-bge's) keeps every piece whose text occurs in the test texts, lowercased and
without accents: llama.cpp takes the longest piece at each place of a word, so each piece it could try is kept.

Only vocabularies under free licences are cut and committed: gpt-2 (MIT), qwen2 (Apache-2.0), falcon (Apache-2.0),
mpt (Apache-2.0), phi-3 (MIT) and bert-bge (MIT; BERT's vocabulary, Apache-2.0); not llama-spm or llama-bpe (Meta's licences), nor deepseek's. gguf-py (MIT) and the vocabulary files are in llama.cpp's source, which the npm package
node-llama-cpp ships (make_gguf_fixtures.py says how). Needs Debian's python3-numpy:
  /usr/bin/python3 tests/tools/make_gguf_vocab_fixtures.py llama.cpp [NAME ...]
"""
import os
import sys
import unicodedata

import numpy as np

LLAMA = sys.argv[1]
sys.path.insert(0, os.path.join(LLAMA, "gguf-py"))
import gguf  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "data", "gguf", "vocab")
NAMES = ["gpt-2", "qwen2", "falcon", "mpt", "phi-3", "bert-bge"]
TOKEN_KEYS = {"tokenizer.ggml.tokens", "tokenizer.ggml.token_type", "tokenizer.ggml.merges", "tokenizer.ggml.scores"}
ID_KEYS = ["tokenizer.ggml.bos_token_id", "tokenizer.ggml.eos_token_id", "tokenizer.ggml.unknown_token_id",
           "tokenizer.ggml.padding_token_id", "tokenizer.ggml.seperator_token_id", "tokenizer.ggml.eot_token_id",
           "tokenizer.ggml.cls_token_id", "tokenizer.ggml.mask_token_id"]


def byte_chars():  # GPT-2's bytes_to_unicode
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {chr(c) for c in cs}


def cut(name):
    path = os.path.join(LLAMA, "models", "ggml-vocab-%s.gguf" % name)
    reader = gguf.GGUFReader(path)
    fields = reader.fields
    tokens = fields["tokenizer.ggml.tokens"].contents()
    types = fields["tokenizer.ggml.token_type"].contents()
    spm = fields["tokenizer.ggml.model"].contents() == "llama"
    wpm = fields["tokenizer.ggml.model"].contents() == "bert"
    merges = [] if spm or wpm else fields["tokenizer.ggml.merges"].contents()
    scores = fields["tokenizer.ggml.scores"].contents() if spm else None
    out_lines = open(path + ".out", encoding="utf-8").read().split("\n")
    wanted = set()
    for line in out_lines:
        wanted.update(int(x) for x in line.split())
    keep = {tokens[i] for i in wanted} | (set() if spm or wpm else byte_chars() & set(tokens))
    if wpm:
        texts = unicodedata.normalize("NFD", open(path + ".inp", encoding="utf-8").read().lower())
        texts = "".join(c for c in texts if unicodedata.category(c) != "Mn")
        keep |= {t for t in tokens if t.removeprefix("\u2581") and t.removeprefix("\u2581") in texts}
    keep |= {t for t, k in zip(tokens, types) if k in (2, 3, 4, 6)}  # unknown, control, user-defined, byte
    made_by = {}
    for m in merges:
        left, right = m.split(" ", 1)
        made_by.setdefault(left + right, []).append((left, right))
    if spm:
        known = {t for t, k in zip(tokens, types) if k in (1, 4)}
        for t in known:
            for cut in range(1, len(t)):
                if t[:cut] in known and t[cut:] in known:
                    made_by.setdefault(t, []).append((t[:cut], t[cut:]))
    todo = list(keep)
    while todo:
        t = todo.pop()
        for left, right in made_by.get(t, []):
            for half in (left, right):
                if half not in keep:
                    keep.add(half)
                    todo.append(half)
    index = {t: i for i, t in enumerate(tokens)}
    kept_ids = sorted(index[t] for t in keep if t in index)
    new_id = {old: new for new, old in enumerate(kept_ids)}
    new_tokens = [tokens[i] for i in kept_ids]
    new_types = [types[i] for i in kept_ids]
    new_merges = [m for m in merges if all(p in keep for p in m.split(" ", 1)) and m.replace(" ", "", 1) in keep]

    arch = fields["general.architecture"].contents()
    writer = gguf.GGUFWriter(os.path.join(OUT, name + ".gguf"), arch)
    for key, field in fields.items():
        if key.startswith("GGUF.") or key in TOKEN_KEYS or key == "general.architecture":
            continue
        value = field.contents()
        if key in ID_KEYS:
            if value not in new_id:
                continue
            value = new_id[value]
        vtype = field.types[0]
        sub = field.types[-1] if vtype == gguf.GGUFValueType.ARRAY else None
        writer.add_key_value(key, value, vtype, sub)
    writer.add_token_list(new_tokens)
    writer.add_token_types(new_types)
    if spm:
        writer.add_token_scores([scores[i] for i in kept_ids])
    elif not wpm:
        writer.add_token_merges(new_merges)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    texts = open(path + ".inp", encoding="utf-8").read()
    with open(os.path.join(OUT, "texts.inp"), "w", encoding="utf-8") as f:  # the same for every vocabulary
        f.write(texts)
    print(name, len(tokens), "->", len(new_tokens), "tokens,", len(merges), "->", len(new_merges), "merges")


def main():
    os.makedirs(OUT, exist_ok=True)
    for name in sys.argv[2:] or NAMES:  # or the names given after llama.cpp's directory
        cut(name)


if __name__ == "__main__":
    main()
