#!/usr/bin/python3
"""Issue 60's benchmark: this program against llama.cpp on the same GGUF files, the same machine and 2 threads.

    /usr/bin/python3 benchmarks/gguf_vs_llamacpp.py --scratch DIR --npm DIR [--shapes 0.5b,1.5b,4b] [--kinds Q8_0,Q4_K_M]
        [--repeat 3] [--lengths 128,512] [--attention-trace on-demand|auto] [--generate [--baseline BINARY]]

DIR_npm is a directory where `npm install node-llama-cpp@3.22.1` was run and `llama.cpp` is the git clone of its
`llama/gitRelease.bundle` (for gguf-py). For each shape (Qwen2.5-0.5B's and Qwen2.5-1.5B's: layers, width, heads,
K/V heads, feed-forward width, vocabulary; Qwen1.5-4B's, a qwen2 file too, to see a 4B-parameter model open; and
SmolLM2-135M's, a llama file), it
writes a model of random weights (normal, std 0.02; norms 1) as an F16
GGUF file with gguf-py, a synthetic vocabulary of distinct tokens, then has llama.cpp's own quantizer
(llama_model_quantize, through ctypes, from node-llama-cpp's prebuilt libllama) make its Q8_0 and Q4_K_M files.
On each quantized file it measures:
  - this program: `render` of the attention view at 128 tokens, from a cold start (the process's wall time: opening
    the file, checking its values, the traced forward, the analysis, drawing the PNG) and its peak memory (getrusage);
    `bench --length N --repeat R --attention-trace A`, the traced forward's median at each of --lengths (128 and 512
    unless given) and its peak memory, with attention kept on demand unless --attention-trace says otherwise;
  - llama.cpp: prompt processing of the same N tokens in one batch (node-llama-cpp, 2 threads, the context's
    defaults), the median of R runs after one untimed, and the node process's peak memory.
Prints a Markdown table for docs/benchmarks.md. Run it on a quiet machine.

With --generate it times generation instead, a token at a time after a 32-token prompt: this program's `generate` for
1 and for 65 steps (the prompt is fed a token at a time, so the difference over 64 is a token's time), llama.cpp's
greedy generation of 64 tokens after the same prompt (node-llama-cpp, 2 threads); --baseline names another build of
this program to run beside it, alternately, --repeat rounds of each (--kinds may also name Q4_0, Q3_K_M, Q2_K, Q4_1,
Q5_1, IQ4_NL and IQ4_XS, llama.cpp's file types of those names, made without an importance matrix).
"""
import argparse
import ctypes
import json
import os
import re
import statistics
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
SHAPES = {  # layers, d_model, heads, kv heads, d_ff, vocab
    "0.5b": (24, 896, 14, 2, 4864, 151936),
    "1.5b": (28, 1536, 12, 2, 8960, 151936),
    "4b": (40, 2560, 20, 20, 6912, 151936),  # Qwen1.5-4B's (a qwen2 file), with a tied head: 3.6 B parameters
    "135m": (30, 576, 9, 3, 1536, 49152),  # SmolLM2-135M's (a llama file: no biases, RoPE base 100000, tied head)
}
LABELS = {"0.5b": "Qwen2.5-0.5B", "1.5b": "Qwen2.5-1.5B", "4b": "Qwen1.5-4B", "135m": "SmolLM2-135M"}
ARCHITECTURES = {"135m": "llama"}  # the others: qwen2


def token_ids(n, vocab):
    return [300 + (i * 7919) % (vocab - 300) for i in range(n)]


def write_f16(path, shape, llama_cpp, architecture):
    sys.path.insert(0, os.path.join(llama_cpp, "gguf-py"))
    import gguf
    layers, d, heads, kv, ff, vocab = shape
    head = d // heads
    rng = np.random.default_rng(1)
    w = gguf.GGUFWriter(path, architecture)
    w.add_name(f"random-{architecture}-{os.path.basename(path)}")
    w.add_context_length(32768)
    w.add_embedding_length(d)
    w.add_block_count(layers)
    w.add_feed_forward_length(ff)
    w.add_head_count(heads)
    w.add_head_count_kv(kv)
    w.add_rope_freq_base(1000000.0 if architecture == "qwen2" else 100000.0)
    w.add_layer_norm_rms_eps(1e-6)
    w.add_file_type(gguf.LlamaFileType.MOSTLY_F16)
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("default")
    bytes_ = [chr(c) for c in range(0x21, 0x7F)] + [chr(c) for c in range(0xA1, 0xAD)] + [chr(c) for c in range(0xAE, 0x100)]
    tokens = bytes_ + ["!!"] + [f"<t{i}>" for i in range(vocab - len(bytes_) - 1)]
    w.add_token_list(tokens)
    w.add_token_types([1] * vocab)
    w.add_token_merges(["! !"])  # one merge: gguf-py leaves an empty list out, and llama.cpp needs the key

    def matrix(rows, columns):
        return (rng.standard_normal((rows, columns), dtype=np.float32) * 0.02).astype(np.float16)

    w.add_tensor("token_embd.weight", matrix(vocab, d))
    for i in range(layers):
        p = f"blk.{i}."
        w.add_tensor(p + "attn_norm.weight", np.ones(d, dtype=np.float32))
        w.add_tensor(p + "attn_q.weight", matrix(d, d))
        if architecture == "qwen2":
            w.add_tensor(p + "attn_q.bias", (rng.standard_normal(d) * 0.02).astype(np.float32))
        w.add_tensor(p + "attn_k.weight", matrix(kv * head, d))
        if architecture == "qwen2":
            w.add_tensor(p + "attn_k.bias", (rng.standard_normal(kv * head) * 0.02).astype(np.float32))
        w.add_tensor(p + "attn_v.weight", matrix(kv * head, d))
        if architecture == "qwen2":
            w.add_tensor(p + "attn_v.bias", (rng.standard_normal(kv * head) * 0.02).astype(np.float32))
        w.add_tensor(p + "attn_output.weight", matrix(d, d))
        w.add_tensor(p + "ffn_norm.weight", np.ones(d, dtype=np.float32))
        w.add_tensor(p + "ffn_gate.weight", matrix(ff, d))
        w.add_tensor(p + "ffn_up.weight", matrix(ff, d))
        w.add_tensor(p + "ffn_down.weight", matrix(d, ff))
    w.add_tensor("output_norm.weight", np.ones(d, dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


class QuantizeParams(ctypes.Structure):  # llama_model_quantize_params' first fields, then room for the rest
    _fields_ = [("nthread", ctypes.c_int32), ("ftype", ctypes.c_int32), ("rest", ctypes.c_byte * 248)]


def quantize(lib_dir, source, target, ftype):
    for name in ("libggml-base.so", "libggml.v0.5.0.so"):
        ctypes.CDLL(os.path.join(lib_dir, name), mode=ctypes.RTLD_GLOBAL)
    llama = ctypes.CDLL(os.path.join(lib_dir, "libllama.v0.5.0.so"), mode=ctypes.RTLD_GLOBAL)
    llama.llama_model_quantize_default_params.restype = QuantizeParams
    llama.llama_model_quantize.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(QuantizeParams)]
    llama.llama_model_quantize.restype = ctypes.c_uint32
    params = llama.llama_model_quantize_default_params()
    params.nthread = 2
    params.ftype = ftype
    if llama.llama_model_quantize(source.encode(), target.encode(), ctypes.byref(params)) != 0:
        raise SystemExit(f"llama_model_quantize failed on {source}")


def timed(command):
    start = time.perf_counter()
    child = subprocess.run(["/usr/bin/time", "-f", "%M"] + command, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if child.returncode != 0:
        raise SystemExit(f"{' '.join(command)}: {child.stderr}")
    peak_kib = int(child.stderr.strip().splitlines()[-1])
    return seconds, peak_kib / 1024 / 1024, child.stdout


LLAMA_JS = r"""
import {getLlama} from "node-llama-cpp";
const [file, lengths, repeat, vocab] = [process.argv[2], process.argv[3].split(",").map(Number), Number(process.argv[4]),
    Number(process.argv[5])];
const llama = await getLlama({gpu: false, build: "never"});
const model = await llama.loadModel({modelPath: file, gpuLayers: 0});
const out = {};
for (const n of lengths) {
    const context = await model.createContext({contextSize: Math.max(1024, n), batchSize: n, threads: 2});
    const sequence = context.getSequence();
    const ids = Array.from({length: n}, (_, i) => 300 + (i * 7919) % (vocab - 300));
    const times = [];
    for (let r = 0; r <= repeat; ++r) {
        const start = performance.now();
        await sequence.evaluateWithoutGeneratingNewTokens(ids);
        const ms = performance.now() - start;
        if (r > 0) times.push(ms);
        await sequence.clearHistory();
    }
    times.sort((a, b) => a - b);
    out[n] = times[Math.floor(times.length / 2)];
    await context.dispose();
}
console.log(JSON.stringify(out));
"""

LLAMA_GENERATE_JS = r"""
import {getLlama} from "node-llama-cpp";
const [file, steps, vocab] = [process.argv[2], Number(process.argv[3]), Number(process.argv[4])];
const llama = await getLlama({gpu: false, build: "never"});
const model = await llama.loadModel({modelPath: file, gpuLayers: 0});
const context = await model.createContext({contextSize: 1024, batchSize: 512, threads: 2});
const sequence = context.getSequence();
const ids = Array.from({length: 32}, (_, i) => 300 + (i * 7919) % (vocab - 300));
let n = 0, first = 0;
for await (const token of sequence.evaluate(ids, {temperature: 0})) {
    if (n === 0) first = performance.now();
    if (++n > steps) break;
}
console.log(JSON.stringify({per_token_ms: (performance.now() - first) / steps}));
"""


def generation(args, files, env):
    """Per-token times of this program (and --baseline) and llama.cpp on each file, --repeat rounds alternately."""
    script = os.path.join(args.npm, "gguf_generate.mjs")
    with open(script, "w") as f:
        f.write(LLAMA_GENERATE_JS)
    binaries = [("this", args.binary)] + ([("baseline", args.baseline)] if args.baseline else [])
    times = {}
    for _ in range(args.repeat):
        for label, path, vocab in files:
            prompt = ",".join(str(t) for t in token_ids(32, vocab))
            for who, binary in binaries:
                seconds = [timed([binary, "generate", "--model", path, "--tokens", prompt, "--steps", str(steps)])[0]
                           for steps in (1, 65)]
                times.setdefault((label, who), []).append((seconds[1] - seconds[0]) / 64 * 1000)
            child = subprocess.run(["node", script, path, "64", str(vocab)], cwd=args.npm, capture_output=True,
                                   text=True, env=env)
            if child.returncode != 0:
                raise SystemExit(child.stderr)
            times.setdefault((label, "llama.cpp"), []).append(
                json.loads(child.stdout.strip().splitlines()[-1])["per_token_ms"])
    whos = [who for who, _ in binaries] + ["llama.cpp"]
    print("| file | " + " | ".join(f"{who}: per token, median (range)" for who in whos) + " |")
    print("| --- |" + " --- |" * len(whos))
    for label, _, _ in files:
        cells = []
        for who in whos:
            t = sorted(times[(label, who)])
            cells.append(f"{statistics.median(t):.1f} ms ({t[0]:.1f}–{t[-1]:.1f})")
        print(f"| {label} | " + " | ".join(cells) + " |")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--scratch", required=True)
    parser.add_argument("--npm", required=True)
    parser.add_argument("--shapes", default="0.5b,1.5b")  # or 4b
    parser.add_argument("--kinds", default="Q8_0,Q4_K_M")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--lengths", default="128,512")  # the traced forward's and llama.cpp's prompt lengths
    # How the timed forward keeps attention: on demand (lazy: q, k and each row's log-sum-exp kept, no T × T matrix,
    # logits read for the rows a view asks for, as llama.cpp reads the last row's), or `auto`, the app's own choice
    # (whole matrices and every position's logits where they fit: at 512 tokens).
    parser.add_argument("--attention-trace", default="on-demand")
    parser.add_argument("--binary", default=os.path.join(ROOT, "build", "src", "transformer-atlas"))
    parser.add_argument("--generate", action="store_true")
    parser.add_argument("--baseline")  # with --generate: another build of this program, timed beside --binary
    args = parser.parse_args()
    lib_dir = os.path.join(args.npm, "node_modules", "@node-llama-cpp", "linux-x64", "bins", "linux-x64")
    os.makedirs(args.scratch, exist_ok=True)
    script = os.path.join(args.npm, "gguf_speed.mjs")
    with open(script, "w") as f:
        f.write(LLAMA_JS)
    env = dict(os.environ, OPENBLAS_NUM_THREADS="2", OMP_NUM_THREADS="2")
    rows, files = [], []
    for shape in args.shapes.split(","):
        architecture = ARCHITECTURES.get(shape, "qwen2")
        vocab = SHAPES[shape][5]
        f16 = os.path.join(args.scratch, f"{architecture}-{shape}-f16.gguf")
        if not os.path.exists(f16):
            write_f16(f16, SHAPES[shape], os.path.join(args.npm, "llama.cpp"), architecture)
        for kind, ftype in (("Q8_0", 7), ("Q4_K_M", 15), ("Q4_0", 2), ("Q3_K_M", 12), ("Q2_K", 10), ("Q4_1", 3),
                            ("Q5_1", 9), ("IQ4_NL", 25), ("IQ4_XS", 30)):
            if kind not in args.kinds.split(","):
                continue
            path = os.path.join(args.scratch, f"{architecture}-{shape}-{kind.lower()}.gguf")
            if not os.path.exists(path):
                quantize(lib_dir, f16, path, ftype)
            if args.generate:
                files.append((f"{LABELS[shape]} {kind} ({os.path.getsize(path) / 2**30:.2f} GiB)", path, vocab))
                continue
            spec = os.path.join(args.scratch, "spec.json")
            with open(spec, "w") as f:
                json.dump({"view": "attention", "model": path, "tokens": token_ids(128, vocab),
                           "layer": 0, "head": 0}, f)
            first_view, peak, _ = timed([args.binary, "render", "--spec", spec, "--out",
                                         os.path.join(args.scratch, "first.png"), "--size", "1200x800"])
            ours = {}
            lengths = [int(n) for n in args.lengths.split(",")]
            for n in lengths:
                _, ours_peak, text = timed([args.binary, "bench", "--model", path, "--length", str(n), "--repeat",
                                            str(args.repeat), "--attention-trace", args.attention_trace])
                ours[n] = (re.search(r"median ([0-9.]+ m?s)", text).group(1), ours_peak)
                peak = max(peak, ours_peak)
            start = time.perf_counter()
            child = subprocess.run(["/usr/bin/time", "-f", "%M", "node", script, path, args.lengths, str(args.repeat),
                                    str(vocab)],
                                   cwd=args.npm, capture_output=True, text=True, env=env)
            if child.returncode != 0:
                raise SystemExit(child.stderr)
            theirs = json.loads(child.stdout.strip().splitlines()[-1])
            their_peak = int(child.stderr.strip().splitlines()[-1]) / 1024 / 1024
            rows.append((shape, kind, os.path.getsize(path) / 2**30, first_view, peak, ours, theirs, their_peak))
            print(rows[-1], flush=True)
    if args.generate:
        return generation(args, files, env)
    lengths = args.lengths.split(",")
    print("| shape | file | size | first attention view (cold) | traced forward " + " / ".join(lengths)
          + " (this program; its peak memory) | llama.cpp prompt processing " + " / ".join(lengths)
          + " | llama.cpp peak memory |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for shape, kind, size, first, peak, ours, theirs, their_peak in rows:
        mine = " / ".join(f"{ours[int(n)][0]} ({ours[int(n)][1]:.2f} GiB)" for n in lengths)
        llama = " / ".join(f"{theirs[n]:.0f} ms" for n in lengths)
        print(f"| {LABELS[shape]} | {kind} | {size:.2f} GiB | {first:.1f} s | {mine} | {llama} | {their_peak:.2f} GiB |")


if __name__ == "__main__":
    main()
