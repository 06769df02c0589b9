// Writes tests/data/gguf/vocab/NAME.cases.json: llama.cpp's token ids for each test text (texts.inp, llama.cpp's own
// test texts, split at its __ggml_vocab_test__ lines) on the cut vocabulary NAME.gguf, after checking that the whole
// vocabulary (LLAMA/models/ggml-vocab-NAME.gguf) gives the same token strings and the ids of its .out file. Through
// node-llama-cpp (MIT; llama.cpp's prebuilt library), as llama.cpp's test-tokenizer-0 tokenizes: no BOS, special
// tokens not parsed. In a scratch directory with node_modules/node-llama-cpp (gguf_reference.mjs says how):
//   node gguf_vocab_reference.mjs PATH/TO/tests/data/gguf/vocab PATH/TO/llama.cpp
import fs from "node:fs";
import path from "node:path";
import {getLlama} from "node-llama-cpp";

const [dir, llamaCpp] = process.argv.slice(2);
const texts = fs.readFileSync(path.join(dir, "texts.inp"), "utf8").split("\n__ggml_vocab_test__\n");
texts[texts.length - 1] = texts[texts.length - 1].replace(/\n__ggml_vocab_test__\n?$/, "");
const llama = await getLlama({gpu: false, build: "never"});
const load = (modelPath) => llama.loadModel({modelPath, vocabOnly: true});
for (const file of fs.readdirSync(dir).filter((f) => f.endsWith(".gguf")).sort()) {
    const name = file.replace(/\.gguf$/, "");
    const whole = await load(path.join(llamaCpp, "models", `ggml-vocab-${name}.gguf`));
    const cut = await load(path.join(dir, file));
    const expected = fs.readFileSync(path.join(llamaCpp, "models", `ggml-vocab-${name}.gguf.out`), "utf8").split("\n");
    const cases = [];
    texts.forEach((text, i) => {
        const a = whole.tokenize(text, false), b = cut.tokenize(text, false);
        const outIds = expected[i].trim() === "" ? [] : expected[i].trim().split(/\s+/).map(Number);
        if (JSON.stringify(Array.from(a)) !== JSON.stringify(outIds))
            throw new Error(`${name}, text ${i}: llama.cpp gives ${a}, its .out file ${outIds}`);
        const strings = (model, ids) => Array.from(ids).map((id) => model.detokenize([id], true));
        if (JSON.stringify(strings(whole, a)) !== JSON.stringify(strings(cut, b)))
            throw new Error(`${name}, text ${i}: the cut vocabulary splits it otherwise`);
        cases.push({text, ids: Array.from(b)});
    });
    fs.writeFileSync(path.join(dir, `${name}.cases.json`), JSON.stringify(cases, null, 1) + "\n");
    console.log(name, cases.length, "texts");
    await whole.dispose();
    await cut.dispose();
}
