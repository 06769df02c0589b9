#!/usr/bin/env python3
"""Writes tests/data/gguf/vocab/t5-nfkc.gguf: a 't5' (Unigram) vocabulary as llama.cpp's converter writes one
(conversion/t5.py, T5Model.set_vocab), for tests/tst_gguftokenizers.cpp. No vocabulary file of llama.cpp's own is a
't5' one, so this one is made here: a SentencePiece Unigram model trained with Debian's python3-sentencepiece
(Apache-2.0) on make_unigram_fixture.py's CORPUS, written for the fixtures, with SentencePiece's default
normalization rule (nmt_nfkc, whose precompiled charsmap T5's spiece.model carries too) and T5's special tokens
(<pad> 0, </s> 1, <unk> 2, no <s>), one user-defined piece (<sep>), and four ids past the pieces as the converter
writes them ("[PAD{id}]", unused, score -10000), as T5's 32128 rows hold 32100 pieces.

Then tests/tools/gguf_t5_reference.mjs has llama.cpp tokenize llama.cpp's test texts (texts.inp beside it) and this
script's own on the file, and writes t5-nfkc.cases.json: each text's ids (special tokens parsed, nothing added) and
llama.cpp's detokenized text. Run from the repository's root, with llama.cpp's source (make_gguf_fixtures.py says
how to get it from node-llama-cpp) and a directory where `npm install node-llama-cpp@3.22.1` was run:
  PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION=python /usr/bin/python3 tests/tools/make_gguf_t5_vocab.py llama.cpp NPM_DIR
"""
import io
import json
import os
import shutil
import subprocess
import sys

import sentencepiece as spm
from sentencepiece import sentencepiece_model_pb2

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from make_unigram_fixture import CORPUS  # noqa: E402

LLAMA, NPM = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
sys.path.insert(0, os.path.join(LLAMA, "gguf-py"))
import gguf  # noqa: E402

OUT = os.path.join(HERE, "..", "data", "gguf", "vocab")
PADDING = 4  # rows past the pieces
# What llama.cpp's own texts leave out: special and user-defined tokens in the text, NFKC's rewrites (ligatures,
# full-width and circled forms, compatibility spaces), runs of spaces at either end and inside, a text of spaces.
EXTRA_TEXTS = [
    "</s>the end</s>", "<unk> and <pad> and <sep>in between<sep>", "[PAD300] is no padding",
    "ﬁne ﬂour, ＡＢＣ ｆｕｌｌ ｗｉｄｔｈ, ① ② ③, x² and ½ and ™", "\u3000ideographic\u00a0space\u2003em",
    "   leading and   inner   and trailing   ", "    ", "tabs\tand\nnewlines\r\nstay", "café naïve Ångström",
    "Где вокзал? 火车站在哪里？ 駅はどこですか", "a" * 300, "🙂 ∑ ℕ ħ",
]


def train():
    lines = [line for line in CORPUS.split("\n") if line.strip()]
    model = io.BytesIO()
    spm.set_random_generator_seed(20261205)
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(lines), model_writer=model, model_type="unigram", vocab_size=600,
        hard_vocab_limit=False, character_coverage=1.0, pad_id=0, eos_id=1, unk_id=2, bos_id=-1,
        user_defined_symbols=["<sep>"], num_threads=1, input_sentence_size=0, shuffle_input_sentence=False,
        minloglevel=2)
    return model.getvalue()


def write_gguf(proto, path):
    model = sentencepiece_model_pb2.ModelProto()
    model.ParseFromString(proto)
    assert model.trainer_spec.model_type == 1  # UNIGRAM
    sp = spm.SentencePieceProcessor(model_proto=proto)
    n = sp.vocab_size()
    tokens = ["[PAD%d]" % i for i in range(n + PADDING)]
    scores = [-10000.0] * (n + PADDING)
    types = [gguf.TokenType.UNUSED] * (n + PADDING)
    for i in range(n):
        tokens[i], scores[i] = sp.id_to_piece(i), sp.get_score(i)
        types[i] = (gguf.TokenType.UNKNOWN if sp.is_unknown(i) else gguf.TokenType.CONTROL if sp.is_control(i)
                    else gguf.TokenType.UNUSED if sp.is_unused(i) else gguf.TokenType.BYTE if sp.is_byte(i)
                    else gguf.TokenType.USER_DEFINED if model.pieces[i].type == 4 else gguf.TokenType.NORMAL)
    writer = gguf.GGUFWriter(path, "t5")
    # T5's hyperparameters, tiny: llama.cpp reads them even for a vocabulary alone
    writer.add_context_length(512)
    writer.add_embedding_length(16)
    writer.add_feed_forward_length(32)
    writer.add_block_count(1)
    writer.add_head_count(2)
    writer.add_key_length(8)
    writer.add_value_length(8)
    writer.add_layer_norm_eps(1e-6)
    writer.add_relative_attn_buckets_count(32)
    writer.add_layer_norm_rms_eps(1e-6)
    writer.add_decoder_start_token_id(0)
    writer.add_tokenizer_model("t5")
    writer.add_tokenizer_pre("default")
    writer.add_token_list(tokens)
    writer.add_token_scores(scores)
    writer.add_token_types(types)
    writer.add_add_space_prefix(model.normalizer_spec.add_dummy_prefix)
    writer.add_remove_extra_whitespaces(model.normalizer_spec.remove_extra_whitespaces)
    writer.add_precompiled_charsmap(model.normalizer_spec.precompiled_charsmap)
    writer.add_eos_token_id(1)
    writer.add_unk_token_id(2)
    writer.add_pad_token_id(0)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def main():
    proto = train()
    if proto != train():
        sys.exit("make_gguf_t5_vocab: sentencepiece's training is not deterministic here")
    path = os.path.join(OUT, "t5-nfkc.gguf")
    write_gguf(proto, path)
    texts = open(os.path.join(OUT, "texts.inp"), encoding="utf-8").read().split("\n__ggml_vocab_test__\n")
    texts[-1] = texts[-1].removesuffix("\n__ggml_vocab_test__\n").removesuffix("\n__ggml_vocab_test__")
    scratch = os.path.join(NPM, "t5-texts.json")
    with open(scratch, "w", encoding="utf-8") as f:
        json.dump(texts + EXTRA_TEXTS, f, ensure_ascii=False)
    script = os.path.join(NPM, "gguf_t5_reference.mjs")
    shutil.copy(os.path.join(HERE, "gguf_t5_reference.mjs"), script)
    lines = subprocess.run(["node", script, path, scratch], check=True, capture_output=True, text=True,
                           cwd=NPM).stdout.splitlines()
    cases = [json.loads(line) for line in lines if line.startswith("{")]
    assert len(cases) == len(texts) + len(EXTRA_TEXTS)
    with open(os.path.join(OUT, "t5-nfkc.cases.json"), "w", encoding="utf-8") as f:
        f.write(json.dumps(cases, ensure_ascii=False, indent=1) + "\n")
    print(len(cases), "texts;", os.path.getsize(path), "bytes")


if __name__ == "__main__":
    main()
