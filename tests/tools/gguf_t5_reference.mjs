// llama.cpp's token ids for texts on a 't5' vocabulary (special tokens parsed, nothing added) and its detokenized
// text of them, one line of JSON per text, through node-llama-cpp 3.22.1's prebuilt library; for
// make_gguf_t5_vocab.py, which says how to run it. Also checks that llama.cpp adds </s> (add_eos) and no BOS.
import fs from "node:fs";
import {getLlama} from "node-llama-cpp";
const [file, textsFile] = process.argv.slice(2);
const llama = await getLlama({gpu: false, build: "never", logLevel: "error"});
const model = await llama.loadModel({modelPath: file, gpuLayers: 0, vocabOnly: true});
for (const text of JSON.parse(fs.readFileSync(textsFile, "utf8"))) {
    const ids = Array.from(model.tokenize(text, true));
    console.log(JSON.stringify({text, ids, decoded: model.detokenize(ids, false)}));
}
console.error("eos", model.tokens.eos, "bos", model.tokens.bos, "shouldPrependBos", model.tokens.shouldPrependBosToken,
    "shouldAppendEos", model.tokens.shouldAppendEosToken);
await model.dispose();
