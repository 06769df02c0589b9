// Writes tests/data/gguf/saved/austen-long-window.json: llama.cpp's next-token log-probabilities on `austen-long`
// saved as a gemma2 GGUF file (F32), at every position of the novel's first 1024 characters: past the 512 keys its
// layers 0 and 2 see, so that llama.cpp's sliding window is checked at its real size (tst_ggufwindow
// `llamaCppKeepsAustenLongsWindow`). node-llama-cpp 3.22.1 (llama.cpp's prebuilt library), CPU, 2 threads, the whole
// sequence in one batch, F32 KV cache, no flash attention. The file is not committed (860 KiB): the test saves it
// again and checks its SHA-256 against the one recorded here. In a scratch directory holding node-llama-cpp:
//   transformer-atlas save --model austen-long --type f32 --out austen-long-f32.gguf
//   node gguf_window_reference.mjs austen-long-f32.gguf PATH/TO/resources/corpus/pride-and-prejudice.txt OUT.json
import crypto from "node:crypto";
import fs from "node:fs";
import {getLlama} from "node-llama-cpp";

const [file, novel, outPath] = process.argv.slice(2);
const length = 1024;
// The bytes tokenizer's ids are the text's bytes; the novel's opening sentence on.
const text = fs.readFileSync(novel);
const start = text.indexOf("It is a truth universally acknowledged");
const ids = [...text.subarray(start, start + length)];
// Whole rows at these positions (0-based): the first, either side of the window's edge, and the last.
const rowsAt = [0, 255, 511, 512, 513, 767, 1023];

const llama = await getLlama({gpu: false, build: "never"});
const model = await llama.loadModel({modelPath: file, gpuLayers: 0});
// A context twice the text: with exactly 1024 places the last row came out 0.68 away (the context full at its last
// token), where every other row agreed to 3e-3.
const context = await model.createContext({contextSize: 2 * length, batchSize: length, threads: 2, flashAttention: false,
    experimentalKvCacheKeyType: "F32", experimentalKvCacheValueType: "F32"});
const results = await context.getSequence().controlledEvaluate(ids.map((id) => [id, {generateNext: {logits: true}}]));
const rows = results.map((r) => {
    const row = new Array(r.next.logits.size);
    for (const [token, logit] of r.next.logits) row[token] = logit;
    return row;
});
const logSumExp = (row) => {
    const top = Math.max(...row);
    return top + Math.log(row.reduce((sum, x) => sum + Math.exp(x - top), 0));
};
// log p(ids[t + 1] | ids[0..t]) for every t but the last.
const nextLogProbs = ids.slice(1).map((next, t) => Number((rows[t][next] - logSumExp(rows[t])).toPrecision(8)));
const out = {
    llama_cpp: "node-llama-cpp 3.22.1 (llama.cpp v0.5.0), CPU, 2 threads, F32 KV cache, no flash attention",
    file: "transformer-atlas save --model austen-long --type f32",
    sha256: crypto.createHash("sha256").update(fs.readFileSync(file)).digest("hex"),
    ids,
    next_log_probs: nextLogProbs,
    rows: Object.fromEntries(rowsAt.map((t) => [String(t), rows[t].map((x) => Number(x.toPrecision(8)))])),
};
await context.dispose();
await model.dispose();
fs.writeFileSync(outPath, JSON.stringify(out) + "\n");
console.log("mean log p", nextLogProbs.reduce((a, b) => a + b, 0) / nextLogProbs.length);
