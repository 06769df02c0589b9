#!/usr/bin/env python3
"""Writes the fuzz harnesses' seed corpora (tests/fuzz/corpus/<harness>/) from the project's own files.

Run from the repository root: python3 tests/fuzz/make_corpus.py BINARY
BINARY (build/src/transformer-atlas) makes a real checkpoint for the trainer-state seed.
"""
import glob
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

ROOT = os.getcwd()
OUT = os.path.join(ROOT, "tests", "fuzz", "corpus")


def put(harness, name, data):
    os.makedirs(os.path.join(OUT, harness), exist_ok=True)
    with open(os.path.join(OUT, harness, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


def read(path):
    with open(path, "rb") as f:
        return f.read()


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    for path in ["tests/data/variant/model.safetensors", "tests/data/gpt2_tiny_f16/model.safetensors"]:
        put("safetensors", path.split("/")[2] + ".safetensors", read(path))
    put("gguf", "types.gguf", read("tests/data/gguf/types.gguf"))
    for path in ["tests/data/gguf/vocab/gpt-2.gguf", "tests/data/gguf/vocab/phi-3.gguf",
                 "tests/data/gguf/models/qwen2_tiny-q8_0.gguf", "tests/data/gguf/models/mixtral_tiny-q8_0.gguf",
                 "tests/data/gguf/models/phi3_long_tiny-q8_0.gguf",
                 "tests/data/gguf/models/t5v11_tiny-q8_0.gguf"]:
        put("gguf", os.path.basename(path), read(path))
    put_gguf_seeds()
    for path in sorted(glob.glob("tests/data/adamw_ref/*.npy"))[:6]:
        put("npy", os.path.basename(path), read(path))
    for path in sorted(glob.glob("tests/data/*/config.json") + glob.glob("resources/models/*/config.json")):
        put("config", path.replace("/", "_"), read(path))
    for path in ["tests/data/tokenizers/unigram_t5/spiece.model", "tests/data/tokenizers/spm_bpe/tokenizer.model"]:
        put("sentencepiecespec", path.split("/")[3] + ".model", read(path))
    put("checkpointindex", "qwen2_tiny.index.json", read("tests/data/qwen2_tiny/model.safetensors.index.json"))
    for path in sorted(glob.glob("docs/examples/*.json")):
        put("viewspec", os.path.basename(path), read(path))
    # A small vocab.json and merges.txt: GPT-2's first 300 tokens and first 60 merges, joined by a NUL byte.
    vocab = json.loads(read("tests/data/gpt2_bpe/vocab.json"))
    small = dict(sorted(vocab.items(), key=lambda kv: kv[1])[:300])
    merges = read("tests/data/gpt2_bpe/merges.txt").decode().splitlines()[:61]
    put("bpe", "gpt2-small-subset", json.dumps(small).encode() + b"\0" + ("\n".join(merges) + "\n").encode())
    for i, case in enumerate(json.loads(read("tests/data/gpt2_bpe/cases.json"))[:24]):
        put("tokenizer", "case-%02d" % i, case["text"].encode())
    put_tokenizer_json_seeds()
    put_normalizer_seeds()
    for path in sorted(glob.glob("lessons/*.md")):
        put("lesson", os.path.basename(path), read(path))
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "run")
        subprocess.run([sys.argv[1], "train", "--task", "reverse", "--out", out, "--steps", "2", "--eval-every", "1",
                        "--eval-examples", "2", "--batch", "2"], check=True, capture_output=True)
        pointer = json.loads(read(os.path.join(out, "checkpoint.json")))
        put("trainerstate", "reverse-step-2.json", read(os.path.join(out, pointer["checkpoint"], "trainer.json")))

    put_deep_seeds()
    put_manytensors_seeds()
    put_lessonactions_seeds()


def small_tokenizer_json(path, keep):
    """The tokenizer.json at `path` with the vocabulary cut to the ids `keep` accepts."""
    tok = json.loads(read(path))
    model = tok["model"]
    if model["type"] == "Unigram":
        model["vocab"] = [p for i, p in enumerate(model["vocab"]) if keep(i, p[0])]
        return tok
    model["vocab"] = {t: i for t, i in model["vocab"].items() if keep(i, t)}
    if "merges" in model:
        pairs = [m.split(" ", 1) if isinstance(m, str) else m for m in model["merges"]]
        model["merges"] = [m for m in pairs if m[0] in model["vocab"] and m[1] in model["vocab"]
                           and m[0] + m[1] in model["vocab"]][:80]
    return tok


def put_tokenizer_json_seeds():
    """Small tokenizer.json files of each model kind and the components the fixtures use, each with a text."""
    text = "Hello world, it's 2024!\n\tna\u00efve caf\u00e9 \u4e2d\u6587 \U0001F44D "
    seeds = {
        "gpt2": (small_tokenizer_json("resources/tokenizers/gpt2/tokenizer.json", lambda i, t: i < 400 or i == 50256),
                 "<|endoftext|>"),
        "qwen2_5": (json.loads(read("tests/data/tokenizers/qwen2_5/tokenizer.json")), "<|im_start|>user"),
        "mistral": (small_tokenizer_json("resources/tokenizers/mistral-7b/tokenizer.json", lambda i, t: i < 700), "</s>"),
        "bert_uncased": (small_tokenizer_json("resources/tokenizers/bert-base-uncased/tokenizer.json",
                                              lambda i, t: i < 1200 or i in (100, 101, 102, 103)), "[MASK]"),
        "unigram": (small_tokenizer_json("tests/data/tokenizers/unigram/tokenizer.json", lambda i, t: i < 600), "</s>"),
    }
    for name, (tok, special) in seeds.items():
        put("tokenizerjson", name, json.dumps(tok, ensure_ascii=False).encode() + b"\0" + (text + special).encode())


def put_normalizer_seeds():
    """The normalizers and pre-tokenizers of the fixtures' tokenizer.json files, and the expanding Replace chains of
    issue 66, each with a text."""
    text = "Hello  world, it's 2024!\n\tna\u00efve CAF\u00c9 \u4e2d\u6587 \ufdfa \U0001F44D   end"
    for name in ["qwen2_5", "unigram"]:
        tok = json.loads(read("tests/data/tokenizers/%s/tokenizer.json" % name))
        parts = {"normalizer": tok.get("normalizer"), "pre_tokenizer": tok.get("pre_tokenizer")}
        put("normalizers", name, json.dumps(parts, ensure_ascii=False).encode() + b"\0" + text.encode())
    for name in ["mistral-7b", "bert-base-uncased", "gpt2"]:
        tok = json.loads(read("resources/tokenizers/%s/tokenizer.json" % name))
        parts = {"normalizer": tok.get("normalizer"), "pre_tokenizer": tok.get("pre_tokenizer")}
        put("normalizers", name, json.dumps(parts, ensure_ascii=False).encode() + b"\0" + text.encode())
    double = {"type": "Replace", "pattern": {"String": "a"}, "content": "aa"}
    seeds = {
        "replace-chain": {"normalizer": {"type": "Sequence", "normalizers": [double] * 30}},
        "replace-10000": {"normalizer": {"type": "Replace", "pattern": {"Regex": "a"}, "content": "b" * 10000}},
        "forms": {"normalizer": {"type": "Sequence", "normalizers": [
            {"type": "NFKD"}, {"type": "StripAccents"}, {"type": "Lowercase"}, {"type": "Strip"},
            {"type": "Prepend", "prepend": "\u2581"}]},
                  "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
                      {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "first", "split": True},
                      {"type": "Digits", "individual_digits": True}, {"type": "Punctuation"}]}},
        "byte-levels": {"pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "ByteLevel", "add_prefix_space": True, "use_regex": False}] * 6}},
        "splits": {"normalizer": {"type": "BertNormalizer"}, "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "WhitespaceSplit"}, {"type": "CharDelimiterSplit", "delimiter": ","},
            {"type": "Split", "pattern": {"Regex": "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"}, "behavior": "Contiguous",
             "invert": False}, {"type": "Whitespace"}]}},
    }
    for name, parts in seeds.items():
        put("normalizers", name, json.dumps(parts, ensure_ascii=False).encode() + b"\0" + ("a" * 40 + text).encode())


def put_lessonactions_seeds():
    """Every action line of the shipped lessons, and a few of each verb's options, one per seed."""
    lines = set()
    for path in glob.glob("lessons/*.md"):
        for block in re.findall(r"```actions\n(.*?)```", read(path).decode(), re.S):
            lines.update(line.strip() for line in block.splitlines() if line.strip())
    extra = ["generate 5 temperature=0.8 top-k=3 seed=2", "pad 1,2", "param window=4", "run-to layer.0.attn.probs",
             "train copy-span steps=20 lr=0.003 seed=1 spans=true", "train reverse experts=4 positions=rope",
             "generate 1\ngenerate 2\npad 0"]
    for i, line in enumerate(sorted(lines) + extra):
        put("lessonactions", "seed-%02d" % i, (line + "\n").encode())


def put_manytensors_seeds():
    """Recipes for fuzz_manytensors: a count (two bytes: n and 0 for n < 8, n and 0xFF up to 255), each entry's kind,
    then a NUL and a raw value."""
    def count(n):
        return bytes([n, 0]) if n < 8 else bytes([n, 0xFF])

    seeds = {
        "plain-255": (255, b"\x00", b""),
        "overlapping": (255, b"\x00\x01", b""),
        "reversed": (255, b"\x02", b""),
        "few": (5, b"\x00\x01\x02\x10\xc0", b'{"dtype":"F32","shape":[1],"data_offsets":[0,8]}'),
        "duplicates": (200, b"\x00\x10", b""),
        "missing-shard": (50, b"\x00\x00\x04", b""),
        "raw-bf16": (100, b"\x00\xc0", b'{"dtype":"BF16","shape":[2],"data_offsets":[0,4]}'),
    }
    for name, (n, kinds, raw) in seeds.items():
        put("manytensors", name, count(n) + kinds + (b"\0" + raw if raw else b""))


def put_deep_seeds():
    """Nesting just past the parsers' limit (64) inside a real key, so that the fuzzers start next to it."""
    deep = "[" * 70 + "1" + "]" * 70
    put("viewspec", "deep-nesting.json", '{"view": "attention", "layer": %s}' % deep)
    put("config", "deep-nesting.json", '{"n_layer": 1, "n_head": 1, "n_embd": %s}' % deep)
    put("trainerstate", "deep-nesting.json", '{"steps": %s}' % deep)
    put("lesson", "deep-nesting.md", "---\ntitle: t\nlecture: l\nminutes: 1\nmodels: reverse\n---\n## Step\n"
        "```view\n{\"layer\": %s}\n```\n" % deep)
    header = ('{"w": {"dtype": "F32", "shape": %s, "data_offsets": [0, 4]}}' % deep).encode()
    put("safetensors", "deep-nesting.safetensors", struct.pack("<Q", len(header)) + header + b"\0" * 4)


def put_gguf_seeds():
    """Small GGUF files: one block of every type read (its bytes a ramp), and metadata of every value type."""
    def string(s):
        return struct.pack("<Q", len(s)) + s

    def key(name, vtype, payload):
        return string(name) + struct.pack("<I", vtype) + payload

    # (ggml type, elements per block, bytes per block) of the types the reader dequantizes.
    types = [(0, 1, 4), (1, 1, 2), (2, 32, 18), (3, 32, 20), (6, 32, 22), (7, 32, 24), (8, 32, 34), (10, 256, 84),
             (11, 256, 110), (12, 256, 144), (13, 256, 176), (14, 256, 210), (20, 32, 18), (23, 256, 136),
             (30, 1, 2), (39, 32, 17)]
    infos, data = b"", b""
    for i, (ggml_type, elements, size) in enumerate(types):
        n = max(elements, 32)
        infos += string(b"t%d" % i) + struct.pack("<IQIQ", 1, n, ggml_type, len(data))
        block = bytes((j * 37 + i) % 251 for j in range(n // elements * size))
        data += block + b"\0" * ((32 - len(block) % 32) % 32)
    kv = key(b"general.architecture", 8, string(b"llama")) + key(b"general.alignment", 4, struct.pack("<I", 32))
    head = b"GGUF" + struct.pack("<IQQ", 3, len(types), 2) + kv + infos
    put("gguf", "one-block-per-type.gguf", head + b"\0" * ((32 - len(head) % 32) % 32) + data)
    values = b"".join([key(b"u8", 0, b"\x07"), key(b"i8", 1, b"\xf9"), key(b"u16", 2, struct.pack("<H", 7)),
                       key(b"i16", 3, struct.pack("<h", -7)), key(b"u32", 4, struct.pack("<I", 7)),
                       key(b"i32", 5, struct.pack("<i", -7)), key(b"f32", 6, struct.pack("<f", 0.5)),
                       key(b"bool", 7, b"\x01"), key(b"str", 8, string(b"text")),
                       key(b"strs", 9, struct.pack("<IQ", 8, 2) + string(b"a") + string(b"bc")),
                       key(b"f32s", 9, struct.pack("<IQff", 6, 2, 1.0, -1.0)), key(b"u64", 10, struct.pack("<Q", 7)),
                       key(b"i64", 11, struct.pack("<q", -7)), key(b"f64", 12, struct.pack("<d", 0.25))])
    put("gguf", "every-value-type.gguf", b"GGUF" + struct.pack("<IQQ", 3, 0, 14) + values)


if __name__ == "__main__":
    main()
