// llama.cpp's token ids for texts on a GGUF file's own tokenizer (no BOS added), one line of JSON per text, through
// node-llama-cpp 3.22.1's prebuilt library. Run beside its node_modules: node gguf_tokenizer_reference.mjs FILE.gguf TEXTS.json
import fs from "node:fs";
import {getLlama} from "node-llama-cpp";
const [file, textsFile] = process.argv.slice(2);
const llama = await getLlama({gpu: false, build: "never", logLevel: "error"});
const model = await llama.loadModel({modelPath: file, gpuLayers: 0, vocabOnly: true});
for (const text of JSON.parse(fs.readFileSync(textsFile, "utf8")))
    console.log(JSON.stringify(Array.from(model.tokenize(text, true))));
await model.dispose();
