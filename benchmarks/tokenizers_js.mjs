// The reference side of bench-tokenizer: Hugging Face's JavaScript tokenizers (@huggingface/tokenizers) loading
// a directory's tokenizer.json and encoding a text file, timed the same way (load, a first pass, cached passes).
// Run by benchmarks/tokenizer_vs_js.sh, which installs the package in a scratch folder:
//   node benchmarks/tokenizers_js.mjs NODE_MODULES DIR TEXT_FILE REPEAT
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { performance } from "node:perf_hooks";

const [nodeModules, dir, textFile, repeatArg] = process.argv.slice(2);
const { Tokenizer } = await import(pathToFileURL(`${nodeModules}/@huggingface/tokenizers/dist/tokenizers.mjs`));
const text = readFileSync(textFile, "utf8");
const mb = Buffer.byteLength(text, "utf8") / 1e6;
const repeat = Number(repeatArg ?? 5);

const t0 = performance.now();
const json = JSON.parse(readFileSync(`${dir}/tokenizer.json`, "utf8"));
let config = {};
try { config = JSON.parse(readFileSync(`${dir}/tokenizer_config.json`, "utf8")); } catch {}
const tokenizer = new Tokenizer(json, config);
const loadMs = performance.now() - t0;

const t1 = performance.now();
const tokens = tokenizer.encode(text, { add_special_tokens: false }).ids.length;
const firstS = (performance.now() - t1) / 1e3;
const rates = [];
for (let r = 0; r < repeat; ++r) {
    const t = performance.now();
    tokenizer.encode(text, { add_special_tokens: false });
    rates.push(mb / ((performance.now() - t) / 1e3));
}
rates.sort((a, b) => a - b);
console.log(`tokenizers.js: ${mb.toFixed(2)} MB, ${tokens} tokens; loaded in ${loadMs.toFixed(0)} ms`);
console.log(`first pass: ${(mb / firstS).toFixed(1)} MB/s; ${repeat} more passes: median ${rates[rates.length >> 1].toFixed(1)} MB/s (min ${rates[0].toFixed(1)}, max ${rates[rates.length - 1].toFixed(1)})`);
