// Writes tests/data/gguf/models/reference.json: llama.cpp's logits for every GGUF file in tests/data/gguf/models/
// (made by make_gguf_models.py), at every position of one sequence of token ids, through the npm package
// node-llama-cpp (MIT), which ships llama.cpp's prebuilt library (v3.22.1: llama.cpp's tag v0.5.0). CPU only,
// 2 threads, the whole sequence in one batch, the KV cache in F32. In a scratch directory:
//   npm install node-llama-cpp@3.22.1
//   NODE_PATH=$PWD/node_modules node --experimental-vm-modules PATH/TO/tests/tools/gguf_reference.mjs [DIR FILE...]
// (or copy this file beside node_modules and run it there).
import fs from "node:fs";
import path from "node:path";
import {fileURLToPath} from "node:url";
import {getLlama} from "node-llama-cpp";

const here = path.dirname(fileURLToPath(import.meta.url));
const dir = process.argv[2] ?? path.join(here, "..", "data", "gguf", "models");
const ids = [1, 5, 9, 13, 2, 40, 7, 33, 21, 49, 0, 17]; // within the smallest vocabulary, gpt2_tiny's 50
// Phi-3's files read 20 ids: past phi3_tiny's original context of 16, so that this program (which picks LongRoPE's
// factors by the text's length, as Hugging Face's Phi3 does) and llama.cpp (by its context, at least 256) both take
// the long factors.
const longIds = [...ids, 3, 44, 8, 26, 11, 60, 31, 2];
const idsOf = (file) => (file.startsWith("phi3") ? longIds : ids);
// Files named after the directory are the only ones computed again, their rows replacing those of reference.json.
const only = process.argv.slice(3);

const llama = await getLlama({gpu: false, build: "never"});
const kept = only.length > 0 ? JSON.parse(fs.readFileSync(path.join(dir, "reference.json"), "utf8")) : null;
const out = {llama_cpp: "node-llama-cpp 3.22.1 (llama.cpp v0.5.0), CPU, 2 threads, F32 KV cache, no flash attention", ids,
    ids_by_file: kept?.ids_by_file ?? {}, models: kept?.models ?? {}};
for (const file of fs.readdirSync(dir).filter((f) => f.endsWith(".gguf") && (only.length === 0 || only.includes(f))).sort()) {
    const model = await llama.loadModel({modelPath: path.join(dir, file), gpuLayers: 0});
    // The KV cache in F32 (llama.cpp's default is F16, which rounds every key and value to half precision) and no flash
    // attention: the reference computes what the file's numbers give.
    const context = await model.createContext({contextSize: 64, batchSize: 64, threads: 2, flashAttention: false,
        experimentalKvCacheKeyType: "F32", experimentalKvCacheValueType: "F32"});
    const sequence = context.getSequence();
    if (idsOf(file) !== ids) out.ids_by_file[file] = idsOf(file);
    const results = await sequence.controlledEvaluate(idsOf(file).map((id) => [id, {generateNext: {logits: true}}]));
    out.models[file] = results.map((r) => {
        const row = new Array(r.next.logits.size);
        for (const [token, logit] of r.next.logits) row[token] = Number(logit.toPrecision(8));
        return row;
    });
    await context.dispose();
    await model.dispose();
    console.log(file, out.models[file][idsOf(file).length - 1].slice(0, 4));
}
fs.writeFileSync(path.join(dir, "reference.json"), JSON.stringify(out) + "\n");
